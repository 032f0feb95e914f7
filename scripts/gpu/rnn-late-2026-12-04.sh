#!/usr/bin/env bash
# H200 call of 2026-12-04 (late, sixth): the projection from W^T row-major as the default: the RNN and
# GEMM tests, every bench_rnn shape beside cuDNN, the four models end to end. Carry .gl, .devpack,
# .models-small, build/onda, build/onda_tests, build/bench_rnn.
set -uo pipefail
source "$(dirname "$0")/common.sh"
TEST_FILTER='Rnn*:Gemm*' gpu_tests x 200
step rnn
timeout 150 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --no-variants > $logs/rnn.txt 2>&1
grep -vE "^(variants|best|adapter)|^\s*$" $logs/rnn.txt | cut -c1-150
timeout 150 python3 bench/torch_rnn.py --repeats 5 > $logs/torch_rnn.txt 2>&1; grep -vE "^\s*$" $logs/torch_rnn.txt | tail -14 | cut -c1-120
time_models $logs 90 "median|rror"
step done
pack_logs
