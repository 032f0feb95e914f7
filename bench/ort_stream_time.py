#!/usr/bin/env python3
"""The Python twin of bench/ort_stream_time.js (ONNX Runtime CPU on a streaming model, frame by frame,
states fed back on the host), for machines with the onnxruntime wheel and no npm package (the GPU
machine). Same arguments, same JSON line, same MASKS.bin.
  python3 bench/ort_stream_time.py MODEL.onnx FRAMES.bin N MASKS.bin [WARMUP] [THREADS]"""
import json
import sys
import time

import numpy as np
import onnxruntime as ort


def state_output(name):
    return "hn" if name == "h0" else name.replace("_in_", "_out_")


def main():
    model, frames_path, n, masks_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    warmup = int(sys.argv[5]) if len(sys.argv) > 5 else 20
    threads = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads > 0:
        options.intra_op_num_threads = threads
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    frames = np.fromfile(frames_path, dtype=np.float32).reshape(n, -1)
    metas = {i.name: i.shape for i in session.get_inputs()}
    spec_shape = metas["spec"]
    zeros = lambda: {name: np.zeros(shape, np.float32) for name, shape in metas.items() if name != "spec"}
    names = [o.name for o in session.get_outputs()]
    states = zeros()

    def step(k):
        nonlocal states
        out = dict(zip(names, session.run(None, {**states, "spec": frames[k].reshape(spec_shape)})))
        states = {name: out[state_output(name)] for name in states}
        return out["mask"]

    for k in range(warmup):
        step(k % n)
    states = zeros()
    times, masks = [], []
    for k in range(n):
        start = time.perf_counter()
        masks.append(step(k).ravel())
        times.append((time.perf_counter() - start) * 1e3)
    np.concatenate(masks).astype(np.float32).tofile(masks_path)
    s = sorted(times)
    print(json.dumps({"runtime": "onnxruntime-cpu (python)", "threads": threads, "frames": n,
                      "p50_ms": s[len(s) // 2], "p99_ms": s[min(len(s) - 1, int(0.99 * len(s)))],
                      "mean_ms": sum(times) / n, "max_ms": s[-1]}))


if __name__ == "__main__":
    main()
