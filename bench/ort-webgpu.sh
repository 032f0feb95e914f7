#!/usr/bin/env bash
# On the GPU machine: ONNX Runtime 1.30's WebGPU provider on each reference model, one process per
# model (see bench/ort_time.js), with the bundle from scripts/gpu/bundle-ort.sh (carry .ortweb, .gl
# and .models-small). Prints one JSON line per model; appends them to $OUT/ort_webgpu.jsonl.
#   bash bench/ort-webgpu.sh [RUNS] [MODEL...]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
runs=${1:-20}; shift || true
tools=/tmp/ortweb
if [ ! -x "$tools/node" ]; then
  mkdir -p "$tools"
  xz -dc "$root/.ortweb/node.xz" > "$tools/node" && chmod +x "$tools/node"
  xz -dc "$root/.ortweb/node_modules.tar.xz" | tar -C "$tools" -xf -
fi
for f in "$root"/.gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done; ldconfig
models=/tmp/onda-models
if [ ! -f "$models/.materialized" ]; then
  mkdir -p "$models" && cp "$root"/.models-small/* "$models"/
  (cd "$models" && for r in *.recipe.json; do python3 materialize.py "$r" >/dev/null; done && touch .materialized)
fi
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(mpsenet vr_hp_wind_inst htdemucs6 scnetlargestarrytong)
for m in "${names[@]}"; do
  NODE_PATH=$tools/node_modules timeout 300 "$tools/node" "$root/bench/ort_time.js" "$models/$m.onnx" webgpu "$runs" \
    2> "/tmp/ort_webgpu_$m.err" | tee -a "$out/ort_webgpu.jsonl"
  rc=${PIPESTATUS[0]}
  if [ "$rc" != 0 ]; then
    echo "{\"model\": \"$m.onnx\", \"provider\": \"webgpu\", \"error\": \"exit $rc\"}" | tee -a "$out/ort_webgpu.jsonl"
    tail -5 "/tmp/ort_webgpu_$m.err"
  fi
done
