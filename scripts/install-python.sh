#!/usr/bin/env bash
# Builds and installs the Python package `onda` (pyproject.toml, docs/python.md) into the virtual
# environment build/venv, made with --system-site-packages so that Debian's numpy, pytest, onnx,
# pybind11 and scikit-build-core serve it (pip builds with --no-build-isolation: nothing is
# downloaded). Debian's python3 refuses pip installs into the system itself (PEP 668).
#
# Where the main build folder build/ exists (scripts/test.sh, CI), pip builds the module IN it
# (scikit-build-core's build-dir, overridden below, with the main build's own options repeated), so
# the layer libraries compiled there are reused and only the module compiles: the C++ is built
# once. Otherwise (a fresh clone, as `pip install .` alone) pip builds everything in its own folder
# build/python/<tag> (pyproject's build-dir). Either way a second install rebuilds only what changed.
#
#   scripts/install-python.sh                 install into build/venv; prints the venv's python3
#   scripts/install-python.sh --wheel DIR     build a wheel into DIR instead (python3 -m build); prints its path
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
python=/usr/bin/python3  # Debian's (its packages are the ones installed); a pyenv python3 may come first in PATH
venv=$root/build/venv
wheel_dir=
if [ "${1:-}" = --wheel ]; then
  wheel_dir=${2:?--wheel needs a folder}
fi
if ! "$python" -c "import scikit_build_core, pybind11, numpy" 2>/dev/null; then
  echo "install-python.sh: $python lacks scikit-build-core, pybind11 or numpy: run scripts/setup.sh" >&2
  exit 1
fi

# scikit-build-core settings that point the build at build/ with the options build/ has.
settings=()
cache=$root/build/CMakeCache.txt
cached() { sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -1; }
if [ -f "$cache" ] && [ "$(cached CMAKE_GENERATOR)" = Ninja ] && [ "$(cached CMAKE_HOME_DIRECTORY)" = "$root" ]; then
  settings+=(build-dir=build "cmake.build-type=$(cached CMAKE_BUILD_TYPE | sed "s/^$/Release/")" cmake.define.ONDA_PYTHON_CCACHE=OFF)
  for option in ONDA_BUILD_TESTS ONDA_BUILD_BENCH ONDA_BUILD_TOOLS; do
    value=$(cached $option)
    settings+=("cmake.define.$option=${value:-ON}")
  done
fi
flags=()
for s in "${settings[@]}"; do flags+=(--config-settings="$s"); done
# pip points build/'s install prefix at its temporary wheel folder: put the user's back afterwards.
prefix=
if [ ${#settings[@]} -gt 0 ]; then
  prefix=$(cached CMAKE_INSTALL_PREFIX)
  trap 'cmake -DCMAKE_INSTALL_PREFIX="$prefix" "$root/build" >/dev/null' EXIT
fi

start=$(date +%s)
if [ -n "$wheel_dir" ]; then
  build_flags=()
  for s in "${settings[@]}"; do build_flags+=("--config-setting=$s"); done
  "$python" -m build --no-isolation --wheel --outdir "$wheel_dir" "${build_flags[@]}" "$root" >&2
  echo "== install-python.sh: wheel built in $(( $(date +%s) - start )) s${settings:+ (in build/)}" >&2
  ls -t "$wheel_dir"/onda-*.whl | head -1
  exit 0
fi
[ -x "$venv/bin/python3" ] || "$python" -m venv --system-site-packages "$venv"
"$venv/bin/python3" -m pip install --quiet --no-build-isolation --no-deps "${flags[@]}" "$root" >&2
echo "== install-python.sh: onda installed into $venv in $(( $(date +%s) - start )) s${settings:+ (built in build/)}" >&2
echo "$venv/bin/python3"
