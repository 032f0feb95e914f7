#!/usr/bin/env bash
# Recurrent layers, onda next to cuDNN, in one GPU-machine call (see docs/gpu-machine.md):
#   bash bench/rnn.sh [--quick]      # logs to $OUT (or out/): bench_rnn.txt, torch_rnn.txt
# On a machine without CUDA (lavapipe) the PyTorch twin is skipped.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
cd "$root"
run() { bash "$root/scripts/gpu/run.sh" "$@"; }
run build/bench_rnn "$@" 2>&1 | tee "$out/bench_rnn.txt"
if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  (cd bench && PYTHONUNBUFFERED=1 python3 torch_rnn.py "$@") 2>&1 | tee "$out/torch_rnn.txt"
else
  echo "torch with CUDA not available: cuDNN twin skipped" | tee "$out/torch_rnn.txt"
fi
