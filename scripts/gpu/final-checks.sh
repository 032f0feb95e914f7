#!/usr/bin/env bash
# One GPU-machine call closing a session (carry .gl, .devpack, .models-small, build/onda,
# build/bench_fft, build/onda_tests, build/bench_session_recording): the test suite, FFT throughput
# next to cuFFT, and each model timed with run replay on and off (ONDA_REPLAY=0), their last run's
# outputs compared bit for bit. Logs packed into $OUT/logs.tgz. TESTS=0 / FFT=0 / RECORDING=0 skip
# steps; MODELS="a b" picks models; A="ENV=V ..." and B="ENV=V ..." replace the two model
# configurations compared (default A="ONDA_REPLAY=1", B="ONDA_REPLAY=0").
set -uo pipefail
source "$(dirname "$0")/common.sh"
if [ "${TESTS:-1}" != 0 ]; then
  step tests
  timeout 300 bash scripts/gpu/run.sh build/onda_tests > $logs/tests.txt 2>&1
  grep -E "^\[  FAILED|PASSED|FAILED TEST" $logs/tests.txt | head -20
fi
if [ "${FFT:-1}" != 0 ]; then
  step fft
  timeout 150 bash scripts/gpu/run.sh build/bench_fft --repeats 20 --plans 1 > $logs/fft.txt 2>&1
  grep -E "^(c2c|r2c|HTD)" $logs/fft.txt | cut -c1-110
  timeout 150 python3 bench/torch_fft.py > $logs/torch_fft.txt 2>&1; cut -c1-110 $logs/torch_fft.txt | tail -18
fi
if [ "${RECORDING:-1}" != 0 ]; then
step recording
timeout 60 bash scripts/gpu/run.sh build/bench_session_recording --runs 50 > $logs/recording.txt 2>&1
ONDA_REPLAY=0 timeout 60 bash scripts/gpu/run.sh build/bench_session_recording --runs 50 > $logs/recording_noreplay.txt 2>&1
grep -h "median" $logs/recording.txt $logs/recording_noreplay.txt
fi
materialize_models
for m in ${MODELS:-mpsenet vr_hp_wind_inst htdemucs6 scnetlargestarrytong}; do
  for side in 1 0; do
    if [ $side = 1 ]; then config=${A:-ONDA_REPLAY=1}; else config=${B:-ONDA_REPLAY=0}; fi
    step "model $m, $config"
    rm -rf /tmp/onda-out-$side && mkdir -p /tmp/onda-out-$side
    env $config timeout 150 bash scripts/gpu/run.sh build/onda run $models/$m.onnx --random-inputs --bench 20 \
      --output-dir /tmp/onda-out-$side > $logs/model_${m}_$side.txt 2>&1
    grep -E "median|recording|rror" $logs/model_${m}_$side.txt | head -4
  done
  python3 - <<PY
import glob, os, numpy as np
worst = 0.0
files = sorted(glob.glob("/tmp/onda-out-1/*.npy"))
for f in files:
    a, b = np.load(f), np.load(f.replace("onda-out-1", "onda-out-0"))
    same = a.shape == b.shape and np.array_equal(a, b)
    rel = float(np.linalg.norm((a - b).ravel()) / max(np.linalg.norm(b.ravel()), 1e-30)) if a.shape == b.shape else float("inf")
    worst = max(worst, rel)
    print(f"  $m {os.path.basename(f)}: A vs B {'bit-identical' if same else 'DIFFER'} (rel L2 {rel:.2e})")
print(f"  $m: {len(files)} outputs, worst rel L2 {worst:.2e}")
PY
done
step done
pack_logs
