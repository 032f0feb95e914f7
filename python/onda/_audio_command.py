"""``python3 -m onda separate|enhance``: the command line's audio commands (tools/separate_command.cpp,
tools/audio_jobs.cpp) from Python, with the same options, plan and messages: files and folders
(searched recursively) in, output names from a --filename template below -o (or enhance's one
output file), every output path checked before any work (collisions, existing files unless
--overwrite, folders in the way, unwritable folders), folders created for a file and removed
again when it fails, a failing file reported while the others still run (exit status 1)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Sequence

from . import Separator, _onda

PLACEHOLDERS = ("track", "stem", "ext", "folder", "input_ext")
MAX_BATCH, MAX_SHIFTS = 64, 100  # as the C++ command


@dataclass
class AudioInput:
    path: Path
    track: str  # the file name without its extension
    folder: str  # its folder below the folder argument it was found in ("" for a file argument)
    extension: str  # lower case, no dot


def _extension(path: Path) -> str:
    return path.suffix[1:].lower()


def add_audio_commands(commands: "argparse._SubParsersAction") -> None:
    p = commands.add_parser("separate", help="Split audio files and folders into stems: OUT/<track>/<stem>.wav (--filename to change)")
    p.add_argument("inputs", nargs="+", help="Audio files and folders (searched recursively): WAV, FLAC, OGG, MP3, ...")
    p.add_argument("-o", "--out", default="separated", help="Output folder (default: separated)")
    p.add_argument("--two-stems", help="Write only NAME and no_NAME (the sum of the other stems)")
    _common_options(p, enhance=False)
    p.set_defaults(handler=lambda a: run_audio(a, enhance=False))

    p = commands.add_parser("enhance", help="Clean recordings with a one-output model (speech enhancement): a file, or files and folders")
    p.add_argument("inputs", nargs="+", help="Audio files and folders (searched recursively)")
    p.add_argument("-o", "--out", required=True,
                   help="The output file (one input; .wav, .flac, .ogg or .mp3 picks the format) or folder")
    p.add_argument("--stream", action="store_true",
                   help="Run a streaming model frame by frame, its states fed back on the GPU (docs/audio.md)")
    _common_options(p, enhance=True)
    p.set_defaults(handler=lambda a: run_audio(a, enhance=True), two_stems=None)


def _common_options(p: argparse.ArgumentParser, enhance: bool) -> None:
    default = "{track}.{ext}" if enhance else "{track}/{stem}.{ext}"
    p.add_argument("-m", "--model", required=True, help="The .onnx model (its description: MODEL.onda.json or metadata)")
    p.add_argument("--description", help="The model description JSON (instead of the sidecar)")
    p.add_argument("--filename", default="", help="Output names below -o: {track} {stem} {ext} {folder} {input_ext} "
                   f"(default: {default}); the extension picks WAV, FLAC, OGG or MP3".replace("%", "%%"))
    p.add_argument("--overwrite", action="store_true", help="Replace outputs that exist (default: refuse before any work)")
    p.add_argument("--flac", action="store_true", help="Write FLAC instead of WAV ({ext} = flac)")
    p.add_argument("--segment", type=float, default=0.0, help="Segment length in seconds (models with a dynamic length only)")
    p.add_argument("--overlap", type=float, default=None,
                   help="Overlap between segments, fraction of a segment in [0, 1) (default: the description's, else 0.25)")
    p.add_argument("--batch", type=int, default=1, help="Segments per model call, 1-64 (models with a dynamic batch dim)")
    p.add_argument("--shifts", type=int, default=0, help="Random time shifts (up to 0.5 s) to average, 0-100; 0: none")
    p.add_argument("--seed", type=int, default=0, help="Seed of the shift offsets")
    p.add_argument("--float32", action="store_true", help="Write 32-bit float samples (WAV)")
    p.add_argument("--int24", action="store_true", help="Write 24-bit integer samples (WAV, FLAC)")
    p.add_argument("--adapter", help="Adapter index or name substring")
    p.add_argument("--timings", action="store_true", help="Print the wall time per file")
    p.add_argument("-q", "--quiet", action="store_true", help="No progress line and no 'wrote' lines")


# ---- the plan (tools/audio_jobs.cpp) -------------------------------------------------------------


def expand_inputs(arguments: Sequence[str]) -> List[AudioInput]:
    """Files as given, folders scanned recursively for the extensions libsndfile reads (sorted by
    path, hidden files and folders skipped)."""
    readable = set(_onda.readable_audio_extensions())
    inputs = []
    for argument in arguments:
        path = Path(argument)
        if not path.exists():
            raise ValueError(f"no such file or folder '{argument}'")
        if not path.is_dir():
            inputs.append(AudioInput(path, path.stem, "", _extension(path)))
            continue
        found = []
        for folder, dirs, files in os.walk(path):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            found += [Path(folder) / f for f in files
                      if not f.startswith(".") and _extension(Path(f)) in readable and (Path(folder) / f).is_file()]
        if not found:
            raise ValueError(f"folder '{argument}' holds no audio files (looked for .{', .'.join(_onda.readable_audio_extensions())})")
        for file in sorted(found):
            folder = os.path.relpath(file.parent, path)
            inputs.append(AudioInput(file, file.stem, "" if folder == "." else folder, _extension(file)))
    return inputs


def check_filename_template(pattern: str) -> None:
    if not pattern:
        raise ValueError("--filename is empty")
    open_ = pattern.find("{")
    while open_ != -1:
        close = pattern.find("}", open_)
        name = pattern[open_ + 1: close if close != -1 else None]
        if close == -1 or name not in PLACEHOLDERS:
            raise ValueError(f"--filename '{pattern}': unknown placeholder '{{{name}}}' (known: {{{'}, {'.join(PLACEHOLDERS)}}})")
        open_ = pattern.find("{", open_ + 1)
    if os.path.isabs(pattern):
        raise ValueError(f"--filename '{pattern}' must be relative to -o")
    if ".." in Path(pattern).parts:
        raise ValueError(f"--filename '{pattern}' may not leave -o through '..'")


def expand_filename(pattern: str, item: AudioInput, stem: str, extension: str) -> Path:
    values = {"track": item.track, "stem": stem, "ext": extension, "folder": item.folder, "input_ext": item.extension}
    text, i = "", 0
    while i < len(pattern):
        close = pattern.find("}", i) if pattern[i] == "{" else -1
        if close != -1:
            text += values[pattern[i + 1: close]]
            i = close + 1
        else:
            text += pattern[i]
            i += 1
    # An empty {folder} at the start ("{folder}/{track}...") must not make the path absolute.
    return Path(os.path.normpath(text.lstrip("/")))


def _existing_ancestor(path: Path) -> Path:
    path = path.parent
    while str(path) not in ("", ".") and not path.exists():
        path = path.parent
    return path if str(path) else Path(".")


def check_outputs(inputs: Sequence[AudioInput], outputs: Sequence[Sequence[Path]], overwrite: bool) -> None:
    owner: Dict[str, int] = {}
    for i, item in enumerate(inputs):
        for file in outputs[i]:
            key = os.path.normpath(os.path.abspath(file))
            if key in owner:
                if owner[key] == i:
                    raise ValueError(f"two outputs of '{item.path}' would both go to '{file}': put {{stem}} in --filename")
                raise ValueError(f"'{inputs[owner[key]].path}' and '{item.path}' would both write '{file}': rename one, or "
                                 "put {folder} or {input_ext} in --filename (e.g. '{track}_{input_ext}/{stem}.{ext}')")
            owner[key] = i
            if file.is_dir():
                raise ValueError(f"output '{file}' is a folder")
            if file.exists() and not overwrite:
                raise ValueError(f"output '{file}' exists: give --overwrite to replace it, or another -o")
            folder = _existing_ancestor(file)
            if not folder.is_dir():
                raise ValueError(f"cannot write '{file}': '{folder}' is a file, not a folder")
            if not os.access(folder, os.W_OK | os.X_OK):
                raise ValueError(f"cannot write '{file}': folder '{folder}' is not writable")


class _OutputFolders:
    """Creates the folders `files` need; removes the ones it created (when empty) unless kept."""

    def __init__(self, files: Sequence[Path]) -> None:
        self.created: List[Path] = []
        try:
            for file in files:
                missing = []
                folder = file.parent
                while str(folder) not in ("", ".") and not folder.exists():
                    missing.append(folder)
                    folder = folder.parent
                for folder in reversed(missing):
                    if folder not in self.created:
                        try:
                            folder.mkdir()
                        except OSError as e:
                            raise _onda.AudioError(f"cannot create folder '{folder}': {e.strerror}") from None
                        self.created.append(folder)
        except BaseException:
            self.remove()
            raise

    def remove(self) -> None:
        for folder in reversed(self.created):
            try:
                folder.rmdir()  # only when empty
            except OSError:
                pass


# ---- the command ---------------------------------------------------------------------------------


def _output_format(a: argparse.Namespace, sample: Path, named_by: str) -> str:
    container = _onda.container_for_path(str(sample))
    if a.flac and container != "flac":
        raise ValueError(f"--flac contradicts {named_by}, which names .{container} files: drop one of them")
    if a.float32 and container != "wav":
        raise ValueError(f"--float32 writes WAV only; {named_by} names .{container} files")
    if a.int24 and container in ("ogg", "mp3"):
        raise ValueError(f"--int24 sets integer WAV / FLAC samples; {named_by} names lossy .{container} files")
    return container


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


def run_audio(a: argparse.Namespace, enhance: bool) -> int:
    if not (a.segment >= 0) or a.segment == float("inf"):
        raise ValueError(f"--segment {a.segment}: give seconds > 0 (or leave it out)")
    if a.overlap is not None and not 0 <= a.overlap < 1:
        raise ValueError(f"--overlap {a.overlap}: give a fraction of a segment in [0, 1)")
    if not 1 <= a.batch <= MAX_BATCH:
        raise ValueError(f"--batch {a.batch}: give 1 to {MAX_BATCH} segments per model call")
    if not 0 <= a.shifts <= MAX_SHIFTS:
        raise ValueError(f"--shifts {a.shifts}: give 0 to {MAX_SHIFTS}")
    if a.float32 and a.int24:
        raise ValueError("--float32 and --int24 exclude each other: give one")
    if getattr(a, "stream", False) and (a.segment > 0 or a.overlap is not None or a.batch != 1 or a.shifts != 0):
        raise ValueError("--stream feeds the model one frame at a time: --segment, --overlap, --batch and --shifts "
                         "do not apply")
    inputs = expand_inputs(a.inputs)

    out = Path(a.out)
    single_file = enhance and out.suffix != "" and not out.is_dir()
    pattern = a.filename
    if single_file:
        if a.filename:
            raise ValueError(f"--filename needs -o FOLDER; -o '{a.out}' names a file")
        if len(inputs) != 1:
            raise ValueError(f"-o '{a.out}' names one file but {len(inputs)} inputs were given: give -o FOLDER")
        container = _output_format(a, out, f"-o '{a.out}'")
    else:
        pattern = pattern or ("{track}.{ext}" if enhance else "{track}/{stem}.{ext}")
        check_filename_template(pattern)
        sample = expand_filename(pattern, AudioInput(Path("x.wav"), "x", "", "wav"), "stem", "flac" if a.flac else "wav")
        container = _output_format(a, sample, f"--filename '{pattern}'")

    separator = Separator(a.model, description=a.description, segment=a.segment, overlap=a.overlap, batch=a.batch,
                          shifts=a.shifts, seed=a.seed, two_stems=a.two_stems, float32=a.float32, int24=a.int24,
                          adapter=a.adapter, stream=getattr(a, "stream", False), _container=container)
    names = separator.output_names
    if enhance and len(names) != 1:
        raise ValueError(f"enhance needs a model with one output stem; '{a.model}' has {len(names)} (use onda separate)")
    outputs = []
    for item in inputs:
        files = [out if single_file else out / expand_filename(pattern, item, name, container) for name in names]
        for file in files:
            if _onda.container_for_path(str(file)) != container:
                raise ValueError(f"--filename '{pattern}' gives '{file}', not a .{container} file: give every output "
                                 "the same extension")
        outputs.append(files)
    check_outputs(inputs, outputs, a.overwrite)

    tty = not a.quiet and sys.stderr.isatty()
    failures = []
    start_all, done = time.perf_counter(), 0
    for item, files in zip(inputs, outputs):
        start = time.perf_counter()
        folders = _OutputFolders(files)
        try:
            separator._separator.write_files(str(item.path), [str(f) for f in files], _progress(item.path.name, tty))
        except (RuntimeError, OSError) as e:
            folders.remove()
            if len(inputs) == 1:
                raise
            print(f"onda: error: {item.path}: {e}", file=sys.stderr)
            failures.append((str(item.path), str(e)))
            continue
        done += 1
        if not a.quiet:
            for file in files:
                print(f"wrote {file}")
        if a.timings:
            print(f"{item.path}: {time.perf_counter() - start:.3f} s")
    if len(inputs) > 1:
        print(f"{done} of {len(inputs)} files done in {time.perf_counter() - start_all:.3f} s"
              + (f"; {len(failures)} failed" if failures else ""))
        for name, reason in failures:
            print(f"  failed: {name}: {reason}", file=sys.stderr)
    return 1 if failures else 0
