"""The wheel (issue 29): `python3 -m build --no-isolation --wheel` (through scripts/install-python.sh
--wheel, which builds in the main build folder when there is one) makes a wheel that carries the
module and Dawn's library, found through the module's run path $ORIGIN; installed into a fresh
`python3 -m venv --system-site-packages`, `import onda; onda.get_device()` works there. About a
minute on the 2-core CI machine once build/ is built."""

from __future__ import annotations

import os
import re
import subprocess
import zipfile
from pathlib import Path

from conftest import ROOT

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, as scripts/install-python.sh


def clean_env():
    env = dict(os.environ)
    for key in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"):
        env.pop(key, None)
    return env


def test_wheel_installs_into_a_fresh_venv_and_finds_dawn(tmp_path):
    made = subprocess.run([str(ROOT / "scripts" / "install-python.sh"), "--wheel", str(tmp_path / "dist")],
                          capture_output=True, text=True, env=clean_env())
    assert made.returncode == 0, made.stderr[-3000:]
    wheel = Path(made.stdout.strip().splitlines()[-1])
    assert wheel.name.startswith("onda-") and wheel.suffix == ".whl"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        modules = [n for n in names if n.startswith("onda/_onda") and n.endswith(".so")]
        assert len(modules) == 1, names
        for wanted in ("onda/libwebgpu_wrapper.so", "onda/__init__.py", "onda/_onda.pyi", "onda/py.typed",
                       "onda/_device.py", "onda/__main__.py"):
            assert wanted in names, (wanted, names)
        assert not [n for n in names if "libonda" in n or n.startswith("onda/include")], names
        module = Path(z.extract(modules[0], tmp_path / "unpacked"))
    dynamic = subprocess.run(["readelf", "-d", str(module)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"\((RUNPATH|RPATH)\).*\[\$ORIGIN\]", dynamic), dynamic
    assert re.search(r"\(NEEDED\).*\[libwebgpu_wrapper\.so\]", dynamic), dynamic  # by name, not by a build path

    venv = tmp_path / "venv"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python3"
    installed = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
                               capture_output=True, text=True, env=clean_env())
    assert installed.returncode == 0, installed.stderr
    # From another folder, so that nothing of the checkout is importable.
    check = subprocess.run([str(python), "-c", "import onda; print(onda.__version__, onda.get_device()); print(onda.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=clean_env())
    assert check.returncode == 0, check.stderr
    first, where = check.stdout.strip().splitlines()
    version = re.search(r"project\(onda VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert first.split(" ", 1)[0] == version and len(first.split(" ", 1)[1]) > 0
    assert Path(where).resolve().is_relative_to(venv.resolve()), where
