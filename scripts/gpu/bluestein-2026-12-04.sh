#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening): Bluestein's shorter convolution (M >= 2N - 2: 65537 -> M = 2^17),
# four-step passes with split exchanges for longer runs (ONDA_FFT_SPLIT_RUNS=1), bench_rnn's new
# "sub ms" column (the layer recorded before the GPU span). Carry .gl, .devpack, build/onda_tests,
# build/bench_rnn, build/bench_fft. Logs in $OUT/logs.tgz.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Fft*:Stft*:Dft*' 240
step "sweep 1..300"
ONDA_FFT_SWEEP=1:300 timeout 150 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='FftSweep.Every*' > $logs/sweep.txt 2>&1
grep -E "worst|PASSED|FAILED" $logs/sweep.txt
step "split runs tests"
ONDA_FFT_SPLIT_RUNS=1 timeout 150 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='FftUnrolled.MatchesFloat64Reference:FftLarge.*:FftSweep.Long*' > $logs/split_tests.txt 2>&1
grep -E "PASSED|FAILED|rel L2 [0-9.]+e-0[1-5]" $logs/split_tests.txt | head
step fft
timeout 200 bash scripts/gpu/run.sh build/bench_fft --repeats 20 > $logs/fft_all.txt 2>&1
grep -E "^(c2c|r2c|HTD)|rror" $logs/fft_all.txt | cut -c1-100
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-84 $logs/torch_fft.txt | tail -18
big="c2c N=16384,r2c N=16384,c2c N=1048576,r2c N=1048576,65537"
fft_variant base "$big"
fft_variant runs "$big" ONDA_FFT_SPLIT_RUNS=1
fft_variant runs-t64 "c2c N=1048576,r2c N=1048576,65537" ONDA_FFT_SPLIT_RUNS=1 ONDA_FFT_THREADS=64
fft_variant runs-loop1 "$big" ONDA_FFT_SPLIT_RUNS=1 ONDA_FFT_LOOP=1
fft_variant runs-max16 "c2c N=16384,65537" ONDA_FFT_SPLIT_RUNS=1 ONDA_FFT_MAX_RUN=16
fft_variant m131220 "65537" ONDA_FFT_BLUESTEIN_M=131220
fft_variant base2 "$big"
step rnn
timeout 300 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --no-variants > $logs/rnn_all.txt 2>&1
grep -E "^[a-zA-Z]|rror" $logs/rnn_all.txt | cut -c1-180
(cd bench && timeout 200 python3 torch_rnn.py --repeats 5) > $logs/torch_rnn.txt 2>&1; cut -c1-100 $logs/torch_rnn.txt
step done
pack_logs
