#!/usr/bin/env bash
# Prepared for the next H200 call on issue 6: how the per-step time of the large-batch LSTM steps
# scales, to tell where SCNet's band LSTMs lose to cuDNN (52 us per step at H256 B864 where the FMAs
# alone take ~13 us at the H200's float32 peak). The H256 band layer with the batch halved and doubled,
# and with the hidden size at 128 / 384, beside cuDNN (torch_rnn.py --case) in the same call; the vec4
# step and the GEMM step for each. Reading: a step time flat in B means latency per K tile (deeper
# prefetch, more K slices); linear in B means throughput (bigger register tiles); linear in H at fixed B
# means the K loop itself. Then the vec4 step's tilings on SCNet's three shapes above cuDNN, with the
# NV = 2, double-buffered, 64-128-row and persistent (`ps`: every step in one dispatch) ones that no H200
# has run yet (bench_rnn --sweep), after the RNN tests (which cover them) on the H200.
# Carry .gl, .devpack, build/bench_rnn, build/onda_tests. Logs in $OUT/logs.tgz. The steps' time limits
# add up to 550 s, under one call's 600 (and each step packs the logs so far).
set -uo pipefail
source "$(dirname "$0")/common.sh"
cases=()
for b in 216 432 864 1728; do cases+=(--case "lstm,bi,85,$b,256,256"); done
for h in 128 384; do cases+=(--case "lstm,bi,85,864,$h,$h"); done
cases+=(--case "lstm,bi,433,85,512,512" --case "lstm,bi,433,170,512,512")
gpu_tests 'Rnn*' 120
step rnn
timeout 120 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --variants '^(gemm|vec4)$' "${cases[@]}" > $logs/rnn_scaling.txt 2>&1
grep -E "^(lstm|dispatch)|variants|rror" $logs/rnn_scaling.txt | cut -c1-190
step cudnn
(cd bench && timeout 90 python3 torch_rnn.py --repeats 5 "${cases[@]}") > $logs/torch_scaling.txt 2>&1
cut -c1-100 $logs/torch_scaling.txt
step vec4-sweep
timeout 220 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --sweep --variants '^v' --only scnet \
  > $logs/rnn_vec4_sweep.txt 2>&1
grep -E "^scnet|variants|best|rror" $logs/rnn_vec4_sweep.txt | cut -c1-400
step done
pack_logs
