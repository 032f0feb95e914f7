#!/usr/bin/env bash
# Prepared for the next H200 call (issue 6; written 2026-12-04): the tiled GEMM's inner loop unrolled by the template's #for
# (ONDA_GEMM_FOR_UNROLL=1, GemmVariant::for_unroll) against the WGSL loops (=0), with 4 x 4 and 8 x 8 outputs per thread
# (ONDA_GEMM_NV=2): the GEMM benchmarks and SCNet's recurrent layers (projection + GEMM step).
# Carry .gl, .devpack, build/onda_tests, build/bench_rnn. The steps' time limits add up to 555 s, under one
# call's 600 (and each step packs the logs so far).
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests "Gemm*:MatMul*:-GemmBench*" 90
for run in 1 2; do
  for cfg in "1 1" "0 1" "1 2" "0 2"; do
    set -- $cfg
    step "gemm unroll=$1 nv=$2 run $run"
    ONDA_GEMM_BENCH=1 ONDA_GEMM_FOR_UNROLL=$1 ONDA_GEMM_NV=$2 timeout 45 bash scripts/gpu/run.sh build/onda_tests \
      --gtest_filter='GemmBench.TiledSquare:GemmBench.TiledModelShapesPrepacked' > $logs/gemm_$1_$2_$run.txt 2>&1
    grep -E "ms .*GFLOP" $logs/gemm_$1_$2_$run.txt | grep -vE " 512x  512| 1024x 1024" | sed -E 's/ +/ /g' | cut -c1-140
  done
done
for cfg in "1 1" "0 1" "1 2"; do
  set -- $cfg
  step "rnn unroll=$1 nv=$2"
  ONDA_GEMM_FOR_UNROLL=$1 ONDA_GEMM_NV=$2 timeout 35 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --only "scnet H" \
    --variants '^(gemm|vec4)$' > $logs/rnn_$1_$2.txt 2>&1
  grep -E "^scnet|variants" $logs/rnn_$1_$2.txt | cut -c1-170
done
step done
pack_logs
