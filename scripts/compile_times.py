#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-file compile times of the build, slowest first, so that the next
regression is visible.

Reads BUILD/compile_commands.json (the configure step writes it), compiles
every translation unit once more, one at a time, without ccache and into a
scratch object, and prints the CPU seconds (user + system of the compiler)
and the wall seconds of each, then the totals per top-level folder. CPU
seconds barely depend on what else the machine runs; wall seconds do.

Usage: python3 scripts/compile_times.py [BUILD] [--filter REGEX] [--top N]
"""
import argparse
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time


def strip_launcher(argv):
    # A ccache launcher in front of the compiler would answer from its cache.
    while argv and os.path.basename(argv[0]) in ("ccache", "sccache"):
        argv = argv[1:]
    return argv


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--filter", default="", help="only files whose path matches REGEX")
    parser.add_argument("--top", type=int, default=0, help="print only the N slowest")
    args = parser.parse_args()
    database = os.path.join(args.build, "compile_commands.json")
    if not os.path.exists(database):
        sys.exit(f"compile_times.py: {database} not found: configure the build first "
                 "(cmake -S . -B {args.build})")
    with open(database) as f:
        entries = json.load(f)
    pattern = re.compile(args.filter)
    root = os.path.abspath(".")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for entry in entries:
            source = os.path.relpath(entry["file"], root)
            if not pattern.search(source):
                continue
            argv = strip_launcher(entry.get("arguments") or shlex.split(entry["command"]))
            if "-o" in argv:
                argv[argv.index("-o") + 1] = os.path.join(scratch, "unit.o")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.monotonic()
            done = subprocess.run(argv, cwd=entry["directory"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
            wall = time.monotonic() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0:
                sys.exit(f"compile_times.py: {source} does not compile:\n{done.stderr}")
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            rows.append((cpu, wall, source))
            print(f"  {cpu:7.1f} s CPU  {wall:7.1f} s wall  {source}", file=sys.stderr)
    rows.sort(reverse=True)
    shown = rows[: args.top] if args.top else rows
    print(f"{'CPU s':>8} {'wall s':>8}  file")
    for cpu, wall, source in shown:
        print(f"{cpu:8.1f} {wall:8.1f}  {source}")
    folders = {}
    for cpu, wall, source in rows:
        top = source.split("/")[0] if "/" in source else "."
        if source.startswith("theorems/"):
            top = "/".join(source.split("/")[:2])
        total = folders.setdefault(top, [0.0, 0.0, 0])
        total[0] += cpu
        total[1] += wall
        total[2] += 1
    print("\nper folder:")
    for top, (cpu, wall, count) in sorted(folders.items(), key=lambda kv: -kv[1][0]):
        print(f"{cpu:8.1f} {wall:8.1f}  {top} ({count} files)")
    print(f"{sum(r[0] for r in rows):8.1f} {sum(r[1] for r in rows):8.1f}  total ({len(rows)} files)")


if __name__ == "__main__":
    main()
