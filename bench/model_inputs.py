"""The reference models' benchmark inputs (the models README, tests/models/model_matches_ort.sh): one
array per graph input, drawn from `rng` (numpy default_rng(0) per model, in graph-input order) as the
model expects it: waveforms 0.1 N(0, 1), the VR magnitude |N(0, 1)|, MP-SENet's magnitude |N(0, 1)|^0.3
and phase U(-pi, pi). Shared by bench/models.py and bench/torch_onnx.py."""
import numpy as np


def make_input(model, name, shape, rng):
    if model == "mpsenet":
        if "pha" in name:
            return rng.uniform(-np.pi, np.pi, shape).astype(np.float32)
        return (np.abs(rng.standard_normal(shape)) ** 0.3).astype(np.float32)
    if model == "vr_hp_wind_inst":
        return np.abs(rng.standard_normal(shape)).astype(np.float32)
    return (0.1 * rng.standard_normal(shape)).astype(np.float32)
