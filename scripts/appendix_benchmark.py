#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The appendix's wall time on one worker and on every core, in one run.

  python3 scripts/appendix_benchmark.py [--binary build/sinkcert]
      [--threads 1,0] [--out results/benchmarks/appendix_benchmark.txt]

Runs `sinkcert appendix --threads T --out TMP/T` for each T in --threads
(0: the program's default, the hardware's core count), from the repository
root (so the appendix reads the committed models of results/), times each
(wall and CPU seconds of the child), compares each output with the
committed results/ cell by cell (scripts/compare_appendix.py: timing columns
and provenance apart), and writes the report, with the ratio of every run's
wall time to the first one's, to --out (atomically). Standard library only.
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import compare_appendix  # noqa: E402


def git_revision():
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=12"],
                              cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--binary", default="build/sinkcert")
    p.add_argument("--threads", default="1,0",
                   help="comma-separated --threads values, 0 = the default")
    p.add_argument("--out", default="results/benchmarks/appendix_benchmark.txt")
    a = p.parse_args()
    binary = os.path.abspath(os.path.join(ROOT, a.binary))
    runs = [int(t) for t in a.threads.split(",")]
    lines = [
        "# appendix_benchmark output: `sinkcert appendix` on one worker and on every core",
        "# command: python3 scripts/appendix_benchmark.py " + " ".join(sys.argv[1:]),
        f"# revision: {git_revision()}",
        f"# time_utc: {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}, "
        f"cores: {os.cpu_count()}, load average before: "
        + " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "# wall and CPU seconds of the whole command; ratio = wall / the first run's wall; "
        "tables: scripts/compare_appendix.py against the committed results/",
        f"{'threads':>11} {'wall s':>8} {'CPU s':>8} {'ratio':>6}  tables",
    ]
    first = None
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for t in runs:
            out = os.path.join(tmp, f"threads_{t}")
            os.makedirs(out)
            cmd = [binary, "appendix", "--out", out] + (["--threads", str(t)] if t > 0 else [])
            print("running: " + " ".join(cmd), file=sys.stderr, flush=True)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.monotonic()
            r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
            wall = time.monotonic() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            if r.returncode != 0:
                print(r.stderr[-2000:], file=sys.stderr)
                sys.exit(f"appendix_benchmark: {' '.join(cmd)} failed (exit {r.returncode})")
            notes = []
            differences = compare_appendix.compare(os.path.join(ROOT, "results"), out,
                                                   say=notes.append)
            verdict = notes[-1] if differences == 0 else f"{differences} difference(s): {notes[0]}"
            failed = failed or differences != 0
            first = first or wall
            label = str(t) if t > 0 else f"{os.cpu_count()} (default)"
            lines.append(f"{label:>11} {wall:8.1f} {cpu:8.1f} {wall / first:6.2f}  {verdict}")
            print(lines[-1], file=sys.stderr, flush=True)
    lines.append("# load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    target = os.path.join(ROOT, a.out)
    tmp_path = target + ".tmp"
    with open(tmp_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp_path, target)
    print("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
