#!/usr/bin/env bash
# H200 call of 2026-12-04 (late): XOR-swizzled workgroup exchanges (ONDA_FFT_SWIZZLE, p ^ ((p >> 3) & 31))
# against the plain / padded ones on the whole-pass cases, beside cuFFT; the FFT tests with the swizzle
# on every unpadded pass. At the time ONDA_FFT_SWIZZLE=1 swizzled every split exchange (since cb5b01e
# that is =3; =1 is the default rule). Carry .gl, .devpack, build/bench_fft, build/onda_tests.
set -uo pipefail
source "$(dirname "$0")/common.sh"
TEST_FILTER='Fft*:Stft*:Dft*' gpu_tests x 150
ONDA_FFT_SWIZZLE=2 TEST_FILTER='Fft*' gpu_tests x 150
step fft
cases="r2c N=256,r2c N=512,r2c N=1024,r2c N=2048,r2c N=4096,r2c N=16384,c2c N=256,c2c N=512,c2c N=1024,c2c N=2048,c2c N=4096"
fft_variant base "$cases"
fft_variant swz1 "$cases" ONDA_FFT_SWIZZLE=1
fft_variant swz2pad0 "$cases" ONDA_FFT_SWIZZLE=2 ONDA_FFT_PAD=0
fft_variant base2 "$cases"
fft_variant swz1b "$cases" ONDA_FFT_SWIZZLE=1
r="r2c N=16384"
for v in 16,16,16,2 16,8,8,8 8,8,16,8; do
  fft_variant "$v-swz" "$r" ONDA_FFT_RADICES=$v ONDA_FFT_SWIZZLE=1
done
fft_variant loop2-swz "$r" ONDA_FFT_LOOP=2 ONDA_FFT_SWIZZLE=1
timeout 100 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; grep -E "^(r2c|c2c) N=([0-9]{3,4}|16384) " $logs/torch_fft.txt | cut -c1-90
step done
pack_logs
