#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening 2, fourth): the stationary kernel (rnn_sequence_stationary.wgsl: R^T in
# workgroup memory for the whole sequence, h traded through the exchange): its tests, SCNet's recurrent
# shapes with it (automatic and fixed tilings) beside the GEMM, tiled and vec4 steps. Carry .gl,
# .devpack, build/onda_tests, build/bench_rnn.
set -uo pipefail
source "$(dirname "$0")/common.sh"
TEST_FILTER='RnnKernel.Stationary:RnnKernel.Cooperative*:RnnKernel.Vec4Step' gpu_tests x 300
step sweep
timeout 400 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --sweep --only scnet --variants '^(gemm|tiled|vec4|stationary|s[0-9])' > $logs/sweep.txt 2>&1
grep -vE "^(adapter)|^\s*$" $logs/sweep.txt | cut -c1-1200
step done
pack_logs
