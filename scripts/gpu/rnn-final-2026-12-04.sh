#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening 2, fifth): bias terms loaded once per unit (a278c63) against the code
# before it (7488c06, build/bench_rnn_old), alternating twice; cuDNN in the same call; the RNN tests.
# Carry .gl, .devpack, build/onda_tests, build/bench_rnn, build/bench_rnn_old.
set -uo pipefail
source "$(dirname "$0")/common.sh"
TEST_FILTER='Rnn*' gpu_tests x 300
for r in 1 2; do
  for v in old new; do
    step "rnn $v $r"
    bin=build/bench_rnn; [ $v = old ] && bin=build/bench_rnn_old
    timeout 150 bash scripts/gpu/run.sh $bin --repeats 5 --no-variants > $logs/rnn_${v}_$r.txt 2>&1
    grep -vE "^(adapter)|^\s*$" $logs/rnn_${v}_$r.txt | cut -c1-170
  done
done
step torch
timeout 200 python3 bench/torch_rnn.py --repeats 5 > $logs/torch_rnn.txt 2>&1; grep -vE "^\s*$" $logs/torch_rnn.txt | tail -14 | cut -c1-120
step done
pack_logs
