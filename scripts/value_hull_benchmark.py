#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""verify bound on a short budget: a build without the values' hull bound
(the baseline, built from an earlier revision) against one that caps every
trigger's boxes with it (theorems/bounds/value_hull_bound.h), on the same
commands in the same run.

Each row: the command's CERTIFIED enclosure, the boxes bounded, the
triggers the first pass did not reach (their upper end: +inf in the
baseline, the hull bound in this build), and the wall seconds. A short
budget is where the hull shows: at L = 128 and 256 the first pass reaches a
trigger or two in it, and on a deep model whose boxes' forms blow up the
hull can be the smaller of the two.

  /usr/bin/python3 scripts/value_hull_benchmark.py --binary B --baseline B0
      [--out FILE]
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from benchmark_output import finish_output, run_header, run_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = "value_hull_benchmark"
SCALING = os.path.join("results", "benchmarks", "scaling_models")
PYTORCH = os.path.join("results", "benchmarks", "pytorch_models")


def rows():
    """(name, weight file, --seconds)."""
    return [
        ("softmax_n16_L128", os.path.join(SCALING, "softmax_n16_L128_s0.weights.json"), 5),
        ("softmax_n16_L256", os.path.join(SCALING, "softmax_n16_L256_s0.weights.json"), 5),
        ("softmax_n64_L64", os.path.join(SCALING, "softmax_n64_s0.weights.json"), 5),
        ("relu_n16_L64", os.path.join(SCALING, "relu_n16_L64_s0.weights.json"), 1),
        ("softmax_2x2_s7", os.path.join(PYTORCH, "softmax_2x2_s7.weights.json"), 5),
        ("softmax_4x4_s9", os.path.join(PYTORCH, "softmax_4x4_s9.weights.json"), 5),
        ("softmax_4x4_s9", os.path.join(PYTORCH, "softmax_4x4_s9.weights.json"), 60),
    ]


def unreached(out):
    """The triggers the first pass did not reach, from the budget note."""
    note = out.get("budget_note", "")
    for key in ("triggers bounded by the values' hull alone", "triggers not bounded at all"):
        at = note.find(key)
        if at >= 0:
            return note[:at].split(";")[-1].strip()
    return "0"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "sinkcert"))
    p.add_argument("--baseline", required=True,
                   help="a sinkcert built at a revision without the values' hull bound")
    p.add_argument("--out", default=None, help="also write the output to this file")
    args = p.parse_args(argv)
    os.chdir(ROOT)
    lines = [
        "# value_hull_benchmark output: verify bound on a short budget, without the values' "
        "hull bound (baseline) and with it (this build)",
        *run_header(PROGRAM, argv, [("binary", args.binary), ("baseline", args.baseline)]),
        "# each row: verify bound --weights W --seconds S --json; lower, upper: CERTIFIED; "
        "unreached: triggers the first pass did not reach (of all)",
    ]
    header = (f"{'model':<18} {'S':>3} {'build':<9} {'boxes':>5} {'unreached':>10} "
              f"{'wall s':>7} {'lower':>12} {'upper':>12}")
    lines.append(header)
    for line in lines:
        print(line, flush=True)
    for name, weights, seconds in rows():
        for build, binary in (("baseline", args.baseline), ("this", args.binary)):
            out, secs = run_json([binary, "verify", "bound", "--weights", weights, "--seconds",
                                  str(seconds), "--json", "--quiet"], PROGRAM)
            hi = out["hi"]
            line = (f"{name:<18} {seconds:>3} {build:<9} {out['boxes']:>5} "
                    f"{unreached(out):>10} {secs:>7.1f} {out['lo']:>12.5e} "
                    f"{float('inf') if hi is None else hi:>12.5e}")
            lines.append(line)
            print(line, flush=True)
    finish_output(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
