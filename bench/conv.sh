#!/usr/bin/env bash
# Conv / ConvTranspose: onda (bench_conv) next to cuDNN (torch_conv.py), the same cases
# (bench/conv_cases.txt), on the GPU machine (logs to $OUT or out/).
#   bash bench/conv.sh [--repeats R] [--only SUBSTRING]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
cd "$root"
bash scripts/gpu/run.sh build/bench_conv --breakdown --cases bench/conv_cases.txt "$@" 2>&1 | tee "$out/bench_conv.txt"
PYTHONUNBUFFERED=1 python3 bench/torch_conv.py "$@" 2>&1 | tee "$out/torch_conv.txt"
