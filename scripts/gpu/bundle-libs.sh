#!/usr/bin/env bash
# Copies the Debian shared libraries onda's binaries need that a bare GPU machine lacks (protobuf,
# onnx_proto, fmt; libsndfile and soxr with their codecs and OpenMP for `onda separate`) into the
# git-ignored .deps/gpu-libs, which travels with .deps to the GPU machine; scripts/gpu/run.sh puts
# it on the library path there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dest="$root/.deps/gpu-libs"
mkdir -p "$dest"
for binary in "$root"/build/onda "$root"/build/onda_tests; do
  [ -x "$binary" ] || continue
  ldd "$binary" | awk '/=> \// {print $3}' | grep -E "libonnx|libprotobuf|libfmt|libsndfile|libsoxr|libFLAC|libvorbis|libopus|libogg|libmpg123|libmp3lame|libgomp" | while read -r lib; do
    cp -L "$lib" "$dest/"
  done
done
ls "$dest"
