#!/usr/bin/env bash
# H200 call of 2026-12-04 (night, fourth): r2c 16384 as a four-step plan of short columns (N/2 = 8192
# as 8 / 16 / 32 / 64 x the rest, paired rows; ONDA_FFT_MAX_WHOLE=6144 ONDA_FFT_COLUMNS) now that very
# short columns run 64 to a workgroup; c2c 2^20 as three passes again. Beside cuFFT. Carry .gl,
# .devpack, build/bench_fft.
set -uo pipefail
source "$(dirname "$0")/common.sh"
step fft
r="r2c N=16384"
fft_variant base "$r,c2c N=16384,N=1048576"
for c in 8 16 32 64; do
  fft_variant "cols$c" "$r" ONDA_FFT_MAX_WHOLE=6144 ONDA_FFT_COLUMNS=$c
done
fft_variant cols8-run16 "$r" ONDA_FFT_MAX_WHOLE=6144 ONDA_FFT_COLUMNS=8 ONDA_FFT_MAX_RUN=16
fft_variant three "c2c N=1048576" ONDA_FFT_THREE_PASS_FROM=65536
fft_variant base2 "$r,c2c N=16384,N=1048576"
step done
pack_logs
