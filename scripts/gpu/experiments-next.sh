#!/usr/bin/env bash
# Experiments prepared on lavapipe but not yet measured on a GPU (carry .gl, .devpack, .models-small,
# build/onda, build/bench_rnn, build/bench_fft, build/onda_tests): the GEMM's 8 x 8-per-thread tiles (ONDA_GEMM_NV=2)
# against the default on the GEMM benchmarks, the SCNet recurrent layers whose projections and GEMM
# steps they would speed up, and the models; the FFT shapes not yet swept for the r2c sizes still under
# 0.5x cuFFT (transforms per workgroup, threads per transform); then a shard of the FFT's every-length
# correctness sweep (SWEEP_RANGE, default 513:1024; each shard of 512 lengths takes about a minute).
# Logs in $OUT/logs.tgz, summaries on stdout. GEMM=0 / RNN=0 / FFT=0 / SWEEP=0 / MODELS=none skip steps.
set -uo pipefail
source "$(dirname "$0")/common.sh"
if [ "${GEMM:-1}" != 0 ]; then
  step gemm
  for nv in 1 2; do
    for t in TiledSquare TiledModelShapesPrepacked; do
      ONDA_GEMM_NV=$nv ONDA_GEMM_BENCH=1 timeout 150 bash scripts/gpu/run.sh build/onda_tests --gtest_filter="GemmBench.$t" > $logs/gemm_${t}_nv$nv.txt 2>&1
      grep -E "^  tiled|auto|BEST" $logs/gemm_${t}_nv$nv.txt | sed "s/^/nv$nv $t: /" | cut -c1-150 | tail -8
    done
  done
  timeout 100 python3 bench/torch_matmul.py > $logs/torch_matmul.txt 2>&1; head -12 $logs/torch_matmul.txt
fi
if [ "${RNN:-1}" != 0 ]; then
  step rnn
  for nv in 1 2; do
    for c in "scnet H256 freq" "scnet H512 freq" "scnet H512 time" "scnet H256 time"; do
      ONDA_GEMM_NV=$nv timeout 120 bash scripts/gpu/run.sh build/bench_rnn --no-variants --only "$c" >> $logs/rnn_nv$nv.txt 2>&1
    done
    grep -E "^scnet" $logs/rnn_nv$nv.txt | sed "s/^/nv$nv: /" | cut -c1-150
  done
fi
if [ "${MODELS:-}" != none ]; then
  for nv in 1 2; do
    mkdir -p $logs/models_nv$nv
    ONDA_GEMM_NV=$nv MODELS="${MODELS:-scnetlargestarrytong htdemucs6 vr_hp_wind_inst}" time_models $logs/models_nv$nv 100 "median|rror"
  done
fi
if [ "${FFT:-1}" != 0 ]; then
  step fft
  r2c="r2c N=256,r2c N=2048,r2c N=4096"
  fft_variant default "$r2c,c2c N=16384"
  for g in 2 8 16; do fft_variant per$g "$r2c" ONDA_FFT_PER_GROUP=$g; done
  fft_variant t16_256 "r2c N=256" ONDA_FFT_THREADS=16
  fft_variant t64_256 "r2c N=256" ONDA_FFT_THREADS=64
  fft_variant nosplit "r2c N=2048,r2c N=4096" ONDA_FFT_SPLIT=0
  fft_variant loop8 "c2c N=16384,c2c N=1048576" ONDA_FFT_LOOP=8
  fft_variant run16loop4 "c2c N=16384,c2c N=1048576" ONDA_FFT_MAX_RUN=16
  # Bluestein 65537's two 7-smooth convolution lengths not yet tried (131220 = 2^2 3^8 5 is the default).
  for m in 131250 131712; do fft_variant m$m "N=65537" ONDA_FFT_BLUESTEIN_M=$m; done
  timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-84 $logs/torch_fft.txt | tail -18
fi
if [ "${SWEEP:-1}" != 0 ]; then
  step sweep
  ONDA_FFT_SWEEP=${SWEEP_RANGE:-513:1024} timeout 240 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='FftSweep.Every*' > $logs/sweep.txt 2>&1
  grep -E "sweep|FAILED|PASSED" $logs/sweep.txt | tail -8
fi
step done
pack_logs
