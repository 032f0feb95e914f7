#!/usr/bin/env bash
# One GPU-machine call for the kernel issues' figures (carry .gl, .devpack, .models-small, build/onda,
# build/bench_fft, build/bench_conv, build/onda_tests): FFT throughput (and with table twiddles) next
# to cuFFT, GEMM (each benchmark in its own process) next to cuBLAS, UVR's convs next to cuDNN, then
# each model's timed runs. Logs packed into $OUT/logs.tgz (a call returns few files), summaries on
# stdout. FFT=0 / GEMM=0 / CONV=0 / TORCH=0 skip steps; MODELS="a b" picks models (MODELS=none: none).
# Dawn's robustness follows ONDA_ROBUSTNESS as everywhere (on by default).
set -uo pipefail
source "$(dirname "$0")/common.sh"
torch() { [ "${TORCH:-1}" != 0 ] && timeout 150 python3 "$@"; }
if [ "${FFT:-1}" != 0 ]; then
  step fft
  timeout 150 bash scripts/gpu/run.sh build/bench_fft --repeats 20 --plans 1 > $logs/fft.txt 2>&1
  grep -E "^(c2c|r2c|HTD)" $logs/fft.txt | cut -c1-110
  ONDA_FFT_TWIDDLE=table timeout 150 bash scripts/gpu/run.sh build/bench_fft --repeats 20 > $logs/fft_table.txt 2>&1
  grep -E "^(c2c|r2c|HTD)" $logs/fft_table.txt | sed "s/^/table: /" | cut -c1-110
  torch bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-110 $logs/torch_fft.txt | tail -18
fi
if [ "${GEMM:-1}" != 0 ]; then
  step gemm
  for t in TiledSquare TiledModelShapesPrepacked SkinnySweep TileSweep; do
    ONDA_GEMM_BENCH=1 timeout 150 bash scripts/gpu/run.sh build/onda_tests --gtest_filter="GemmBench.$t" > $logs/gemm_$t.txt 2>&1
    [ $t = SkinnySweep ] && ONDA_ROBUSTNESS=0 ONDA_GEMM_BENCH=1 timeout 150 bash scripts/gpu/run.sh build/onda_tests --gtest_filter="GemmBench.$t" > $logs/gemm_${t}_rb0.txt 2>&1 && grep -E "auto|BEST" $logs/gemm_${t}_rb0.txt | sed "s/^/rb0: /" | cut -c1-170
    grep -E "^  tiled|  M=|auto|BEST|prepacked|packed" $logs/gemm_$t.txt | sed "s/^/$t: /" | cut -c1-170 | tail -24
  done
  torch bench/torch_matmul.py > $logs/torch_matmul.txt 2>&1; head -20 $logs/torch_matmul.txt
fi
if [ "${CONV:-1}" != 0 ]; then
  step conv
  timeout 200 bash scripts/gpu/run.sh build/bench_conv --cases bench/conv_cases.txt --only "${CONV_ONLY:-vr_}" > $logs/conv.txt 2>&1
  grep -vE "^ " $logs/conv.txt | cut -c1-150 | tail -40
  torch bench/torch_conv.py --only "${CONV_ONLY:-vr_}" > $logs/torch_conv.txt 2>&1; tail -16 $logs/torch_conv.txt | cut -c1-150
fi
time_models $logs 150 "median|recording|peak|rror"
step done
pack_logs
