#!/usr/bin/env bash
# Builds and installs the Python package `onda` (pyproject.toml, docs/python.md) into the virtual
# environment build/venv, made with --system-site-packages so that Debian's numpy, pytest, onnx,
# pybind11 and scikit-build-core serve it (pip builds with --no-build-isolation: nothing is
# downloaded). Debian's python3 refuses pip installs into the system itself (PEP 668).
# The CMake build lives in build/python/<tag>/ (pyproject's build-dir): a second install rebuilds
# only what changed. Prints the venv's python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
python=/usr/bin/python3  # Debian's (its packages are the ones installed); a pyenv python3 may come first in PATH
venv=$root/build/venv
if ! "$python" -c "import scikit_build_core, pybind11, numpy" 2>/dev/null; then
  echo "install-python.sh: $python lacks scikit-build-core, pybind11 or numpy: run scripts/setup.sh" >&2
  exit 1
fi
[ -x "$venv/bin/python3" ] || "$python" -m venv --system-site-packages "$venv"
start=$(date +%s)
"$venv/bin/python3" -m pip install --quiet --no-build-isolation --no-deps "$root" >&2
echo "== install-python.sh: onda installed into $venv in $(( $(date +%s) - start )) s" >&2
echo "$venv/bin/python3"
