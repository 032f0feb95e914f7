#!/usr/bin/env bash
# One GPU-machine call for the kernel benchmarks that steer the model work (carry .gl, .devpack,
# build/bench_rnn, build/bench_conv, build/onda_tests): recurrent layers of SCNet and MP-SENet, UVR's
# convs next to cuDNN, and the GEMM tile sweeps. Logs in $OUT.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
t0=$(date +%s)
step() { echo "== $1 ($(( $(date +%s) - t0 )) s)"; }
step rnn
for m in scnet mpsenet; do timeout 120 bash scripts/gpu/run.sh build/bench_rnn --only $m > "$out/bench_rnn_$m.txt" 2>&1; done
grep -hE "^\S|x cuDNN|best" "$out"/bench_rnn_*.txt | cut -c1-220 | tail -40
step conv
OUT=$out timeout 150 bash bench/conv.sh --only vr_ > "$out/conv.txt" 2>&1; tail -40 "$out/conv.txt" | cut -c1-200
step gemm
ONDA_GEMM_BENCH=1 timeout 180 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='GemmBench.AttentionShapes:GemmBench.TileSweep:GemmBench.SkinnySweep' > "$out/gemm.txt" 2>&1
grep -E "auto|old|BEST" "$out/gemm.txt" | cut -c1-200 | tail -40
step done
