#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""verify bound on residual models, a build whose symbolic boxes bound the
second-order expansion's covariance factor S_rho in MPFI at 128 bits, step
to the next double through glibc's nextafter and sum a form's norm in one
serial chain of upward steps (the baseline, built from an earlier
revision) against this one, which bounds S_rho in outward-rounded double
intervals with two exponentials for its 64 slices, steps to the next
double from the bit pattern and sums the norm in round to nearest, raised
by its a priori error bound (theorems/bounds/second_order_row.cc,
theorems/bounds/symbolic_form.cc, src/double_interval.h), on the same
commands in the same run.

Each row: the command's CERTIFIED enclosure, the boxes bounded, and the
upper end over the lower one (the lower ends are the attack's, the same in
both builds). The models are those of scripts/cubic_split_benchmark.py:
the committed n = L = 16 residual models with fused heads and the random
n = 5, L = 4 models random_1_s1 and random_3_s3. The budget is seconds, so
the ratio of the boxes bounded is the speed-up.

  /usr/bin/python3 scripts/symbolic_cost_benchmark.py --binary B --baseline B0
      [--seconds S] [--small-seconds S] [--out FILE]
"""
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from cubic_split_benchmark import comparison_main  # noqa: E402

TITLE = (
    "verify bound on residual models, symbolic boxes with S_rho in MPFI and serial upward norms "
    "(baseline) and with S_rho in double intervals and norms raised a priori (this build)"
)

BASELINE_HELP = "a sinkcert built at a revision whose S_rho is bounded in MPFI (dfdf503)"

if __name__ == "__main__":
    sys.exit(comparison_main(__file__, __doc__, TITLE, BASELINE_HELP))
