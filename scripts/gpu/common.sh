# Sourced by measure.sh: the output folder ($OUT, else out/), the logs folder $logs (/tmp/onda-logs,
# packed into $out/logs.tgz by `pack_logs`), `step NAME` (a timestamped heading), `gpu_tests`,
# `materialize_models` (the reference models from .models-small materialized once into
# /tmp/onda-models; sets $models) and `time_models` (their timed runs).
out=${OUT:-out}
mkdir -p "$out"
logs=/tmp/onda-logs
mkdir -p $logs
pack_logs() { tar -C $logs -czf "$out/logs.tgz" .; }
# gpu_tests FILTER TIMEOUT_S: build/onda_tests on the tests matching FILTER (TEST_FILTER overrides it),
# log in $logs/tests.txt, the summary lines on stdout; skipped with TESTS=0.
gpu_tests() {
  [ "${TESTS:-1}" = 0 ] && return
  step tests
  timeout "$2" bash scripts/gpu/run.sh build/onda_tests --gtest_filter="${TEST_FILTER:-$1}" > $logs/tests.txt 2>&1
  grep -E "^\[  (PASSED|FAILED)|FAILED|tests ran" $logs/tests.txt | tail -12
}
t0=$(date +%s)
# Each step first packs the logs so far: a call killed at the device's time limit still brings back
# everything up to the step it was in.
step() { pack_logs; echo "== $1 ($(( $(date +%s) - t0 )) s)"; }
# time_models LOGDIR TIMEOUT_S PATTERN: `onda run --bench 20` on each of $MODELS (default: the four;
# MODELS=none: none), its log in LOGDIR/model_NAME.txt, the lines matching PATTERN on stdout.
time_models() {
  [ "${MODELS:-}" = none ] && return
  materialize_models
  for m in ${MODELS:-mpsenet vr_hp_wind_inst htdemucs6 scnetlargestarrytong}; do
    step "model $m"
    timeout "$2" bash scripts/gpu/run.sh build/onda run $models/$m.onnx --random-inputs --bench 20 > "$1/model_$m.txt" 2>&1
    grep -E "$3" "$1/model_$m.txt" | head -4
  done
}
materialize_models() {
  models=/tmp/onda-models
  if [ ! -f $models/.materialized ]; then
    step materialize
    mkdir -p $models && cp .models-small/* $models/
    (cd $models && for r in *.recipe.json; do python3 materialize.py "$r" >/dev/null; done && touch .materialized)
  fi
}
