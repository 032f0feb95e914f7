#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening 2, sixth): flags and default activations compiled into the cell kernels
# (HEAD) against a278c63 (build/bench_rnn_old), alternating twice; cuDNN in the same call; the RNN tests;
# the four models end to end. Carry .gl, .devpack, .models-small, build/onda, build/onda_tests,
# build/bench_rnn, build/bench_rnn_old.
set -uo pipefail
source "$(dirname "$0")/common.sh"
TEST_FILTER='Rnn*:Gemm*' gpu_tests x 300
for r in 1 2; do
  for v in old new; do
    step "rnn $v $r"
    bin=build/bench_rnn; [ $v = old ] && bin=build/bench_rnn_old
    timeout 150 bash scripts/gpu/run.sh $bin --repeats 5 --no-variants > $logs/rnn_${v}_$r.txt 2>&1
    grep -vE "^(adapter|dispatch|case)|^\s*$" $logs/rnn_${v}_$r.txt | cut -c1-100
  done
done
step torch
timeout 200 python3 bench/torch_rnn.py --repeats 5 > $logs/torch_rnn.txt 2>&1; grep -vE "^\s*$" $logs/torch_rnn.txt | tail -14 | cut -c1-120
time_models $logs 120 "median|rror"
step done
pack_logs
