#!/usr/bin/env bash
# Packs what ONNX Runtime's WebGPU provider needs on the GPU machine, which has no Node.js and no
# registry: this machine's `node` binary and onnxruntime-node@1.30.0's JavaScript and linux-x64
# library (it carries its own Dawn), xz-compressed, into the git-ignored .ortweb/ (~40 MB; carry it
# in a call of its own, the build does not fit next to it). bench/ort-webgpu.sh unpacks it there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=$root/.cache/onnxruntime-node
if [ ! -d "$cache/node_modules/onnxruntime-node" ]; then
  mkdir -p "$cache"
  (cd "$cache" && npm install --ignore-scripts --no-audit --no-fund onnxruntime-node@1.30.0 >/dev/null)
fi
out=$root/.ortweb
rm -rf "$out" && mkdir -p "$out"
xz -T2 -6 -c "$(command -v node)" > "$out/node.xz"
stage=$(mktemp -d)
mods=$stage/node_modules
mkdir -p "$mods/onnxruntime-node/bin/napi-v6/linux"
cp -r "$cache/node_modules/onnxruntime-common" "$mods/"
ortn=$cache/node_modules/onnxruntime-node
cp -r "$ortn/package.json" "$ortn/dist" "$ortn/lib" "$mods/onnxruntime-node/"
cp -r "$ortn/bin/napi-v6/linux/x64" "$mods/onnxruntime-node/bin/napi-v6/linux/"
tar -C "$stage" -cf - node_modules | xz -T2 -6 > "$out/node_modules.tar.xz"
rm -rf "$stage"
du -sh "$out"/*
