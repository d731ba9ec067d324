#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""verify bound on residual models with fused heads, a build whose fused
heads' weight-difference term is (e^w - 1) times the values' largest
distance to their middle (the baseline, built from an earlier revision)
against this one, which takes tanh(w/4) times the values' spread, the
total variation of two softmax rows (theorems/bounds/deep_symbolic_pass.h,
fused_difference_bound), on the same commands in the same run.

Each row: the command's CERTIFIED enclosure, the boxes bounded, and the
upper end over the lower one (the lower ends are the attack's, the same in
both builds). The budget is seconds, as a user's run has it, so the box
counts may differ by a few between the builds.

  /usr/bin/python3 scripts/fused_difference_benchmark.py --binary B --baseline B0
      [--seconds S] [--out FILE]
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from benchmark_output import require_positive, two_build_parser, two_build_rows  # noqa: E402

PROGRAM = "fused_difference_benchmark"
PYTORCH = os.path.join("results", "benchmarks", "pytorch_models")


def rows():
    """(name, weight file): the committed residual models with fused heads."""
    return [
        ("path_start0", os.path.join("results", "theorem2", "path_start0.weights.json")),
        ("softmax_2x2_s7", os.path.join(PYTORCH, "softmax_2x2_s7.weights.json")),
        ("softmax_2x2_s8", os.path.join(PYTORCH, "softmax_2x2_s8.weights.json")),
        ("softmax_4x4_s9", os.path.join(PYTORCH, "softmax_4x4_s9.weights.json")),
    ]


def main(argv):
    p = two_build_parser(__doc__, "a sinkcert built at a revision with the (e^w - 1) max form")
    p.add_argument("--seconds", type=int, default=60)
    args = p.parse_args(argv)
    require_positive(PROGRAM, [("--seconds", args.seconds)])
    return two_build_rows(
        PROGRAM, argv, args,
        "verify bound on residual models, the fused heads' weight-difference term as "
        "(e^w - 1) max|W - c| (baseline) and as tanh(w/4) (hi - lo) (this build)",
        f"# each row: verify bound --weights W --L 16 --seconds {args.seconds} --json; lower, "
        "upper: CERTIFIED; upper/lower: how far the enclosure is from closing",
        lambda scratch: [(name, weights, 16, args.seconds) for name, weights in rows()])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
