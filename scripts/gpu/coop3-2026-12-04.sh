#!/usr/bin/env bash
# Third H200 call of 2026-12-04 (afternoon): the RNN tests; bench_rnn on every shape (automatic
# choice) next to cuDNN (bench/torch_rnn.py) in the same call, the cooperative variants on the shapes
# it serves, SCNet's H512 time LSTM with chunked cooperative tilings (ONDA_RNN_COOP=JT,BM,KQ,RC); the
# four models end to end; bench_fft's defaults next to cuFFT. Carry .gl, .devpack, .models-small,
# build/onda, build/onda_tests, build/bench_rnn, build/bench_fft. Logs in $OUT/logs.tgz.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Rnn*' 300
if [ "${RNN:-1}" != 0 ]; then
  step rnn
  timeout 300 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --no-variants > $logs/rnn_all.txt 2>&1
  grep -E "^[a-zA-Z]|rror" $logs/rnn_all.txt | cut -c1-170
  for c in "biLSTM H128 T512" "scnet H256 time"; do
    timeout 150 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --only "$c" >> $logs/rnn_variants.txt 2>&1
  done
  grep -E "variants|best" $logs/rnn_variants.txt | cut -c1-700
  for t in 16,8,8,11 8,8,8,11 32,8,8,11 8,8,4,11; do
    ONDA_RNN_COOP=$t timeout 120 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --no-variants --only "scnet H512 time" > $logs/rnn_h512_$t.txt 2>&1
    grep -E "^scnet|rror" $logs/rnn_h512_$t.txt | sed "s/^/coop $t: /" | cut -c1-150
  done
  (cd bench && timeout 200 python3 torch_rnn.py --repeats 5) > $logs/torch_rnn.txt 2>&1; cut -c1-100 $logs/torch_rnn.txt
fi
mkdir -p $logs/models
time_models $logs/models 120 "median|rror"
if [ "${FFT:-1}" != 0 ]; then
  step fft
  fft_variant default "N=256,N=512,N=1024,N=2048,N=4096,N=16384,N=1048576,N=4099,N=65537,HTD"
  timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-84 $logs/torch_fft.txt | tail -18
fi
step done
pack_logs
