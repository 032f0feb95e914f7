# Sourced by the GPU-machine scripts of this folder: the output folder ($OUT, else out/), `step NAME`
# (a timestamped heading), and `materialize_models` (the reference models from .models-small
# materialized once into /tmp/onda-models; sets $models).
out=${OUT:-out}
mkdir -p "$out"
t0=$(date +%s)
step() { echo "== $1 ($(( $(date +%s) - t0 )) s)"; }
materialize_models() {
  models=/tmp/onda-models
  if [ ! -f $models/.materialized ]; then
    step materialize
    mkdir -p $models && cp .models-small/* $models/
    (cd $models && for r in *.recipe.json; do python3 materialize.py "$r" >/dev/null; done && touch .materialized)
  fi
}
