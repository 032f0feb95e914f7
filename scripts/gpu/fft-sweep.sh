#!/usr/bin/env bash
# One GPU-machine call (carry .gl, .devpack, build/bench_fft): the FFT code-shape knobs of
# stockham_unrolled.cpp (ONDA_FFT_*) against the defaults on the c2c / r2c throughput cases: scalar
# user I/O, table twiddles, no padded exchange, and thread / transform counts forced for single
# lengths. Logs in $OUT. (GEMM and conv sweeps: kernel-figures.sh.)
set -uo pipefail
source "$(dirname "$0")/common.sh"
fft() {  # fft LABEL ONLY [ENV=VALUE...]
  local label=$1 only=$2; shift 2
  env "$@" timeout 90 bash scripts/gpu/run.sh build/bench_fft --repeats 10 --path unrolled --only "$only" \
    > "$out/fft_$label.txt" 2>&1
  grep -E "^(c2c|r2c|HTD)" "$out/fft_$label.txt" | sed "s/^/$label: /" | cut -c1-120
}
step fft
slow="c2c N=256,c2c N=1024,c2c N=4096,c2c N=16384,r2c N=256,r2c N=1024"
fft default "N=,STFT"
fft scalar_io "$slow" ONDA_FFT_VEC2=0
fft table "$slow" ONDA_FFT_TWIDDLE=table
fft nopad "$slow" ONDA_FFT_PAD=0
for th in 256 1024; do fft t4096_$th "c2c N=4096" ONDA_FFT_THREADS=$th; done
for th in 128 512; do fft t1024_$th "c2c N=1024" ONDA_FFT_THREADS=$th; done
for pg in 1 4 8; do fft t256_pg$pg "c2c N=256" ONDA_FFT_PER_GROUP=$pg; done
step done
