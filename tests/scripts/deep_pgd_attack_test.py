#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Test of scripts/deep_pgd_attack.py (run by ctest).

1. The hand-written gradient: de/dC of the worst term against central
   differences (e is smooth near a point where the worst entry is unique)
   on residual and single-layer models, softmax and relu, factored and
   product heads. A wrong term of the backward pass (say, dS X A^T without
   dS^T X A) moves it by O(1); FD_TOL is far below that.
2. The forward pass: `sinkcert eval --input` of the written witness gives
   the script's value (to ROUNDING), on a residual and a single-layer
   model, so the script computes the model the weight file denotes.
3. The search is not idle: on a residual model, PGD's best value exceeds
   the best of its own random starts (the first iterate).

Usage: tests/scripts/deep_pgd_attack_test.py SINKCERT (from the source root).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import deep_pgd_attack as pgd  # noqa: E402

PGD = os.path.join(ROOT, "scripts", "deep_pgd_attack.py")
# The same float64 terms summed in different orders (numpy, sinkcert): a few
# ulps of values of order 1-10.
ROUNDING = 1e-11
# Central differences with step 1e-6 on terms of order 1-10 with bounded
# second derivatives: truncation ~1e-11, cancellation ~1e-10; a missing
# backward term is O(1e-2) or more.
FD_STEP = 1e-6
FD_TOL = 1e-6


def weight_file(path, kind, attention, n, L, layers, heads, seed, factored=False):
    rng = np.random.default_rng(seed)
    ws = []
    for _ in range(layers):
        layer = []
        for _ in range(heads):
            if factored:
                layer.append({k: (0.7 * rng.standard_normal((n, n))).tolist()
                              for k in ("W_Q", "W_K", "W_V", "W_O")})
            else:
                layer.append({"A": rng.standard_normal((n, n)).tolist(),
                              "M": (0.5 * rng.standard_normal((n, n))).tolist()})
        ws.append(layer)
    d = {"format": "sinkcert-weights", "version": 1, "kind": kind, "attention": attention,
         "n": n, "layers": layers, "heads": heads, "weights": ws,
         "task": {"L": L, "trigger_range": "paper"}}
    with open(path, "w") as f:
        json.dump(d, f)


def check_gradient(path, L, seed):
    d, layers = pgd.load_model(path)
    kind, residual, n = d["attention"], d["kind"] == "residual", d["n"]
    rng = np.random.default_rng(seed)
    for j in range(1, L):
        C = rng.uniform(-0.9, 0.9, size=(1, L - 1, n - 3))
        e, g, _ = pgd.error_and_gradient(layers, kind, residual, C, j, n)
        for idx in np.ndindex(C.shape[1:]):
            up, down = C.copy(), C.copy()
            up[(0,) + idx] += FD_STEP
            down[(0,) + idx] -= FD_STEP
            eu = pgd.error_and_gradient(layers, kind, residual, up, j, n)[0][0]
            ed = pgd.error_and_gradient(layers, kind, residual, down, j, n)[0][0]
            fd = (eu - ed) / (2 * FD_STEP)
            if abs(fd - g[(0,) + idx]) > FD_TOL * max(1.0, abs(fd)):
                raise SystemExit(f"FAIL: {path}: trigger {j}, content {idx}: gradient "
                                 f"{g[(0,) + idx]!r} vs central difference {fd!r}")


def run_pgd(path, witness, starts=16, steps=60):
    out = subprocess.run([sys.executable, PGD, path, "--starts", str(starts), "--steps",
                          str(steps), "--witness", witness],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def check_against_sinkcert(sinkcert, path, tmp):
    witness = os.path.join(tmp, "witness.json")
    r = run_pgd(path, witness)
    out = subprocess.run([sinkcert, "eval", "--weights", path, "--input", witness, "--json"],
                         capture_output=True, text=True, check=True)
    value = json.loads(out.stdout)["linf_error"]["value"]
    if abs(value - r["worst"]) > ROUNDING * max(1.0, abs(value)):
        raise SystemExit(f"FAIL: {path}: the script's worst {r['worst']!r} but sinkcert "
                         f"eval of its witness gives {value!r}")
    return r


def main():
    sinkcert = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("residual", "softmax", 2, 2, False), ("residual", "relu", 2, 1, False),
                 ("residual", "softmax", 3, 1, True), ("single-layer", "softmax", 1, 2, True),
                 ("single-layer", "relu", 1, 2, False)]
        for i, (kind, attention, layers, heads, factored) in enumerate(cases):
            path = os.path.join(tmp, f"model{i}.json")
            weight_file(path, kind, attention, 5, 4, layers, heads, seed=i, factored=factored)
            check_gradient(path, 4, seed=10 + i)
            print(f"ok: gradient, {kind} {attention} {layers} x {heads}"
                  f"{' factored' if factored else ''}")
        for i in (0, 3):
            r = check_against_sinkcert(sinkcert, os.path.join(tmp, f"model{i}.json"), tmp)
            print(f"ok: sinkcert eval of the witness, model{i}: {r['worst']:.6g}")
        # the starts alone (0 steps) against the search from the same seed
        path = os.path.join(tmp, "model0.json")
        start_only = run_pgd(path, os.path.join(tmp, "w0.json"), steps=0)["worst"]
        searched = run_pgd(path, os.path.join(tmp, "w1.json"))["worst"]
        if not searched > start_only:
            raise SystemExit(f"FAIL: PGD {searched!r} does not improve on its starts {start_only!r}")
        print(f"ok: PGD {searched:.6g} > its starts {start_only:.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
