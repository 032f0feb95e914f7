#!/usr/bin/env bash
# Quick end-to-end check on the GPU machine (a subset of bench/h200.sh): materializes the four
# reference models from .models-small and runs bench/models.py with few runs; prints the summary.
# Carry .gl, build, .deps and .models-small.   RUNS=5 bash scripts/gpu/dev-models.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
materialize_models
PYTHONUNBUFFERED=1 bash scripts/gpu/run.sh python3 bench/models.py --models-dir $models --out /tmp/onda-bench-models \
  --runs "${RUNS:-5}" --ort-runs "${ORT_RUNS:-1}" ${ORT_WEBGPU:+--ort-webgpu "$ORT_WEBGPU"} > "$out/models.txt" 2>&1
cp /tmp/onda-bench-models/results.json "$out/" 2>/dev/null
grep -E "=====|first run|runs:|median run|CPU recording|kernels\)|peak GPU" "$out/models.txt"; tail -8 "$out/models.txt"
