#!/usr/bin/env bash
# onda's main job on the default adapter: materialize one of the reference models (weights are
# regenerated deterministically from ../shared/models into the git-ignored models/) and run it
# end to end on the GPU with random inputs, printing timings and the per-op profile.
#   scripts/run-model.sh [mpsenet|vr_hp_wind_inst|htdemucs6|scnetlargestarrytong] [onda run options...]
# MP-SENet, the smallest, takes a few minutes on lavapipe (CPU) and milliseconds on a GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
name=${1:-mpsenet}
shift || true
"$root/scripts/materialize-model.sh" "$name" >/dev/null
exec "$root/build/onda" run "$root/models/$name.onnx" --random-inputs --profile "$@"
