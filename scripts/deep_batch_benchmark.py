#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Residual models' bounds on one process: a build that bounds one box at a
time (the baseline, built from an earlier revision) against one that bounds
the boxes of a batch on every core, on the same commands in the same run.

Each row: the command's wall seconds, the ratio baseline / this for the same
command and box budget (or, for the rows the baseline did not run, against
the baseline's row of the same model), and the enclosure the box budget
reached. With a box budget both builds bound the same number of boxes, but
the batches take them in another order (the best boxes at a batch's start,
not each best in turn), so the enclosures may differ; on the softmax_2x2_s7
row they are the same bits.

  /usr/bin/python3 scripts/deep_batch_benchmark.py --binary B --baseline B0
      [--out FILE]

Rows:
  bound softmax_2x2_s7   verify bound --boxes 60 (default gap, --seconds 600)
  bound path_start0      verify bound --L 16 --gap 0.1 --boxes 40 (and 50, 60
                         for this build)
  bos path_start0        verify bos --L 16 --layer 1 --head 0 --gap 0.01
                         --boxes 150 (1 - min BOS: lower and upper)
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from benchmark_output import finish_output, run_header, run_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = "deep_batch_benchmark"
S7 = os.path.join("results", "benchmarks", "pytorch_models", "softmax_2x2_s7.weights.json")
PATH = os.path.join("results", "theorem2", "path_start0.weights.json")


def rows():
    """(name, arguments, box budgets for the baseline, box budgets for this build)."""
    return [
        ("bound softmax_2x2_s7", ["verify", "bound", "--weights", S7, "--seconds", "600"],
         [60], [60]),
        ("bound path_start0", ["verify", "bound", "--weights", PATH, "--L", "16", "--gap", "0.1",
                               "--seconds", "600"], [40], [40, 50, 60]),
        ("bos path_start0 l1 h0", ["verify", "bos", "--weights", PATH, "--L", "16", "--layer",
                                   "1", "--head", "0", "--gap", "0.01", "--seconds", "900"],
         [150], [150]),
    ]


def enclosure(out):
    """(lower, upper, boxes) of a verify bound or verify bos JSON."""
    if "heads" in out:
        h = out["heads"][0]["min"]
        return h["lo"], h["hi"], h["boxes"]
    return out["lo"], out["hi"], out["boxes"]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "sinkcert"))
    p.add_argument("--baseline", required=True,
                   help="a sinkcert built at a revision that bounds one box at a time")
    p.add_argument("--out", default=None, help="also write the output to this file")
    args = p.parse_args(argv)
    os.chdir(ROOT)
    lines = [
        "# deep_batch_benchmark output: residual models' bounds, one box at a time (baseline) "
        "against batches on every core (this build)",
        *run_header(PROGRAM, argv, [("binary", args.binary), ("baseline", args.baseline)]),
        "# each row: its command with --boxes B --json; ratio: the baseline's wall seconds at "
        "the model's first budget / this row's; lower, upper: CERTIFIED (bos: 1 - min BOS)",
    ]
    header = (f"{'row':<22} {'build':<9} {'boxes':>5} {'wall s':>7} {'ratio':>6} "
              f"{'lower':>12} {'upper':>12}")
    lines.append(header)
    for line in lines:
        print(line, flush=True)
    for name, cmd, base_boxes, boxes in rows():
        base_s = None
        for build, binary, budgets in (("baseline", args.baseline, base_boxes),
                                       ("this", args.binary, boxes)):
            for b in budgets:
                out, secs = run_json([binary] + cmd + ["--boxes", str(b), "--json"], PROGRAM)
                if base_s is None:
                    base_s = secs
                lo, hi, n = enclosure(out)
                line = (f"{name:<22} {build:<9} {n:>5} {secs:>7.1f} {base_s / secs:>6.2f} "
                        f"{lo:>12.5e} {float('inf') if hi is None else hi:>12.5e}")
                lines.append(line)
                print(line, flush=True)
    finish_output(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
