"""``python3 -m onda run``: the command line's ``onda run`` (tools/run_command.cpp) from Python, with
the same options, checks and messages: .npy inputs or random ones (--shape, --random-inputs) or an
ONNX test data set (--test-data, checked with --rtol / --atol as ONNX's backend tests check), .npy
outputs, --bench, --profile, and the session options --adapter, --first-submit, --tuning,
--max-binding-bytes. Random inputs are drawn by numpy (normal(0, 0.1) floats, 0/1 integers), so
their values differ from the C++ command's."""

from __future__ import annotations

import argparse
import os
import re
import statistics
import time
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

from . import _onda
from . import InferenceSession, SessionOptions

DEFAULT_RTOL, DEFAULT_ATOL = 1e-3, 1e-7  # ONNX's backend test defaults, as the C++ command


def add_run_command(commands: "argparse._SubParsersAction") -> None:
    p = commands.add_parser("run", help="Run an ONNX model on the GPU with .npy inputs and outputs")
    p.add_argument("model", help="The .onnx file")
    p.add_argument("--input", action="append", default=[], help="NAME=FILE.npy for a graph input (repeatable)")
    p.add_argument("--shape", action="append", default=[], help="NAME=d0,d1,... shape of a random input with dynamic dims")
    p.add_argument("--random-inputs", action="store_true", help="Random values for inputs without --input")
    p.add_argument("--output-dir", help="Write every output as DIR/<name>.npy")
    p.add_argument("--bench", type=int, default=0, help="Time N more runs after the first (min/median/max); outputs are the last run's")
    p.add_argument("--profile", action="store_true", help="GPU time per kernel through timestamp queries")
    p.add_argument("--profile-csv", metavar="FILE",
                   help="With --profile: every node's GPU time and floor as CSV in FILE (the report shows the top ones)")
    p.add_argument("--timings", action="store_true", help="Where the first run's recording went, by op type")
    p.add_argument("--test-data", help="An ONNX test data set (DIR/input_N.pb, output_N.pb): its inputs, then a check of the outputs")
    p.add_argument("--rtol", type=float, default=DEFAULT_RTOL, help=f"--test-data: relative tolerance per element (default {DEFAULT_RTOL})")
    p.add_argument("--atol", type=float, default=DEFAULT_ATOL, help=f"--test-data: absolute tolerance per element (default {DEFAULT_ATOL})")
    p.add_argument("--adapter", help="Adapter index or name substring")
    p.add_argument("--first-submit", type=int, default=None,
                   help="Dispatches in the first of a run's growing submits (0: one submit per run; default 16)")
    p.add_argument("--tuning", action="append", default=[],
                   help="A kernel tuning override, family.field=value (e.g. rnn.step_kernel=vec4); repeatable")
    p.add_argument("--max-binding-bytes", type=int, default=0,
                   help="Largest storage binding to use (>= 65536; 0: the adapter's), as on an adapter with smaller bindings")
    p.add_argument("--memory-limit", type=int, default=0,
                   help="GPU memory a run may use, weights included, in bytes (0: no limit); a memory plan that "
                        "needs more fails naming the node at its peak")
    p.add_argument("--plan-memory", action="store_true",
                   help="Print the static memory plan for the input shapes (--shape) without running the model")
    p.set_defaults(handler=run)


def _split_assignment(text: str, flag: str) -> Tuple[str, str]:
    name, sep, value = text.rpartition("=")
    if not sep or not name:
        raise ValueError(f"{flag} expects NAME=VALUE, got '{text}'")
    return name, value


def _parse_dims(dims: str, text: str) -> Tuple[int, ...]:
    shape = []
    for d in dims.split(","):
        if not re.fullmatch(r"[0-9]+", d):
            raise ValueError(f"--shape {text}: '{d}' is not a dimension (give sizes >= 0 separated by commas)")
        shape.append(int(d))
    return tuple(shape)


def _check_input_name(name: str, flag: str, session: InferenceSession) -> None:
    names = [i.name for i in session.get_inputs()]
    if name not in names:
        listed = ", ".join(f"'{n}'" for n in names) or "none"
        raise ValueError(f"{flag} {name}: the model has no input '{name}' (its inputs: {listed})")


def _numbered(folder: Path, prefix: str) -> List[Path]:
    files = []
    while (folder / f"{prefix}{len(files)}.pb").exists():
        files.append(folder / f"{prefix}{len(files)}.pb")
    return files


def _graph_name(file_name: str, index: int, names: List[str], path: Path, what: str) -> str:
    if file_name:
        if file_name not in names:
            raise ValueError(f"{path}: its tensor '{file_name}' is no {what} of the model")
        return file_name
    if index >= len(names):
        raise ValueError(f"{path}: an unnamed tensor at index {index}, but the model has {len(names)} {what}s")
    return names[index]


def read_test_data(folder: Path, session: InferenceSession) -> Tuple[Dict[str, np.ndarray], List[Tuple[str, np.ndarray]]]:
    """The inputs of an ONNX test data set by graph input, and its expected outputs in file order
    (a file's tensor goes to the graph tensor it names, else to the one at its index)."""
    inputs = [i.name for i in session.get_inputs()]
    outputs = [o.name for o in session.get_outputs()]
    input_files = _numbered(folder, "input_")
    if not input_files and inputs:
        raise ValueError(f"--test-data {folder}: no input_0.pb (an ONNX test data set holds input_N.pb and output_N.pb)")
    feed: Dict[str, np.ndarray] = {}
    for i, path in enumerate(input_files):
        name, value = _onda.read_tensor_proto(str(path))
        graph = _graph_name(name, i, inputs, path, "input")
        if graph in feed:
            raise ValueError(f"{path}: input '{graph}' given twice")
        feed[graph] = value
    expected = []
    for i, path in enumerate(_numbered(folder, "output_")):
        name, value = _onda.read_tensor_proto(str(path))
        expected.append((_graph_name(name, i, outputs, path, "output"), value))
    return feed, expected


def check_output(got: np.ndarray, ref: np.ndarray, rtol: float, atol: float) -> Dict[str, object]:
    """ONNX's criterion (numpy.testing.assert_allclose): |out - ref| <= atol + rtol |ref| per
    element, NaN equal to NaN; with rel L2, max |diff| and the worst ratio, as the C++ check."""
    c: Dict[str, object] = {"problem": "", "rel_l2": 0.0, "max_abs": 0.0, "worst": 0.0}
    if got is None:
        c["problem"] = "the run did not return it"
    elif got.shape != ref.shape:
        c["problem"] = f"shape {list(got.shape)}, expected {list(ref.shape)}"
    elif got.dtype != ref.dtype:
        c["problem"] = f"dtype {got.dtype}, expected {ref.dtype}"
    else:
        out, want = got.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
        nan = np.isnan(out) | np.isnan(want)
        nan_mismatches = int(np.count_nonzero(np.isnan(out) != np.isnan(want)))
        o, w = out[~nan], want[~nan]
        with np.errstate(invalid="ignore"):
            infinite = ~np.isfinite(o) | ~np.isfinite(w)
            if np.any(o[infinite] != w[infinite]):
                c["worst"] = float("inf")
            d = np.abs(o[~infinite] - w[~infinite])
            if d.size:
                c["max_abs"] = float(d.max())
                c["worst"] = max(float(c["worst"]), float(np.max(d / (atol + rtol * np.abs(w[~infinite])))))
            ref2, diff2 = float(np.sum(w[~infinite] ** 2)), float(np.sum(d ** 2))
        c["rel_l2"] = float(np.sqrt(diff2 / ref2)) if ref2 > 0 else float(np.sqrt(diff2))
        if nan_mismatches:
            c["problem"] = f"{nan_mismatches} elements NaN in one and not the other"
        elif not float(c["worst"]) <= 1.0:
            c["problem"] = f"values differ beyond atol {atol:g} + rtol {rtol:g} |ref|"
    return c


def _random(dtype: np.dtype, shape: Tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(dtype, np.floating):
        return rng.normal(0.0, 0.1, shape).astype(dtype)
    return rng.integers(0, 2, shape).astype(dtype)


def _bytes_text(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= (1 << 20) else f"{n / (1 << 10):.1f} KiB"


def _print_memory(stats: Dict[str, object]) -> None:
    print(f"peak GPU memory: {_bytes_text(stats['peak_gpu_bytes'])} = activations "
          f"{_bytes_text(stats['peak_activation_bytes'])} at peak + weights {_bytes_text(stats['weight_bytes'])} "
          f"({stats['buffers_allocated']} buffers created)")


def _file_name_for(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)


def run(a: argparse.Namespace) -> None:
    # Arguments first: a typo fails before the model loads (the C++ command's checks and messages).
    shapes = {}
    for s in a.shape:
        name, dims = _split_assignment(s, "--shape")
        shapes[name] = _parse_dims(dims, s)
    for s in a.input:
        path = _split_assignment(s, "--input")[1]
        if not os.path.isfile(path):
            raise ValueError(f"--input {s}: no file '{path}'")
    if a.test_data and not os.path.isdir(a.test_data):
        raise ValueError(f"--test-data {a.test_data}: no such folder")
    if a.output_dir and os.path.exists(a.output_dir) and not os.path.isdir(a.output_dir):
        raise ValueError(f"--output-dir {a.output_dir}: a file is in the way")
    if a.profile_csv:
        a.profile = True
        folder = os.path.dirname(os.path.abspath(a.profile_csv))
        if not os.path.isdir(folder) or os.path.isdir(a.profile_csv):
            raise ValueError(f"--profile-csv {a.profile_csv}: no folder '{folder}' to write it in, or a folder in the way")
    if a.bench < 0:
        raise ValueError(f"--bench {a.bench}: give a count >= 0")
    if not (a.rtol >= 0 and a.atol >= 0):
        raise ValueError(f"--rtol {a.rtol} / --atol {a.atol}: give tolerances >= 0")

    options = SessionOptions(enable_profiling=a.profile, first_submit_dispatches=a.first_submit, tuning=a.tuning,
                             max_storage_binding_bytes=a.max_binding_bytes, memory_limit=a.memory_limit)
    start = time.perf_counter()
    session = InferenceSession(a.model, options, adapter=a.adapter)
    print(f"adapter: {session.adapter}\nmodel:   {a.model} (loaded in {1e3 * (time.perf_counter() - start):.1f} ms)")

    if a.plan_memory:
        for name in shapes:
            _check_input_name(name, "--shape", session)
        plan = session._session.plan_memory({name: list(shape) for name, shape in shapes.items()})
        print(f"memory plan (not run): activations {_bytes_text(plan['activation_bytes'])} in {plan['arenas']} arenas "
              f"for {plan['values']} values, most bytes live at once {_bytes_text(plan['live_peak_bytes'])} at "
              f"{plan['peak_node']}; weights {_bytes_text(plan['weight_bytes'])}; total "
              f"{_bytes_text(plan['activation_bytes'] + plan['weight_bytes'])}")
        return 0
    feed: Dict[str, np.ndarray] = {}
    expected: List[Tuple[str, np.ndarray]] = []
    if a.test_data:
        feed, expected = read_test_data(Path(a.test_data), session)
    for name in shapes:
        _check_input_name(name, "--shape", session)
    for s in a.input:
        name, path = _split_assignment(s, "--input")
        _check_input_name(name, "--input", session)
        feed[name] = np.load(path)
    rng = np.random.default_rng(1234)
    for spec in session.get_inputs():
        if spec.name in feed:
            continue
        if not a.random_inputs:
            raise ValueError(f"no value for input '{spec.name}' (use --input {spec.name}=FILE.npy or --random-inputs)")
        shape = shapes.get(spec.name, tuple(spec.shape))
        if any(not isinstance(d, int) for d in shape):
            declared = "[" + ", ".join(str(d) if isinstance(d, int) else "-1" for d in spec.shape) + "]"
            raise ValueError(f"input '{spec.name}' has a dynamic shape {declared}: give --shape {spec.name}=d0,d1,...")
        feed[spec.name] = _random(spec.dtype, shape, rng)

    names = [o.name for o in session.get_outputs()]
    outputs = dict(zip(names, session.run(None, feed)))
    first = session.last_run()
    print(f"first run: {first['wall_ms']:.2f} ms ({first['dispatches']} dispatches, recording {first['record_ms']:.2f} ms)")
    if a.timings or a.profile:
        by_op = sorted(first["record_ms_by_op"].items(), key=lambda item: -item[1])[:8]
        print("first run recording per op type:" + "".join(f" {op} {ms:.1f} ms;" for op, ms in by_op))
    _print_memory(first)
    if a.test_data:
        failed = 0
        for name, ref in expected:
            c = check_output(outputs.get(name), ref, a.rtol, a.atol)
            ok = not c["problem"]
            print(f"check {name}: {'ok' if ok else 'FAILED'} (rel L2 {c['rel_l2']:.2e}, max |diff| {c['max_abs']:.2e}, "
                  f"worst |diff| / (atol + rtol |ref|) {c['worst']:.3g}){'' if ok else ': ' + str(c['problem'])}")
            failed += not ok
        if not expected:
            print("check: the test data set has no output_N.pb to compare with")
        if failed:
            raise RuntimeError(f"{failed} of {len(expected)} outputs differ from {a.test_data}")
    if a.bench > 0:
        session.set_profiling(False)
        times, records, waits = [], [], []
        for _ in range(a.bench):
            outputs = dict(zip(names, session.run(None, feed)))  # the files written below are the last run's
            stats = session.last_run()
            times.append(stats["wall_ms"])
            records.append(stats["record_ms"])
            waits.append(stats["gpu_wait_ms"])
        times.sort()
        wall, record = times[len(times) // 2], sorted(records)[len(records) // 2]
        print(f"runs: {a.bench}  min {times[0]:.3f} ms  median {wall:.3f} ms  max {times[-1]:.3f} ms")
        print("last run ", end="")
        last = session.last_run()
        _print_memory(last)
        print(f"median run: recording {record:.3f} ms ({100 * record / wall if wall > 0 else 0:.0f}% of wall), last submit "
              f"to GPU done {statistics.median(waits):.3f} ms, {last['dispatches']} dispatches in {last['submits']} submits")
        if a.profile:
            by_op = sorted(last["record_ms_by_op"].items(), key=lambda item: -item[1])[:8]
            print("CPU recording per op type (last timed run):" + "".join(f" {op} {ms:.2f} ms;" for op, ms in by_op))
            session.set_profiling(True)  # one more run, profiled, for the report below
            outputs = dict(zip(names, session.run(None, feed)))
    if a.profile:
        _print_profile(session.last_run())
    if a.profile_csv:
        _write_profile_csv(session.last_run(), a.profile_csv)
    if a.output_dir:
        os.makedirs(a.output_dir, exist_ok=True)
        for name, value in outputs.items():
            path = os.path.join(a.output_dir, _file_name_for(name) + ".npy")
            np.save(path, value)
            print(f"wrote {path} {value.dtype} {list(value.shape)}")


def _bound(line: Dict[str, object], stats: Dict[str, object]) -> str:
    """Which floor term is largest, as the C++ report names it (tools/roofline_report.cpp)."""
    if not line["cost_modeled"] and line["flops"] == 0:
        return "bytes?"
    flops_peak, bytes_peak = stats["peak_flops_per_second"], stats["peak_bytes_per_second"]
    compute = 1e3 * line["flops"] / flops_peak if flops_peak > 0 else 0.0
    memory = 1e3 * line["bytes"] / bytes_peak if bytes_peak > 0 else 0.0
    if line["latency_floor_ms"] > 0 and line["latency_floor_ms"] >= max(compute, memory):
        return "latency"
    return "compute" if compute >= memory else "memory"


def _write_profile_csv(stats: Dict[str, object], path: str) -> None:
    """Every profiled node as the C++ command writes it: beside the file, then renamed (whole or none)."""
    partial = path + ".partial"
    try:
        with open(partial, "w", newline="") as f:
            f.write("op_type,node,input_shapes,gpu_ms,dispatches,floor_ms,gflop,mb,bound\n")
            for line in stats["profile"]:
                quoted = ['"' + str(line[k]).replace('"', '""') + '"' for k in ("op_type", "node", "input_shapes")]
                f.write(",".join(quoted) + f",{line['gpu_ms']:.4f},{int(line['dispatches'])},{line['floor_ms']:.4f},"
                        f"{line['flops'] * 1e-9:.6g},{line['bytes'] / 1e6:.6g},{_bound(line, stats)}\n")
        os.replace(partial, path)
    except OSError as e:
        if os.path.exists(partial):
            os.remove(partial)
        raise ValueError(f"--profile-csv: cannot write '{path}': {e.strerror}") from None


def _print_profile(stats: Dict[str, object]) -> None:
    profile = stats["profile"]
    by_type: Dict[str, List[float]] = {}
    for line in profile:
        entry = by_type.setdefault(line["op_type"], [0.0, 0])
        entry[0] += line["gpu_ms"]
        entry[1] += line["dispatches"]
    total = sum(t[0] for t in by_type.values())
    print(f"GPU time per op type (last run, {total:.3f} ms of kernels):")
    span = stats["profile_span_ms"]
    if span > 0:
        idle = max(0.0, span - total)
        print(f"GPU span of the profiled run {span:.3f} ms: kernels {total:.3f} ms, idle gaps {idle:.3f} ms ({100 * idle / span:.0f}%)")
    for op_type, (ms, dispatches) in sorted(by_type.items(), key=lambda item: -item[1][0]):
        print(f"  {op_type:<24} {ms:>10.3f} ms {100 * ms / total if total > 0 else 0:>6.1f}% {dispatches:>7} dispatches")
    print("top nodes:")
    for line in profile[:15]:
        print(f"  {line['op_type']:<24} {line['gpu_ms']:>10.3f} ms  floor {line['floor_ms']:.3f} ms  {line['node']}  "
              f"{line['input_shapes']}")
    floor = stats["profile_floor_ms"]
    print(f"whole model: GPU {total:.3f} ms, floor {floor:.3f} ms ({100 * floor / total if total > 0 else 0:.1f}% of floor)")
