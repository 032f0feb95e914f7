# Sourced by the GPU-machine scripts of this folder: the output folder ($OUT, else out/), `step NAME`
# (a timestamped heading), `materialize_models` (the reference models from .models-small
# materialized once into /tmp/onda-models; sets $models) and `time_models` (their timed runs).
out=${OUT:-out}
mkdir -p "$out"
t0=$(date +%s)
step() { echo "== $1 ($(( $(date +%s) - t0 )) s)"; }
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
