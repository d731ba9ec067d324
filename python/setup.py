# SPDX-License-Identifier: MIT
"""`pip install ./python`: the sinkcert package, its extension built by CMake.

The extension _sinkcert is the CMake target of python/CMakeLists.txt, built
for the Python running pip (its base interpreter, for a venv) in
  $SINKCERT_BUILD_DIR, if set;
  else build/ at the repository root, when scripts/build.sh configured it
    for that same interpreter with the Python package (no rebuild then);
  else build/pip-<cache tag>/ (a full configure and build, several minutes).
No network: the C++ dependencies are Debian packages (scripts/build.sh
installs them), and with `pip install --no-build-isolation --no-index`
setuptools and wheel are Debian's too (python3-setuptools, python3-wheel).
The version is the project version of the root CMakeLists.txt.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(sinkcert\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        sys.exit("setup.py: no `project(sinkcert VERSION x.y.z` in " +
                 os.path.join(ROOT, "CMakeLists.txt"))
    return m.group(1)


def base_python():
    """The interpreter the extension is for (a venv's base interpreter)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def cache_value(build_dir, name):
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


def build_dir():
    if os.environ.get("SINKCERT_BUILD_DIR"):
        return os.path.abspath(os.environ["SINKCERT_BUILD_DIR"])
    default = os.path.join(ROOT, "build")
    python = cache_value(default, "PYTHON_EXECUTABLE")
    if (cache_value(default, "SINKCERT_PYTHON") == "ON" and python
            and os.path.realpath(python) == os.path.realpath(base_python())):
        return default
    return os.path.join(ROOT, "build", "pip-" + sys.implementation.cache_tag)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        folder = build_dir()
        if not os.path.exists(os.path.join(folder, "CMakeCache.txt")):
            subprocess.check_call(["cmake", "-S", ROOT, "-B", folder, "-DCMAKE_BUILD_TYPE=Release",
                                   "-DSINKCERT_PYTHON=ON", "-DPYTHON_EXECUTABLE=" + base_python()])
        jobs = os.environ.get("SINKCERT_JOBS", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", folder, "-j", jobs, "--target", "_sinkcert"])
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = os.path.join(folder, "python", "sinkcert", "_sinkcert" + suffix)
        if not os.path.exists(built):
            found = glob.glob(os.path.join(folder, "python", "sinkcert", "_sinkcert*"))
            sys.exit(f"setup.py: {built} was not built (found {found or 'nothing'}): {folder} "
                     f"is configured for another Python; set SINKCERT_BUILD_DIR to a new folder")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)


class BuildPy(build_py):
    def run(self):
        super().run()
        path = os.path.join(self.build_lib, "sinkcert", "_version.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(f'__version__ = "{project_version()}"\n')


setup(
    name="sinkcert",
    version=project_version(),
    description="Certified bounds on attention sinks in softmax transformers",
    license="MIT",
    python_requires=">=3.9",
    install_requires=["numpy"],
    packages=["sinkcert"],
    package_dir={"sinkcert": "sinkcert"},
    ext_modules=[Extension("sinkcert._sinkcert", sources=[])],
    cmdclass={"build_ext": CMakeBuild, "build_py": BuildPy},
    zip_safe=False,
)
