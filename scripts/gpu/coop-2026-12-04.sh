#!/usr/bin/env bash
# The cooperative recurrent kernel (rnn_sequence_cooperative.wgsl) on the H200: the RNN tests, then
# bench_rnn's variants (the automatic choice, coop tilings, the other kernels) on the shapes it is
# meant for, cuDNN in the same call (bench/torch_rnn.py); then the FFT's threads per transform for
# the single-pass sizes (ONDA_FFT_THREADS), next to cuFFT. Carry .gl, .devpack, build/onda_tests,
# build/bench_rnn, build/bench_fft. Logs in $OUT/logs.tgz. TESTS=0 / RNN=0 / FFT=0 skip steps.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Rnn*' 300
if [ "${RNN:-1}" != 0 ]; then
  step rnn
  for c in "LSTM H512 T4096" "biLSTM H256 T1000" "biLSTM H128 T512" "scnet H256 time" "scnet H512 time" \
           "uvr H64 I168" "uvr H32" "mpsenet-freq biGRU"; do
    timeout 150 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --only "$c" >> $logs/rnn.txt 2>&1
  done
  grep -E "^[a-zA-Z]|best|rror" $logs/rnn.txt | grep -v "^case" | cut -c1-170
  grep -E "variants" $logs/rnn.txt | cut -c1-600
  (cd bench && timeout 200 python3 torch_rnn.py --repeats 5) > $logs/torch_rnn.txt 2>&1; cut -c1-100 $logs/torch_rnn.txt
fi
if [ "${FFT:-1}" != 0 ]; then
  step fft
  for t in 8 16; do fft_variant t${t} "r2c N=256,c2c N=256" ONDA_FFT_THREADS=$t; done
  for t in 16 32; do fft_variant t${t} "r2c N=512,c2c N=512" ONDA_FFT_THREADS=$t; done
  for t in 32 64 128; do fft_variant t${t} "r2c N=1024,c2c N=1024" ONDA_FFT_THREADS=$t; done
  for t in 64 128 256; do fft_variant t${t} "r2c N=2048,c2c N=2048" ONDA_FFT_THREADS=$t; done
  for t in 128 256 512; do fft_variant t${t} "r2c N=4096,c2c N=4096" ONDA_FFT_THREADS=$t; done
  fft_variant default "N=256,N=512,N=1024,N=2048,N=4096,N=16384,N=65537"
  timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-84 $logs/torch_fft.txt | tail -18
fi
step done
pack_logs
