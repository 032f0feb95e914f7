#!/usr/bin/env bash
# Runs the whole test suite (the README's test command): sets up and builds first if needed.
# Then the Python package's tests (python/tests) and 60 s of fuzzing the model loader (scripts/fuzz.sh).
# On a machine without a GPU the tests run on Mesa's lavapipe; pick another adapter with ONDA_ADAPTER.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ ! -f .deps/dawn/.complete-v1 ] || ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then
  scripts/setup.sh --no-build
fi
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
# As many tests at once as there are cores (CTEST_PARALLEL_LEVEL overrides; so does a -j argument).
if ! ctest --test-dir build --output-on-failure -j "${CTEST_PARALLEL_LEVEL:-$(nproc)}" "$@"; then
  # The failures again, so that they end the output (a CI log shows its tail): gtest's failure
  # messages and the seeds that replay them (tests/support/harness.cpp).
  log=build/Testing/Temporary/LastTest.log
  if [ -f "$log" ]; then
    echo "== test.sh: failures (all output in $log)"
    grep -E -A6 ": Failure$" "$log" | cut -c1-300 | head -150 || true
    grep -E "^replay: |^\[  FAILED  \] [A-Za-z]" "$log" | sort -u | head -40 || true
  fi
  exit 1
fi
# Then the Python package (docs/python.md): installed into build/venv (incremental after the first
# build), its pytest suite run against the installed package.
python=$(scripts/install-python.sh)
"$python" -m pytest -q -p no:cacheprovider python/tests
# Then the model loader's fuzz target for a bounded time (its own clang build in build-fuzz/);
# a finding fails the run. ONDA_FUZZ_SECONDS=0 skips it.
fuzz_seconds=${ONDA_FUZZ_SECONDS:-60}
if [ "$fuzz_seconds" -gt 0 ]; then
  scripts/fuzz.sh "$fuzz_seconds"
fi
