#!/usr/bin/env bash
# Copies the Debian shared libraries onda's binaries need that a bare GPU machine lacks (protobuf,
# onnx_proto, fmt) into the git-ignored .deps/gpu-libs, which travels with .deps to the GPU machine;
# scripts/gpu/run.sh puts it on the library path there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dest="$root/.deps/gpu-libs"
mkdir -p "$dest"
for binary in "$root"/build/onda "$root"/build/onda_tests; do
  [ -x "$binary" ] || continue
  ldd "$binary" | awk '/=> \// {print $3}' | grep -E "libonnx|libprotobuf|libfmt" | while read -r lib; do
    cp -L "$lib" "$dest/"
  done
done
ls "$dest"
