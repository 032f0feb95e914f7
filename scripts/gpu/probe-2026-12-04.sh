#!/usr/bin/env bash
# One GPU-machine call (carry .gl, .devpack, build/bench_fft, build/bench_rnn, build/bench_conv): the
# state of the three kernel issues at the session's start and the experiment knobs' variants, each in
# its own process, with the PyTorch/CUDA twins last. Logs in $OUT/logs.tgz, summaries on stdout.
# (Its RNN step swept ONDA_GEMM_FILL, removed after this call measured it slower: the fills now all
# run the default.)
set -uo pipefail
source "$(dirname "$0")/common.sh"
if [ "${FFT:-1}" != 0 ]; then
  step fft
  fft_variant default "${FFT_ONLY:-N=,STFT}"
  some="c2c N=1024,c2c N=4096,r2c N=1024,r2c N=4096,N=16384,N=1048576,N=4099,N=65537"
  fft_variant nosplit "r2c N=16384,N=4099" ONDA_FFT_SPLIT=0
  for k in ${FFT_LOOPS:-2 4}; do fft_variant loop$k "$some" ONDA_FFT_LOOP=$k; done
  [ -n "${FFT_EXTRA:-}" ] && fft_variant extra "${FFT_EXTRA_ONLY:-N=}" $FFT_EXTRA
  timeout 150 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-110 $logs/torch_fft.txt | tail -18
fi
gpu_tests "Fft*:Stft*:Dft*" 300
if [ "${RNN:-1}" != 0 ]; then
  step rnn
  IFS=, read -ra cases <<< "${RNN_ONLY:-scnet H256 freq,scnet H512 freq,scnet H512 time}"
  for fill in ${RNN_FILLS:-0 264 528}; do
    for c in "${cases[@]}"; do
      ONDA_GEMM_FILL=$fill timeout 120 bash scripts/gpu/run.sh build/bench_rnn --no-variants --only "$c" >> $logs/rnn_fill$fill.txt 2>&1
    done
    grep -E "^(scnet|bi|LSTM|uvr|mpsenet|issue)" $logs/rnn_fill$fill.txt | sed "s/^/fill$fill: /" | cut -c1-150
  done
fi
if [ "${CONV:-1}" != 0 ]; then
  step conv
  timeout 200 bash scripts/gpu/run.sh build/bench_conv --cases bench/conv_cases.txt --only "${CONV_ONLY:-scnet_}" > $logs/conv.txt 2>&1
  grep -vE "^ " $logs/conv.txt | cut -c1-150 | tail -20
  timeout 150 python3 bench/torch_conv.py --only "${CONV_ONLY:-scnet_}" > $logs/torch_conv.txt 2>&1; tail -12 $logs/torch_conv.txt | cut -c1-150
fi
step done
pack_logs
