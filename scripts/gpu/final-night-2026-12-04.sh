#!/usr/bin/env bash
# H200 call of 2026-12-04 (night, last): the final code's GPU tests (FFT, recurrent, GPU layer with the
# run guards), the FFT benchmark beside cuFFT, and the four models end to end. Carry .gl, .devpack,
# .models-small, build/onda, build/onda_tests, build/bench_fft.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Fft*:Stft*:Dft*:Rnn*:GpuContext*' 300
step fft
fft_variant final ""
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "^(c2c|r2c|HTD)" $logs/torch_fft.txt | cut -c1-90
time_models $logs 150 "median|rror"
step done
pack_logs
