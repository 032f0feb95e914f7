#!/usr/bin/env bash
# H200 call of 2026-12-04 (night, fifth): r2c 16384 as four-step (ONDA_FFT_MAX_WHOLE=6144) with longer
# runs of paired rows (ONDA_FFT_MAX_RUN: 8 rows = 4 pairs by default, so the bins k1 + N1*k2 go out in
# runs of 4), for several column lengths; r2c 2^20 with longer runs. Carry .gl, .devpack, build/bench_fft.
set -uo pipefail
source "$(dirname "$0")/common.sh"
step fft
r="r2c N=16384"
fft_variant base "$r,r2c N=1048576"
for run in 16 32; do
  for c in 64 32 128; do
    fft_variant "run$run-cols$c" "$r" ONDA_FFT_MAX_WHOLE=6144 ONDA_FFT_MAX_RUN=$run ONDA_FFT_COLUMNS=$c
  done
  fft_variant "run$run-2^20" "r2c N=1048576" ONDA_FFT_MAX_RUN=$run
done
fft_variant base2 "$r,r2c N=1048576"
step done
pack_logs
