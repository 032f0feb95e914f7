#!/usr/bin/env bash
# H200 call of 2026-12-04 (night, second): four-step twiddles from two short tables (default) against
# the F-entry gather (ONDA_FFT_FOUR_STEP_TWIDDLE=full); three passes (ONDA_FFT_THREE_PASS_FROM) for
# c2c 16384 / 2^20 with runs of 8 / 16 / 32 (ONDA_FFT_MAX_RUN); the whole-pass split rule back to
# unsplit at L = 256; the FFT tests and the long-length sweep with three passes from 2^18. Beside
# cuFFT. Carry .gl, .devpack, build/bench_fft, build/onda_tests.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Fft*:Stft*:Dft*' 200
step fft
f="c2c N=16384,c2c N=1048576,r2c N=1048576,Bluestein"
fft_variant split "$f"
fft_variant full "$f" ONDA_FFT_FOUR_STEP_TWIDDLE=full
for r in 8 16 32; do
  fft_variant three-run$r "c2c N=16384,c2c N=1048576" ONDA_FFT_THREE_PASS_FROM=16384 ONDA_FFT_MAX_RUN=$r
done
fft_variant all ""
fft_variant split2 "$f"
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "^(c2c|r2c|HTD)" $logs/torch_fft.txt | cut -c1-90
step sweep-long
ONDA_FFT_THREE_PASS_FROM=262144 ONDA_FFT_SWEEP=long timeout 200 bash scripts/gpu/run.sh build/onda_tests \
  --gtest_filter='FftSweep.LongLengthsAndRoundTrips' > $logs/sweep_long.txt 2>&1
grep -E "worst|OK|FAILED|Failure" $logs/sweep_long.txt | tail -8
step done
pack_logs
