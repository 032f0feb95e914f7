#!/usr/bin/env bash
# H200 call of 2026-12-04 (night, third): r2c 16384 (one whole split pass of 8192 points, 1024 threads,
# radices 8,8,8,4,4 by default) under other radix orders and thread counts (ONDA_FFT_RADICES,
# ONDA_FFT_THREADS), beside cuFFT. Carry .gl, .devpack, build/bench_fft.
set -uo pipefail
source "$(dirname "$0")/common.sh"
step fft
r="r2c N=16384"
fft_variant base "$r"
for v in 8,8,8,16 16,8,8,8 8,16,8,8 8,8,16,8 4,4,8,8,8 8,8,4,4,8 16,16,16,2 2,16,16,16 16,16,4,8; do
  fft_variant "$v" "$r" ONDA_FFT_RADICES=$v
done
for v in 8,8,8,16 16,16,16,2 16,16,4,8; do
  fft_variant "$v-512" "$r" ONDA_FFT_RADICES=$v ONDA_FFT_THREADS=512
done
fft_variant base2 "$r"
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "^r2c N=16384" $logs/torch_fft.txt | cut -c1-90
step done
pack_logs
