# SPDX-License-Identifier: MIT
"""How the package is installed and imported outside Debian's own python3
(run by ctest with build/python on PYTHONPATH and SINKCERT_BUILD_DIR the
CMake build folder).

1. `pip install --no-build-isolation --no-index ./python` into a fresh venv
   of the system's Python (with --system-site-packages, so numpy,
   setuptools and wheel are Debian's; no network): setup.py drives CMake
   (reusing the build folder, so only a stale extension is rebuilt), and
   the venv imports sinkcert from its own site folder, __version__ and one
   real call included.
2. A Python without numpy importing sinkcert (PYTHONPATH=build/python) gets
   one line naming the interpreter to use, as an ImportError, not a
   traceback: a venv without --system-site-packages (always), and a
   python3 on PATH other than Debian's that lacks numpy (pyenv's, say;
   skipped with a message when there is none). The converter script and
   an example give the same one line.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SYSTEM = "/usr/bin/python3"
PACKAGE_PATH = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]


def venv(folder, system_site):
    """A fresh venv of the system's Python (without pip of its own: a venv
    with the system's site folder uses Debian's pip, which is faster to set
    up than ensurepip and needs no network either way)."""
    args = [SYSTEM, "-m", "venv", "--without-pip"]
    if system_site:
        args.append("--system-site-packages")
    subprocess.run(args + [folder], check=True)
    return os.path.join(folder, "bin", "python")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(extra)
    return env


def test_pip_install_into_a_fresh_venv(tmp_path):
    if not os.path.exists(SYSTEM):
        pytest.skip(f"no {SYSTEM}")
    python = venv(str(tmp_path / "venv"), system_site=True)
    env = clean_env()
    if os.environ.get("SINKCERT_BUILD_DIR"):
        env["SINKCERT_BUILD_DIR"] = os.environ["SINKCERT_BUILD_DIR"]
    r = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                        "--no-deps", "--disable-pip-version-check", "-q",
                        os.path.join(ROOT, "python")],
                       env=env, capture_output=True, text=True, cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    code = ("import os, sys, numpy as np, sinkcert\n"
            "print(os.path.realpath(sinkcert.__file__))\n"
            "print(sinkcert.__version__)\n"
            "m = sinkcert.Model.from_numpy({'A': np.zeros((5, 5)), 'M': np.eye(5)}, L=4)\n"
            "X = np.zeros((4, 5)); X[0, 0] = 1; X[1:, 4] = 1; X[2, 4], X[2, 1] = 0, 1\n"
            "print(m.eval(X).evidence, m.bound(seconds=5, gap=0.5).evidence)\n")
    r = subprocess.run([python, "-c", code], env=clean_env(), capture_output=True, text=True,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    where, version, labels = r.stdout.splitlines()
    # imported from the venv's site folder, not from build/python or the source tree
    assert where.startswith(os.path.realpath(str(tmp_path / "venv"))), where
    assert version == sinkcert_version()
    assert labels == "NUMERIC(53) CERTIFIED", labels


def sinkcert_version():
    import re
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(sinkcert\s+VERSION\s+([0-9.]+)", f.read()).group(1)


def one_line_check(python, label):
    """python (without numpy) importing sinkcert, running the converter
    script and an example: each exits 1 with one line on stderr."""
    env = clean_env(PYTHONPATH=os.pathsep.join(PACKAGE_PATH))
    runs = {
        "import sinkcert": [python, "-c", "import sinkcert"],
        "scripts/convert_pytorch.py": [python, os.path.join(ROOT, "scripts",
                                                            "convert_pytorch.py"), "x.npz",
                                       "--out", "y.json"],
        "examples/check_pytorch_model.py": [python, os.path.join(ROOT, "examples",
                                                                 "check_pytorch_model.py")],
    }
    for name, args in runs.items():
        r = subprocess.run(args, env=env, capture_output=True, text=True,
                           cwd=tempfile.gettempdir())
        lines = r.stderr.splitlines()
        assert r.returncode == 1 and len(lines) == 1, (label, name, r.returncode, r.stderr)
        assert lines[0].startswith(f"sinkcert: this Python ({python}") and \
            "has no numpy; use /usr/bin/python3 (Debian's" in lines[0], (label, name, lines)
    # imported, it is an ImportError whose text is that line
    r = subprocess.run([python, "-c", "import sys\ntry:\n    import sinkcert\n"
                        "except ImportError as e:\n    print(type(e).__mro__[1].__name__, e)"],
                       env=env, capture_output=True, text=True)
    assert r.stdout.startswith("ImportError sinkcert: this Python ("), (label, r.stdout, r.stderr)


def test_a_venv_without_numpy_gets_one_line(tmp_path):
    if not os.path.exists(SYSTEM):
        pytest.skip(f"no {SYSTEM}")
    python = venv(str(tmp_path / "bare"), system_site=False)
    assert subprocess.run([python, "-c", "import numpy"], capture_output=True).returncode != 0
    one_line_check(python, "venv without system site packages")


def other_pythons_without_numpy():
    """python3 interpreters on PATH other than Debian's that lack numpy."""
    found = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder, "python3")
        if not os.access(candidate, os.X_OK):
            continue
        r = subprocess.run([candidate, "-c", "import sys; print(sys.executable)"],
                           capture_output=True, text=True, env=clean_env())
        executable = r.stdout.strip()
        if r.returncode != 0 or not executable or \
                os.path.realpath(executable) == os.path.realpath(SYSTEM):
            continue
        if subprocess.run([candidate, "-c", "import numpy"], capture_output=True,
                          env=clean_env()).returncode != 0 and executable not in found:
            found.append(executable)
    return found


def test_another_python_on_path_without_numpy_gets_one_line():
    pythons = other_pythons_without_numpy()
    if not pythons:
        pytest.skip("no python3 on PATH other than Debian's lacks numpy (e.g. pyenv's); the "
                    "venv case covers the message")
    for python in pythons:
        one_line_check(python, python)
