"""Shared by the scripts that compare onda with ONNX Runtime on one model (trace_divergence.py,
accurate_reference.py): the same random inputs for both, and onda's outputs read back by name."""
import os
import re
import subprocess

import numpy as np


def random_inputs(session, folder, seed=0):
    """Inputs 0.1 N(0, 1) for every input of an ONNX Runtime session (dynamic dims as 1), saved as
    .npy files in `folder`. Returns (feeds for ONNX Runtime, `--input` flags for `onda run`)."""
    rng = np.random.default_rng(seed)
    feeds, flags = {}, []
    for k, i in enumerate(session.get_inputs()):
        x = (0.1 * rng.standard_normal([d if isinstance(d, int) else 1 for d in i.shape])).astype(np.float32)
        feeds[i.name] = x
        file = os.path.join(folder, f"in{k}.npy")
        np.save(file, x)
        flags += ["--input", f"{i.name}={file}"]
    return feeds, flags


def output_file(folder, name):
    """Where `onda run --output-dir folder` writes output `name` (characters outside [A-Za-z0-9_.-] -> _)."""
    return os.path.join(folder, re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".npy")


def run_onda(onda, model, flags, folder, names):
    """Runs `onda run` on `model` and returns its outputs `names` as arrays; exits with onda's log on failure."""
    result = subprocess.run([onda, "run", model, *flags, "--output-dir", folder], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(result.stdout + result.stderr)
    return {n: np.load(output_file(folder, n)) for n in names}
