"""MP-SENet through onda.InferenceSession against the same model through the C++ path (`onda run`),
bit for bit, on the inputs tests/models/model_matches_ort.sh makes. About 100 s on lavapipe
(one run each way); skipped without ../shared/models or build/onda. The replayed
second run is checked against ONNX Runtime by ctest's model_mpsenet_matches_onnxruntime."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import onda
from conftest import ROOT


def test_mpsenet_matches_the_cpp_path_bit_for_bit(onda_cli, tmp_path):
    made = subprocess.run([str(ROOT / "scripts" / "materialize-model.sh"), "mpsenet"], capture_output=True, text=True)
    if made.returncode == 77:
        pytest.skip(made.stderr.strip())
    assert made.returncode == 0, made.stderr
    model = ROOT / "models" / "mpsenet.onnx"
    rng = np.random.default_rng(0)  # as tests/models/model_matches_ort.sh
    inputs = {
        "noisy_mag": (np.abs(rng.standard_normal((1, 201, 321))) ** 0.3).astype(np.float32),
        "noisy_pha": rng.uniform(-np.pi, np.pi, (1, 201, 321)).astype(np.float32),
    }
    args = []
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / name}.npy"]
    # One first run each way: the same plan, kernels and recording, through the library's two front ends.
    subprocess.run([str(onda_cli), "run", str(model), *args, "--output-dir", str(tmp_path / "cpp")],
                   check=True, capture_output=True)
    session = onda.InferenceSession(str(model))
    outputs = session.run(None, inputs)
    names = [o.name for o in session.get_outputs()]
    assert sorted(names) == sorted(p.stem for p in (tmp_path / "cpp").glob("*.npy"))
    assert {"denoised_mag", "denoised_pha"} <= set(names)
    for name, value in zip(names, outputs):
        expected = np.load(tmp_path / "cpp" / f"{name}.npy")
        assert value.dtype == expected.dtype and value.shape == expected.shape
        assert np.isfinite(value).all()
        np.testing.assert_array_equal(value.view(np.uint32), expected.view(np.uint32))  # bit for bit
