#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening, confirmation of the resident chooser's KQ 8 for small LSTMs):
# the RNN tests, bench_rnn on UVR's shapes and the MP-SENet GRUs beside cuDNN, and the UVR model.
# Carry .gl, .devpack, .models-small, build/onda, build/onda_tests, build/bench_rnn.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Rnn*' 200
step rnn
for only in uvr mpsenet; do
  timeout 100 bash scripts/gpu/run.sh build/bench_rnn --repeats 9 --no-variants --only $only > $logs/rnn_$only.txt 2>&1
  grep -E "^(uvr|mpsenet)|rror" $logs/rnn_$only.txt | cut -c1-150
done
(cd bench && timeout 200 python3 torch_rnn.py --repeats 9) > $logs/torch_rnn.txt 2>&1; grep -E "uvr|mpsenet|issue" $logs/torch_rnn.txt
mkdir -p $logs/models
MODELS="vr_hp_wind_inst mpsenet" time_models $logs/models 120 "median|rror"
step done
pack_logs
