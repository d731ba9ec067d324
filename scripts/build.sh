#!/usr/bin/env bash
# Installs the Debian 12 packages sinkcert needs (only those missing), then
# configures the Release tree in build/ and builds the `sinkcert` program and
# what it needs, and nothing else (scripts/test.sh builds the tests and
# benchmarks). Run as root on a fresh machine; safe to re-run. Extra
# arguments go to the cmake configure step.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake git libeigen3-dev libceres-dev libboost-dev
          libgmp-dev libmpfr-dev libmpfi-dev doctest-dev nlohmann-json3-dev
          libcli11-dev libssl-dev gnuplot-nox python3-numpy python3-mpmath
          libopenmpi-dev openmpi-bin)
bash scripts/install_packages.sh build.sh "${packages[@]}"

jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j "$jobs" --target sinkcert
