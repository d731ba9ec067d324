#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""verify bound on residual models, a build whose symbolic forms replace
exp and 1/x by their plain range wherever the tangent form is wider (the
baseline, built from an earlier revision) against this one, which takes
the min-range form there (the slope at the end where |f'| is least, so the
range stays the plain one and part of the dependence on the symbols is
kept; theorems/bounds/symbolic_form.h), on the same commands in the same
run.

Each row: the command's CERTIFIED enclosure, the boxes bounded, and the
upper end over the lower one (the lower ends are the attack's, the same in
both builds). The models are those of scripts/cubic_split_benchmark.py:
the committed n = L = 16 residual models with fused heads and the random
n = 5, L = 4 models random_1_s1 and random_3_s3. The budget is seconds, as
a user's run has it, so the box counts may differ between the builds.

  /usr/bin/python3 scripts/min_range_benchmark.py --binary B --baseline B0
      [--seconds S] [--small-seconds S] [--out FILE]
"""
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from cubic_split_benchmark import comparison_main  # noqa: E402

TITLE = (
    "verify bound on residual models, exp and 1/x by their plain range where the tangent "
    "form is wider (baseline) and by the min-range form there (this build)"
)

BASELINE_HELP = "a sinkcert built at a revision without the min-range form"

if __name__ == "__main__":
    sys.exit(comparison_main(__file__, __doc__, TITLE, BASELINE_HELP))
