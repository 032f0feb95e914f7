#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening 2, third): the vec4 step (gate-vec4 accumulators) as the automatic
# kernel for batches 32..255: the RNN tests, the vec4 tilings around SCNet's B = 85 H512 time LSTM,
# every bench_rnn shape, SCNet end to end. Carry .gl, .devpack, .models-small, build/onda,
# build/onda_tests, build/bench_rnn.
set -uo pipefail
source "$(dirname "$0")/common.sh"
TEST_FILTER='Rnn*' gpu_tests x 300
step sweep
timeout 200 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --sweep --only "scnet H512 time" --variants '^(gemm|tiled|vec4|v[0-9])' > $logs/sweep.txt 2>&1
grep -vE "^(adapter)|^\s*$" $logs/sweep.txt | cut -c1-900
step rnn
timeout 200 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --no-variants > $logs/rnn.txt 2>&1
grep -vE "^(adapter)|^\s*$" $logs/rnn.txt | cut -c1-200
MODELS=scnetlargestarrytong time_models $logs 120 "median|rror"
step done
pack_logs
