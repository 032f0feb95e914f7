"""Device tensors and I/O binding (onda.DeviceTensor = onda.OrtValue, session.io_binding()): a
recurrent cell whose state stays on the GPU for several steps against a float64 numpy reference,
with the bytes that crossed between host and GPU memory counted; values passed between sessions of
one onda.Device; what is refused."""

from __future__ import annotations

import numpy as np
import pytest

import onda
from conftest import save_model

STATE, FEATURES, STEPS = 160, 24, 6  # a state over 64 elements: no host copy of it is kept


@pytest.fixture(scope="module")
def cell(tmp_path_factory):
    """h_out = tanh(x W + h_in U + b), y = 2 h_out: a recurrent cell with its state in and out."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(40)
    w = (rng.standard_normal((FEATURES, STATE)) / np.sqrt(FEATURES)).astype(np.float32)
    u = (rng.standard_normal((STATE, STATE)) / np.sqrt(STATE)).astype(np.float32)
    b = (0.1 * rng.standard_normal(STATE)).astype(np.float32)
    f32 = TensorProto.FLOAT
    path = save_model(
        tmp_path_factory.mktemp("cell") / "cell.onnx",
        [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("MatMul", ["h_in", "U"], ["hu"]),
         helper.make_node("Add", ["xw", "hu"], ["s"]), helper.make_node("Add", ["s", "b"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["h_out"]), helper.make_node("Add", ["h_out", "h_out"], ["y"])],
        [helper.make_tensor_value_info("x", f32, [1, FEATURES]), helper.make_tensor_value_info("h_in", f32, [1, STATE])],
        [helper.make_tensor_value_info("y", f32, [1, STATE]), helper.make_tensor_value_info("h_out", f32, [1, STATE])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(u, "U"), numpy_helper.from_array(b, "b")],
    )
    return path, (w, u, b)


def reference(xs, h0, weights):
    w, u, b = (a.astype(np.float64) for a in weights)
    h, ys = h0.astype(np.float64), []
    for x in xs:
        h = np.tanh(x.astype(np.float64) @ w + h @ u + b)
        ys.append(2 * h)
    return ys, h


def inputs(seed):
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal((1, FEATURES)).astype(np.float32) for _ in range(STEPS)]
    return xs, (0.5 * rng.standard_normal((1, STATE))).astype(np.float32)


def test_state_stays_on_the_gpu_through_io_binding(cell):
    path, weights = cell
    session = onda.InferenceSession(str(path), providers=["CUDAExecutionProvider"])
    xs, h0 = inputs(41)
    want_ys, want_h = reference(xs, h0, weights)
    binding = session.io_binding()
    state = onda.OrtValue.ortvalue_from_numpy(h0, "cuda", 0)  # uploaded to the session's device on first use
    ys = []
    for step, x in enumerate(xs):
        binding.bind_cpu_input("x", x)
        binding.bind_ortvalue_input("h_in", state)
        binding.bind_output("y", "cpu")
        binding.bind_output("h_out", "cuda")
        session.run_with_iobinding(binding)
        y, state = binding.get_outputs()
        assert y.device_name() == "cpu" and state.device_name() == "webgpu"
        assert state.shape == (1, STATE) and state.shape() == [1, STATE] and state.dtype == np.float32
        assert state.data_type() == "tensor(float)" and state.device == session.device
        ys.append(y.numpy())
        stats = session.last_run()
        # Only x went up; nothing came down with the run (y, bound to 'cpu', is read back from the
        # GPU afterwards): the state never crossed (after its first upload).
        assert stats["host_upload_bytes"] == x.nbytes, (step, stats["host_upload_bytes"])
        assert stats["host_download_bytes"] == 0, (step, stats["host_download_bytes"])
    for got, want in zip(ys, want_ys):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(state.numpy(), want_h, rtol=2e-5, atol=2e-5)
    assert binding.copy_outputs_to_cpu()[1].shape == (1, STATE)


def test_bound_output_object_receives_each_new_state(cell):
    """bind_ortvalue_output: the same object holds the new value after each run."""
    path, weights = cell
    session = onda.InferenceSession(path)
    xs, h0 = inputs(42)
    _, want_h = reference(xs, h0, weights)
    state = onda.DeviceTensor.from_numpy(h0, session)  # uploaded now
    assert state.device == session.device and not state.on_host
    next_state = onda.OrtValue.ortvalue_from_shape_and_type([1, STATE], np.float32, "cuda", 0)
    binding = session.io_binding()
    binding.bind_output("h_out", "cuda")  # replaced below by the object binding
    for x in xs:
        binding.bind_cpu_input("x", x)
        binding.bind_ortvalue_input("h_in", state)
        binding.bind_ortvalue_output("h_out", next_state)
        session.run_with_iobinding(binding)
        assert binding.get_outputs()[0] is next_state
        state, next_state = next_state, state  # swap, as onnxruntime streaming loops do
    np.testing.assert_allclose(state.numpy(), want_h, rtol=2e-5, atol=2e-5)


def test_device_tensors_in_run_and_between_sessions_of_one_device(cell):
    path, weights = cell
    device = onda.Device()
    assert device.name == onda.get_device()
    a = onda.InferenceSession(path, device=device)
    b = onda.InferenceSession(path, device=device)
    xs, h0 = inputs(43)
    want_ys, want_h = reference(xs[:2], h0, weights)
    # Step 1 on session a, state left on the GPU; step 2 on session b reads it there.
    (h1,) = a.run_with_ort_values(["h_out"], {"x": xs[0], "h_in": onda.DeviceTensor.from_numpy(h0, device)})
    assert not h1.on_host and h1.device == device
    y2, h2 = b.run(None, {"x": xs[1], "h_in": h1})  # run() takes DeviceTensors too; outputs are arrays
    np.testing.assert_allclose(y2, want_ys[1], rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(h2, want_h, rtol=2e-5, atol=2e-5)
    assert b.last_run()["host_upload_bytes"] == xs[1].nbytes
    # A tensor is immutable: reading it again gives the same values.
    np.testing.assert_array_equal(h1.numpy(), h1.numpy())
    # Host OrtValues are plain arrays in a wrapper.
    host = onda.OrtValue.ortvalue_from_numpy(h0)
    assert host.on_host and host.device_name() == "cpu" and host.numpy() is not None
    y, _ = a.run(None, {"x": xs[0], "h_in": host})
    np.testing.assert_allclose(y, reference(xs[:1], h0, weights)[0][0], rtol=2e-5, atol=2e-5)


def test_what_io_binding_refuses(cell):
    path, (_, _, b) = cell
    session = onda.InferenceSession(path)
    other = onda.InferenceSession(path)  # its own device
    binding = session.io_binding()
    with pytest.raises(onda.ModelError, match=r"'nope' is not an input of the model \(its inputs: x, h_in\)"):
        binding.bind_cpu_input("nope", np.zeros(1, np.float32))
    with pytest.raises(onda.ModelError, match=r"'nope' is not an output"):
        binding.bind_output("nope")
    with pytest.raises(onda.Error, match="raw pointer"):
        binding.bind_input("x", "cuda", 0, np.float32, [1, FEATURES], 12345678)
    with pytest.raises(onda.Error, match="raw device pointer"):
        binding.bind_output("y", "cuda", 0, np.float32, [1, STATE], 12345678)
    with pytest.raises(onda.Error, match="no output is bound"):
        session.run_with_iobinding(binding)
    binding.bind_input("x", np.zeros((1, FEATURES), np.float32))
    binding.bind_input("h_in", onda.DeviceTensor.from_numpy(np.zeros((1, STATE), np.float32), other))
    binding.bind_output("y")
    with pytest.raises(onda.ModelError, match="input 'h_in' is a DeviceTensor of another Device"):
        session.run_with_iobinding(binding)
    with pytest.raises(onda.Error, match="another session"):
        other.run_with_iobinding(binding)
    with pytest.raises(TypeError):
        onda.DeviceTensor()
    # The session still runs.
    binding.bind_input("h_in", np.zeros((1, STATE), np.float32))
    session.run_with_iobinding(binding)
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0][0], 2 * np.tanh(b.astype(np.float64)), rtol=2e-5, atol=2e-5)
