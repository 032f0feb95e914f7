"""Shared pieces of the Python tests: tiny ONNX models built with python3-onnx, the repository's
paths (the C++ command line build/onda for comparisons)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ONDA_CLI = ROOT / "build" / "onda"


def save_model(path: Path, nodes, inputs, outputs, initializers=(), metadata=None, opset=17) -> Path:
    graph = helper.make_graph(nodes, "tiny", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="onda-tests")
    model.ir_version = 8
    if metadata:
        for key, value in metadata.items():
            entry = model.metadata_props.add()
            entry.key, entry.value = key, value
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    """Tiny models: {name: path}."""
    folder = tmp_path_factory.mktemp("models")
    f32, f16, i32, i64, b = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL
    out = {}
    # y = x * 2 + bias (x: [batch, 3], batch dynamic), z = -x: two outputs.
    out["affine"] = save_model(
        folder / "affine.onnx",
        [helper.make_node("Mul", ["x", "two"], ["twice"]), helper.make_node("Add", ["twice", "bias"], ["y"]),
         helper.make_node("Neg", ["x"], ["z"])],
        [helper.make_tensor_value_info("x", f32, ["batch", 3])],
        [helper.make_tensor_value_info("y", f32, ["batch", 3]), helper.make_tensor_value_info("z", f32, ["batch", 3])],
        [helper.make_tensor("two", f32, [], [2.0]), helper.make_tensor("bias", f32, [3], [0.5, -1.0, 3.0])],
    )
    # One input of each other dtype onda holds, through ops that keep or convert it.
    out["dtypes"] = save_model(
        folder / "dtypes.onnx",
        [helper.make_node("Add", ["h", "h"], ["h2"]), helper.make_node("Cast", ["i"], ["i_as_i64"], to=i64),
         helper.make_node("Cast", ["l"], ["l_as_i32"], to=i32), helper.make_node("Cast", ["i"], ["i_as_bool"], to=b),
         helper.make_node("Cast", ["b"], ["b_as_i32"], to=i32)],
        [helper.make_tensor_value_info("h", f16, [2, 300]), helper.make_tensor_value_info("i", i32, [2, 300]),
         helper.make_tensor_value_info("l", i64, [2, 300]), helper.make_tensor_value_info("b", b, [2, 300])],
        [helper.make_tensor_value_info("h2", f16, [2, 300]), helper.make_tensor_value_info("i_as_i64", i64, [2, 300]),
         helper.make_tensor_value_info("l_as_i32", i32, [2, 300]), helper.make_tensor_value_info("i_as_bool", b, [2, 300]),
         helper.make_tensor_value_info("b_as_i32", i32, [2, 300])],
    )
    # A larger input (borrowed, not copied: over 512 KiB): y = x + x.
    out["large"] = save_model(
        folder / "large.onnx",
        [helper.make_node("Add", ["x", "x"], ["y"])],
        [helper.make_tensor_value_info("x", f32, [256, 1024])],
        [helper.make_tensor_value_info("y", f32, [256, 1024])],
    )
    # An output that is a constant (held on the host by the session) next to a computed one.
    out["constant"] = save_model(
        folder / "constant.onnx",
        [helper.make_node("Identity", ["c"], ["y"]), helper.make_node("Neg", ["x"], ["z"])],
        [helper.make_tensor_value_info("x", f32, [2])],
        [helper.make_tensor_value_info("y", f32, [3]), helper.make_tensor_value_info("z", f32, [2])],
        [helper.make_tensor("c", f32, [3], [1.0, 2.0, 3.0])],
    )
    return out


def waveform_model(path: Path, stems, frames=1000, channels=2) -> Path:
    """A waveform separation model with its description in the ONNX metadata: stem k = x * gain[k]."""
    gains = np.array([0.5, -0.25, 0.75, 1.0][: len(stems)], dtype=np.float32).reshape(1, len(stems), 1, 1)
    description = {"sample_rate": 8000, "channels": channels, "stems": list(stems), "overlap": 0.25}
    return save_model(
        path,
        [helper.make_node("Unsqueeze", ["mix", "axis"], ["mix4"]), helper.make_node("Mul", ["mix4", "gains"], ["sources"])],
        [helper.make_tensor_value_info("mix", TensorProto.FLOAT, [1, channels, frames])],
        [helper.make_tensor_value_info("sources", TensorProto.FLOAT, [1, len(stems), channels, frames])],
        [helper.make_tensor("axis", TensorProto.INT64, [1], [1]),
         helper.make_tensor("gains", TensorProto.FLOAT, list(gains.shape), gains.ravel().tolist())],
        metadata={"onda": json.dumps(description)},
    )


def write_wav(path: Path, samples: np.ndarray, rate: int) -> Path:
    """16-bit PCM WAV of float [channels, frames] (Python's wave module)."""
    import wave

    pcm = np.clip(np.round(samples.T * 32767), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(samples.shape[0])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return path


@pytest.fixture(scope="session")
def onda_cli():
    if not ONDA_CLI.exists():
        pytest.skip(f"no {ONDA_CLI} (build the command line: cmake --build build --target onda)")
    return ONDA_CLI
