#!/usr/bin/env bash
# One GPU-machine call (carry .gl, .devpack, .models-small, build/onda, build/bench_fft,
# build/onda_tests): FFT throughput (default and table twiddles) next to cuFFT, the GEMM sweeps and
# cuBLAS, then each model's timed runs with Dawn's robustness transform on and off. Logs packed into
# $OUT/logs.tgz (the call returns few files), summaries on stdout.
# MODELS="a b" limits the models; FFT=0 / GEMM=0 / TORCH=0 / MODELS_RB="0 1" select steps.
set -uo pipefail
out=${OUT:-out}
logs=/tmp/onda-logs
mkdir -p "$out" $logs
t0=$(date +%s)
step() { echo "== $1 ($(( $(date +%s) - t0 )) s)"; }
if [ "${FFT:-1}" != 0 ]; then
  step fft
  for rb in 1 0; do
    ONDA_ROBUSTNESS=$rb timeout 120 bash scripts/gpu/run.sh build/bench_fft --repeats 20 --plans 1 > $logs/fft_rb$rb.txt 2>&1
    grep -E "^(c2c|r2c|HTD)" $logs/fft_rb$rb.txt | sed "s/^/rb$rb: /" | cut -c1-110
  done
  ONDA_FFT_TWIDDLE=table ONDA_ROBUSTNESS=0 timeout 120 bash scripts/gpu/run.sh build/bench_fft --repeats 20 > $logs/fft_table.txt 2>&1
  grep -E "^(c2c|r2c|HTD)" $logs/fft_table.txt | sed "s/^/table: /" | cut -c1-110
  [ "${TORCH:-1}" != 0 ] && timeout 120 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-110 $logs/torch_fft.txt | tail -22
fi
if [ "${GEMM:-1}" != 0 ]; then
  step gemm
  for rb in 1 0; do
    ONDA_ROBUSTNESS=$rb ONDA_GEMM_BENCH=1 timeout 150 bash scripts/gpu/run.sh build/onda_tests \
      --gtest_filter='GemmBench.TiledSquare:GemmBench.TileSweep:GemmBench.SkinnySweep' > $logs/gemm_rb$rb.txt 2>&1
    grep -E "tiled  4096|auto|BEST" $logs/gemm_rb$rb.txt | sed "s/^/rb$rb: /" | cut -c1-170 | tail -40
  done
  [ "${TORCH:-1}" != 0 ] && timeout 120 python3 bench/torch_matmul.py > $logs/torch_matmul.txt 2>&1; head -20 $logs/torch_matmul.txt
fi
models=/tmp/onda-models
if [ ! -f $models/.materialized ]; then
  step materialize
  mkdir -p $models && cp .models-small/* $models/
  (cd $models && for r in *.recipe.json; do python3 materialize.py "$r" >/dev/null; done && touch .materialized)
fi
for m in ${MODELS:-mpsenet vr_hp_wind_inst htdemucs6 scnetlargestarrytong}; do
  for rb in ${MODELS_RB:-1 0}; do
    step "model $m robustness $rb"
    ONDA_ROBUSTNESS=$rb timeout 150 bash scripts/gpu/run.sh build/onda run $models/$m.onnx --random-inputs --bench 20 > $logs/model_${m}_rb$rb.txt 2>&1
    grep -E "median|recording|dispatches|peak|rror" $logs/model_${m}_rb$rb.txt | head -5
  done
done
step done
tar -C $logs -czf "$out/logs.tgz" .
