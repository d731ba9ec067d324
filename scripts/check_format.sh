#!/usr/bin/env bash
# Checks that every C++ file (*.h, *.cc) under src/, search/, theorems/, app/,
# python/ and tests/ is formatted as the committed .clang-format says, with Debian 12's
# clang-format (version 14; other versions format some constructs
# differently), installing it when missing. Prints each difference and exits
# 1 if any file differs; `clang-format -i FILE` fixes one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_packages.sh check_format.sh clang-format
version=$(clang-format --version)
case "$version" in
  *"clang-format version 14."*) ;;
  *) echo "check_format.sh: expected Debian 12's clang-format 14, got: $version" >&2; exit 1 ;;
esac
mapfile -d '' files < <(find src search theorems app tests $(ls -d python 2>/dev/null) -type f \( -name '*.h' -o -name '*.cc' \) \
                          -print0 | sort -z)
if [ ${#files[@]} -eq 0 ]; then
  echo "check_format.sh: no C++ files found" >&2
  exit 1
fi
if clang-format --dry-run --Werror "${files[@]}"; then
  echo "check_format.sh: ${#files[@]} files match .clang-format"
else
  echo "check_format.sh: the files above differ from .clang-format (clang-format -i FILE)" >&2
  exit 1
fi
