#!/usr/bin/env bash
# Prepares a bare GPU machine (no Vulkan loader installed, no apt) and runs a command there:
#   bash scripts/gpu/run.sh build/onda info
# It unpacks the Vulkan loader packages kept in the git-ignored .gl/ (fetch them once on a Debian/Ubuntu
# machine with scripts/gpu/fetch-loader.sh), finds the NVIDIA ICD when the loader does not, and
# points the dynamic linker at the Dawn library in .deps/dawn/lib. The build/ folder and .deps/dawn
# must travel with the checkout (binaries built on Debian 12 run on Ubuntu 24.04).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# .deps carried compressed (scripts/gpu/pack-deps.sh) when the build and other bundles leave no room.
if [ ! -d .deps/dawn ] && [ -f .devpack/deps.tar.xz ]; then
  mkdir -p .deps && xz -dc .devpack/deps.tar.xz | tar -C .deps -xf -
fi
if ! ldconfig -p | grep -q libvulkan.so.1; then
  if ! ls .gl/*.deb >/dev/null 2>&1; then
    echo "run.sh: no Vulkan loader here and no .gl/*.deb to unpack (run scripts/gpu/fetch-loader.sh first)" >&2
    exit 1
  fi
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] &&
   ! ls /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json >/dev/null 2>&1; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
# .deps/gpu-libs: Debian libraries the GPU machine lacks (scripts/gpu/bundle-libs.sh), last in line.
export LD_LIBRARY_PATH="$root/.deps/dawn/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}:$root/.deps/gpu-libs"
exec "$@"
