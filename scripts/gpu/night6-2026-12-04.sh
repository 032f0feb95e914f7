#!/usr/bin/env bash
# H200 call of 2026-12-04 (night, sixth): the pair-mode real split in one round (p = 0 also takes the
# self-paired S/2, so 1025 pairs on 1024 threads no longer need a second round with doubled registers):
# r2c cases by default, with the pair split on every real-split pass (ONDA_FFT_PAIR=2) and off
# (ONDA_FFT_PAIR=0); beside cuFFT. Carry .gl, .devpack, build/bench_fft, build/onda_tests.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Fft*:Stft*:Dft*' 200
step fft
r="r2c N="
fft_variant base "$r"
fft_variant pair2 "$r" ONDA_FFT_PAIR=2
fft_variant pair0 "r2c N=16384" ONDA_FFT_PAIR=0
fft_variant base2 "$r"
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "^r2c" $logs/torch_fft.txt | cut -c1-90
step done
pack_logs
