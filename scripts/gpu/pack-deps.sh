#!/usr/bin/env bash
# A call to the GPU machine carries at most 64 MiB: Dawn and the bundled libraries (.deps, ~27 MB)
# next to the whole build folder and the ONNX Runtime bundle do not fit. This packs .deps/dawn and
# .deps/gpu-libs xz-compressed into the git-ignored .devpack/deps.tar.xz (~7 MB); bench/h200.sh and
# bench/ort-webgpu.sh unpack it there when .deps is missing. Run scripts/gpu/bundle-libs.sh first.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/.devpack"
tar -C "$root/.deps" -cf - dawn gpu-libs | xz -T2 -6 > "$root/.devpack/deps.tar.xz"
ls -la "$root/.devpack/deps.tar.xz"
