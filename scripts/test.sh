#!/usr/bin/env bash
# Builds (installing missing Debian packages) and runs the whole test suite,
# then checks that the C++ sources match .clang-format (scripts/check_format.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --python "$@"
# The tests and benchmarks (build.sh built the program and the Python package).
cmake --build build -j "$(nproc)"
# coqc checks the Coq certificates of verify relu --coq (tests/app/coq_cli_test.sh)
bash scripts/install_packages.sh test.sh coq python3-torch python3-pytest
if [ "${SINKCERT_SKIP_NUMPY:-}" = 1 ]; then
  echo "test.sh: SINKCERT_SKIP_NUMPY=1: numpy_cross_check_test skips the live numpy run"
fi
(cd build && ctest --output-on-failure -j "$(nproc)")
bash scripts/check_format.sh
