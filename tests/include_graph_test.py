#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The include graph runs one way: every #include "..." of a project file
points to a layer at or below its own.

  src/ (0)  <  search/ (1)  <  theorems/exact/, theorems/bounds/ (2)
            <  theorems/studies/ (3)  <  theorems/reports/ (4)  <  app/ (5)

The two folders of layer 2 are siblings: neither includes the other (an exact
checker needs no bound, a bound no exact checker). src/internal/ is the core's
private part: only src/ includes it. Tests, benchmarks, the fuzz target and
the Python bindings stand above everything and are not checked.
Run from the repository root; prints every violation and exits 1 if any.
"""
import os
import re
import sys

LAYERS = [("src/", 0), ("search/", 1), ("theorems/exact/", 2), ("theorems/bounds/", 2),
          ("theorems/studies/", 3), ("theorems/reports/", 4), ("app/", 5)]


def layer(path):
    for prefix, rank in LAYERS:
        if path.startswith(prefix):
            return prefix, rank
    return None, None


def violations(root):
    found = []
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for top in ("src", "search", "theorems", "app"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.relpath(os.path.join(folder, name), root)
                own_prefix, own = layer(path)
                if own is None:
                    found.append(f"{path}: a source file outside every layer folder")
                    continue
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = include.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        prefix, rank = layer(target)
                        if rank is None:
                            continue  # generated headers and the like
                        if target.startswith("src/internal/") and not path.startswith("src/"):
                            found.append(f"{path}:{number}: includes {target}, private to src/")
                        elif rank > own:
                            found.append(f"{path}:{number}: includes {target}, a higher layer")
                        elif rank == own and prefix != own_prefix:
                            found.append(f"{path}:{number}: includes {target}, a sibling layer")
    return found


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = violations(root)
    for line in bad:
        print(line)
    print(f"include graph: {len(bad)} violation(s)")
    sys.exit(1 if bad else 0)
