#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Certify that a low-error softmax model sinks.

What it shows: the softmax sink family (score beta (x_i[n-1] - x_i[1])
x_k[0]: ordinary queries look at BOS, the trigger query does not;
W_V = W_O = I except W_V e_0 = 0), built from numpy matrices A and M with
Model.from_numpy. Its worst-case error and its BOS deficit both behave
like (L - 1) e^(-beta). For beta = 12 at n = 5, L = 6 the tool certifies,
over the whole content box,
  E <= 1e-4                      (VERIFIED, CERTIFIED)
  min non-trigger BOS mass >= 0.999  (VERIFIED, CERTIFIED)
which is Theorem 1's picture: a small error comes with a sink. Runs in a
few seconds.

Run: PYTHONPATH=build/python /usr/bin/python3 examples/certify_sink.py
"""
import sinkcert  # first: names the Python to use if this one lacks numpy

import numpy as np

n, L, beta = 5, 6, 12.0
A = np.zeros((n, n))
A[n - 1, 0] = beta   # s_ik = beta x_i[n-1] x_k[0]: an ordinary query scores BOS
A[1, 0] = -beta      #      - beta x_i[1] x_k[0]:   the trigger query avoids it
M = np.eye(n)
M[:, 0] = 0          # BOS carries no value
model = sinkcert.Model.from_numpy({"A": A, "M": M}, L=L)

error = model.bound(seconds=30, claim=1e-4)
print(f"E <= 1e-4: {error.verdict} [{error.evidence}], E in [{error.lo:.3e}, {error.hi:.3e}]")
sink = model.bos_bound(seconds=30, claim=0.999)
print(f"min BOS mass >= 0.999: {sink.verdict} [{sink.evidence}], "
      f"min BOS in [{sink.lo:.9f}, {sink.hi:.9f}]")
assert error.verdict is sinkcert.Verdict.VERIFIED
assert sink.verdict is sinkcert.Verdict.VERIFIED
