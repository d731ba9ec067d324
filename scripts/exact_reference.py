#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""An independent exact reference for `sinkcert eval --certify`.

It reads a weight file and an input file with Python's json module, taking
every number as the exact rational its decimal literal denotes
(fractions.Fraction), and evaluates the model the way PyTorch does (queries
Q = X W_Q^T, keys K = X W_K^T, scores Q K^T, values X W_V^T, output
(a V) W_O^T; the products A = W_Q^T W_K and M = W_O W_V are never formed):

    s_ik = (W_Q x_i) . (W_K x_k)                      exact rational
    a_ik = exp(s_ik) / sum_{m<=i} exp(s_im)           mpmath, DIGITS + 30 digits
    f_i  = sum_h W_O^h sum_{k<=i} a^h_ik W_V^h x_k
    e(X) = max_{i,d} |f_i[d] - y_i[d]|,  y_j = (1/j) sum_{k=1..j} x_k, else 0

Single-layer softmax models only (factored or product heads). Shares no code
with sinkcert.

Usage:
  exact_reference.py evaluate W.json X.json [DIGITS]
      prints e(X) and 1 - a_i0 for every head and position, to DIGITS digits
  exact_reference.py check SINKCERT
      the end-to-end test: random factored softmax models (entries N(0, 0.6),
      written as shortest float literals, which denote decimals, not doubles),
      three inputs each; `SINKCERT eval --certify 30 --json` must enclose the
      reference value of e(X) and of every BOS deficit. Prints
      "N passed, N failed" and exits 1 on any failure.
"""
import json
import os
import random
import subprocess
import sys
import tempfile
from fractions import Fraction

import mpmath

# Digits the reference carries beyond the ones compared: the exp of an exact
# rational score is correctly rounded by mpmath at this working precision, and
# the sums that follow lose at most a few digits to cancellation.
GUARD_DIGITS = 30


def exact_load(path):
    with open(path) as f:
        return json.load(f, parse_float=Fraction, parse_int=Fraction)


def entry(v):
    return Fraction(v) if isinstance(v, str) else v


def matrix(rows):
    return [[entry(v) for v in row] for row in rows]


def mp(q):
    """The rational q at the working precision (one correctly rounded division)."""
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def matvec(W, x):
    return [sum(w * v for w, v in zip(row, x)) for row in W]


def evaluate(weights, tokens, digits):
    """Returns (e(X), [[1 - a_i0 for i] per head]) as mpmath values."""
    if weights["kind"] != "single-layer" or weights["attention"] != "softmax":
        raise ValueError("the reference handles single-layer softmax models only")
    mpmath.mp.dps = digits + GUARD_DIGITS
    X = matrix(tokens)
    L, n = len(X), len(X[0])
    trigger = next(i for i in range(1, L) if X[i][1] == 1)
    out = [[mpmath.mpf(0)] * n for _ in range(L)]
    deficits = []
    for head in weights["weights"][0]:
        if "W_Q" in head:
            WQ, WK, WV, WO = (matrix(head[k]) for k in ("W_Q", "W_K", "W_V", "W_O"))
            q = [matvec(WQ, x) for x in X]
            k = [matvec(WK, x) for x in X]
            v = [matvec(WV, x) for x in X]
            score = lambda i, m: sum(a * b for a, b in zip(q[i], k[m]))
            value = lambda m: v[m]
            project = lambda z: matvec(WO, z)
        else:
            A, M = matrix(head["A"]), matrix(head["M"])
            score = lambda i, m: sum(X[i][p] * sum(A[p][c] * X[m][c] for c in range(n))
                                     for p in range(n))
            value = lambda m: X[m]
            project = lambda z: matvec(M, z)
        per_head = []
        for i in range(L):
            s = [score(i, m) for m in range(i + 1)]
            top = max(s)
            w = [mpmath.exp(mp(si - top)) for si in s]  # exact shift by the row max
            total = mpmath.fsum(w)
            a = [wi / total for wi in w]
            per_head.append(1 - a[0])
            dim = len(value(0))
            mixed = [mpmath.fsum(a[m] * mp(value(m)[d]) for m in range(i + 1))
                     for d in range(dim)]
            o = project(mixed)
            for d in range(n):
                out[i][d] += o[d]
        deficits.append(per_head)
    err = mpmath.mpf(0)
    for i in range(L):
        for d in range(n):
            y = sum(X[k][d] for k in range(1, trigger + 1)) / trigger if i == trigger else 0
            err = max(err, abs(out[i][d] - mp(y)))
    return err, deficits, trigger


def parse_interval(text):
    lo, hi = text.strip("[]").split(",")
    return mpmath.mpf(lo), mpmath.mpf(hi)


def random_model(rng, n, d):
    def mat(r, c):
        return [[rng.gauss(0.0, 0.6) for _ in range(c)] for _ in range(r)]
    return {"format": "sinkcert-weights", "version": 1, "kind": "single-layer",
            "attention": "softmax", "n": n, "layers": 1, "heads": 1,
            "weights": [[{"W_Q": mat(d, n), "W_K": mat(d, n), "W_V": mat(d, n),
                          "W_O": mat(n, d)}]]}


def random_input(rng, n, L):
    j = rng.randint(1, L - 1)
    X = [[1] + [0] * (n - 1)]
    for i in range(1, L):
        content = [rng.uniform(-1, 1) for _ in range(n - 3)]
        X.append([0, 1 if i == j else 0] + content + [0 if i == j else 1])
    return {"format": "sinkcert-input", "version": 1, "tokens": X}


def check(sinkcert):
    rng = random.Random(20261130)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for model_index, (n, L, d) in enumerate([(5, 4, 5), (6, 5, 3), (8, 6, 8)]):
            wpath = os.path.join(tmp, "w%d.json" % model_index)
            with open(wpath, "w") as f:
                json.dump(random_model(rng, n, d), f)
            for input_index in range(3):
                xpath = os.path.join(tmp, "x%d_%d.json" % (model_index, input_index))
                with open(xpath, "w") as f:
                    json.dump(random_input(rng, n, L), f)
                run = subprocess.run([sinkcert, "eval", "--weights", wpath, "--input", xpath,
                                      "--certify", "30", "--json"],
                                     capture_output=True, text=True)
                name = "model %d (n=%d, L=%d, d=%d), input %d" % (model_index, n, L, d,
                                                                  input_index)
                if run.returncode != 0:
                    print("FAIL %s: sinkcert exited %d: %s" % (name, run.returncode,
                                                               run.stderr.strip()))
                    failed += 1
                    continue
                got = json.loads(run.stdout)
                err, deficits, trigger = evaluate(exact_load(wpath),
                                                  exact_load(xpath)["tokens"], 100)
                checks = [("e(X)", err, got["linf_error"])]
                for head in got["bos_deficit"]:
                    for i, text in enumerate(head["one_minus_bos"]):
                        checks.append(("1 - a_%d0" % i, deficits[head["head"]][i], text))
                for what, ref, text in checks:
                    lo, hi = parse_interval(text)
                    if lo <= ref <= hi:
                        passed += 1
                    else:
                        failed += 1
                        print("FAIL %s: %s = %s not in %s" % (name, what,
                                                             mpmath.nstr(ref, 40), text))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "evaluate":
        digits = int(argv[4]) if len(argv) > 4 else 40
        err, deficits, trigger = evaluate(exact_load(argv[2]), exact_load(argv[3])["tokens"],
                                          digits)
        print("e(X) =", mpmath.nstr(err, digits))
        for h, per in enumerate(deficits):
            for i, v in enumerate(per):
                print("head %d, 1 - a_%d0 =" % (h, i), mpmath.nstr(v, digits))
        return 0
    if len(argv) == 3 and argv[1] == "check":
        return check(argv[2])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
