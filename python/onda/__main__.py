"""``python3 -m onda``: the onda command line from Python (tools/onda.cpp), through the same library
calls: ``separate`` and ``enhance`` with every option of the C++ commands (docs/audio.md), ``run``
with every option of ``onda run`` (onda/_run_command.py: .npy, random or ONNX test data inputs,
--test-data checks, --bench, --profile, the session options) and ``info`` (the adapter, --list)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import List, Optional


import onda
from onda._run_command import add_run_command


def _audio_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--model", required=True, help="The .onnx model (its description: MODEL.onda.json or metadata)")
    parser.add_argument("--description", help="The model description JSON (instead of the sidecar)")
    parser.add_argument("--segment", type=float, default=0.0, help="Segment length in seconds (models with a dynamic length only)")
    parser.add_argument("--overlap", type=float, default=None,
                        help="Overlap between segments, fraction of a segment (default: the description's, else 0.25)")
    parser.add_argument("--batch", type=int, default=1, help="Segments per model call (models with a dynamic batch dim)")
    parser.add_argument("--shifts", type=int, default=0, help="Random time shifts (up to 0.5 s) to average; 0: none")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the shift offsets")
    parser.add_argument("--float32", action="store_true", help="Write 32-bit float samples")
    parser.add_argument("--int24", action="store_true", help="Write 24-bit integer samples")
    parser.add_argument("--flac", action="store_true", help="Write FLAC instead of WAV")
    parser.add_argument("--adapter", help="Adapter index or name substring")
    parser.add_argument("--timings", action="store_true", help="Print the wall time per file")
    parser.add_argument("-q", "--quiet", action="store_true", help="No progress line")


def _options(a: argparse.Namespace) -> dict:
    return dict(description=a.description, segment=a.segment, overlap=a.overlap, batch=a.batch, shifts=a.shifts,
                seed=a.seed, float32=a.float32, int24=a.int24, flac=a.flac, adapter=a.adapter)


def _progress(label: str, enabled: bool):
    if not enabled:
        return None

    def update(done: int, total: int) -> None:
        width = 30
        filled = int(width * done / total) if total else 0
        print(f"\r{label} [{'#' * filled}{' ' * (width - filled)}] {done}/{total} segments", end="", file=sys.stderr, flush=True)
        if done == total:
            print(file=sys.stderr)

    return update


def _separate(a: argparse.Namespace) -> None:
    separator = onda.Separator(a.model, two_stems=a.two_stems, **_options(a))
    tty = not a.quiet and sys.stderr.isatty()
    for path in a.inputs:
        start = time.perf_counter()
        stems = separator.separate(path, a.out, progress=_progress(Path(path).name, tty))
        if not a.quiet:
            ext = "flac" if a.flac else "wav"
            for name in stems:
                print(f"wrote {Path(a.out) / Path(path).stem / (name + '.' + ext)}")
        if a.timings:
            print(f"{path}: {time.perf_counter() - start:.3f} s")


def _enhance(a: argparse.Namespace) -> None:
    tty = not a.quiet and sys.stderr.isatty()
    start = time.perf_counter()
    onda.enhance(a.input, a.model, a.out, progress=_progress(Path(a.input).name, tty), **_options(a))
    if not a.quiet:
        print(f"wrote {a.out}")
    if a.timings:
        print(f"{a.input}: {time.perf_counter() - start:.3f} s")


def _info(a: argparse.Namespace) -> None:
    if a.list:
        for d in onda.list_adapters():
            print(f"[{d['index']}] {d['name']} ({d['backend']}, {d['type']}, driver {d['driver']})")
        return
    print(f"adapter:      {onda.get_device(a.adapter)}")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m onda", description="onda: audio neural networks on any GPU through WebGPU")
    parser.add_argument("--version", action="version", version=f"onda {onda.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("separate", help="Split audio files into stems: OUT/<track>/<stem>.wav")
    p.add_argument("inputs", nargs="+", help="Audio files (WAV, FLAC, OGG, ...)")
    p.add_argument("-o", "--out", default="separated", help="Output folder")
    p.add_argument("--two-stems", help="Write only NAME and no_NAME (the sum of the other stems)")
    _audio_options(p)
    p.set_defaults(handler=_separate)

    p = commands.add_parser("enhance", help="Clean a recording with a one-output model (speech enhancement)")
    p.add_argument("input", help="The audio file")
    p.add_argument("-o", "--out", required=True, help="The output file (.wav, .flac or .ogg by its extension)")
    _audio_options(p)
    p.set_defaults(handler=_enhance)

    add_run_command(commands)

    p = commands.add_parser("info", help="Print the WebGPU adapter")
    p.add_argument("--adapter", help="Adapter index or name substring")
    p.add_argument("--list", action="store_true", help="List every adapter instead")
    p.set_defaults(handler=_info)

    a = parser.parse_args(argv)
    try:
        a.handler(a)
    except (RuntimeError, ValueError, OSError) as e:  # onda.Error is a RuntimeError
        print(f"onda: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
