#!/usr/bin/env bash
# H200 call of 2026-12-04 (late, second): the swizzle rule, 8192 as 8,8,16,8 and vec2 I/O for dense real
# signals as defaults: the FFT tests, then every bench_fft case (twice) beside cuFFT; r2c with scalar
# I/O (ONDA_FFT_VEC2=0) for comparison. Carry .gl, .devpack, build/bench_fft, build/onda_tests.
set -uo pipefail
source "$(dirname "$0")/common.sh"
TEST_FILTER='Fft*:Stft*:Dft*:SpectralOps*' gpu_tests x 200
step fft
fft_variant all ""
fft_variant r2c "r2c N="
fft_variant r2c-scalar "r2c N=" ONDA_FFT_VEC2=0
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "^(r2c|c2c|HTD|stft)" $logs/torch_fft.txt | cut -c1-90
step done
pack_logs
