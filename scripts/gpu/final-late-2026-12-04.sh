#!/usr/bin/env bash
# H200 call of 2026-12-04 (late, last): the long-length FFT sweep (powers of two to 2^24, smooth, primes;
# round trips), every bench_fft case twice beside cuFFT, and the four models end to end. Carry .gl,
# .devpack, .models-small, build/onda, build/onda_tests, build/bench_fft.
set -uo pipefail
source "$(dirname "$0")/common.sh"
step long-sweep
ONDA_FFT_SWEEP=long timeout 240 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='FftSweep.Long*' > $logs/long.txt 2>&1
grep -E "worst|PASSED|FAILED|Failure" $logs/long.txt | head -20
step fft
fft_variant all ""
fft_variant all2 ""
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "^(r2c|c2c|HTD)" $logs/torch_fft.txt | cut -c1-90
time_models $logs 90 "median|rror"
step done
pack_logs
