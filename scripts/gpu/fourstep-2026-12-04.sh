#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening, second): four-step passes with split exchanges for longer runs
# (ONDA_FFT_SPLIT_RUNS=1/2), their loop counts, and the four-step split of Bluestein 65537's M = 2^17
# and of c2c 16384 (ONDA_FFT_COLUMNS=N1). Carry .gl, .devpack, build/onda_tests, build/bench_fft.
set -uo pipefail
source "$(dirname "$0")/common.sh"
step "split runs tests"
ONDA_FFT_SPLIT_RUNS=2 timeout 120 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='FftLarge.*:FftSweep.Long*' > $logs/split_tests.txt 2>&1
grep -E "PASSED|FAILED|rel L2 [0-9.]+e-0[1-5]" $logs/split_tests.txt | head
step fft
big="c2c N=1048576,r2c N=1048576"
fft_variant base "$big,c2c N=16384,65537"
fft_variant runs2 "$big" ONDA_FFT_SPLIT_RUNS=2
fft_variant runs2-loop1 "$big" ONDA_FFT_SPLIT_RUNS=2 ONDA_FFT_LOOP=1
fft_variant runs2-loop2 "$big" ONDA_FFT_SPLIT_RUNS=2 ONDA_FFT_LOOP=2
fft_variant runs1-loop1 "$big" ONDA_FFT_SPLIT_RUNS=1 ONDA_FFT_LOOP=1
for n1 in 64 128 512 1024; do
  fft_variant b-cols$n1 "65537" ONDA_FFT_COLUMNS=$n1
  fft_variant b-cols$n1-runs2 "65537" ONDA_FFT_COLUMNS=$n1 ONDA_FFT_SPLIT_RUNS=2
done
for n1 in 64 256; do
  fft_variant c-cols$n1 "c2c N=16384" ONDA_FFT_COLUMNS=$n1
  fft_variant c-cols$n1-runs2 "c2c N=16384" ONDA_FFT_COLUMNS=$n1 ONDA_FFT_SPLIT_RUNS=2
done
fft_variant base2 "$big,c2c N=16384,65537"
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "16384|1048576|65537" $logs/torch_fft.txt
step done
pack_logs
