#!/bin/bash
# Per-frame latency of a small streaming enhancer (bench/make_streaming_model.py: one STFT frame in,
# two causal convolutions with caches, a GRU with its hidden state, a mask out) over FRAMES frames:
# onda with its states on the GPU (build/bench_stream_latency) next to ONNX Runtime CPU feeding its
# states back on the host (the onnxruntime wheel, else npm onnxruntime-node in .cache/), both on the
# same frames after WARMUP frames; then the two runs' masks compared (rel L2 over every frame).
#   bench/stream_latency.sh [FRAMES=1000] [ORT_THREADS=1]      (OUT=folder keeps the files; ONDA_ADAPTER picks the GPU)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
frames=${1:-1000}
threads=${2:-1}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
python=python3
python3 -c "import numpy, onnx" 2>/dev/null || python=/usr/bin/python3
"$python" "$root/bench/make_streaming_model.py" "$out/streaming_enhancer.onnx" --frames "$frames" "$out/frames.bin"

"$root/build/bench_stream_latency" "$out/streaming_enhancer.onnx" "$out/frames.bin" "$frames" "$out/onda_masks.bin" \
  | tee "$out/onda.json"
if python3 -c "import onnxruntime" 2>/dev/null; then
  python3 "$root/bench/ort_stream_time.py" "$out/streaming_enhancer.onnx" "$out/frames.bin" "$frames" \
    "$out/ort_masks.bin" 20 "$threads" | tee "$out/ort.json"
else
  NODE_PATH="$root/.cache/onnxruntime-node/node_modules" node "$root/bench/ort_stream_time.js" \
    "$out/streaming_enhancer.onnx" "$out/frames.bin" "$frames" "$out/ort_masks.bin" 20 "$threads" | tee "$out/ort.json"
fi
"$python" - "$out" <<'PY'
import json, sys
import numpy as np
out = sys.argv[1]
a = np.fromfile(f"{out}/onda_masks.bin", np.float32).astype(np.float64)
b = np.fromfile(f"{out}/ort_masks.bin", np.float32).astype(np.float64)
onda, ort = json.load(open(f"{out}/onda.json")), json.load(open(f"{out}/ort.json"))
rel = float(np.linalg.norm(a - b) / np.linalg.norm(b))
print(f"streaming enhancer, {onda['frames']} frames, {onda['states']} states on the GPU ({onda['adapter']}): "
      f"onda p50 {onda['p50_ms']:.3f} ms p99 {onda['p99_ms']:.3f} ms | ONNX Runtime CPU ({ort['threads']} thread(s)) "
      f"p50 {ort['p50_ms']:.3f} ms p99 {ort['p99_ms']:.3f} ms | onda p99 / ORT p50 {onda['p99_ms'] / ort['p50_ms']:.2f} | "
      f"masks rel L2 {rel:.2e}")
sys.exit(0 if rel < 1e-4 and a.size == b.size else 1)
PY
