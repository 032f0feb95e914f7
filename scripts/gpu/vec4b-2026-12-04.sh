#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening 2, second): the vec4 step with its accumulators indexed by constants
# only (#for): its test, SCNet's recurrent shapes with the GEMM step, the tiled step and vec4 tilings
# side by side. Carry .gl, .devpack, build/onda_tests, build/bench_rnn.
set -uo pipefail
source "$(dirname "$0")/common.sh"
TEST_FILTER='RnnKernel.Vec4Step' gpu_tests x 300
REPEATS=${REPEATS:-3}
step rnn
timeout 300 bash scripts/gpu/run.sh build/bench_rnn --repeats $REPEATS --sweep --only scnet --variants '^(gemm|tiled|vec4|v[0-9])' > $logs/rnn.txt 2>&1
grep -vE "^(adapter)|^\s*$" $logs/rnn.txt | cut -c1-900
step done
pack_logs
