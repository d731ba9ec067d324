#!/usr/bin/env bash
# Installs the Debian 12 packages sinkcert needs (only those missing; the
# "build" ones of scripts/debian_packages.txt), then
# configures the Release tree in build/ and builds the `sinkcert` program and
# what it needs, and nothing else (scripts/test.sh builds the tests and
# benchmarks). With --python it then builds the Python package's extension
# (`_sinkcert`, python/) too and makes the package importable by Debian's
# python3 (`python3 -c "import sinkcert"`): a sinkcert-build.pth file in that
# interpreter's site folder names build/python, so a rebuild is picked up
# without installing (`cmake --install build` installs a copy instead). Run
# as root on a fresh machine; safe to re-run. Other arguments go to the cmake
# configure step.
set -euo pipefail
cd "$(dirname "$0")/.."

python_package=0
cmake_args=()
for arg in "$@"; do
  if [ "$arg" = --python ]; then python_package=1; else cmake_args+=("$arg"); fi
done

# the "build" packages of scripts/debian_packages.txt
mapfile -t packages < <(awk '$1 == "build" { print $2 }' scripts/debian_packages.txt)
bash scripts/install_packages.sh build.sh "${packages[@]}"

jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${cmake_args[@]+"${cmake_args[@]}"}
cmake --build build -j "$jobs" --target sinkcert
if [ $python_package = 1 ] && ! grep -q '^SINKCERT_PYTHON:BOOL=ON' build/CMakeCache.txt; then
  echo "build.sh: --python: the Python package is not configured (pybind11-dev missing?)" >&2
  exit 1
fi
if [ $python_package = 1 ]; then
  cmake --build build -j "$jobs" --target _sinkcert
  python=$(sed -n 's/^PYTHON_EXECUTABLE:FILEPATH=//p' build/CMakeCache.txt)
  site=$("$python" -c "import sysconfig; print(sysconfig.get_path('purelib'))")
  if mkdir -p "$site" 2>/dev/null && echo "$PWD/build/python" > "$site/sinkcert-build.pth"; then
    echo "build.sh: $python imports sinkcert from $PWD/build/python ($site/sinkcert-build.pth)"
  else
    echo "build.sh: cannot write $site/sinkcert-build.pth; use PYTHONPATH=$PWD/build/python" >&2
  fi
  # another python3 first on PATH (pyenv, a venv) does not see that folder
  if [ "$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)" != "$python" ]; then
    echo "build.sh: note: python3 on PATH is not $python; import sinkcert with $python" \
         "(or PYTHONPATH=$PWD/build/python and numpy installed)" >&2
  fi
fi
