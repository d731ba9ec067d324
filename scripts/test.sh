#!/usr/bin/env bash
# Builds (installing missing Debian packages) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
cd build
ctest --output-on-failure -j "$(nproc)"
