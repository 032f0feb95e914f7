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
four="N=16384,N=1048576,N=4099,N=65537"
whole="c2c N=256,c2c N=1024,c2c N=2048,c2c N=4096,r2c N=512,r2c N=2048,r2c N=4096"
fft default "N=,STFT"
fft run8_direct "$four" ONDA_FFT_MAX_RUN=8 ONDA_FFT_STAGED=0
fft run8 "$four" ONDA_FFT_MAX_RUN=8
fft run16 "$four" ONDA_FFT_MAX_RUN=16
fft run32_direct "$four" ONDA_FFT_STAGED=0
fft radix16 "$whole,N=16384" ONDA_FFT_RADIX16=1
fft t4096_256 "c2c N=4096" ONDA_FFT_THREADS=256
fft t1024_128 "c2c N=1024" ONDA_FFT_THREADS=128
step cufft
timeout 120 python3 bench/torch_fft.py > "$out/cufft.txt" 2>&1; cat "$out/cufft.txt"
step done
