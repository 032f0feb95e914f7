#!/usr/bin/env bash
# Fetches the pinned Dawn (WebGPU) build from npm into .deps/dawn (git-ignored):
#   lib/libwebgpu_wrapper.so  from bun-webgpu-linux-x64@0.1.7 (Dawn + Tint, C API)
#   include/webgpu/*.h        from react-native-wgpu@0.3.2    (webgpu.h, webgpu_cpp.h)
# Both tarballs and the extracted files are checked against pinned sha256 sums.
# The header is slightly newer than the library; src/gpu/feature_names.cpp translates
# the one enum that differs (WGPUFeatureName).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/.deps/dawn"
stamp="$dest/.complete-v1"
[ -f "$stamp" ] && exit 0

check() {  # check FILE SHA256
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  if [ "$got" != "$2" ]; then
    echo "fetch-dawn: sha256 mismatch for $1: got $got, want $2" >&2
    exit 1
  fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
echo "== fetching Dawn from npm (bun-webgpu-linux-x64@0.1.7, react-native-wgpu@0.3.2)"
npm pack --silent bun-webgpu-linux-x64@0.1.7 >/dev/null
npm pack --silent react-native-wgpu@0.3.2 >/dev/null
check bun-webgpu-linux-x64-0.1.7.tgz 8badfecdad4e726ac12be4f29771f4cbd7ce7683b4418316a547c5bda94fb798
check react-native-wgpu-0.3.2.tgz 81896269a143abc98c9afc2d79d9b7e8d96565e8071e72b28e1a7c10b24b2fef

tar -xzf bun-webgpu-linux-x64-0.1.7.tgz package/libwebgpu_wrapper.so
tar -xzf react-native-wgpu-0.3.2.tgz --wildcards 'package/cpp/webgpu/*.h'
check package/libwebgpu_wrapper.so 3190c3777f2c07fcf6a0640833cbf5d0cde859dc53aed6d9083946d093198788
check package/cpp/webgpu/webgpu.h dddb615a05aad666fd5740360525ae3f06939f850018b805abb1a5eccbd593b9
check package/cpp/webgpu/webgpu_cpp.h a635938e4d4139e236e065f72563d90bab3758358a681eee20908b83134690a6

rm -rf "$dest"
mkdir -p "$dest/lib" "$dest/include/webgpu"
cp package/libwebgpu_wrapper.so "$dest/lib/"
cp package/cpp/webgpu/*.h "$dest/include/webgpu/"
touch "$stamp"
echo "== Dawn in $dest"
