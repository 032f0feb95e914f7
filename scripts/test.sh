#!/usr/bin/env bash
# Runs the whole test suite (the README's test command): sets up and builds first if needed.
# On a machine without a GPU the tests run on Mesa's lavapipe; pick another adapter with ONDA_ADAPTER.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ ! -f .deps/dawn/.complete-v1 ] || ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then
  scripts/setup.sh --no-build
fi
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
ctest --test-dir build --output-on-failure "$@"
