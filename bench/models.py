"""End-to-end model benchmark on the GPU machine (issue 8): for each reference model, onda's load
time, first run, median/min/max of timed runs, peak GPU memory and per-op profile, next to ONNX
Runtime's CPU provider in the same call, and the rel L2 of onda's outputs against ONNX Runtime.

    python3 bench/models.py --models-dir DIR [--onda build/onda] [--runs 20] [--out OUT]

DIR holds <name>.onnx and <name>.weights.bin (materialize.py). Inputs follow the models README:
waveforms 0.1*N(0,1); the VR magnitude |N(0,1)|; MP-SENet magnitude |N(0,1)|^0.3, phase U(-pi, pi).
"""
import argparse
import os
import re
import subprocess
import time

import numpy as np
import onnxruntime as ort

parser = argparse.ArgumentParser()
parser.add_argument("--models-dir", required=True)
parser.add_argument("--onda", default="build/onda")
parser.add_argument("--runs", type=int, default=20)
parser.add_argument("--out", default="out")
parser.add_argument("--models", default="mpsenet,vr_hp_wind_inst,htdemucs6,scnetlargestarrytong")
parser.add_argument("--ort-runs", type=int, default=3)
args = parser.parse_args()
os.makedirs(args.out, exist_ok=True)
rng = np.random.default_rng(0)


def make_input(model, name, shape):
    if model == "mpsenet":
        if "pha" in name:
            return rng.uniform(-np.pi, np.pi, shape).astype(np.float32)
        return (np.abs(rng.standard_normal(shape)) ** 0.3).astype(np.float32)
    if model == "vr_hp_wind_inst":
        return np.abs(rng.standard_normal(shape)).astype(np.float32)
    return (0.1 * rng.standard_normal(shape)).astype(np.float32)


rows = []
for model in args.models.split(","):
    path = os.path.join(args.models_dir, model + ".onnx")
    folder = os.path.join(args.out, model)
    os.makedirs(folder, exist_ok=True)
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count()
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feeds, flags = {}, []
    for i in session.get_inputs():
        x = make_input(model, i.name, [d if isinstance(d, int) else 1 for d in i.shape])
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
    print(f"===== {model}: onda exit {result.returncode} ({total_s:.1f} s)\n{log[-3500:]}")
    if result.returncode != 0:
        rows.append((model, "failed", "", "", "", f"{ort_ms:.1f}", ""))
        continue
    errors = []
    for o, ref in zip(session.get_outputs(), ort_out):
        got = np.load(os.path.join(folder, re.sub(r"[^A-Za-z0-9_.-]", "_", o.name) + ".npy"))
        errors.append(float(np.linalg.norm(got.astype(np.float64) - ref) / max(np.linalg.norm(ref), 1e-30)))
    load = re.search(r"loaded in ([0-9.]+) ms", log)
    first = re.search(r"first run: ([0-9.]+) ms \((\d+) dispatches, recording ([0-9.]+) ms\), peak GPU memory ([0-9.]+) MiB", log)
    runs = re.search(r"min ([0-9.]+) ms\s+median ([0-9.]+) ms\s+max ([0-9.]+) ms", log)
    rows.append((model, load.group(1) if load else "?", first.group(1) if first else "?",
                 f"{runs.group(2)} ({runs.group(1)}..{runs.group(3)})" if runs else "?",
                 first.group(4) if first else "?", f"{ort_ms:.1f}", " ".join(f"{e:.1e}" for e in errors)))

print("\n| model | onda load ms | first run ms | median (min..max) ms | peak GPU MiB | ORT CPU ms | rel L2 vs ORT CPU |")
print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
for r in rows:
    print("| " + " | ".join(r) + " |")
