"""onda.InferenceSession on tiny models: results against numpy, onnxruntime's conventions, dtypes
and layouts, options accepted, errors as exceptions."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import onda
from conftest import ROOT


def fresh(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_version_and_device():
    version = re.search(r"project\(onda VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert onda.__version__ == version
    device = onda.get_device()
    assert isinstance(device, str) and device
    adapters = onda.list_adapters()
    assert adapters and any(a["name"] == device for a in adapters)
    assert onda.get_device(adapters[0]["index"]) == adapters[0]["name"]


def test_inputs_outputs_as_onnxruntime_spells_them(models):
    session = onda.InferenceSession(str(models["affine"]))
    (x,) = session.get_inputs()
    assert (x.name, x.type, x.shape) == ("x", "tensor(float)", ["batch", 3])
    assert [(o.name, o.type, o.shape) for o in session.get_outputs()] == [
        ("y", "tensor(float)", ["batch", 3]), ("z", "tensor(float)", ["batch", 3])]
    assert session.get_providers() == ["WebGpuExecutionProvider"]
    assert session.get_modelmeta().producer_name == "onda-tests"
    types = {i.name: i.type for i in onda.InferenceSession(models["dtypes"]).get_inputs()}
    assert types == {"h": "tensor(float16)", "i": "tensor(int32)", "l": "tensor(int64)", "b": "tensor(bool)"}


def test_dynamic_dimensions_as_onnxruntime_spells_them(tmp_path):
    """A named dynamic dimension is its name (str), an unnamed unknown one None, a size an int."""
    from conftest import save_model
    from onnx import TensorProto, helper

    f32 = TensorProto.FLOAT
    path = save_model(
        tmp_path / "dims.onnx", [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Shape", ["x"], ["s"])],
        [helper.make_tensor_value_info("x", f32, ["batch", None, 4, "time"])],
        [helper.make_tensor_value_info("y", f32, ["batch", None, 4, "time"]),
         helper.make_tensor_value_info("s", TensorProto.INT64, [4])])
    session = onda.InferenceSession(path)
    (x,) = session.get_inputs()
    assert x.shape == ["batch", None, 4, "time"]
    y, s = session.get_outputs()
    assert y.shape == ["batch", None, 4, "time"] and s.shape == [4]
    assert repr(x) == "NodeArg(name='x', type='tensor(float)', shape=['batch', None, 4, 'time'])"
    value = fresh((2, 3, 4, 5), 14)
    relu, shape = session.run(None, {"x": value})
    np.testing.assert_array_equal(relu, np.maximum(value, 0))
    np.testing.assert_array_equal(shape, [2, 3, 4, 5])


def test_run_matches_numpy_in_the_order_asked(models):
    session = onda.InferenceSession(models["affine"])
    for seed, batch in [(1, 1), (2, 5), (3, 5)]:  # a new shape, then the same shape (replayed)
        x = fresh((batch, 3), seed)
        y, z = session.run(None, {"x": x})
        np.testing.assert_array_equal(y, x * np.float32(2) + np.array([0.5, -1.0, 3.0], np.float32))
        np.testing.assert_array_equal(z, -x)
        assert y.dtype == np.float32 and y.shape == (batch, 3)
        z2, y2 = session.run(["z", "y"], {"x": x})
        np.testing.assert_array_equal(z2, z)
        np.testing.assert_array_equal(y2, y)
        assert len(session.run(["y"], {"x": x})) == 1


def test_every_dtype_in_and_out(models):
    session = onda.InferenceSession(models["dtypes"])
    rng = np.random.default_rng(4)
    feed = {
        "h": rng.uniform(-100, 100, (2, 300)).astype(np.float16),
        "i": rng.integers(-1000, 1000, (2, 300), dtype=np.int32),
        "l": rng.integers(-1000, 1000, (2, 300), dtype=np.int64),
        "b": rng.integers(0, 2, (2, 300)).astype(bool),
    }
    outputs = session.run(None, feed)
    expected = [feed["h"] + feed["h"], feed["i"].astype(np.int64), feed["l"].astype(np.int32),
                feed["i"].astype(bool), feed["b"].astype(np.int32)]
    for got, want in zip(outputs, expected):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)  # doubling is exact in f16 here


def test_other_layouts_are_converted(models):
    session = onda.InferenceSession(models["affine"])
    base = fresh((3, 8), 5)
    for x in (base.T, base.T[::2], np.asfortranarray(base.T), base.T.astype(">f4")):
        (z,) = session.run(["z"], {"x": x})
        np.testing.assert_array_equal(z, -np.ascontiguousarray(x, dtype=np.float32))
    # Lists become arrays, as in onnxruntime.
    (z,) = session.run(["z"], {"x": [[1.0, 2.0, 3.0]]})
    np.testing.assert_array_equal(z, np.array([[-1, -2, -3]], np.float32))


def test_large_inputs_are_borrowed_and_may_be_reused(models):
    session = onda.InferenceSession(models["large"])
    x = fresh((256, 1024), 6)
    (y1,) = session.run(None, {"x": x})
    np.testing.assert_array_equal(y1, x + x)
    x[:] = fresh((256, 1024), 7)  # the same buffer, new values: the next run sees them
    (y2,) = session.run(None, {"x": x})
    np.testing.assert_array_equal(y2, x + x)
    assert not np.array_equal(y1, y2)  # the first run's output is its own array
    y2[0, 0] = 1.0  # outputs are writable numpy arrays
    small = onda.InferenceSession(models["affine"])
    s = fresh((2, 3), 8)
    (z1,) = small.run(["z"], {"x": s})
    s[:] = fresh((2, 3), 9)
    (z2,) = small.run(["z"], {"x": s})
    np.testing.assert_array_equal(z2, -s)


def test_open_from_bytes_and_pathlike(models):
    data = Path(models["affine"]).read_bytes()
    x = fresh((2, 3), 10)
    a = onda.InferenceSession(data).run(None, {"x": x})
    b = onda.InferenceSession(Path(models["affine"])).run(None, {"x": x})
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def test_onnxruntime_options_are_accepted(models):
    options = onda.SessionOptions()
    options.graph_optimization_level = onda.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = 4
    options.execution_mode = onda.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    options.add_session_config_entry("session.disable_prepacking", "1")
    options.some_future_option = True
    run_options = onda.RunOptions()
    run_options.log_severity_level = 3
    session = onda.InferenceSession(
        models["affine"], options, providers=["CUDAExecutionProvider", "CPUExecutionProvider"],
        provider_options=[{"device_id": 0}, {}])
    x = fresh((1, 3), 11)
    (z,) = session.run(["z"], {"x": x}, run_options)
    np.testing.assert_array_equal(z, -x)
    assert session.get_session_options() is options
    adapter = onda.list_adapters()[0]
    chosen = onda.InferenceSession(models["affine"], providers=[("WebGpuExecutionProvider", {"adapter": adapter["index"]})])
    assert chosen.adapter == adapter["name"]
    assert onda.InferenceSession(models["affine"], adapter=adapter["name"]).adapter == adapter["name"]


ORT_STYLE_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import onda as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    providers = [p for p in providers if p in ort.get_available_providers()] or None
    sess = ort.InferenceSession(MODEL, sess_options=so, providers=providers)
    input_name = sess.get_inputs()[0].name
    output_names = [o.name for o in sess.get_outputs()]
    batch = sess.get_inputs()[0].shape[0]
    batch = batch if isinstance(batch, int) else 4  # a dynamic dimension: its name or None
    x = np.random.default_rng(0).standard_normal((batch, 3)).astype(np.float32)
    outputs = sess.run(output_names, {input_name: x})
    result = dict(zip(output_names, outputs))
    first = sess.run(None, {input_name: x})[0]
    """
)


def test_onnxruntime_style_script_runs_unchanged(models):
    namespace = {"MODEL": str(models["affine"])}
    exec(compile(ORT_STYLE_SCRIPT, "ort_style_script", "exec"), namespace)
    x = namespace["x"]
    np.testing.assert_array_equal(namespace["result"]["z"], -x)
    np.testing.assert_array_equal(namespace["first"], namespace["result"]["y"])


def test_errors_are_exceptions_with_onda_messages(models, tmp_path):
    session = onda.InferenceSession(models["affine"])
    x = fresh((2, 3), 12)
    with pytest.raises(onda.ModelError, match=r"'nope' is not an input of the model \(its inputs: x\)"):
        session.run(None, {"nope": x})
    with pytest.raises(onda.ModelError, match=r"'w' is not an output of the model \(its outputs: y, z\)"):
        session.run(["w"], {"x": x})
    with pytest.raises(onda.ModelError, match=r"missing input 'x'"):
        session.run(None, {})
    with pytest.raises(onda.ModelError, match=r"input 'x' must have shape \[-1, 3\].*got \[2, 4\]"):
        session.run(None, {"x": fresh((2, 4), 13)})
    with pytest.raises(onda.ModelError, match=r"input 'x' must be float32, got int32"):
        session.run(None, {"x": np.ones((2, 3), np.int32)})
    with pytest.raises(onda.ModelError, match=r"input 'x' has dtype float64, which onda does not hold"):
        session.run(None, {"x": np.ones((2, 3))})
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07garbage that is not a model" * 10)
    with pytest.raises(onda.Error):
        onda.InferenceSession(str(garbage))
    with pytest.raises(onda.Error):
        onda.InferenceSession(b"not a model at all")
    with pytest.raises(onda.Error, match="missing.onnx"):
        onda.InferenceSession(str(tmp_path / "missing.onnx"))
    with pytest.raises(onda.Error):
        onda.InferenceSession(models["affine"], adapter="no adapter has this name")
    # The session still works after the errors.
    np.testing.assert_array_equal(session.run(["z"], {"x": x})[0], -x)
    assert issubclass(onda.ModelError, RuntimeError)


def test_unsupported_op_names_it(tmp_path):
    from conftest import save_model
    from onnx import TensorProto, helper

    path = save_model(tmp_path / "unsupported.onnx", [helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=1, max_gram_length=1,
                                        max_skip_count=0, ngram_counts=[0], ngram_indexes=[0], pool_int64s=[1])],
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    with pytest.raises(onda.ModelError, match="TfIdfVectorizer"):
        onda.InferenceSession(path)


def test_writing_into_outputs_changes_nothing_in_the_session(models):
    session = onda.InferenceSession(models["constant"])
    y, z = session.run(None, {"x": np.ones(2, np.float32)})
    y[:] = 42.0  # the constant's array: a copy
    z[:] = 42.0
    for x in (np.ones(2, np.float32), np.full(2, 2.0, np.float32)):  # replayed, then recorded again
        y, z = session.run(None, {"x": x})
        np.testing.assert_array_equal(y, [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(z, -x)


def test_the_gil_is_released_while_the_gpu_runs(tmp_path):
    """With a switch interval of 60 s, a thread that keeps the GIL keeps it: the main thread can see
    the worker inside its runs only if session.run lets go of the GIL."""
    import sys
    import threading
    import time

    from conftest import save_model
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(30)
    weights = [numpy_helper.from_array((0.1 * rng.standard_normal(shape)).astype(np.float32), f"w{i}")
               for i, shape in enumerate([(16, 1, 9), (16, 16, 9), (1, 16, 9)])]
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a"], pads=[4, 4]),
             helper.make_node("Conv", ["a", "w1"], ["b"], pads=[4, 4]),
             helper.make_node("Conv", ["b", "w2"], ["y"], pads=[4, 4])]
    path = save_model(tmp_path / "convs.onnx", nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4000])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 4000])], weights)
    session = onda.InferenceSession(path)
    x = fresh((1, 1, 4000), 31)
    session.run(None, {"x": x})
    state = {"in_runs": False, "seen": 0}

    def worker():
        state["in_runs"] = True
        for _ in range(10):
            session.run(None, {"x": x})
        state["in_runs"] = False

    interval = sys.getswitchinterval()
    sys.setswitchinterval(60.0)
    try:
        thread = threading.Thread(target=worker)
        thread.start()
        while thread.is_alive():
            time.sleep(0.0005)  # lets the worker take the GIL
            state["seen"] += state["in_runs"]
        thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert state["seen"] > 0


def test_memory_limit_and_plan_memory(models):
    options = onda.SessionOptions()
    options.memory_limit = 4096  # the large model's input alone is 1 MiB
    session = onda.InferenceSession(models["large"], options)
    with pytest.raises(onda.ModelError, match="memory_limit of 4096 bytes"):
        session.run(None, {"x": np.ones((256, 1024), np.float32)})
    plan = onda.InferenceSession(models["large"])._session.plan_memory({})
    assert plan["activation_bytes"] >= plan["live_peak_bytes"] >= 2 * 256 * 1024 * 4
