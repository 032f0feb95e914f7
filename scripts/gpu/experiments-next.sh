#!/usr/bin/env bash
# Prepared for the next H200 call (carry .gl, .devpack, .models-small, build/onda, build/onda_tests,
# build/bench_rnn, build/bench_fft): what the afternoon of 2026-12-04 could not measure for lack of
# device time. (1) The four models end to end with the final code (the cooperative kernel with its
# per-entry waits on SCNet's H256 time LSTMs; the register-kernel WGSL refactor). (2) bench_rnn on every
# shape next to cuDNN in the same call, the resident kernel's shapes with their variants (the refactor
# must not change them: MP-SENet GRUs ~0.82 ms, UVR ~0.42-0.48). (3) The c2c FFT cases that ran 2.5-3.3x
# slower in some calls (c2c 512 / 1024 / 4096): three back-to-back runs with GPU clocks read around them.
# Logs in $OUT/logs.tgz. TESTS=0 / MODELS=none / RNN=0 / FFT=0 skip steps.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests 'Rnn*' 240
mkdir -p $logs/models
time_models $logs/models 120 "median|rror"
if [ "${RNN:-1}" != 0 ]; then
  step rnn
  timeout 300 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --no-variants > $logs/rnn_all.txt 2>&1
  grep -E "^[a-zA-Z]|rror" $logs/rnn_all.txt | cut -c1-170
  for c in "mpsenet-freq biGRU" "uvr H32"; do
    timeout 120 bash scripts/gpu/run.sh build/bench_rnn --repeats 5 --only "$c" >> $logs/rnn_variants.txt 2>&1
  done
  grep -E "variants|best" $logs/rnn_variants.txt | cut -c1-500
  (cd bench && timeout 200 python3 torch_rnn.py --repeats 5) > $logs/torch_rnn.txt 2>&1; cut -c1-100 $logs/torch_rnn.txt
fi
if [ "${FFT:-1}" != 0 ]; then
  step fft
  for i in 1 2 3; do
    nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader 2>/dev/null | sed "s/^/clocks before run $i: /"
    fft_variant run$i "c2c N=512,c2c N=1024,c2c N=4096,r2c N=4096"
  done
  timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-84 $logs/torch_fft.txt | tail -18
fi
step done
pack_logs
