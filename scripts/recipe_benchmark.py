#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Same-script baseline for the recipe benchmark: the paper's training step
written independently in numpy, on the fused layout of the paper's PyTorch
code, timed beside sinkcert's C++ recipe (build/tests/recipe_benchmark).

Model (as the paper's code stores it): per layer, W_Q, W_K, W_V of shape
(H n) x n (head h = rows h n .. h n + n - 1) and W_O of shape n x (H n);
causal softmax attention without scaling, single-layer (f = sum of heads)
for one layer, residual (x + sum of heads) for more. For a batch X (B, L, n):
  Q_h = X W_Q,h^T, K_h = X W_K,h^T, V_h = X W_V,h^T,  S_h = Q_h K_h^T (masked),
  P_h = softmax(S_h),  out = concat_h(P_h V_h) W_O^T.
Loss l = mean((f(X) - Y)^2); the gradient is written out by hand (reverse
mode: dP = dZ V^T, dS = P (dP - rowsum(P dP)), dQ = dS K, dK = dS^T Q, ...)
and Adam (betas 0.9, 0.95, eps 1e-8; lr 1e-3 for one layer, 1e-4 for more)
updates every matrix. Data: the task T(n, L) with the trigger uniform in
1..L-1 and the content uniform in [-1, 1) from numpy's generator (the step's
cost does not depend on the stream).

  /usr/bin/python3 scripts/recipe_benchmark.py [--binary build/tests/recipe_benchmark]
                                               [--seconds 2] [--repeats 3] [--check]

Prints steps/s of the numpy step (median of the runs) for 1 x 1 and 2 x 2 at
n = L = 16, batch 128; with --binary also runs the C++ benchmark and prints
its rates over the numpy ones. --check compares the numpy gradient with
central differences on a tiny 2 x 2 model first (exit 1 if it misses).
"""

import argparse
import re
import subprocess
import sys
import time

import numpy as np

PYTORCH_REFERENCE = 47.0  # steps/s, the paper's code at 2 x 2 on this machine kind (quoted)


def sample_batch(rng, batch, n, L, residual):
    X = np.zeros((batch, L, n))
    X[:, 0, 0] = 1.0
    X[:, 1:, 2:n - 1] = rng.uniform(-1.0, 1.0, size=(batch, L - 1, n - 3))
    j = rng.integers(1, L, size=batch)
    X[:, 1:, n - 1] = 1.0
    rows = np.arange(batch)
    X[rows, j, n - 1] = 0.0
    X[rows, j, 1] = 1.0
    Y = X.copy() if residual else np.zeros_like(X)
    # y_j += (1/j) sum_{k=1..j} x_k
    csum = np.cumsum(X[:, 1:, :], axis=1)
    Y[rows, j, :] += csum[rows, j - 1, :] / j[:, None]
    return X, Y


def init(rng, layers, heads, n, std=0.02):
    return [{name: rng.normal(0.0, std, size=shape)
             for name, shape in (("W_Q", (heads * n, n)), ("W_K", (heads * n, n)),
                                 ("W_V", (heads * n, n)), ("W_O", (n, heads * n)))}
            for _ in range(layers)]


def loss_and_gradient(params, X, Y, heads, residual):
    B, L, n = X.shape
    mask = np.tril(np.ones((L, L), dtype=bool))
    tape = []
    x = X
    for p in params:
        def split(W):
            return (x @ W.T).reshape(B, L, heads, n).transpose(0, 2, 1, 3)
        Q, K, V = split(p["W_Q"]), split(p["W_K"]), split(p["W_V"])
        S = np.where(mask, Q @ K.transpose(0, 1, 3, 2), -np.inf)
        S = S - S.max(axis=-1, keepdims=True)
        P = np.exp(S)
        P /= P.sum(axis=-1, keepdims=True)
        Z = (P @ V).transpose(0, 2, 1, 3).reshape(B, L, heads * n)
        out = Z @ p["W_O"].T
        tape.append((x, Q, K, V, P, Z))
        x = x + out if residual else out
    r = x - Y
    loss = np.mean(r * r)
    dx = 2.0 * r / r.size
    grads = [None] * len(params)
    for l in range(len(params) - 1, -1, -1):
        p = params[l]
        xin, Q, K, V, P, Z = tape[l]
        g = {"W_O": dx.reshape(-1, n).T @ Z.reshape(-1, heads * n)}
        dZ = (dx @ p["W_O"]).reshape(B, L, heads, n).transpose(0, 2, 1, 3)
        dP = dZ @ V.transpose(0, 1, 3, 2)
        dV = P.transpose(0, 1, 3, 2) @ dZ
        dS = P * (dP - np.sum(P * dP, axis=-1, keepdims=True))
        dQ = dS @ K
        dK = dS.transpose(0, 1, 3, 2) @ Q
        dx_in = dx.copy() if residual else np.zeros_like(dx)
        for name, d in (("W_Q", dQ), ("W_K", dK), ("W_V", dV)):
            d = d.transpose(0, 2, 1, 3).reshape(B, L, heads * n)
            g[name] = d.reshape(-1, heads * n).T @ xin.reshape(-1, n)
            if l > 0:
                dx_in += d @ p[name]
        grads[l] = g
        dx = dx_in
    return loss, np.abs(r).max(), grads


class Adam:
    def __init__(self, params, lr, betas=(0.9, 0.95), eps=1e-8):
        self.lr, self.b1, self.b2, self.eps, self.t = lr, betas[0], betas[1], eps, 0
        self.m = [{k: np.zeros_like(v) for k, v in p.items()} for p in params]
        self.v = [{k: np.zeros_like(v) for k, v in p.items()} for p in params]

    def step(self, params, grads):
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        for p, g, m, v in zip(params, grads, self.m, self.v):
            for k in p:
                m[k] = self.b1 * m[k] + (1 - self.b1) * g[k]
                v[k] = self.b2 * v[k] + (1 - self.b2) * g[k] * g[k]
                p[k] -= self.lr * (m[k] / c1) / (np.sqrt(v[k] / c2) + self.eps)


def rate(layers, heads, n, L, batch, seconds, seed=0):
    rng = np.random.default_rng(seed)
    residual = layers > 1
    params = init(rng, layers, heads, n)
    adam = Adam(params, 1e-3 if layers == 1 else 1e-4)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        X, Y = sample_batch(rng, batch, n, L, residual)
        _, _, grads = loss_and_gradient(params, X, Y, heads, residual)
        adam.step(params, grads)
        steps += 1
    return steps / (time.perf_counter() - t0)


def check_gradient():
    """Central differences on 2 x 2, n = 5, L = 4 (std 0.5): step 1e-5 has
    truncation ~1e-10 and rounding ~1e-11 on an O(0.1) loss; 1e-7
    relative-or-absolute separates that from any wrong term."""
    rng = np.random.default_rng(1)
    params = init(rng, 2, 2, 5, std=0.5)
    X, Y = sample_batch(rng, 4, 5, 4, True)
    _, _, grads = loss_and_gradient(params, X, Y, 2, True)
    worst = 0.0
    for l, p in enumerate(params):
        for k, W in p.items():
            for idx in np.ndindex(W.shape):
                keep = W[idx]
                W[idx] = keep + 1e-5
                up = loss_and_gradient(params, X, Y, 2, True)[0]
                W[idx] = keep - 1e-5
                down = loss_and_gradient(params, X, Y, 2, True)[0]
                W[idx] = keep
                fd, an = (up - down) / 2e-5, grads[l][k][idx]
                worst = max(worst, abs(fd - an) / max(1.0, abs(an)))
    print(f"numpy gradient vs central differences (2 x 2, n = 5, L = 4): max miss {worst:.1e}")
    return worst < 1e-7


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", help="build/tests/recipe_benchmark to run beside")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.check and not check_gradient():
        return 1
    print(f"load average before: {load_average()}")
    numpy_rates = {}
    for layers, heads in ((1, 1), (2, 2)):
        runs = sorted(rate(layers, heads, 16, 16, 128, a.seconds) for _ in range(a.repeats))
        numpy_rates[(layers, heads)] = runs[len(runs) // 2]
        print(f"numpy fused step {layers} x {heads}: {runs[len(runs) // 2]:8.1f} steps/s "
              f"[{runs[0]:.1f}, {runs[-1]:.1f}], {a.repeats} runs of {a.seconds:g} s")
    print(f"(PyTorch reference, quoted: {PYTORCH_REFERENCE:g} steps/s at 2 x 2)")
    if a.binary:
        out = subprocess.run([a.binary, "--seconds", str(a.seconds), "--repeats", str(a.repeats)],
                             check=True, capture_output=True, text=True).stdout
        print(out, end="")
        shape = None
        for line in out.splitlines():
            m = re.match(r"(\d) x (\d) ", line)
            if m:
                shape = (int(m.group(1)), int(m.group(2)))
            # "generic" or "batched KERNEL" (baseline, avx2+fma)
            m = re.match(r"\s+(generic|batched\s+\S+)\s+(\d) threads?\s*:\s+([0-9.]+)", line)
            if m and shape:
                r = float(m.group(3))
                note = f", {r / PYTORCH_REFERENCE:.1f}x PyTorch" if shape == (2, 2) else ""
                label = " ".join(m.group(1).split())
                print(f"C++ {label} {m.group(2)} thread(s) {shape[0]} x {shape[1]}: "
                      f"{r / numpy_rates[shape]:.1f}x numpy{note}")
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
