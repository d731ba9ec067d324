#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Independent checks of results/row1_frontier/below_family/ (written by
`sinkcert row1-below`), in mpmath and torch, sharing no code with sinkcert.

For each kept model (A, M) of summary.json, read from its weight file:

  D: row 1's mean BOS deficit over uniform content c in [-1, 1]^2,
       alpha(c) = 1 / (1 + exp(s_10 - s_11)),  x = e_4 + c_1 e_2 + c_2 e_3,
       s_11 = x^T A x,  s_10 = x^T A e_0,
     by mpmath's 2-D tanh-sinh quadrature at 30 digits (NUMERIC(99)); it
     must lie in the recorded CERTIFIED enclosure [lower, upper] (widened by
     QUAD_SLACK).
  E: scripts/pgd_attack.py on the model written factored (W_Q = I,
     W_K = A, W_V = I, W_O = M): its worst value is a SEARCH lower bound
     on E (NUMERIC(53)) and must not exceed the recorded CERTIFIED upper end.

  /usr/bin/python3 scripts/row1_below_reference.py [DIR] [--starts 32] [--steps 150]

Exits 1 on any failed check.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from fractions import Fraction

import mpmath as mp

# tanh-sinh on an analytic integrand at 30 digits: error far below 1e-20;
# the recorded enclosure is widened by this before the comparison.
QUAD_SLACK = mp.mpf("1e-20")
# pgd_attack evaluates in float64: its value may exceed the true error at
# its witness by rounding of O(1e-15); the comparison allows this much.
PGD_SLACK = 1e-12


def exact(v):
    return Fraction(repr(v)) if isinstance(v, float) else Fraction(str(v))


def load(path):
    with open(path) as f:
        d = json.load(f, parse_float=str, parse_int=str)
    h = d["weights"][0][0]
    return d, [[exact(v) for v in row] for row in h["A"]], [[exact(v) for v in row] for row in h["M"]]


def mean_deficit(A):
    n = len(A)
    Am = [[mp.mpf(q.numerator) / q.denominator for q in row] for row in A]

    def alpha(c1, c2):
        x = [0, 0, c1, c2, 1]
        s11 = mp.fsum(x[a] * Am[a][b] * x[b] for a in range(2, n) for b in range(2, n))
        s10 = mp.fsum(x[a] * Am[a][0] for a in range(2, n))
        return 1 / (1 + mp.exp(s10 - s11))

    return mp.quad(alpha, [-1, 1], [-1, 1]) / 4


def pgd(A, M, L, starts, steps):
    n = len(A)
    eye = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
    doc = {"format": "sinkcert-weights", "version": 1, "kind": "single-layer",
           "attention": "softmax", "n": n, "layers": 1, "heads": 1,
           "weights": [[{"W_Q": eye, "W_K": [[float(v) for v in r] for r in A],
                         "W_V": eye, "W_O": [[float(v) for v in r] for r in M]}]],
           "metadata": {"task": {"L": L, "trigger_range": "paper"}}}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.weights.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        here = os.path.dirname(os.path.abspath(__file__))
        out = subprocess.run([sys.executable, os.path.join(here, "pgd_attack.py"), path,
                              "--L", str(L), "--starts", str(starts), "--steps", str(steps)],
                             capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="?", default="results/row1_frontier/below_family")
    ap.add_argument("--starts", type=int, default=32)
    ap.add_argument("--steps", type=int, default=150)
    args = ap.parse_args()
    mp.mp.dps = 30
    with open(os.path.join(args.dir, "summary.json")) as f:
        s = json.load(f)
    ok = True
    for r in s["rows"]:
        if r["best_start"] < 0:
            continue
        _, A, M = load(os.path.join(args.dir, r["file"]))
        D = mean_deficit(A)
        lo, hi = mp.mpf(r["deficit"]["lower"]), mp.mpf(r["deficit"]["upper"])
        d_ok = lo - QUAD_SLACK <= D <= hi + QUAD_SLACK
        res = pgd(A, M, s["L"], args.starts, args.steps)
        worst = float(res["worst"] if "worst" in res else res["value"])
        e_ok = worst <= r["E"]["upper"] + PGD_SLACK
        ok &= d_ok and e_ok
        print("delta %s: D = %s NUMERIC(%d) (mpmath quad) in the CERTIFIED [%s, %s]: %s; "
              "pgd_attack worst %.9f SEARCH(lower bound) <= CERTIFIED E upper %.9f: %s "
              "(CERTIFIED E lower %.9f)"
              % (r["delta"], mp.nstr(D, 15), mp.mp.prec, r["deficit"]["lower"],
                 r["deficit"]["upper"], "ok" if d_ok else "FAILED", worst, r["E"]["upper"],
                 "ok" if e_ok else "FAILED", r["E"]["lower"]))
    print("row1-below reference: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
