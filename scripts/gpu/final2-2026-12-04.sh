#!/usr/bin/env bash
# Last H200 call of 2026-12-04: the FFT, STFT and RNN tests; the cooperative kernel's two ways of
# loading h (default loop, ONDA_RNN_COOP_LOADS=together) on the shapes it serves; r2c 16384's threads
# per transform and the FFT defaults next to cuFFT; then the FFT's every-length sweep over
# 1024..4096 and the lengths around 128 and 256 (whose thread counts changed). Carry .gl, .devpack,
# build/onda_tests, build/bench_rnn, build/bench_fft. Logs in $OUT/logs.tgz.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Fft*:Stft*:Rnn*' 240
if [ "${RNN:-1}" != 0 ]; then
  step rnn
  for loads in default together; do
    for c in "LSTM H512 T4096" "biLSTM H256 T1000" "biLSTM H128 T512" "scnet H256 time"; do
      ONDA_RNN_COOP_LOADS=$loads timeout 100 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --no-variants --only "$c" >> $logs/rnn_$loads.txt 2>&1
    done
    grep -E "^[a-zA-Z]|rror" $logs/rnn_$loads.txt | grep -v -E "^case|^adapter|^dispatch" | sed "s/^/$loads: /" | cut -c1-150
  done
fi
if [ "${FFT:-1}" != 0 ]; then
  step fft
  for t in 256 512; do fft_variant t$t "r2c N=16384" ONDA_FFT_THREADS=$t; done
  fft_variant default "N=256,N=512,N=1024,N=2048,N=4096,N=16384,N=1048576,N=4099,N=65537,HTD"
  timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-84 $logs/torch_fft.txt | tail -18
fi
if [ "${SWEEP:-1}" != 0 ]; then
  step sweep
  for r in 120:136 250:260 1024:4096; do
    ONDA_FFT_SWEEP=$r timeout 330 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='FftSweep.Every*' > $logs/sweep_$r.txt 2>&1
    grep -E "sweep|FAILED|PASSED" $logs/sweep_$r.txt | tail -6
  done
fi
step done
pack_logs
