"""`python3 -m onda` against the C++ command line: every option of `onda run --help` (and of
separate, enhance, info) exists in the Python one; `run --test-data` on an ONNX node folder passes,
a wrong expected output fails with exit status 1; --random-inputs / --shape / --output-dir /
--bench / --profile as the C++ command."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onda  # noqa: F401  (the package under test must import)


def python_onda(*args, check=False):
    return subprocess.run([sys.executable, "-m", "onda", *map(str, args)], capture_output=True, text=True, check=check)


def long_options(help_text: str):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", help_text)) - {"--help"}


@pytest.mark.parametrize("command", ["run", "separate", "enhance", "info"])
def test_every_option_of_the_cpp_command_exists(onda_cli, command):
    cpp = subprocess.run([str(onda_cli), command, "--help"], capture_output=True, text=True, check=True).stdout
    py = python_onda(command, "--help", check=True).stdout
    cpp_options = long_options(cpp)
    assert cpp_options, cpp
    missing = sorted(cpp_options - long_options(py))
    assert not missing, f"python3 -m onda {command} lacks {missing}"


def node_folder(name: str) -> Path:
    onnx = pytest.importorskip("onnx")
    folder = Path(onnx.__file__).parent / "backend" / "test" / "data" / "node" / name
    if not folder.is_dir():
        pytest.skip(f"no ONNX node folder {folder}")
    return folder


def test_run_test_data_on_an_onnx_node_folder():
    folder = node_folder("test_add")
    done = python_onda("run", folder / "model.onnx", "--test-data", folder / "test_data_set_0")
    assert done.returncode == 0, done.stderr
    assert re.search(r"check sum: ok \(rel L2 ", done.stdout), done.stdout


def test_run_test_data_with_a_wrong_expected_output_fails(tmp_path):
    from onnx import TensorProto, numpy_helper

    folder = node_folder("test_add")
    data = tmp_path / "test_data_set_0"
    data.mkdir()
    for i in range(2):
        (data / f"input_{i}.pb").write_bytes((folder / "test_data_set_0" / f"input_{i}.pb").read_bytes())
    proto = TensorProto()
    proto.ParseFromString((folder / "test_data_set_0" / "output_0.pb").read_bytes())
    expected = numpy_helper.to_array(proto)
    wrong = expected.copy()
    wrong.flat[7] += 0.5
    (data / "output_0.pb").write_bytes(numpy_helper.from_array(wrong, "sum").SerializeToString())
    done = python_onda("run", folder / "model.onnx", "--test-data", data)
    assert done.returncode == 1
    assert "check sum: FAILED" in done.stdout and "values differ beyond atol" in done.stdout
    assert "onda: error: 1 of 1 outputs differ from" in done.stderr
    # A looser tolerance passes it (|diff| 0.5 <= atol).
    assert python_onda("run", folder / "model.onnx", "--test-data", data, "--atol", "0.6").returncode == 0


def test_run_random_inputs_outputs_bench_profile(models, tmp_path):
    out = tmp_path / "out"
    done = python_onda("run", models["affine"], "--random-inputs", "--shape", "x=4,3", "--output-dir", out,
                       "--bench", "2", "--profile", "--first-submit", "0")
    assert done.returncode == 0, done.stderr
    assert "runs: 2  min" in done.stdout and "GPU time per op type" in done.stdout, done.stdout
    assert re.search(r"whole model: GPU [0-9.]+ ms, floor [0-9.]+ ms", done.stdout), done.stdout
    y, z = np.load(out / "y.npy"), np.load(out / "z.npy")
    assert y.shape == (4, 3)
    np.testing.assert_array_equal(y, -z * np.float32(2) + np.array([0.5, -1.0, 3.0], np.float32))
    # --profile-csv: the C++ command's header, a line of nine fields per profiled node, no partial file left.
    done = python_onda("run", models["affine"], "--random-inputs", "--shape", "x=4,3", "--profile-csv",
                       tmp_path / "profile.csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader((tmp_path / "profile.csv").read_text().splitlines()))
    assert rows[0] == ["op_type", "node", "input_shapes", "gpu_ms", "dispatches", "floor_ms", "gflop", "mb", "bound"]
    assert len(rows) >= 2 and all(len(r) == 9 and r[1] and float(r[3]) >= 0 for r in rows[1:]), rows
    assert not (tmp_path / "profile.csv.partial").exists()
    done = python_onda("run", models["affine"], "--random-inputs", "--shape", "x=4,3", "--profile-csv",
                       tmp_path / "nowhere" / "p.csv")
    assert done.returncode == 1 and "--profile-csv" in done.stderr and "no folder" in done.stderr
    done = python_onda("run", models["affine"], "--random-inputs", "--shape", "x=2,3", "--max-binding-bytes", "65536",
                       "--tuning", "rnn.step_kernel=vec4", "--output-dir", out)
    assert done.returncode == 0, done.stderr
    assert np.load(out / "y.npy").shape == (2, 3)
    # The C++ command's checks and messages.
    done = python_onda("run", models["affine"], "--random-inputs")
    assert done.returncode == 1
    assert "onda: error: input 'x' has a dynamic shape [-1, 3]: give --shape x=d0,d1,..." in done.stderr
    done = python_onda("run", models["affine"], "--shape", "q=1,3", "--random-inputs")
    assert done.returncode == 1 and "--shape q: the model has no input 'q' (its inputs: 'x')" in done.stderr
    done = python_onda("run", models["affine"], "--shape", "x=1,a")
    assert done.returncode == 1 and "'a' is not a dimension" in done.stderr
    done = python_onda("run", models["affine"])
    assert done.returncode == 1 and "no value for input 'x' (use --input x=FILE.npy or --random-inputs)" in done.stderr
    done = python_onda("run", models["affine"], "--random-inputs", "--shape", "x=1,3", "--tuning", "nonsense")
    assert done.returncode == 1 and "tuning" in done.stderr


def test_run_plan_memory_and_memory_limit(models):
    # A dry run: the plan of x [4, 3] without running; then a run under a limit the weights alone
    # exceed fails with the C++ message naming the bytes.
    done = python_onda("run", models["large"], "--plan-memory")
    assert done.returncode == 0, done.stderr
    assert "memory plan (not run): activations" in done.stdout and "arenas" in done.stdout, done.stdout
    done = python_onda("run", models["large"], "--random-inputs", "--memory-limit", "4096")
    assert done.returncode == 1
    assert "memory_limit of 4096 bytes" in done.stderr, done.stderr


def test_info_prints_the_tuning_and_takes_overrides():
    done = python_onda("info", check=True)
    assert "kernel tuning on this adapter:" in done.stdout and "fft.code_path" in done.stdout, done.stdout
    done = python_onda("info", "--tuning", "gemm.for_unroll=1", check=True)
    assert re.search(r"gemm\.for_unroll\s+1", done.stdout), done.stdout
    done = python_onda("info", "--tuning", "fft.code_path=fast")
    assert done.returncode == 1 and "fft.code_path" in done.stderr, done.stderr
