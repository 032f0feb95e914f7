#!/usr/bin/env bash
# One GPU-machine call (carry .gl, .devpack, build/bench_fft, build/bench_conv, build/onda_tests): the
# conv position-tile sweep (session vs 64 / 128 positions) and the shuffled kernel == stride
# ConvTranspose next to cuDNN, the FFT code-shape knobs per size, and the FFT correctness sweep's
# timing. Logs in $OUT/logs.tgz, summaries on stdout. CONV=0 / FFT=0 / SWEEP=0 / TESTS=0 skip steps.
set -uo pipefail
source "$(dirname "$0")/common.sh"
gpu_tests "ConvTranspose.Implicit*:Conv.Implicit*:FftUnrolled*:FftLarge*" 200
if [ "${CONV:-1}" != 0 ]; then
  step conv
  cases="${CONV_CASES:-htdemucs_decoder0_convT2d htdemucs_decoder3_convT2d htdemucs_tdecoder3_convT1d htdemucs_decoder0_rewrite htdemucs_decoder3_rewrite htdemucs_encoder1_conv2d htdemucs_tencoder1_conv1d scnet_conv2d_64_3x3 scnet_pointwise_16_64 vr_stg3_dec1_145_48 vr_stg3_dec2_288_96 vr_conv_480_192_3x3 vr_stg3_enc1_38_48 vr_stg2_dec1_145_48 vr_stg2_dec2_288_96 vr_stg3_enc2b_96_96 vr_stg3_dec4_672_288}"
  for c in $cases; do
    timeout 60 bash scripts/gpu/run.sh build/bench_conv --only $c --paths session,implicit64,implicit128 >> $logs/conv_nv.txt 2>&1
  done
  grep -vE "^(adapter|case)" $logs/conv_nv.txt | cut -c1-100
  timeout 60 bash scripts/gpu/run.sh build/bench_conv --only scnet_convT2d > $logs/conv_shuffle.txt 2>&1
  grep -vE "^(adapter|case)" $logs/conv_shuffle.txt | cut -c1-100
  for t in ${TORCH_CONV_ONLY:-htdemucs_de htdemucs_t htdemucs_en scnet_conv scnet_p vr_}; do  # not the batch-12 iSTFT (cudnn.benchmark hangs on it)
    timeout 100 python3 bench/torch_conv.py --only "$t" >> $logs/torch_conv.txt 2>&1
  done
  grep -E "cudnn" $logs/torch_conv.txt | cut -c1-100
fi
if [ "${FFT:-1}" != 0 ]; then
  step fft
  small="c2c N=1024,c2c N=2048,c2c N=4096,r2c N=1024,r2c N=2048,r2c N=4096,r2c N=256"
  fft_variant default "N=,STFT"
  fft_variant r16 "$small,N=16384,N=1048576" ONDA_FFT_RADIX16=1
  fft_variant r16loop4 "$small" ONDA_FFT_RADIX16=1 ONDA_FFT_LOOP=4
  fft_variant loop4 "$small,N=16384,N=1048576" ONDA_FFT_LOOP=4
  fft_variant loop8 "$small" ONDA_FFT_LOOP=8
  fft_variant split2 "$small" ONDA_FFT_SPLIT=2
  fft_variant t512_4099 "N=4099" ONDA_FFT_THREADS=512
  fft_variant t768_4099 "N=4099" ONDA_FFT_THREADS=768
  fft_variant t343_4099 "N=4099" ONDA_FFT_THREADS=343
  for m in 132300 134400 139968 147456 262144; do fft_variant m$m "N=65537" ONDA_FFT_BLUESTEIN_M=$m; done
  fft_variant run4 "N=16384,N=1048576" ONDA_FFT_MAX_RUN=4
  fft_variant run16 "N=16384,N=1048576" ONDA_FFT_MAX_RUN=16
fi
if [ "${SWEEP:-1}" != 0 ]; then
  step sweep
  ONDA_FFT_SWEEP=${SWEEP_RANGE:-1:512} timeout 240 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='FftSweep.Every*' > $logs/sweep.txt 2>&1
  grep -E "sweep|FAILED|PASSED" $logs/sweep.txt | tail -8
  ONDA_FFT_SWEEP=long timeout 200 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='FftSweep.Long*' > $logs/sweep_long.txt 2>&1
  grep -E "long N|f16|FAILED|PASSED" $logs/sweep_long.txt | cut -c1-150 | tail -30
fi
step done
pack_logs
