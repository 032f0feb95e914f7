#!/usr/bin/env bash
# H200 call of 2026-12-04 (late, fifth): the tiled GEMM on SCNet's band-LSTM projection shapes with B
# row-major / transposed / prepacked, then SCNet's LSTMs with the projection reading W^T row-major
# (ONDA_RNN_PROJECTION_B=row_major) against the prepacked default, beside cuDNN. Carry .gl, .devpack,
# build/onda_tests, build/bench_rnn.
set -uo pipefail
source "$(dirname "$0")/common.sh"
step gemm
ONDA_GEMM_BENCH=1 timeout 200 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='GemmBench.TiledModelShapesPrepacked' > $logs/gemm.txt 2>&1
grep -E "GFLOP|PASSED|FAILED" $logs/gemm.txt | cut -c1-130
step rnn
timeout 120 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --no-variants --only scnet > $logs/rnn_packed.txt 2>&1
ONDA_RNN_PROJECTION_B=row_major timeout 120 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --no-variants --only scnet > $logs/rnn_rowmajor.txt 2>&1
grep -E "scnet" $logs/rnn_packed.txt | sed 's/^/packed: /' | cut -c1-150
grep -E "scnet" $logs/rnn_rowmajor.txt | sed 's/^/rowmajor: /' | cut -c1-150
timeout 120 python3 bench/torch_rnn.py --repeats 5 > $logs/torch_rnn.txt 2>&1; grep -i "scnet" $logs/torch_rnn.txt | cut -c1-120
step done
pack_logs
