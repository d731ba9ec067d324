#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Test of scripts/pgd_attack.py (run by ctest).

1. On single-layer ReLU models whose scores read the flags only (the
   Theorem 3 construction s_ik = x_i[1] (x_k[n-1] + x_k[1]) with W_V = I and
   W_O = I + P, P a random perturbation), the output is affine in the
   content for each trigger, so every |f - y| term is maximized at a
   vertex of the box: the worst case is the maximum over all vertices,
   enumerated here with a numpy forward written independently of the
   script. PGD must reach it (to ROUNDING) and never exceed it.
2. A wrongly built attack would report a value its witness does not attain:
   `sinkcert eval --input` of the written witness gives PGD's value (to
   ROUNDING), and the witness is a valid task input (sinkcert reads it).

Usage: tests/scripts/pgd_attack_test.py SINKCERT (from the source root).
"""
import itertools
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PGD = os.path.join(ROOT, "scripts", "pgd_attack.py")
# The same float64 terms summed in different orders (numpy, torch, sinkcert):
# a few ulps of values of order 1.
ROUNDING = 1e-12


def model(n, seed):
    rng = np.random.default_rng(seed)
    WQ = np.zeros((n, n))
    WQ[0, 1] = 1.0  # query reads the trigger flag
    WK = np.zeros((n, n))
    WK[0, n - 1] = WK[0, 1] = 1.0  # key reads "is non-BOS"
    return {"W_Q": WQ, "W_K": WK, "W_V": np.eye(n),
            "W_O": np.eye(n) + rng.normal(0.0, 0.3, (n, n))}


def worst_by_vertices(w, n, L, j):
    """max over all content vertices of max |f - y| (independent numpy forward)."""
    best = -1.0
    m = n - 3
    for bits in itertools.product((-1.0, 1.0), repeat=(L - 1) * m):
        X = np.zeros((L, n))
        X[0, 0] = 1.0
        X[1:, 2:n - 1] = np.array(bits).reshape(L - 1, m)
        X[1:, n - 1] = 1.0
        X[j, n - 1], X[j, 1] = 0.0, 1.0
        S = (X @ w["W_Q"].T) @ (X @ w["W_K"].T).T
        A = np.tril(np.maximum(S, 0.0)) / np.maximum(np.arange(L), 1)[:, None]
        F = A @ (X @ w["W_V"].T) @ w["W_O"].T
        Y = np.zeros_like(X)
        Y[j] = X[1:j + 1].sum(axis=0) / j
        best = max(best, np.abs(F - Y).max())
    return best


def main():
    sinkcert = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "sinkcert")
    n, L = 5, 4
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in (1, 2):
            w = model(n, seed)
            path = os.path.join(tmp, f"m{seed}.json")
            with open(path, "w") as f:
                json.dump({"format": "sinkcert-weights", "version": 1, "kind": "single-layer",
                           "attention": "relu", "n": n, "layers": 1, "heads": 1,
                           "weights": [[{k: v.tolist() for k, v in w.items()}]]}, f)
            witness = os.path.join(tmp, f"w{seed}.json")
            out = json.loads(subprocess.run(
                ["/usr/bin/python3", PGD, path, "--L", str(L), "--starts", "8", "--steps", "60",
                 "--seed", "3", "--witness", witness],
                check=True, capture_output=True, text=True).stdout)
            truth = max(worst_by_vertices(w, n, L, j) for j in range(1, L))
            ok = abs(out["worst"] - truth) <= ROUNDING * truth
            ev = json.loads(subprocess.run(
                [sinkcert, "eval", "--weights", path, "--input", witness, "--json"],
                check=True, capture_output=True, text=True).stdout)
            e = ev["linf_error"]["value"]
            ok_eval = abs(e - out["worst"]) <= ROUNDING * truth
            print(f"seed {seed}: PGD {out['worst']:.15g}, best vertex {truth:.15g}, "
                  f"sinkcert eval of the witness {e:.15g}: "
                  f"{'ok' if ok and ok_eval else 'FAIL'}")
            failures += (not ok) + (not ok_eval)
    print("pgd_attack_test:", "ok" if failures == 0 else f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
