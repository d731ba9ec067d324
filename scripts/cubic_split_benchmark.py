#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""verify bound on residual models, a build whose second-order expansion
bounds each major symbol's cubic part by the absolute values of its
coefficients (the baseline, built from an earlier revision) against this
one, which splits it at its diagonal (the diagonal's half moved into the
form's linear part) and bounds the first major symbols' cubic parts
together with the quadratic part per vertex of those symbols
(theorems/bounds/second_order_row.h, diagonal_split, vertex_split_bound),
on the same commands in the same run.

Each row: the command's CERTIFIED enclosure, the boxes bounded, and the
upper end over the lower one (the lower ends are the attack's, the same in
both builds). The models: the committed n = L = 16 residual models with
fused heads, and the random n = 5, L = 4 models with entries of order 1
(random_1_s1, random_3_s3, written as scripts/deep_heldout_benchmark.py
writes them). The budget is seconds, as a user's run has it, so the box
counts may differ by a few between the builds.

  /usr/bin/python3 scripts/cubic_split_benchmark.py --binary B --baseline B0
      [--seconds S] [--small-seconds S] [--out FILE]
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from benchmark_output import require_positive, two_build_parser, two_build_rows  # noqa: E402
from deep_heldout_benchmark import RANDOM_MODELS, random_model  # noqa: E402
from fused_difference_benchmark import rows as fused_rows  # noqa: E402

PROGRAM = "cubic_split_benchmark"
RANDOM = ("random_1_s1", "random_3_s3")


def deep_comparison(argv, program, title, doc, baseline_help):
    """The whole benchmark for one pair of builds: `title` heads the output,
    `doc` is the calling script's docstring (its first paragraph the
    --help text), `baseline_help` says which revision --baseline is."""
    p = two_build_parser(doc, baseline_help)
    p.add_argument("--seconds", type=int, default=60, help="per n = 16 model and build")
    p.add_argument("--small-seconds", type=int, default=30, help="per random model and build")
    args = p.parse_args(argv)
    require_positive(program, [("--seconds", args.seconds),
                               ("--small-seconds", args.small_seconds)])

    def models(scratch):
        out = [(name, w, 16, args.seconds) for name, w in fused_rows()]
        for name, seed, a, m, layers, heads in RANDOM_MODELS:
            if name in RANDOM:
                path = os.path.join(scratch, name + ".weights.json")
                random_model(path, seed, a, m, layers, heads)
                out.append((name, path, 4, args.small_seconds))
        return out

    return two_build_rows(
        program, argv, args, title,
        f"# each row: verify bound --weights W --L L --seconds S --json (S = {args.seconds} at "
        f"n = 16, {args.small_seconds} for the random n = 5, L = 4 models); lower, upper: "
        "CERTIFIED; upper/lower: how far the enclosure is from closing", models)


def comparison_main(script, doc, title, baseline_help):
    """main() of a script that is one deep_comparison: its program name is
    the script's file name, its arguments the command line's."""
    program = os.path.splitext(os.path.basename(script))[0]
    return deep_comparison(sys.argv[1:], program, title, doc, baseline_help)


def main(argv):
    return deep_comparison(
        argv, PROGRAM,
        "verify bound on residual models, the expansion's cubic part by its coefficients' "
        "absolute values (baseline) and split at its diagonal, with the quadratic part per "
        "vertex (this build)",
        __doc__, "a sinkcert built at a revision whose cubic part is not split")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
