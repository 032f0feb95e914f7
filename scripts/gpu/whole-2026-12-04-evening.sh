#!/usr/bin/env bash
# H200 call of 2026-12-04 (evening, short): knob sweep of the whole-pass r2c cases near the 0.5x line
# (r2c 256 / 2048 / 4096: L = 128 / 1024 / 2048), beside cuFFT. Carry .gl, .devpack, build/bench_fft.
set -uo pipefail
source "$(dirname "$0")/common.sh"
step fft
r="r2c N=256,r2c N=2048,r2c N=4096"
fft_variant base "$r"
for v in ONDA_FFT_PAD=0 ONDA_FFT_PAIR=2 ONDA_FFT_PAIR=0 ONDA_FFT_LOOP=2 ONDA_FFT_SPLIT=2 ONDA_FFT_TWIDDLE=table; do
  fft_variant "$v" "$r" $v
done
fft_variant base2 "$r"
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "r2c N=(256|2048|4096) " $logs/torch_fft.txt
step done
pack_logs
