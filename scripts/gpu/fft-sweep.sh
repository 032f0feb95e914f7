#!/usr/bin/env bash
# One GPU-machine call (carry .gl, .devpack, build/bench_fft): the FFT code-shape knobs of
# stockham_unrolled.cpp (ONDA_FFT_*) against the defaults, then cuFFT (bench/torch_fft.py) in the same
# call. Each variant runs in its own process on the cases it concerns (common.sh's fft_variant). Logs in
# $OUT/logs.tgz.
set -uo pipefail
source "$(dirname "$0")/common.sh"
step fft
some="c2c N=256,c2c N=1024,c2c N=4096,r2c N=1024,r2c N=4096,N=16384,c2c N=1048576,N=4099"
fft_variant default "N=,STFT"
for k in 2 4 8; do fft_variant loop$k "$some" ONDA_FFT_LOOP=$k; done
fft_variant loop4_noprefetch "$some" ONDA_FFT_LOOP=4 ONDA_FFT_PREFETCH=0
fft_variant t1024_128 "c2c N=1024,r2c N=2048" ONDA_FFT_THREADS=128
fft_variant t1024_128_loop4 "c2c N=1024,r2c N=2048" ONDA_FFT_THREADS=128 ONDA_FFT_LOOP=4
step done
pack_logs
