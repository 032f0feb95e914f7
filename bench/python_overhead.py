#!/usr/bin/env python3
"""What Python costs on top of the C++ Session::run: a small model (three 1-D convolutions over 1 s
of 16 kHz audio, built here with python3-onnx) run N times through onda.InferenceSession.

For each run: the wall time around session.run in Python, and the C++ Session::run wall time of
that same run (session.last_run()['wall_ms']: inputs in to outputs on the host, measured inside
C++). Their difference is the binding's cost (dict and numpy conversion, output ordering). Then the
same model and input through `build/onda run --bench N` (C++ only, another process) for reference.

    build/venv/bin/python3 bench/python_overhead.py [--runs 200] [--samples 16000] [--adapter NAME]
    build/venv/bin/python3 bench/python_overhead.py --samples 256 --save-model small256.onnx   # make it here
    python3 bench/python_overhead.py --model small256.onnx ...   # where python3-onnx is missing (a GPU machine)
Target: Python's median wall <= 1.05 x C++'s median (issue 29).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import onda

ROOT = Path(__file__).resolve().parents[1]


def small_model(path: Path, samples: int) -> None:
    import onnx  # python3-onnx: only to make the model
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    channels, kernel = [1, 16, 16, 1], 9
    nodes, inits = [], []
    x = "audio"
    for i in range(3):
        w = (rng.standard_normal((channels[i + 1], channels[i], kernel)) / np.sqrt(channels[i] * kernel)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        y = f"conv{i}" if i < 2 else "out"
        nodes.append(helper.make_node("Conv", [x, f"w{i}"], [y], pads=[kernel // 2, kernel // 2]))
        if i < 2:
            nodes.append(helper.make_node("Relu", [y], [f"relu{i}"]))
            y = f"relu{i}"
        x = y
    graph = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, 1, samples])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 1, samples])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--adapter", default=None)
    parser.add_argument("--samples", type=int, default=16000, help="input length (smaller: a shorter run)")
    parser.add_argument("--model", help="a model made before with --save-model (no python3-onnx needed)")
    parser.add_argument("--save-model", help="only write the model for --samples to this file")
    a = parser.parse_args()
    if a.save_model:
        small_model(Path(a.save_model), a.samples)
        return
    with tempfile.TemporaryDirectory() as folder:
        model = Path(folder) / "small.onnx"
        if a.model:
            model = Path(a.model)
            a.samples = onda.InferenceSession(str(model), adapter=a.adapter).get_inputs()[0].shape[-1]
        else:
            small_model(model, a.samples)
        x = np.random.default_rng(1).standard_normal((1, 1, a.samples)).astype(np.float32)
        session = onda.InferenceSession(str(model), adapter=a.adapter)
        for _ in range(5):  # plan, capture, replay
            session.run(None, {"audio": x})
        python_ms, cpp_ms = [], []
        for _ in range(a.runs):
            start = time.perf_counter()
            session.run(None, {"audio": x})
            python_ms.append(1e3 * (time.perf_counter() - start))
            cpp_ms.append(session.last_run()["wall_ms"])
        py_median, cpp_median = statistics.median(python_ms), statistics.median(cpp_ms)
        extra = statistics.median(p - c for p, c in zip(python_ms, cpp_ms))
        print(f"adapter: {session.adapter}; model: 3 Conv1d (1-16-16-1, k 9) over [1, 1, {a.samples}], {a.runs} runs")
        print(f"Python session.run      median {py_median:.3f} ms (min {min(python_ms):.3f})")
        print(f"C++ Session::run inside median {cpp_median:.3f} ms (min {min(cpp_ms):.3f})")
        print(f"Python's extra per run  median {1e3 * extra:.1f} us = {100 * extra / cpp_median:.2f}% "
              f"(median ratio {py_median / cpp_median:.4f})")
        cli = ROOT / "build" / "onda"
        if cli.exists():
            np.save(Path(folder) / "audio.npy", x)
            args = [str(cli), "run", str(model), "--input", f"audio={folder}/audio.npy", "--bench", str(a.runs)]
            if a.adapter:
                args += ["--adapter", a.adapter]
            text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
            m = re.search(r"runs: \d+\s+min ([0-9.]+) ms\s+median ([0-9.]+) ms", text)
            if m:
                print(f"build/onda run --bench  median {float(m.group(2)):.3f} ms (min {float(m.group(1)):.3f}) "
                      f"(C++ only, another process; Python/C++ medians {py_median / float(m.group(2)):.4f})")


if __name__ == "__main__":
    main()
