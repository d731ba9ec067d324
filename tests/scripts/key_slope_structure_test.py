#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scripts/key_slope_structure.py against sinkcert eval and against enumeration.

1. Its e(X) (numpy forward pass, every row) equals `sinkcert eval --input`
   of the two-group input it writes, on the n = 16 paper-recipe model and
   on random n = 8 models, to its last printed digit.
2. On random n = 8 models (5 content coordinates, 32 query vertices) its
   local search finds the maximum of ||b0 + A_cc^T q||_1 over the cube
   (convex in q, so a vertex attains it: enumeration is the truth), and
   the root cell's bound it prints is above it.
"""
import itertools
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "key_slope_structure.py")
MODEL = os.path.join(ROOT, "results", "benchmarks", "pytorch_models", "softmax_s0.weights.json")
# the script prints e(X) to 7 significant digits (and the maxima to 4
# decimals): agreement to its last printed digit
PRINTED = 1e-6
PRINTED_MAX = 1e-4


def run(args):
    return subprocess.run(["/usr/bin/python3", SCRIPT] + args, check=True, capture_output=True,
                          text=True).stdout


def field(out, label):
    for line in out.splitlines():
        if line.startswith(label):
            return line[len(label):].split()
    raise SystemExit(f"key_slope_structure_test: no line {label!r} in\n{out}")


def main():
    sinkcert = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "sinkcert")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        witness = os.path.join(tmp, "w.json")
        out = run([MODEL, "--witness", witness])
        mine = float(field(out, "two-group input at that query, trigger j = 15: e(X)")[0])
        ev = json.loads(subprocess.run([sinkcert, "eval", "--weights", MODEL, "--input", witness,
                                        "--json"], check=True, capture_output=True,
                                       text=True).stdout)
        theirs = ev["linf_error"]["value"]
        ok = abs(mine - theirs) <= PRINTED * theirs
        print(f"n = 16: the script's e(X) {mine} against sinkcert eval {theirs:.6f}: "
              f"{'ok' if ok else 'FAIL'}")
        failures += not ok
        rng = np.random.default_rng(5)
        n = 8
        for seed in range(3):
            w = {k: rng.normal(0, 0.6, (n, n)) for k in ("W_Q", "W_K", "W_V", "W_O")}
            path = os.path.join(tmp, f"m{seed}.json")
            with open(path, "w") as fh:
                json.dump({"format": "sinkcert-weights", "version": 1, "kind": "single-layer",
                           "attention": "softmax", "n": n, "layers": 1, "heads": 1,
                           "weights": [[{k: v.tolist() for k, v in w.items()}]],
                           "task": {"L": 6}}, fh)
            out = run([path, "--starts", "50", "--witness", witness])
            A = w["W_Q"].T @ w["W_K"]
            C = list(range(2, n - 1))
            b0, Acc = A[1, C], A[np.ix_(C, C)]
            truth = max(np.abs(b0 + Acc.T @ np.array(q)).sum()
                        for q in itertools.product((-1.0, 1.0), repeat=n - 3))
            found = float(field(out, "local search max ||b||_1")[0])
            root = float(field(out, "root cell bound on max ||b||_1")[0])
            ok_found = abs(found - truth) <= PRINTED_MAX
            ok_root = root >= truth - PRINTED_MAX
            mine = float(field(out, "two-group input at that query, trigger j = 5: e(X)")[0])
            theirs = json.loads(subprocess.run(
                [sinkcert, "eval", "--weights", path, "--input", witness, "--json"], check=True,
                capture_output=True, text=True).stdout)["linf_error"]["value"]
            ok_eval = abs(mine - theirs) <= PRINTED * theirs
            print(f"n = 8, seed {seed}: max ||b||_1 {truth:.4f} by enumeration, {found} found, "
                  f"root bound {root}; e(X) {mine} against sinkcert eval {theirs:.6f}: "
                  f"{'ok' if ok_found and ok_root and ok_eval else 'FAIL'}")
            failures += (not ok_found) + (not ok_root) + (not ok_eval)
    print("key_slope_structure_test:", "ok" if failures == 0 else f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
