"""End-to-end model benchmark on the GPU machine (issue 8): for each reference model, onda's load
time, first run, median/min/max of timed runs, peak GPU memory and per-op profile, next to ONNX
Runtime's CPU provider in the same call, and the rel L2 of onda's outputs against ONNX Runtime;
ONNX Runtime WebGPU figures come from bench/ort-webgpu.sh (--ort-webgpu). Writes OUT/results.json
(bench/plot_models.py turns it into the docs table and PNG).

    python3 bench/models.py --models-dir DIR [--onda build/onda] [--runs 20] [--out OUT] [--ort-webgpu FILE]

DIR holds <name>.onnx and <name>.weights.bin (materialize.py). Inputs follow the models README:
waveforms 0.1*N(0,1); the VR magnitude |N(0,1)|; MP-SENet magnitude |N(0,1)|^0.3, phase U(-pi, pi).
"""
import argparse
import json
import os
import re
import subprocess
import time

import numpy as np
import onnxruntime as ort

from model_inputs import make_input
from onda_vs_ort import output_file

parser = argparse.ArgumentParser()
parser.add_argument("--models-dir", required=True)
parser.add_argument("--onda", default="build/onda")
parser.add_argument("--runs", type=int, default=20)
parser.add_argument("--out", default="out")
parser.add_argument("--models", default="mpsenet,vr_hp_wind_inst,htdemucs6,scnetlargestarrytong")
parser.add_argument("--ort-runs", type=int, default=3)
parser.add_argument("--ort-webgpu", default="", help="JSON lines from bench/ort-webgpu.sh")
parser.add_argument("--gpu", default="NVIDIA H200")
parser.add_argument("--commit", default=os.environ.get("ONDA_COMMIT", "?"))
args = parser.parse_args()
os.makedirs(args.out, exist_ok=True)
rng = np.random.default_rng(0)
# PyTorch on CUDA, fp32 with TF32 off, eager, median of 20 (issue 8's figures, H200, 2026-12-02).
PYTORCH_CUDA_MS = {"htdemucs6": 59.0, "scnetlargestarrytong": 376.0, "vr_hp_wind_inst": 25.0, "mpsenet": 22.5}


results = []
for model in args.models.split(","):
    path = os.path.join(args.models_dir, model + ".onnx")
    folder = os.path.join(args.out, model)
    os.makedirs(folder, exist_ok=True)
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count()
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feeds, flags = {}, []
    for i in session.get_inputs():
        x = make_input(model, i.name, [d if isinstance(d, int) else 1 for d in i.shape], rng)
        feeds[i.name] = x
        file = os.path.join(folder, f"input_{len(flags)}.npy")
        np.save(file, x)
        flags += ["--input", f"{i.name}={file}"]
    session.run(None, feeds)  # warm-up
    ort_times = []
    for _ in range(args.ort_runs):
        start = time.perf_counter()
        ort_out = session.run(None, feeds)
        ort_times.append((time.perf_counter() - start) * 1e3)
    ort_ms = sorted(ort_times)[len(ort_times) // 2]
    cmd = [args.onda, "run", path, *flags, "--output-dir", folder, "--bench", str(args.runs), "--profile"]
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True)
    total_s = time.perf_counter() - start
    log = result.stdout + result.stderr
    open(os.path.join(folder, "onda.log"), "w").write(log)
    shown = "\n".join(line for line in log.splitlines() if not line.startswith("wrote "))
    print(f"===== {model}: onda exit {result.returncode} ({total_s:.1f} s)\n{shown}")
    if result.returncode != 0:
        results.append({"model": model, "failed": True, "ort_cpu_ms": ort_ms})
        continue
    errors = []
    for o, ref in zip(session.get_outputs(), ort_out):
        got = np.load(output_file(folder, o.name))
        errors.append(float(np.linalg.norm(got.astype(np.float64) - ref) / max(np.linalg.norm(ref), 1e-30)))
    load = re.search(r"loaded in ([0-9.]+) ms", log)
    first = re.search(r"first run: ([0-9.]+) ms \((\d+) dispatches, recording ([0-9.]+) ms\)", log)
    peak = re.search(r"peak GPU memory: ([0-9.]+) (GiB|MiB|KiB)", log)
    peak_mib = float(peak.group(1)) * {"GiB": 1024, "MiB": 1, "KiB": 1 / 1024}[peak.group(2)] if peak else None
    runs = re.search(r"min ([0-9.]+) ms\s+median ([0-9.]+) ms\s+max ([0-9.]+) ms", log)
    record = re.search(r"median run: recording ([0-9.]+) ms", log)
    kernels = re.search(r"GPU time per op type \(last run, ([0-9.]+) ms of kernels\)", log)
    idle = re.search(r"idle gaps ([0-9.]+) ms", log)
    num = lambda m, g: float(m.group(g)) if m else None
    results.append({"model": model, "load_ms": num(load, 1), "first_ms": num(first, 1),
                    "dispatches": int(first.group(2)) if first else None, "peak_mib": peak_mib,
                    "median_ms": num(runs, 2), "min_ms": num(runs, 1), "max_ms": num(runs, 3),
                    "record_ms": num(record, 1), "kernel_ms": num(kernels, 1), "gpu_idle_ms": num(idle, 1), "ort_cpu_ms": ort_ms,
                    "rel_l2": errors})

# Peers measured elsewhere in the same call (bench/ort-webgpu.sh writes one JSON line per model).
webgpu = {}
if args.ort_webgpu and os.path.exists(args.ort_webgpu):
    for line in open(args.ort_webgpu):
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            webgpu[os.path.basename(r["model"]).removesuffix(".onnx")] = r
for r in results:
    w = webgpu.get(r["model"], {})
    r["ort_webgpu_ms"] = w.get("median_ms")
    r["ort_webgpu_error"] = w.get("error")
    r["pytorch_cuda_ms"] = PYTORCH_CUDA_MS.get(r["model"])
json.dump({"date": time.strftime("%Y-%m-%d"), "gpu": args.gpu, "commit": args.commit, "models": results},
          open(os.path.join(args.out, "results.json"), "w"), indent=1)

fmt = lambda v, f="{:.1f}": "?" if v is None else f.format(v)
ratio = lambda a, b: "?" if a is None or b is None or b == 0 else f"{a / b:.1f}x"
print("\n| model | onda median (min..max) ms | GPU kernels ms | recording ms | dispatches | peak GPU MiB | "
      "ORT WebGPU ms | ORT CPU ms | PyTorch CUDA ms* | vs ORT WebGPU | vs ORT CPU | vs PyTorch | rel L2 vs ORT CPU |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for r in results:
    if r.get("failed"):
        print(f"| {r['model']} | failed | | | | | | {fmt(r['ort_cpu_ms'])} | | | | | |")
        continue
    print(f"| {r['model']} | {fmt(r['median_ms'], '{:.2f}')} ({fmt(r['min_ms'], '{:.2f}')}..{fmt(r['max_ms'], '{:.2f}')}) | "
          f"{fmt(r['kernel_ms'])} | {fmt(r['record_ms'])} | {r['dispatches']} | {fmt(r['peak_mib'])} | "
          f"{fmt(r['ort_webgpu_ms']) if not r['ort_webgpu_error'] else r['ort_webgpu_error']} | {fmt(r['ort_cpu_ms'])} | "
          f"{fmt(r['pytorch_cuda_ms'])} | {ratio(r['ort_webgpu_ms'], r['median_ms'])} | {ratio(r['ort_cpu_ms'], r['median_ms'])} | "
          f"{ratio(r['pytorch_cuda_ms'], r['median_ms'])} | {' '.join(f'{e:.1e}' for e in r['rel_l2'])} |")
print("\n* PyTorch CUDA: the issue's figures for the same architectures on an H200 (fp32, TF32 off, eager); "
      "the GPU machine has no implementations of these models to measure in the same call.")
