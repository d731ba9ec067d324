#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""verify bound on residual models, a build whose second-order expansion
bounds the covariance form's factor S_rho in MPFI at 128 bits and steps
to the next double through glibc's nextafter (the baseline, built from an
earlier revision) against this one, which bounds S_rho in outward-rounded
double intervals with two exponentials for its 64 slices and steps to the
next double from the bit pattern (theorems/bounds/second_order_row.cc,
src/double_interval.h), on the same commands in the same run.

Each row: the command's CERTIFIED enclosure, the boxes bounded, and the
upper end over the lower one (the lower ends are the attack's, the same in
both builds). The models are those of scripts/cubic_split_benchmark.py:
the committed n = L = 16 residual models with fused heads and the random
n = 5, L = 4 models random_1_s1 and random_3_s3. The budget is seconds, so
the ratio of the boxes bounded is the speed-up.

  /usr/bin/python3 scripts/double_covariance_benchmark.py --binary B --baseline B0
      [--seconds S] [--small-seconds S] [--out FILE]
"""
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from cubic_split_benchmark import comparison_main  # noqa: E402

TITLE = (
    "verify bound on residual models, the covariance form's S_rho in MPFI (baseline) and in "
    "double intervals (this build)"
)

BASELINE_HELP = "a sinkcert built at a revision whose S_rho is bounded in MPFI"

if __name__ == "__main__":
    sys.exit(comparison_main(__file__, __doc__, TITLE, BASELINE_HELP))
