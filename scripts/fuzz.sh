#!/usr/bin/env bash
# Fuzzes the model loader (fuzz/fuzz_model_loader.cpp: parse -> shape inference and folding ->
# liveness) for a bounded time: scripts/fuzz.sh [SECONDS] (default 60).
# Builds build-fuzz/ with clang (-DONDA_FUZZ=ON: graph and ONNX layers only, libFuzzer + ASan/UBSan),
# seeds the corpus with fuzz/make_seed_models' models and their truncated copies plus ONNX's own node
# tests (Debian's libonnx-testdata), then runs libFuzzer. Exits non-zero on any finding (crash,
# sanitizer report, leak, timeout, out-of-memory, an exception other than onda::ModelError); the
# reproducer is kept in build-fuzz/findings/ (replay: build-fuzz/fuzz/fuzz_model_loader FILE).
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
  CXX=${ONDA_FUZZ_CXX:-clang++} cmake -S . -B "$build" -G Ninja -DONDA_FUZZ=ON >/dev/null
fi
cmake --build "$build"

corpus=$build/corpus
seeds=$build/seeds
mkdir -p "$corpus" "$seeds" "$build/findings"
"$build/fuzz/make_seed_models" "$seeds" >/dev/null
cp fuzz/regressions/* "$seeds/"  # past findings, replayed under the sanitizers
testdata=${ONDA_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data/node}
if [ -d "$testdata" ]; then
  # The node tests' models are small (a few hundred bytes) and cover every op's attributes.
  find "$testdata" -name model.onnx -size -8k | while read -r model; do
    cp "$model" "$seeds/node_$(basename "$(dirname "$model")").onnx"
  done
fi

# -timeout: one input taking over 10 s is a hang; -rss_limit_mb/-malloc_limit_mb: a model of a few
# KiB must not make the loader allocate gigabytes (a declared shape is not an allocation).
# The corpus grows in build-fuzz/corpus across runs; the seeds are read each time.
echo "fuzzing the model loader for ${seconds} s ($(ls "$seeds" | wc -l) seeds)"
status=0
"$build/fuzz/fuzz_model_loader" "$corpus" "$seeds" \
  -dict=fuzz/onnx.dict -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 \
  -artifact_prefix="$build/findings/" -print_final_stats=1 >"$build/fuzz.log" 2>&1 || status=$?
tail -n 30 "$build/fuzz.log"
if [ "$status" -ne 0 ]; then
  echo "fuzz.sh: libFuzzer found a problem (exit $status): full log $build/fuzz.log, reproducer in $build/findings/" >&2
  exit "$status"
fi
