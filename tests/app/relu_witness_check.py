#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Re-evaluate a `verify relu` witness independently, in exact fractions.

Reads a weight file (every number as the exact rational its literal
denotes, fractions.Fraction) and the JSON certificate of a NOT VERIFIED
verdict, takes the witness input X (entries "p/q"), and evaluates the model
from scratch, in the PyTorch order (queries, keys and values first; for a
factored head the products A and M are never formed):

    s_ik = x_i^T A x_k  or  (W_Q x_i) . (W_K x_k)
    a_ik = max(s_ik, 0) / max(i, 1)                    (relu)
    o_i  = M sum_{k<=i} a_ik x_k  or  W_O sum_k a_ik W_V x_k
    single-layer: f = sum_h o;  residual: x <- x + sum_h o, per layer
    target: plain y_j = mean(x_1..x_j), else 0; residual y = x + that

Checks that f(X) - y at the witness's (i, d) is exactly its value, that
max |f(X) - y| is exactly the certificate's margin, and that `SINKCERT eval
--input X --json` reports that l_inf error to TOLERANCE. Prints one line;
exit 0 when all hold, 1 otherwise. Shares no code with sinkcert.

Usage: relu_witness_check.py WEIGHTS.json CERT.json SINKCERT
"""
import json
import os
import subprocess
import sys
import tempfile
from fractions import Fraction

# eval computes in double: O(L n^2) roundings of values of order 1.
TOLERANCE = 1e-12


def load(path):
    with open(path) as f:
        return json.load(f, parse_float=Fraction, parse_int=Fraction)


def mat(rows):
    return [[Fraction(v) for v in row] for row in rows]


def apply(W, x):
    return [sum(w * v for w, v in zip(row, x)) for row in W]


def dot(u, v):
    return sum(a * b for a, b in zip(u, v))


def transpose(W):
    return [list(col) for col in zip(*W)]


def head_forward(head, x, attention):
    L = len(x)
    if "A" in head:
        A, M = mat(head["A"]), mat(head["M"])
        q = [apply(transpose(A), xi) for xi in x]  # A^T x_i, so s = q_i . x_k
        k_ = x
        value = lambda v: apply(M, v)  # noqa: E731
        vals = x
    else:
        WQ, WK, WV, WO = (mat(head[k]) for k in ("W_Q", "W_K", "W_V", "W_O"))
        q = [apply(WQ, xi) for xi in x]
        k_ = [apply(WK, xi) for xi in x]
        vals = [apply(WV, xi) for xi in x]
        value = lambda v: apply(WO, v)  # noqa: E731
    out = []
    for i in range(L):
        denom = Fraction(max(i, 1)) if attention == "relu" else Fraction(i + 1)
        a = [max(dot(q[i], k_[k]), Fraction(0)) / denom for k in range(i + 1)]
        mix = [sum(a[k] * vals[k][c] for k in range(i + 1)) for c in range(len(vals[0]))]
        out.append(value(mix))
    return out


def forward(w, X):
    x = [row[:] for row in X]
    for layer in w["weights"]:
        delta = [[Fraction(0)] * len(X[0]) for _ in X]
        for head in layer:
            o = head_forward(head, x, w["attention"])
            delta = [[d + v for d, v in zip(dr, orow)] for dr, orow in zip(delta, o)]
        x = [[a + b for a, b in zip(xr, dr)] for xr, dr in zip(x, delta)] \
            if w["kind"] == "residual" else delta
    return x


def target(X, kind):
    j = next(i for i, row in enumerate(X) if row[1] == 1)
    n = len(X[0])
    mean = [sum(X[k][c] for k in range(1, j + 1)) / j for c in range(n)]
    y = []
    for i, row in enumerate(X):
        base = row[:] if kind == "residual" else [Fraction(0)] * n
        y.append([b + m for b, m in zip(base, mean)] if i == j else base)
    return y


def main():
    wpath, cpath, sinkcert = sys.argv[1:4]
    w = load(wpath)
    with open(cpath) as f:
        cert = json.load(f)
    wit = cert["witness"]
    X = [[Fraction(v) for v in row] for row in wit["X"]]
    f = forward(w, X)
    y = target(X, w["kind"])
    e = [[a - b for a, b in zip(fr, yr)] for fr, yr in zip(f, y)]
    value = Fraction(wit["value"]["exact"])
    margin = Fraction(cert["margin"]["exact"])
    at = e[wit["position"]][wit["coordinate"]]
    linf = max(abs(v) for row in e for v in row)
    with tempfile.TemporaryDirectory() as tmp:
        xpath = os.path.join(tmp, "X.json")
        with open(xpath, "w") as out:
            tokens = [[str(v) if v.denominator == 1 else float(v) for v in row] for row in X]
            out.write(json.dumps({"format": "sinkcert-input", "tokens": tokens}))
        r = subprocess.run([sinkcert, "eval", "--weights", wpath, "--input", xpath, "--json"],
                           capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: eval exit {r.returncode}: {r.stderr.strip()}")
        return 1
    evaluated = json.loads(r.stdout)["linf_error"]
    evaluated = float(evaluated["value"] if isinstance(evaluated, dict) else evaluated)
    ok = at == value and linf == margin and abs(evaluated - float(margin)) <= TOLERANCE
    print(f"{'ok' if ok else 'FAIL'}: exact f(X) - y at (i = {wit['position']}, d = "
          f"{wit['coordinate']}) = {at} (certificate {value}); exact max |f(X) - y| = {linf} "
          f"(margin {margin}); eval --input: {evaluated!r}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
