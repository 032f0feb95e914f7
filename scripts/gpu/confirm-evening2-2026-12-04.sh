#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening 2, last): the vec4 step's new defaults (32 x 16 / 32 x 32 tiles, and
# for B >= 256 with H < 512 instead of the GEMM step): SCNet's recurrent shapes beside the GEMM step,
# SCNet end to end. Carry .gl, .devpack, .models-small, build/onda, build/bench_rnn.
set -uo pipefail
source "$(dirname "$0")/common.sh"
step rnn
timeout 120 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --only scnet --variants '^(gemm|vec4)$' > $logs/rnn.txt 2>&1
grep -E "^scnet|variants" $logs/rnn.txt | cut -c1-170
MODELS=scnetlargestarrytong time_models $logs 100 "median|rror"
step done
pack_logs
