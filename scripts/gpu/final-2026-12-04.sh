#!/usr/bin/env bash
# The session's closing GPU-machine call (carry .gl, .devpack, .models-small, build/onda,
# build/bench_fft, build/bench_conv, build/onda_tests): the FFT and conv tests on the H200, FFT
# throughput (defaults, and the group loop on the four-step / Bluestein sizes) next to cuFFT, the
# issue-5 conv cases next to cuDNN, the long-length FFT correctness sweep, and each model's timed runs.
# Logs in $OUT/logs.tgz, summaries on stdout. TESTS=0 / FFT=0 / CONV=0 / SWEEP=0 / MODELS=none skip.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests "Fft*:Conv*:ConvTranspose*:Stft*" 150
if [ "${FFT:-1}" != 0 ]; then
  step fft
  timeout 100 bash scripts/gpu/run.sh build/bench_fft --repeats 20 --plans 1 > $logs/fft.txt 2>&1
  grep -E "^(c2c|r2c|HTD)|rror" $logs/fft.txt | cut -c1-84
  ONDA_FFT_LOOP=4 timeout 60 bash scripts/gpu/run.sh build/bench_fft --repeats 20 --only "N=16384,N=1048576,N=65537" > $logs/fft_loop4.txt 2>&1
  grep -E "^(c2c|r2c)|rror" $logs/fft_loop4.txt | sed "s/^/loop4: /" | cut -c1-84
  timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-84 $logs/torch_fft.txt | tail -18
fi
if [ "${CONV:-1}" != 0 ]; then
  step conv
  for c in htdemucs scnet; do
    timeout 60 bash scripts/gpu/run.sh build/bench_conv --only $c >> $logs/conv.txt 2>&1
  done
  timeout 60 bash scripts/gpu/run.sh build/bench_conv --only vr_ --paths session >> $logs/conv.txt 2>&1
  grep -vE "^(adapter|case)" $logs/conv.txt | cut -c1-100
  for t in htdemucs_istft_ola_b8 htdemucs_de htdemucs_t htdemucs_en scnet_ vr_; do  # not the batch-12 iSTFT (cudnn.benchmark hangs on it)
    timeout 60 python3 bench/torch_conv.py --only "$t" >> $logs/torch_conv.txt 2>&1
  done
  grep -E "cudnn|fold" $logs/torch_conv.txt | cut -c1-100
fi
if [ "${SWEEP:-1}" != 0 ]; then
  step sweep
  ONDA_FFT_SWEEP=long timeout 120 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='FftSweep.Long*' > $logs/sweep_long.txt 2>&1
  grep -E "long N|f16|FAILED|PASSED" $logs/sweep_long.txt | cut -c1-150 | tail -30
fi
time_models $logs 100 "median|peak|rror"
step done
pack_logs
