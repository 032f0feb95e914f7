#!/usr/bin/env bash
# H200 call of 2026-12-04 (night, seventh, at 3038de8): the split-exchange real split in Hermitian pairs
# (each Z read once): the FFT tests, then the r2c cases (with the pair split on every pass for
# comparison) beside cuFFT. Carry .gl, .devpack, build/bench_fft, build/onda_tests.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Fft*:Stft*:Dft*' 150
step fft
fft_variant base "r2c N="
fft_variant pair2 "r2c N=256,r2c N=1024,r2c N=16384" ONDA_FFT_PAIR=2
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "^r2c" $logs/torch_fft.txt | cut -c1-90
step done
pack_logs
