#!/usr/bin/env bash
# The closing GPU-machine call of a session (carry .gl, .devpack, .models-small, build/onda,
# build/onda_tests, build/bench_conv, build/bench_rnn): the whole test suite, the conv and recurrent
# benchmark cases the session changed, each model's timed runs, and SCNet against ONNX Runtime with
# float64 reductions. Logs in $OUT/logs.tgz, summaries on stdout. TESTS=0 / CONV=0 / RNN=0 /
# MODELS=none / ACCURATE=0 skip steps; RNN_ONLY / CONV_ONLY pick cases (space-separated substrings).
set -uo pipefail
source "$(dirname "$0")/common.sh"
run() { bash scripts/gpu/run.sh "$@"; }
if [ "${TESTS:-1}" != 0 ]; then
  step tests
  timeout 240 bash scripts/gpu/run.sh build/onda_tests > $logs/tests.txt 2>&1; echo "rc $?"
  grep -E "^\[  (PASSED|FAILED)|tests? ran|FAILED  \]" $logs/tests.txt | head -12
fi
if [ "${CONV:-1}" != 0 ]; then
  step conv
  for s in ${CONV_ONLY:-htdemucs_dec htdemucs_tdec htdemucs_dconv scnet_conv2d scnet_convT}; do
    timeout 60 bash scripts/gpu/run.sh build/bench_conv --cases bench/conv_cases.txt --only $s >> $logs/conv.txt 2>&1
  done
  grep -vE "^ |^adapter|^case" $logs/conv.txt | cut -c1-110
fi
if [ "${RNN:-1}" != 0 ]; then
  step rnn
  for s in ${RNN_ONLY:-scnet}; do
    timeout 120 bash scripts/gpu/run.sh build/bench_rnn --only "$s" >> $logs/rnn.txt 2>&1
  done
  grep -vE "^ +best" $logs/rnn.txt | cut -c1-200
fi
time_models $logs 90 "runs:|median run|rror"
if [ "${ACCURATE:-1}" != 0 ]; then
  materialize_models
  step "accurate reference scnet"
  timeout ${ACCURATE_TIMEOUT:-150} bash scripts/gpu/run.sh python3 bench/accurate_reference.py $models/scnetlargestarrytong.onnx > $logs/accurate_scnet.txt 2>&1
  tail -8 $logs/accurate_scnet.txt
fi
step done
pack_logs
