#!/usr/bin/env bash
# Second H200 call of 2026-12-04 (afternoon): the cooperative recurrent kernel with its candidate
# tilings (chunks of rows per workgroup) and automatic choice: the RNN tests, bench_rnn's variants on
# the shapes it serves next to cuDNN (bench/torch_rnn.py, same call), SCNet end to end (its time
# LSTMs take it); the FFT's largest-radix thread rule: bench_fft's defaults next to cuFFT. Carry .gl,
# .devpack, .models-small, build/onda, build/onda_tests, build/bench_rnn, build/bench_fft.
# Logs in $OUT/logs.tgz. TESTS=0 / RNN=0 / MODELS=none / FFT=0 skip steps.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Rnn*' 300
if [ "${RNN:-1}" != 0 ]; then
  step rnn
  for c in "LSTM H512 T4096" "biLSTM H256 T1000" "biLSTM H128 T512" "scnet H256 time" "scnet H512 time"; do
    timeout 150 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --only "$c" >> $logs/rnn.txt 2>&1
  done
  grep -E "^[a-zA-Z]|best|rror" $logs/rnn.txt | grep -v -E "^case|^adapter" | cut -c1-170
  grep -E "variants" $logs/rnn.txt | cut -c1-700
  (cd bench && timeout 200 python3 torch_rnn.py --repeats 5) > $logs/torch_rnn.txt 2>&1; cut -c1-100 $logs/torch_rnn.txt
fi
mkdir -p $logs/models
MODELS="${MODELS:-scnetlargestarrytong}" time_models $logs/models 120 "median|rror"
if [ "${FFT:-1}" != 0 ]; then
  step fft
  fft_variant default "N=256,N=512,N=1024,N=2048,N=4096,N=16384,N=1048576,N=4099,N=65537,HTD"
  timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-84 $logs/torch_fft.txt | tail -18
fi
step done
pack_logs
