#!/usr/bin/env bash
# End-to-end check of one reference model: onda on the default adapter against ONNX Runtime's CPU
# provider (npm onnxruntime-node) on the same inputs (the models README's input distributions);
# fails when any output's rel L2 exceeds 1e-4. Exits 77 (skipped) without ../shared/models or Node.
# Arguments after NAME go to `onda run` (e.g. --max-binding-bytes 1048576: the run as on an adapter
# with 1 MiB storage bindings, every large tensor's work split; checked against the same ORT outputs).
#   tests/models/model_matches_ort.sh NAME [ONDA-RUN-OPTIONS...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
name=${1:-mpsenet}
shift || true
work=$root/build/model-check/$name
mkdir -p "$work"
"$root/scripts/materialize-model.sh" "$name" >/dev/null || exit $?
command -v node >/dev/null || { echo "no node: skipped"; exit 77; }
ort_dir=$root/.cache/onnxruntime-node
if [ ! -d "$ort_dir/node_modules/onnxruntime-node" ]; then
  mkdir -p "$ort_dir"
  (cd "$ort_dir" && npm init -y >/dev/null && npm install --silent --ignore-scripts onnxruntime-node@1.30.0 >/dev/null) ||
    { echo "onnxruntime-node not installable: skipped"; exit 77; }
fi
python=python3
"$python" -c "import numpy" 2>/dev/null || python=/usr/bin/python3
"$python" - "$name" "$work" <<'PY'
import sys
import numpy as np
name, work = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
if name == "mpsenet":
    np.save(f"{work}/noisy_mag.npy", (np.abs(rng.standard_normal((1, 201, 321))) ** 0.3).astype(np.float32))
    np.save(f"{work}/noisy_pha.npy", rng.uniform(-np.pi, np.pi, (1, 201, 321)).astype(np.float32))
elif name == "vr_hp_wind_inst":
    np.save(f"{work}/x_mag.npy", np.abs(rng.standard_normal((1, 2, 673, 512))).astype(np.float32))
else:
    length = {"htdemucs6": 343980, "scnetlargestarrytong": 882000, "mdx23c_vocals": 261120,
              "bsroformer_viperx1297": 352800}[name]
    np.save(f"{work}/mix.npy", (0.1 * rng.standard_normal((1, 2, length))).astype(np.float32))
PY
inputs=()
for f in "$work"/*.npy; do [ -f "$f" ] || continue; inputs+=("$(basename "$f" .npy)=$f"); done
# ORT's outputs depend only on the inputs (seeded above): computed once per model (under a lock, so
# that two checks of one model, e.g. with and without a binding cap, may run at once).
(
  flock 9
  [ -f "$work/ort/done" ] ||
    { NODE_PATH=$ort_dir/node_modules node "$root/tools/compare/ort_run.js" "$root/models/$name.onnx" "$work/ort" "${inputs[@]}" &&
      touch "$work/ort/done"; }
) 9>"$work/ort.lock"
args=("$@")
for i in "${inputs[@]}"; do args+=(--input "$i"); done
# --bench 1 unless the options give their own count: the outputs checked are those of a second run
# (cached plans and prepared weights, the command tape replayed).
case " $* " in *" --bench "*) ;; *) args+=(--bench 1) ;; esac
# Each set of onda options writes its own outputs (the default run: onda/).
variant=$(printf '%s' "$*" | tr -c 'A-Za-z0-9' '_')
out=$work/onda${variant:+-$variant}
"$root/build/onda" run "$root/models/$name.onnx" "${args[@]}" --output-dir "$out"
"$python" "$root/tools/compare/rel_l2.py" "$out" "$work/ort" | tee "$out.rel_l2.txt"
worst=$(awk '/worst rel L2/ {print $4}' "$out.rel_l2.txt")
"$python" -c "import sys; sys.exit(0 if float('$worst') <= 1e-4 else 1)" || { echo "rel L2 $worst > 1e-4"; exit 1; }
