"""onda.separate / onda.enhance and `python3 -m onda` against the C++ command line (build/onda) on a
tiny waveform model with its description in the ONNX metadata: the same files, byte for byte."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onda
from conftest import waveform_model, write_wav

RATE = 8000


@pytest.fixture(scope="module")
def audio(tmp_path_factory):
    folder = tmp_path_factory.mktemp("audio")
    rng = np.random.default_rng(21)
    mix = (0.3 * rng.standard_normal((2, 2500))).astype(np.float32)  # 2.5 segments of 1000
    return {
        "folder": folder,
        "separation": waveform_model(folder / "two_stems.onnx", ["drums", "rest"]),
        "enhancement": waveform_model(folder / "one_stem.onnx", ["clean"]),
        "wav": write_wav(folder / "song.wav", mix, RATE),
    }


def without_peak_time(data: bytes) -> bytes:
    """libsndfile writes a PEAK chunk into float WAV files whose timestamp is the time of writing
    (two runs of the command line differ there): zeroed, everything else compared."""
    at = data.find(b"PEAK")
    if at < 0:
        return data
    return data[: at + 12] + b"\0\0\0\0" + data[at + 16 :]


def files_of(folder: Path):
    return {p.relative_to(folder).as_posix(): without_peak_time(p.read_bytes())
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("flags", [[], ["--float32", "--overlap", "0.5"], ["--int24", "--flac", "--two-stems", "drums"]])
def test_separate_writes_the_command_lines_files(audio, onda_cli, tmp_path, flags):
    cli, py, module = tmp_path / "cli", tmp_path / "py", tmp_path / "module"
    subprocess.run([str(onda_cli), "separate", str(audio["wav"]), "-m", str(audio["separation"]), "-o", str(cli), "-q",
                    *flags], check=True)
    options = {"float32": "--float32" in flags, "int24": "--int24" in flags, "flac": "--flac" in flags}
    if "--overlap" in flags:
        options["overlap"] = 0.5
    if "--two-stems" in flags:
        options["two_stems"] = "drums"
    stems = onda.separate(audio["wav"], audio["separation"], out=py, **options)
    subprocess.run([sys.executable, "-m", "onda", "separate", str(audio["wav"]), "-m", str(audio["separation"]),
                    "-o", str(module), "-q", *flags], check=True)
    expected = files_of(cli)
    assert expected and files_of(py) == expected and files_of(module) == expected
    ext = "flac" if "--flac" in flags else "wav"
    for name, samples in stems.items():
        decoded, rate = onda.read_audio(cli / "song" / f"{name}.{ext}")
        assert rate == RATE
        np.testing.assert_array_equal(samples, decoded)


def test_separate_in_memory(audio):
    mix, rate = onda.read_audio(audio["wav"])
    stems = onda.separate(mix, audio["separation"], sample_rate=rate)
    assert list(stems) == ["drums", "rest"]
    # The model is x * gain per stem: overlap-add of a linear model gives the gain times the mix.
    np.testing.assert_allclose(stems["drums"], 0.5 * mix, rtol=0, atol=1e-6)
    np.testing.assert_allclose(stems["rest"], -0.25 * mix, rtol=0, atol=1e-6)
    from_file = onda.separate(audio["wav"], audio["separation"])
    for name in stems:
        np.testing.assert_array_equal(from_file[name], stems[name])
    calls = []
    separator = onda.Separator(audio["separation"], overlap=0.5)
    separator.separate(mix, sample_rate=rate, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1]
    assert (separator.sample_rate, separator.channels, separator.stems) == (RATE, 2, ["drums", "rest"])


@pytest.mark.parametrize("out_name,flags", [("clean.wav", []), ("clean.flac", ["--int24"]), ("clean.wav", ["--float32"])])
def test_enhance_writes_the_command_lines_file(audio, onda_cli, tmp_path, out_name, flags):
    cli, py, module = tmp_path / "cli" / out_name, tmp_path / "py" / out_name, tmp_path / "module" / out_name
    for p in (cli, py, module):
        p.parent.mkdir()
    subprocess.run([str(onda_cli), "enhance", str(audio["wav"]), "-m", str(audio["enhancement"]), "-o", str(cli), "-q",
                    *flags], check=True)
    clean = onda.enhance(audio["wav"], audio["enhancement"], out=py, float32="--float32" in flags,
                         int24="--int24" in flags)
    subprocess.run([sys.executable, "-m", "onda", "enhance", str(audio["wav"]), "-m", str(audio["enhancement"]),
                    "-o", str(module), "-q", *flags], check=True)
    assert without_peak_time(cli.read_bytes()) == without_peak_time(py.read_bytes()) == without_peak_time(module.read_bytes())
    np.testing.assert_array_equal(clean, onda.read_audio(cli)[0])
    mix, rate = onda.read_audio(audio["wav"])
    np.testing.assert_allclose(onda.enhance(mix, audio["enhancement"], sample_rate=rate), 0.5 * mix, rtol=0, atol=1e-6)


def test_audio_errors(audio, tmp_path):
    with pytest.raises(onda.AudioError, match="missing.wav"):
        onda.separate(tmp_path / "missing.wav", audio["separation"])
    with pytest.raises(ValueError, match="--float32 and --int24 exclude each other"):
        onda.separate(audio["wav"], audio["separation"], float32=True, int24=True)
    with pytest.raises(ValueError, match="FLAC stores 16 or 24-bit integers"):
        onda.enhance(audio["wav"], audio["enhancement"], out=tmp_path / "x.flac", float32=True)
    with pytest.raises(onda.DescriptionError, match="one output stem"):
        onda.enhance(np.zeros((2, 100), np.float32), audio["separation"], sample_rate=RATE)
    with pytest.raises(ValueError, match="sample_rate"):
        onda.separate(np.zeros((2, 100), np.float32), audio["separation"])
    with pytest.raises(onda.Error):
        onda.separate(audio["wav"], audio["wav"])  # not a model
    result = subprocess.run([sys.executable, "-m", "onda", "separate", str(tmp_path / "missing.wav"), "-m",
                             str(audio["separation"]), "-o", str(tmp_path / "o")], capture_output=True, text=True)
    assert result.returncode == 1 and result.stderr.startswith("onda: error: ") and "missing.wav" in result.stderr


def test_folders_filename_and_overwrite_as_the_command_line(audio, onda_cli, tmp_path):
    """python3 -m onda separate on a folder with a --filename template writes the C++ command's
    files; an existing output is refused without --overwrite, with the same message."""
    import shutil

    source = tmp_path / "in"
    for sub, name in [("a", "song.wav"), ("b/c", "other.wav"), (".hidden", "skipped.wav")]:
        (source / sub).mkdir(parents=True)
        shutil.copy(audio["wav"], source / sub / name)
    (source / "notes.txt").write_text("not audio")
    pattern = "{folder}/{track}-{stem}.{ext}"

    def both(out_cli, out_module, *extra):
        args = [str(source), "-m", str(audio["separation"]), "--filename", pattern, "-q", *extra]
        cpp = subprocess.run([str(onda_cli), "separate", *args, "-o", str(out_cli)], capture_output=True, text=True)
        py = subprocess.run([sys.executable, "-m", "onda", "separate", *args, "-o", str(out_module)],
                            capture_output=True, text=True)
        return cpp, py

    cli, module = tmp_path / "cli", tmp_path / "module"
    cpp, py = both(cli, module)
    assert cpp.returncode == 0 and py.returncode == 0, (cpp.stderr, py.stderr)
    expected = files_of(cli)
    assert sorted(expected) == ["a/song-drums.wav", "a/song-rest.wav", "b/c/other-drums.wav", "b/c/other-rest.wav"]
    assert files_of(module) == expected
    # Again: every output exists, refused before any work, with the C++ command's message.
    cpp, py = both(cli, module)
    assert cpp.returncode == py.returncode == 1
    assert py.stderr.replace(str(module), "OUT") == cpp.stderr.replace(str(cli), "OUT")
    assert "exists: give --overwrite to replace it" in py.stderr
    cpp, py = both(cli, module, "--overwrite")
    assert cpp.returncode == py.returncode == 0, (cpp.stderr, py.stderr)
    assert files_of(module) == files_of(cli)
    # A bad template, a --flac that contradicts it: the same one-line errors.
    for extra in (["--filename", "{track}/{nope}.wav"], ["--flac", "--filename", "{track}/{stem}.wav"]):
        cpp = subprocess.run([str(onda_cli), "separate", str(source), "-m", str(audio["separation"]), "-o",
                              str(tmp_path / "x"), *extra], capture_output=True, text=True)
        py = subprocess.run([sys.executable, "-m", "onda", "separate", str(source), "-m", str(audio["separation"]),
                             "-o", str(tmp_path / "x"), *extra], capture_output=True, text=True)
        assert cpp.returncode == py.returncode == 1 and py.stderr == cpp.stderr, (cpp.stderr, py.stderr)
    assert not (tmp_path / "x").exists()
