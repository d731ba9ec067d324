#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""verify bound on residual models, a build whose symbolic boxes bound a
query row's score against its own key, s_i = sum_e q_e y_ie with
q = A^T y_i, as a sum of products, each product's quadratic part by
norm_q_e norm_y_e (the baseline, built from an earlier revision), against
this one, which bounds that quadratic part as one quadratic form by its
diagonal split where narrower (SymbolicArithmetic::dot in
theorems/bounds/symbolic_form.h), on the same commands in the same run.

The rows (each command's CERTIFIED enclosure, boxes bounded and upper end
over lower end), the models and the budget in seconds are those of every
two-build comparison of scripts/cubic_split_benchmark.py.

  /usr/bin/python3 scripts/self_score_benchmark.py --binary B --baseline B0
      [--seconds S] [--small-seconds S] [--out FILE]
"""
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from cubic_split_benchmark import comparison_main  # noqa: E402

TITLE = (
    "verify bound on residual models, a row's score against its own key as a sum of products "
    "(baseline) and as one quadratic form split at its diagonal (this build)"
)

BASELINE_HELP = "a sinkcert built at a revision whose own-key score is a sum of products (fdc5de4)"

if __name__ == "__main__":
    sys.exit(comparison_main(__file__, __doc__, TITLE, BASELINE_HELP))
