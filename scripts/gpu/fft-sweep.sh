#!/usr/bin/env bash
# One GPU-machine call (carry .gl, .devpack, build/bench_fft): the FFT code-shape knobs of
# stockham_unrolled.cpp (ONDA_FFT_*) against the defaults, then cuFFT (bench/torch_fft.py) in the same
# call. Each variant runs in its own process on the cases it concerns. Logs in $OUT.
set -uo pipefail
source "$(dirname "$0")/common.sh"
fft() {  # fft LABEL ONLY [ENV=VALUE...]
  local label=$1 only=$2; shift 2
  env "$@" timeout 120 bash scripts/gpu/run.sh build/bench_fft --repeats 10 --path unrolled --only "$only" \
    > "$out/fft_$label.txt" 2>&1
  grep -E "^(c2c|r2c|HTD)|failed" "$out/fft_$label.txt" | sed "s/^/$label: /" | cut -c1-120
}
step fft
some="c2c N=256,c2c N=1024,c2c N=4096,r2c N=1024,r2c N=4096,N=16384,c2c N=1048576,N=4099"
fft default "N=,STFT"
for k in 2 4 8; do fft loop$k "$some" ONDA_FFT_LOOP=$k; done
fft loop4_noprefetch "$some" ONDA_FFT_LOOP=4 ONDA_FFT_PREFETCH=0
fft t1024_128 "c2c N=1024,r2c N=2048" ONDA_FFT_THREADS=128
fft t1024_128_loop4 "c2c N=1024,r2c N=2048" ONDA_FFT_THREADS=128 ONDA_FFT_LOOP=4
step done
