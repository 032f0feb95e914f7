#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening, last): knob sweeps for what still misses its target: c2c 2^20
# (1024 x 1024 passes with split-exchange runs), r2c 16384 (one whole pass of 8192), and the resident
# kernel's slice width for UVR's batch-1 LSTMs (ONDA_RNN_RESIDENT=BM,KQ). Carry .gl, .devpack,
# build/bench_fft, build/bench_rnn.
set -uo pipefail
source "$(dirname "$0")/common.sh"
step fft
m="c2c N=1048576"
fft_variant base "$m,r2c N=16384"
for v in ONDA_FFT_LOOP=1 ONDA_FFT_LOOP=2 ONDA_FFT_LOOP=8 ONDA_FFT_PREFETCH=0 ONDA_FFT_RADIX16=0 ONDA_FFT_THREADS=128 \
         ONDA_FFT_PAD=0 ONDA_FFT_TWIDDLE=table ONDA_FFT_COLUMNS=512 ONDA_FFT_COLUMNS=2048; do
  fft_variant "$v" "$m" $v
done
for v in ONDA_FFT_RADIX16=1 ONDA_FFT_PAIR=0 ONDA_FFT_PAD=0 ONDA_FFT_TWIDDLE=table ONDA_FFT_PREFETCH=0; do
  fft_variant "r-$v" "r2c N=16384" $v
done
fft_variant base2 "$m,r2c N=16384"
step rnn
for t in default 1,4 1,8 1,16; do
  if [ $t = default ]; then e=""; else e="ONDA_RNN_RESIDENT=$t"; fi
  env $e timeout 60 bash scripts/gpu/run.sh build/bench_rnn --repeats 9 --no-variants --only uvr > $logs/rnn_$t.txt 2>&1
  grep -E "^uvr|rror" $logs/rnn_$t.txt | sed "s/^/$t: /" | cut -c1-140
done
step done
pack_logs
