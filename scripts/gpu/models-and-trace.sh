#!/usr/bin/env bash
# One GPU-machine call for the end-to-end picture (carry .gl, build/onda, .devpack, .models-small,
# .ortweb): ONNX Runtime WebGPU per model, bench/models.py (onda vs ORT CPU, rel L2), onda with one
# submit per run next to the default chunked submits, the per-intermediate divergence of SCNet and
# SCNet against ONNX Runtime with float64 reductions (ORT_WEBGPU=0, TRACE=0, ACCURATE=0,
# SEPARATE=0, ONE_SUBMIT=0 skip steps; ORT_WEBGPU_JSONL reuses an earlier ORT WebGPU run).
set -uo pipefail
source "$(dirname "$0")/common.sh"
materialize_models
step "ort webgpu"
[ "${ORT_WEBGPU:-1}" = 0 ] || OUT=$out timeout 240 bash bench/ort-webgpu.sh "${ORT_WEBGPU_RUNS:-5}" > /tmp/ortw.log 2>&1
grep -o '"model": "[^"]*"\|"median_ms": [0-9.]*\|"error": "[^"]*"' "$out/ort_webgpu.jsonl" 2>/dev/null | paste - - 
step "models.py"
ORT_WEBGPU=${ORT_WEBGPU_JSONL:-$out/ort_webgpu.jsonl} RUNS=${RUNS:-10} ORT_RUNS=${ORT_RUNS:-1} OUT=$out timeout 300 bash scripts/gpu/dev-models.sh
[ "${ONE_SUBMIT:-1}" = 0 ] || step "one submit per run"
[ "${ONE_SUBMIT:-1}" = 0 ] || for m in mpsenet vr_hp_wind_inst htdemucs6 scnetlargestarrytong; do
  echo "-- $m"; timeout 60 bash scripts/gpu/run.sh build/onda run $models/$m.onnx --random-inputs --bench 10 --first-submit 0 2>&1 | grep -E "runs:|median run"
done
step "trace scnet"
[ "${TRACE:-1}" = 0 ] || timeout 150 bash scripts/gpu/run.sh python3 bench/trace_divergence.py $models/scnetlargestarrytong.onnx > "$out/trace_scnet.txt" 2>&1
tail -5 "$out/trace_scnet.txt"
step "separate"
[ "${SEPARATE:-1}" = 0 ] || OUT=$out timeout 150 bash bench/separate.sh $models/htdemucs6.onnx 10 2>&1 | tail -3
step "accurate reference scnet"
[ "${ACCURATE:-1}" = 0 ] || timeout 200 bash scripts/gpu/run.sh python3 bench/accurate_reference.py $models/scnetlargestarrytong.onnx > "$out/accurate_scnet.txt" 2>&1
cat "$out/accurate_scnet.txt" | tail -6
step done
