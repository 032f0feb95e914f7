#!/usr/bin/env bash
# H200 call of 2026-12-04 (night, confirmation at d7d0f40): the FFT tests and the FFT benchmark beside
# cuFFT with the pair-split rule of d7d0f40. Carry .gl, .devpack, build/bench_fft, build/onda_tests.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Fft*:Stft*:Dft*' 200
step fft
fft_variant final ""
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "^(c2c|r2c|HTD)" $logs/torch_fft.txt | cut -c1-90
step done
pack_logs
