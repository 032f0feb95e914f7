#!/usr/bin/env bash
# The one driver for measurement calls on the GPU machine (docs/gpu-machine.md). Each argument is a
# step, run in order; its log goes to $logs (packed into $OUT/logs.tgz after every step, so a call
# killed at the device's time limit still brings back what ran), its summary to stdout.
#   info              the adapter (onda info)
#   tests[=FILTER]    onda_tests, optionally a gtest filter (e.g. tests='Rnn*:Fft*')
#   fft[=CASES]       bench_fft (--only CASES) next to cuFFT (torch_fft.py)
#   gemm[=FILTER]     bench_gemm (a gtest filter, e.g. gemm='GemmBench.TileSweep') next to cuBLAS
#   conv[=CASES]      bench_conv (--only CASES) next to cuDNN (bench/conv.sh)
#   rnn[=CASES]       bench_rnn (--only CASES) next to cuDNN (torch_rnn.py)
#   layout            bench_layout --mib 512 (bandwidth against a buffer copy)
#   elementwise       bench_elementwise next to torch_elementwise.py
#   models[=NAMES]    onda run --bench 20 on each model (default: the four reference models)
#   torch[=NAMES]     per model (comma-separated; default all six: the four reference models, MDX23C,
#                     BS-RoFormer): `onda run --bench` (where build/onda is carried) and PyTorch eager on
#                     CUDA running the same ONNX graph (bench/torch_onnx.py: fp32, TF32 off), each one's
#                     median and peak GPU memory, then one line per model side by side; TORCH_ORT=1 also
#                     checks PyTorch's outputs against ONNX Runtime CPU (rel L2); TORCH_ARGS passes more
#                     options (e.g. "--cudnn-benchmark --profile")
#   firstrun[=NAMES]  each model's first run in a fresh process, cold (an empty cache folder: Dawn's
#                     blob cache and the driver's), warm-blob (that folder without the pipeline
#                     manifests) and warm (blob cache and manifest), with --timings; then
#                     bench_pipeline_creation on the WGSL the cold run compiled: one by one against all
#                     at once on Dawn's worker threads, cold and warm
#   plan[=NAMES]      bench_plan on the host's CPU: each graph plan step (simplification, every fusion
#                     pass) per model (default all six), the part of a first run before recording
#   ortweb            bench/ort-webgpu.sh: ONNX Runtime WebGPU per model (carry .ortweb: bundle-ort.sh)
#   compare           bench/models.py: every model, onda against ONNX Runtime CPU (time, rel L2), and
#                     ONNX Runtime WebGPU where an ortweb step ran before it; results.json to $OUT
#                     (bench/plot_models.py draws docs/models.png from it)
#   trace             bench/trace_divergence.py: SCNet's per-intermediate divergence from ORT
#   separate          bench/separate.sh: 10 minutes of stereo through HTDemucs (real-time factor)
#   accurate          SCNet against ONNX Runtime with float64 reductions
#   stream[=FRAMES]   bench/stream_latency.sh: a streaming enhancer's per-frame latency, states on the
#                     GPU (p50/p99 over FRAMES, default 1000), next to ONNX Runtime CPU on the same frames
# TUNING="rnn.step_kernel=vec4 fft.radices=8,8,16,8" gives the benchmarks those --tuning fields
# (kernels::set_tuning, src/kernels/kernel_tuning.h); REPEATS (20) their repeats.
#
# Before the call, here:  cmake --build build --target $(scripts/gpu/measure.sh --targets STEP...)
# The call's carry list:  scripts/gpu/measure.sh --carry STEP...
# e.g. the figures of docs/benchmarks.md: info fft gemm conv rnn models (two or three calls: 600 s each).
set -uo pipefail
cd "$(dirname "$0")/../.."

# The build targets and the carried paths of a step.
targets() {
  case ${1%%=*} in
    info | models | separate | torch) echo onda ;;
    firstrun) echo onda bench_pipeline_creation ;;
    plan) echo bench_plan ;;
    tests) echo onda_tests ;;
    fft | gemm | conv | rnn | layout | elementwise) echo bench_${1%%=*} ;;
    stream) echo bench_stream_latency ;;
    compare | accurate | trace | ortweb) echo onda ;;
  esac
}
carry() {
  for t in $(targets "$1"); do echo "build/$t"; done
  case ${1%%=*} in models | firstrun | plan | compare | separate | accurate | trace | ortweb | torch) echo .models-small ;; esac
  [ "${1%%=*}" = ortweb ] && echo .ortweb
}
if [ "${1:-}" = --targets ] || [ "${1:-}" = --carry ]; then
  mode=${1#--}; shift
  { for s in "$@"; do "$mode" "$s"; done; [ "$mode" = carry ] && echo -e ".gl\n.devpack"; } | sort -u | tr '\n' ' '
  echo
  exit 0
fi

source scripts/gpu/common.sh
run() { bash scripts/gpu/run.sh "$@"; }
tuning=()
for t in ${TUNING:-}; do tuning+=(--tuning "$t"); done
repeats=${REPEATS:-20}
torch() { timeout 150 python3 "$@"; }
for s in "$@"; do
  name=${s%%=*}
  arg=; [ "$name" != "$s" ] && arg=${s#*=}
  step "$s"
  case $name in
    info) run build/onda info 2>&1 | tee $logs/info.txt | head -8 ;;
    tests) TEST_FILTER=${arg:-*} gpu_tests "*" 540 ;;
    fft)
      timeout 200 run build/bench_fft --repeats $repeats --plans 1 ${arg:+--only "$arg"} "${tuning[@]}" > $logs/fft.txt 2>&1
      grep -E "^(c2c|r2c|HTD)|rror" $logs/fft.txt | cut -c1-110
      torch bench/torch_fft.py > $logs/torch_fft.txt 2>&1; tail -18 $logs/torch_fft.txt | cut -c1-110 ;;
    gemm)
      timeout 300 run build/bench_gemm ${arg:+--gtest_filter="$arg"} > $logs/gemm.txt 2>&1
      grep -E "^  tiled|  M=|auto|BEST|prepacked|rror|WRONG|^  sweep-" $logs/gemm.txt | cut -c1-170 | tail -60
      torch bench/torch_matmul.py > $logs/torch_matmul.txt 2>&1; head -30 $logs/torch_matmul.txt ;;
    conv)
      OUT=$logs timeout 300 bash bench/conv.sh --repeats $repeats ${arg:+--only "$arg"} > $logs/conv.txt 2>&1
      grep -vE "^ " $logs/bench_conv.txt | cut -c1-150 | tail -40; tail -16 $logs/torch_conv.txt | cut -c1-150 ;;
    rnn)
      timeout 300 run build/bench_rnn ${arg:+--only "$arg"} "${tuning[@]}" > $logs/bench_rnn.txt 2>&1
      grep -hE "^\S|x cuDNN|best" $logs/bench_rnn.txt | cut -c1-200 | tail -40
      (cd bench && torch torch_rnn.py ${arg:+--only "$arg"}) > $logs/torch_rnn.txt 2>&1; tail -20 $logs/torch_rnn.txt ;;
    layout) timeout 200 run build/bench_layout --mib 512 > $logs/layout.txt 2>&1; grep -v "^\[" $logs/layout.txt | tail -30 ;;
    elementwise)
      timeout 200 run build/bench_elementwise --mib 1024 --repeats $repeats > $logs/elementwise.txt 2>&1; tail -20 $logs/elementwise.txt
      torch bench/torch_elementwise.py --mib 1024 --repeats $repeats > $logs/torch_elementwise.txt 2>&1; tail -20 $logs/torch_elementwise.txt ;;
    models) MODELS=${arg:-} time_models $logs 150 "runs:|median run|recording|peak|rror" ;;
    torch)
      materialize_models
      names=${arg:-mpsenet,vr_hp_wind_inst,htdemucs6,scnetlargestarrytong,mdx23c_vocals,bsroformer_viperx1297}
      for m in ${names//,/ }; do
        step "torch $m"
        if [ -x build/onda ]; then
          timeout 150 run build/onda run $models/$m.onnx --random-inputs --bench $repeats > $logs/onda_$m.txt 2>&1
          grep -E "^runs:|^peak GPU|rror" $logs/onda_$m.txt | cut -c1-200
        fi
        PYTHONUNBUFFERED=1 timeout 300 python3 bench/torch_onnx.py --models-dir $models --runs $repeats \
          --live ${TORCH_ORT:+--ort} ${TORCH_ARGS:-} $m > $logs/torch_$m.txt 2>&1
        grep -E "^(==|torch runs|torch peak|torch live|torch rel)" $logs/torch_$m.txt | cut -c1-260
        grep -q "^torch runs:" $logs/torch_$m.txt || tail -6 $logs/torch_$m.txt  # it failed: why
      done
      # One line per model: onda's median and peak (its `runs:` and `peak GPU memory:` lines) next to torch's.
      field() { v=$(grep -m1 "$2" "$1" 2>/dev/null | awk -v k=$3 '{ print $k }'); echo "${v:--}"; }
      echo "model: median ms onda / torch, peak GPU MiB onda / torch"
      for m in ${names//,/ }; do
        echo "$m: $(field $logs/onda_$m.txt '^runs:' 7) / $(field $logs/torch_$m.txt '^torch runs:' 5) ms," \
          "$(field $logs/onda_$m.txt '^peak GPU memory:' 4) / $(field $logs/torch_$m.txt '^torch peak GPU memory:' 5) MiB"
      done ;;
    plan)
      ONDA_MODELS_DIR=.models-small timeout 200 run build/bench_plan --runs 7 ${arg//,/ } > $logs/plan.txt 2>&1
      grep -E "^[a-z]|whole plan" $logs/plan.txt ;;
    firstrun)
      materialize_models
      for m in ${arg:-mpsenet vr_hp_wind_inst htdemucs6 scnetlargestarrytong}; do
        cache=$(mktemp -d)
        # warm-blob: the blob cache warm but no pipeline manifest (as before the manifest existed);
        # warm: both (the manifest's pipelines made ahead on worker threads).
        for state in cold warm-blob warm; do
          step "first run $m $state"
          dump=(); [ $state = cold ] && mkdir -p $logs/wgsl_$m && dump=(ONDA_DUMP_WGSL=$logs/wgsl_$m)
          [ $state = warm-blob ] && rm -rf $cache/onda/pipelines/manifests
          env "${dump[@]}" XDG_CACHE_HOME=$cache timeout 150 bash scripts/gpu/run.sh build/onda run $models/$m.onnx --random-inputs --bench 5 --timings \
            > $logs/firstrun_${m}_$state.txt 2>&1
          grep -E "^model:|^first run: [0-9.]+ ms|^first run recording:|^runs:|rror" $logs/firstrun_${m}_$state.txt | head -5 | cut -c1-400
        done
        rm -rf "$cache"; cache=$(mktemp -d)
        for state in cold warm; do
          XDG_CACHE_HOME=$cache timeout 100 bash scripts/gpu/run.sh build/bench_pipeline_creation $logs/wgsl_$m 1 $cache/onda > $logs/pipelines_${m}_$state.txt 2>&1
          echo "pipelines $m $state:"; grep -E "^round|rror" $logs/pipelines_${m}_$state.txt | cut -c1-200
        done
        rm -rf "$cache"
      done ;;
    ortweb)
      materialize_models
      OUT=$logs timeout 240 bash bench/ort-webgpu.sh 5 > $logs/ortweb.log 2>&1
      grep -o '"model": "[^"]*"\|"median_ms": [0-9.]*\|"error": "[^"]*"' $logs/ort_webgpu.jsonl | paste - - ;;
    compare)
      materialize_models
      ortweb=(); [ -f $logs/ort_webgpu.jsonl ] && ortweb=(--ort-webgpu $logs/ort_webgpu.jsonl)
      PYTHONUNBUFFERED=1 timeout 400 run python3 bench/models.py --models-dir $models --out $logs/models --runs $repeats \
        --ort-runs 3 "${ortweb[@]}" --commit "$(git rev-parse --short HEAD 2>/dev/null || echo ?)" > $logs/models.txt 2>&1
      tail -30 $logs/models.txt; cp $logs/models/results.json "$out/" 2>/dev/null ;;
    trace)
      materialize_models
      timeout 200 run python3 bench/trace_divergence.py $models/scnetlargestarrytong.onnx > $logs/trace_scnet.txt 2>&1
      tail -5 $logs/trace_scnet.txt ;;
    separate) materialize_models; OUT=$logs timeout 200 bash bench/separate.sh $models/htdemucs6.onnx 10 2>&1 | tail -3 ;;
    accurate)
      materialize_models
      timeout 200 run python3 bench/accurate_reference.py $models/scnetlargestarrytong.onnx > $logs/accurate_scnet.txt 2>&1
      tail -8 $logs/accurate_scnet.txt ;;
    stream)
      OUT=$logs/stream timeout 300 run bash bench/stream_latency.sh ${arg:-1000} > $logs/stream.txt 2>&1
      tail -4 $logs/stream.txt | cut -c1-400 ;;
    *) echo "measure.sh: unknown step '$s' (see the header of scripts/gpu/measure.sh)" >&2 ;;
  esac
done
step done
pack_logs
