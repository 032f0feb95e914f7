#!/usr/bin/env bash
# Everything measured on the GPU machine in one call (see docs/gpu-machine.md): adapter, the test
# suite on the real GPU, and each benchmark next to its PyTorch/CUDA twin. Logs go to $OUT (or out/).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
run() { bash "$root/scripts/gpu/run.sh" "$@"; }
cd "$root"
run build/onda info 2>&1 | tee "$out/info.txt"
run build/onda_tests > "$out/tests.txt" 2>&1; echo "onda_tests exit $?"
grep -E "^\[  FAILED|PASSED|FAILED TEST|ONNX node tests" "$out/tests.txt" | head -40
run build/bench_elementwise --mib 1024 --repeats 20 2>&1 | tee "$out/bench_elementwise.txt"
PYTHONUNBUFFERED=1 python3 bench/torch_elementwise.py --mib 1024 --repeats 20 2>&1 | tee "$out/torch_elementwise.txt"
ONDA_GEMM_BENCH=1 run build/onda_tests --gtest_filter='GemmBench*' 2>&1 | grep -v "^\[" | tee "$out/bench_gemm.txt"
PYTHONUNBUFFERED=1 python3 bench/torch_matmul.py 2>&1 | tee "$out/torch_matmul.txt"
[ "${ONDA_BENCH_LAYOUT:-1}" = 0 ] || ONDA_LAYOUT_BENCH_MIB=512 run build/onda_tests --gtest_also_run_disabled_tests --gtest_filter='LayoutBench*' 2>&1 | grep -v "^\[" | tee "$out/bench_layout.txt"
run build/bench_fft --repeats 20 --path both 2>&1 | tee "$out/bench_fft.txt"
PYTHONUNBUFFERED=1 python3 bench/torch_fft.py 2>&1 | tee "$out/torch_fft.txt"
# Conv / ConvTranspose next to cuDNN (HTDemucs iSTFT overlap-add, decoder/encoder shapes).
[ "${ONDA_BENCH_CONV:-1}" = 0 ] || OUT="$out" bash bench/conv.sh --repeats 20
OUT="$out" bash bench/rnn.sh  # recurrent layers vs cuDNN, dispatch floor: bench_rnn.txt, torch_rnn.txt
# End-to-end models (carry .models-small: the .onnx files, recipes and materialize.py).
if [ -d .models-small ]; then
  models=/tmp/onda-models
  mkdir -p "$models" && cp .models-small/* "$models"/
  (cd "$models" && for r in *.recipe.json; do python3 materialize.py "$r" >/dev/null; done)
  # onda separate end to end: 10 minutes of stereo through HTDemucs (real-time factor, time outside the GPU).
  [ "${ONDA_BENCH_SEPARATE:-1}" = 0 ] || OUT="$out" bash bench/separate.sh "$models/htdemucs6.onnx" 10 2>&1 | tail -3
  PYTHONUNBUFFERED=1 run python3 bench/models.py --models-dir "$models" --out "$out/models" --runs "${ONDA_MODEL_RUNS:-20}" \
    --ort-runs "${ONDA_ORT_RUNS:-3}" 2>&1 | tee "$out/models.txt" | tail -60
fi
