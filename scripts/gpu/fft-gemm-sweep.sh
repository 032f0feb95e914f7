#!/usr/bin/env bash
# One GPU-machine call (carry .gl, .devpack, build/bench_fft, build/onda_tests): the FFT code-shape
# knobs of stockham_unrolled.cpp (ONDA_FFT_*) and Dawn's robustness on the c2c / r2c throughput
# cases, then the GEMM tile and skinny sweeps. Logs in $OUT.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
t0=$(date +%s)
step() { echo "== $1 ($(( $(date +%s) - t0 )) s)"; }
fft() {  # fft LABEL ONLY [ENV=VALUE...]
  local label=$1 only=$2; shift 2
  env "$@" timeout 90 bash scripts/gpu/run.sh build/bench_fft --repeats 10 --path unrolled --only "$only" \
    > "$out/fft_$label.txt" 2>&1
  grep -E "^(c2c|r2c|HTD)" "$out/fft_$label.txt" | sed "s/^/$label: /" | cut -c1-120
}
step fft
slow="c2c N=256,c2c N=1024,c2c N=4096,c2c N=16384,r2c N=256,r2c N=1024"
fft base "N=,STFT"
fft all3 "N=,STFT" ONDA_ROBUSTNESS=0 ONDA_FFT_VEC2=1 ONDA_FFT_TWIDDLE=power
fft norobust "$slow" ONDA_ROBUSTNESS=0
fft vec2 "$slow" ONDA_FFT_VEC2=1
fft power "$slow" ONDA_FFT_TWIDDLE=power
fft nopad "$slow" ONDA_ROBUSTNESS=0 ONDA_FFT_VEC2=1 ONDA_FFT_TWIDDLE=power ONDA_FFT_PAD=0
for th in 512 1024; do fft t4096_$th "c2c N=4096" ONDA_ROBUSTNESS=0 ONDA_FFT_VEC2=1 ONDA_FFT_TWIDDLE=power ONDA_FFT_THREADS=$th; done
for th in 64 256; do fft t1024_$th "c2c N=1024" ONDA_ROBUSTNESS=0 ONDA_FFT_VEC2=1 ONDA_FFT_TWIDDLE=power ONDA_FFT_THREADS=$th; done
for pg in 1 2 8; do fft t256_pg$pg "c2c N=256" ONDA_ROBUSTNESS=0 ONDA_FFT_VEC2=1 ONDA_FFT_TWIDDLE=power ONDA_FFT_PER_GROUP=$pg; done
step gemm
for rb in 1 0; do
  ONDA_ROBUSTNESS=$rb ONDA_GEMM_BENCH=1 timeout 150 bash scripts/gpu/run.sh build/onda_tests \
    --gtest_filter='GemmBench.TileSweep:GemmBench.SkinnySweep' > "$out/gemm_rb$rb.txt" 2>&1
  grep -E "auto|BEST|16384x512x512 B  " "$out/gemm_rb$rb.txt" | sed "s/^/rb$rb: /" | cut -c1-200 | tail -60
done
step done
