#!/usr/bin/env bash
# One GPU-machine call for the recurrent work and its effect on the models (carry .gl, .devpack,
# .models-small, build/onda, build/bench_rnn, build/onda_tests): the RNN tests on the GPU, bench_rnn
# with its variants next to cuDNN (bench/rnn.sh), then each model's profiled run (onda run --bench).
# ONLY=substring limits bench_rnn's cases; MODELS="a b" the models; TESTS=0 / RNN=0 skip steps.
set -uo pipefail
source "$(dirname "$0")/common.sh"
materialize_models
if [ "${TESTS:-1}" != 0 ]; then
  step "tests ${TEST_FILTER:-Rnn*}"
  timeout 200 bash scripts/gpu/run.sh build/onda_tests --gtest_filter="${TEST_FILTER:-Rnn*}" > "$out/tests.txt" 2>&1
  grep -E "^\[  FAILED|PASSED|FAILED TEST" "$out/tests.txt" | head -20
fi
if [ "${RNN:-1}" != 0 ]; then
  step bench_rnn
  OUT=$out timeout 300 bash bench/rnn.sh ${ONLY:+--only "$ONLY"} ${RNN_ARGS:-} > "$out/rnn_all.txt" 2>&1
  grep -E "^(mpsenet|biLSTM|LSTM|scnet|uvr|dispatch)|best" "$out/bench_rnn.txt" | cut -c1-200
  grep -A20 "^case" "$out/torch_rnn.txt" | cut -c1-120
fi
for m in ${MODELS:-mpsenet vr_hp_wind_inst htdemucs6 scnetlargestarrytong}; do
  step "model $m"
  timeout 120 bash scripts/gpu/run.sh build/onda run $models/$m.onnx --random-inputs --bench 10 --profile > "$out/model_$m.txt" 2>&1
  grep -E "runs:|median run|recording|dispatches|peak" "$out/model_$m.txt" | head -6
  grep -A12 -iE "^ *op type|by op" "$out/model_$m.txt" | head -16
done
step done
