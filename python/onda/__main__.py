"""``python3 -m onda``: the onda command line from Python (tools/onda.cpp), through the same library
calls: ``separate`` and ``enhance`` with every option of the C++ commands (onda/_audio_command.py:
files and folders, --filename templates, --overwrite; docs/audio.md), ``run``
with every option of ``onda run`` (onda/_run_command.py: .npy, random or ONNX test data inputs,
--test-data checks, --bench, --profile, the session options) and ``info`` (the adapter, --list)."""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional


import onda
from onda import _onda
from onda._audio_command import add_audio_commands
from onda._run_command import add_run_command


def _info(a: argparse.Namespace) -> None:
    if a.list:
        for d in onda.list_adapters():
            print(f"[{d['index']}] {d['name']} ({d['backend']}, {d['type']}, driver {d['driver']})")
        return
    print(f"adapter:      {onda.get_device(a.adapter)}")
    print("kernel tuning on this adapter:")
    for line in _onda.describe_tuning(a.adapter or "", a.tuning):
        print(f"  {line}")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m onda", description="onda: audio neural networks on any GPU through WebGPU")
    parser.add_argument("--version", action="version", version=f"onda {onda.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    add_audio_commands(commands)
    add_run_command(commands)

    p = commands.add_parser("info", help="Print the WebGPU adapter")
    p.add_argument("--adapter", help="Adapter index or name substring")
    p.add_argument("--list", action="store_true", help="List every adapter instead")
    p.add_argument("--tuning", action="append", default=[],
                   help="A kernel tuning override to show the effect of, family.field=value; repeatable")
    p.set_defaults(handler=_info)

    a = parser.parse_args(argv)
    try:
        return a.handler(a) or 0
    except (RuntimeError, ValueError, OSError) as e:  # onda.Error is a RuntimeError
        print(f"onda: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
