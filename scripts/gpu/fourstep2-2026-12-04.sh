#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening, third): the four-step split N1 x N2 (ONDA_FFT_COLUMNS=N1) for
# Bluestein 65537 (M = 2^17), c2c 16384 and the 2^20 transforms, with split-exchange runs
# (ONDA_FFT_SPLIT_RUNS=2). Carry .gl, .devpack, build/bench_fft.
set -uo pipefail
source "$(dirname "$0")/common.sh"
step fft
fft_variant base "c2c N=16384,c2c N=1048576,r2c N=1048576,65537"
for n1 in 16 32 64; do
  fft_variant b-cols$n1 "65537" ONDA_FFT_COLUMNS=$n1
  fft_variant c-cols$n1 "c2c N=16384" ONDA_FFT_COLUMNS=$n1
done
fft_variant b-cols64-loop4 "65537" ONDA_FFT_COLUMNS=64 ONDA_FFT_LOOP=4
fft_variant c-cols64-loop1 "c2c N=16384" ONDA_FFT_COLUMNS=64 ONDA_FFT_LOOP=1
for n1 in 256 512 2048 4096; do
  fft_variant m-cols$n1-runs2 "c2c N=1048576" ONDA_FFT_COLUMNS=$n1 ONDA_FFT_SPLIT_RUNS=2
done
for n1 in 128 256 1024; do
  fft_variant r-cols$n1-runs2 "r2c N=1048576" ONDA_FFT_COLUMNS=$n1 ONDA_FFT_SPLIT_RUNS=2
done
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "16384|1048576|65537" $logs/torch_fft.txt
step done
pack_logs
