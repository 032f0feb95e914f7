#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening, confirmation): the defaults after the four-step split rule
# (columns near 64 points), split-exchange runs and the group loop for Bluestein's passes. Tests, the
# long-length sample of the FFT sweep, bench_fft twice beside torch_fft, the four models. Carry .gl,
# .devpack, .models-small, build/onda, build/onda_tests, build/bench_fft.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Fft*:Stft*:Dft*:Rnn*' 240
step "sweep long"
ONDA_FFT_SWEEP=long timeout 150 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='FftSweep.Long*' > $logs/sweep_long.txt 2>&1
grep -E "worst|PASSED|FAILED|Failure" $logs/sweep_long.txt | head -20
step fft
timeout 200 bash scripts/gpu/run.sh build/bench_fft --repeats 20 --plans 1 > $logs/fft_all.txt 2>&1
grep -E "^(c2c|r2c|HTD)|rror" $logs/fft_all.txt | cut -c1-100
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-84 $logs/torch_fft.txt | tail -18
fft_variant again "c2c N=16384,r2c N=16384,c2c N=1048576,r2c N=1048576,65537"
mkdir -p $logs/models
time_models $logs/models 120 "median|rror"
step done
pack_logs
