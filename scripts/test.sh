#!/usr/bin/env bash
# Builds (installing missing Debian packages) and runs the whole test suite,
# then checks that the C++ sources match .clang-format (scripts/check_format.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --python "$@"
# The tests and benchmarks (build.sh built the program and the Python package).
cmake --build build -j "$(nproc)"
# the "test" packages of scripts/debian_packages.txt: coqc (the Coq certificates of
# verify relu --coq), torch and pytest (the Python tests), venv and pip (pip install ./python)
mapfile -t packages < <(awk '$1 == "test" { print $2 }' scripts/debian_packages.txt)
bash scripts/install_packages.sh test.sh "${packages[@]}"
if [ "${SINKCERT_SKIP_NUMPY:-}" = 1 ]; then
  echo "test.sh: SINKCERT_SKIP_NUMPY=1: numpy_cross_check_test skips the live numpy run"
fi
(cd build && ctest --output-on-failure -j "$(nproc)")
bash scripts/check_format.sh
