#!/usr/bin/env bash
# Installs those of the given Debian packages that are missing (as root);
# does nothing, and needs no network, when all are installed.
# Usage: scripts/install_packages.sh CALLER PACKAGE...
set -euo pipefail
caller=$1
shift
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "$caller: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
