#!/usr/bin/env bash
# H200 call of 2026-12-04 (night, first): the new whole-pass defaults (split exchange from 128 points,
# split exchanges unpadded) against the old rule (ONDA_FFT_SPLIT=3 ONDA_FFT_PAD=2); r2c 16384 as a
# four-step plan (ONDA_FFT_MAX_WHOLE=6144); the tiled GEMM's register prefetch (ONDA_GEMM_PREFETCH=1)
# and smaller tiles for short grids (ONDA_GEMM_MIN_TILES) on the GEMM benches and SCNet's LSTMs; beside
# cuFFT / cuDNN. Carry .gl, .devpack, build/bench_fft, build/bench_rnn, build/onda_tests.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Fft*:Stft*:Dft*:Gemm*:Rnn*' 240
step gemm-prefetch-tests
ONDA_GEMM_PREFETCH=1 timeout 120 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='Gemm*:Rnn*' > $logs/tests_prefetch.txt 2>&1
grep -E "^\[  (PASSED|FAILED)|FAILED" $logs/tests_prefetch.txt | tail -6
step fft
fft_variant new ""
w="N=256,N=512,N=1024,N=2048,N=4096,HTD"
fft_variant old "$w" ONDA_FFT_SPLIT=3 ONDA_FFT_PAD=2
fft_variant r16k-4step "r2c N=16384,r2c N=1048576" ONDA_FFT_MAX_WHOLE=6144
fft_variant r16k-loop2 "r2c N=16384" ONDA_FFT_LOOP=2
fft_variant new2 "$w,N=16384"
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "^(c2c|r2c|HTD|stft)" $logs/torch_fft.txt | cut -c1-90
step gemm
for v in base ONDA_GEMM_PREFETCH=1; do
  e=""; [ $v != base ] && e=$v
  env $e ONDA_GEMM_BENCH=1 timeout 120 bash scripts/gpu/run.sh build/onda_tests \
    --gtest_filter='GemmBench.TiledSquare:GemmBench.TiledModelShapesPrepacked' > $logs/gemm_$v.txt 2>&1
  grep -E "tiled|prepacked|TFLOP" $logs/gemm_$v.txt | sed "s/^/$v: /" | cut -c1-170
done
timeout 100 python3 bench/torch_matmul.py > $logs/torch_matmul.txt 2>&1; tail -12 $logs/torch_matmul.txt | cut -c1-120
step rnn
for v in base ONDA_GEMM_PREFETCH=1 ONDA_GEMM_MIN_TILES=400 both; do
  e=""; [ $v != base ] && e=$v; [ $v = both ] && e="ONDA_GEMM_PREFETCH=1 ONDA_GEMM_MIN_TILES=400"
  env $e timeout 90 bash scripts/gpu/run.sh build/bench_rnn --repeats 9 --no-variants --only scnet > $logs/rnn_$v.txt 2>&1
  grep -E "^scnet|rror" $logs/rnn_$v.txt | sed "s/^/$v: /" | cut -c1-150
done
timeout 120 python3 bench/torch_rnn.py > $logs/torch_rnn.txt 2>&1; grep -iE "scnet" $logs/torch_rnn.txt | cut -c1-120
step done
pack_logs
