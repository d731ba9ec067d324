#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""verify bound on small residual softmax models (n = 5, L = 4: six content
variables), a build whose box phase there uses the centred forms with the
symbolic ones and splits by their gradients (the baseline, built from an
earlier revision), against this one, which uses the symbolic forms alone
and bisects the widest variable the worst term reads
(theorems/bounds/deep_worst_case_bound.cc, kSmallBoxVariables), on the
same commands in the same run.

Each row: the command's CERTIFIED enclosure, the boxes bounded, and the
upper end over the lower one (the lower ends are the attack's, the same in
both builds), to the default gap 0.01 within the budget. The models, made
by other code than the bound's: the random models of
scripts/deep_heldout_benchmark.py (numpy), and the Theorem 2 search's path
model and its eps_one model at delta = 0.02 (sinkcert theorem2 --n 5 --L 4
--quick, seed 0, run by --binary; sink models whose errors are about 1e-5
and 6e-10). The budget is seconds, as a user's run has it, so the box
counts may differ by a few between the builds.

  /usr/bin/python3 scripts/small_deep_benchmark.py --binary B --baseline B0
      [--seconds S] [--out FILE]
"""
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from benchmark_output import require_positive, two_build_parser, two_build_rows  # noqa: E402
from deep_heldout_benchmark import RANDOM_MODELS, random_model  # noqa: E402

PROGRAM = "small_deep_benchmark"
PATH_MODELS = ("path_start0", "eps_one_delta0.02")


def main(argv):
    p = two_build_parser(__doc__, "a sinkcert built at a revision whose small deep boxes use "
                                  "the centred forms (e8ca472)")
    p.add_argument("--seconds", type=int, default=30, help="per model and build")
    args = p.parse_args(argv)
    require_positive(PROGRAM, [("--seconds", args.seconds)])

    def models(scratch):
        out = []
        for name, seed, a, m, layers, heads in RANDOM_MODELS:
            path = os.path.join(scratch, name + ".weights.json")
            random_model(path, seed, a, m, layers, heads)
            out.append((name, path, 4, args.seconds))
        study = os.path.join(scratch, "theorem2")
        run = subprocess.run([args.binary, "theorem2", "--n", "5", "--L", "4", "--quick",
                              "--out", study, "--quiet"], capture_output=True, text=True)
        # its exit code is its verdict's (4: UNDECIDED); what counts is the files
        for name in PATH_MODELS:
            path = os.path.join(study, name + ".weights.json")
            if not os.path.isfile(path):
                raise SystemExit(f"{PROGRAM}: error: {args.binary} theorem2 --n 5 --L 4 --quick "
                                 f"(exit {run.returncode}) wrote no {name}.weights.json: "
                                 f"{run.stderr.strip()}")
            out.append((name, path, 4, args.seconds))
        return out

    return two_build_rows(
        PROGRAM, argv, args,
        "verify bound on n = 5, L = 4 residual softmax models, the centred forms with the "
        "symbolic ones (baseline) and the symbolic forms alone, bisecting the widest variable "
        "(this build)",
        f"# each row: verify bound --weights W --L 4 --seconds {args.seconds} --json (gap 0.01); "
        "lower, upper: CERTIFIED; upper/lower: how far the enclosure is from closing", models)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
