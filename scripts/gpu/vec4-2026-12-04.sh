#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening 2): the vec4 step kernel (rnn_step_vec4.wgsl): the RNN tests, SCNet's
# recurrent shapes with the GEMM step, the tiled step and vec4 tilings side by side (--sweep), cuDNN in
# the same call. Carry .gl, .devpack, build/onda_tests, build/bench_rnn.
set -uo pipefail
source "$(dirname "$0")/common.sh"
TEST_FILTER='Rnn*' gpu_tests x 300
step rnn
timeout 240 bash scripts/gpu/run.sh build/bench_rnn --repeats 3 --sweep --only scnet --variants '^(gemm|tiled|vec4|v[0-9])' > $logs/rnn.txt 2>&1
grep -vE "^(adapter)|^\s*$" $logs/rnn.txt | cut -c1-200
step torch
timeout 150 python3 bench/torch_rnn.py --repeats 5 > $logs/torch_rnn.txt 2>&1; grep -vE "^\s*$" $logs/torch_rnn.txt | tail -14 | cut -c1-120
step done
pack_logs
