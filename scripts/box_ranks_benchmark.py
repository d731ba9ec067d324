#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""verify bound on one process and under `mpiexec -np 2`: wall seconds, the
ratio against the one process in the same run, and whether the two
enclosures are the same bits.

Under several ranks verify bound splits its softmax vertex bound and its
first pass by trigger, and its box phase by batch (docs/methods.md, "verify
bound under MPI"): the ranks must print one process's JSON, timings apart.
A fixed box budget (--boxes, with a --seconds budget that does not bind)
makes the two runs do the same work; the JSON are compared member by member
without "seconds", "elapsed", "provenance" and the seconds quoted in the
notes (as tests/app/same_json.py does).

  /usr/bin/python3 scripts/box_ranks_benchmark.py [--binary build/sinkcert]
      [--mpiexec mpiexec] [--weights W] [--boxes 150] [--gap 1e-9]
      [--seconds 3000] [--out FILE]

Default model: results/benchmarks/scaling_models/softmax_n32_s0 (n = L = 32,
PyTorch-trained). One process runs its box phase on the machine's threads;
each of the 2 ranks on the threads divided by the ranks on the node.
"""
import argparse
import json
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from benchmark_output import finish_output, run_header, run_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = "box_ranks_benchmark"
# the seconds quoted inside notes ("... 12.3 s)"): timings, not results
SECONDS_TEXT = re.compile(r"[0-9.e+-]+ s\b")


def comparable(x):
    """The JSON without its timings (as tests/app/same_json.py)."""
    if isinstance(x, dict):
        return {k: comparable(v) for k, v in x.items()
                if k not in ("seconds", "elapsed", "provenance")}
    if isinstance(x, list):
        return [comparable(v) for v in x]
    if isinstance(x, str):
        return SECONDS_TEXT.sub("S s", x)
    return x


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "sinkcert"))
    p.add_argument("--mpiexec", default=shutil.which("mpiexec") or "mpiexec")
    p.add_argument("--weights", default=os.path.join(
        ROOT, "results", "benchmarks", "scaling_models", "softmax_n32_s0.weights.json"))
    p.add_argument("--boxes", type=int, default=150)
    p.add_argument("--gap", type=float, default=1e-9, help="not reached: the boxes bind")
    p.add_argument("--seconds", type=float, default=3000, help="does not bind")
    p.add_argument("--out", default=None, help="also write the output to this file")
    args = p.parse_args(argv)
    bound = [args.binary, "verify", "bound", "--weights", args.weights, "--gap", f"{args.gap:g}",
             "--boxes", str(args.boxes), "--seconds", f"{args.seconds:g}", "--json", "--quiet"]
    env_mpi = [args.mpiexec, "-np", "2", "--oversubscribe"]
    # Open MPI refuses to start as root without these (a container's user)
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    lines = [
        "# box_ranks_benchmark output: verify bound on 1 process and on 2 MPI ranks",
        *run_header(PROGRAM, argv, [("binary", args.binary)]),
        "# run: " + " ".join(os.path.relpath(a, ROOT) if a.startswith(ROOT) else a
                             for a in bound) + "  (2 ranks: under " + " ".join(env_mpi) + ")",
        "# same: the JSON equals the 1-process one, timings apart (lower, upper and their "
        "exact forms, every trigger's enclosure, witness, boxes, verdict)",
    ]
    header = (f"{'ranks':>5} {'wall s':>8} {'baseline/this':>13} {'boxes':>6} "
              f"{'lower':>11} {'upper':>11}  same")
    lines.append(header)
    for line in lines:
        print(line, flush=True)
    base, base_s = run_json(bound, PROGRAM)
    rows = [(1, base, base_s)]
    two, two_s = run_json(env_mpi + bound, PROGRAM)
    rows.append((2, two, two_s))
    failures = 0
    for ranks, out, secs in rows:
        same = comparable(out) == comparable(base)
        failures += 0 if same else 1
        hi = out.get("hi")
        line = (f"{ranks:>5} {secs:>8.1f} {base_s / secs:>13.2f} {out['boxes']:>6} "
                f"{out['lo']:>11.4e} {float('inf') if hi is None else hi:>11.4e}  "
                f"{'yes' if same else 'NO'}")
        lines.append(line)
        print(line, flush=True)
    finish_output(lines, args.out)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
