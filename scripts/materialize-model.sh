#!/usr/bin/env bash
# Copies a reference model from ../shared/models (or $ONDA_SHARED_MODELS) into the git-ignored
# models/ and regenerates its weights there with the recipe's materialize.py (numpy). Idempotent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
name=$1
shared=${ONDA_SHARED_MODELS:-$root/../shared/models}
if [ ! -f "$shared/$name.onnx" ]; then
  echo "materialize-model.sh: no $name.onnx in $shared (set ONDA_SHARED_MODELS)" >&2
  exit 77
fi
mkdir -p "$root/models"
if [ ! -f "$root/models/$name.weights.bin" ]; then
  cp "$shared/$name.onnx" "$shared/$name.recipe.json" "$shared/materialize.py" "$root/models/"
  chmod u+w "$root/models/"*
  # Debian's python3 has numpy (scripts/setup.sh installs python3-numpy); a pyenv python may not.
  python=python3
  "$python" -c "import numpy" 2>/dev/null || python=/usr/bin/python3
  (cd "$root/models" && "$python" materialize.py "$name.recipe.json")
fi
# The model's description for `onda separate` / `onda enhance` (docs/audio.md), if there is one.
[ ! -f "$root/tools/descriptions/$name.onda.json" ] || cp "$root/tools/descriptions/$name.onda.json" "$root/models/"
echo "$root/models/$name.onnx"
