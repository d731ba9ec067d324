#!/usr/bin/env bash
# Installs the Debian 12 packages sinkcert needs (only those missing), then
# configures and builds the Release tree in build/. Run as root on a fresh
# machine; safe to re-run. Extra arguments go to the cmake configure step.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake git libeigen3-dev libceres-dev libboost-dev
          libgmp-dev libmpfr-dev libmpfi-dev doctest-dev nlohmann-json3-dev
          libcli11-dev gnuplot-nox python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "build.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j "$jobs"
