#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A plain PGD baseline for the worst-case error of a single-layer or a
residual (multi-layer) model, in numpy float64 with hand-written gradients,
independently of sinkcert's C++ and of torch: it reads the weight file's
JSON itself and evaluates the model with its own forward and backward pass.

Model (a sinkcert weight file, kind single-layer or residual, heads given as
W_Q, W_K, W_V, W_O or as the products A, M; attention softmax or relu): per
layer l and head h, with X^(l) the stream (L x n, rows x_i),
  s_ik = x_i^T A x_k  (k <= i),       A = s W_Q^T W_K,  M = W_O W_V,
  softmax: a_ik = exp(s_ik) / sum_{m<=i} exp(s_im),
  relu:    a_ik = max(s_ik, 0) / max(i, 1),
  O^h_i = sum_{k<=i} a_ik M x_k,
  residual:     X^(l+1) = X^(l) + sum_h O^h,  f(X) = X^(layers);
  single layer: f(X) = sum_h O^h.
Target: single layer y_i = 0 (i != j), y_j = (1/j) sum_{k=1..j} x_k;
residual y_i = x_i (i != j), y_j = x_j + (1/j) sum_{k=1..j} x_k. Error
e(X) = max_{i,d} |f(X)_{i,d} - y_{i,d}|; worst case E = max over the trigger
positions j of the convention and the content box [-1, 1].

Gradients (reverse mode, G = de/dX^(l+1) for the stream after layer l):
  dV = P^T G,  dP = G V^T  (V = X M^T, P the attention matrix),
  softmax: dS = P * (dP - rowsum(P * dP));  relu: dS = [S > 0] dP / max(i, 1),
  dX^(l) = [residual] G + sum_h (dV M + dS X A^T + dS^T X A),
and de/dX = sign(r_{i*d*}) (df_{i*d*}/dX - dy_{i*d*}/dX) at the worst entry
(i*, d*) (the gradient of the currently worst term). tests/scripts checks it
against central differences.

Search, per trigger position j: K random starts C (content of positions
1..L-1, uniform in [-1, 1]), S steps of projected sign-gradient ascent on e:
  C <- clamp(C + eta_s sign(de/dC), -1, 1),  eta_s = 0.1 (1 - s/S) + 0.002,
keeping every start's best iterate. The result is a SEARCH lower bound on E
in float64 (NUMERIC(53)); nothing here bounds E from above.

  /usr/bin/python3 scripts/deep_pgd_attack.py W.json [--L 16]
      [--trigger-range paper|reference-code] [--starts 64] [--steps 200]
      [--seed 0] [--witness X.json]

Prints one JSON object: the worst value, where (trigger, row, coordinate),
the best value per trigger, the seconds, and the witness as a sinkcert input
(--witness also writes it, so `sinkcert eval --input` re-checks it). L and
the convention default to the file's task metadata.
"""
import argparse
import json
import sys
import time
from fractions import Fraction

import numpy as np


def fail(path, what):
    raise SystemExit(f"deep_pgd_attack: error: {path}: {what}")


def matrix(path, head, key, n):
    m = np.array(head[key], dtype=np.float64)
    if m.shape != (n, n):
        fail(path, f"{key}: expected an {n} x {n} matrix, got shape {m.shape}")
    return m


def load_model(path):
    """(file dict, layers: list of lists of (A, M))."""
    with open(path) as f:
        d = json.load(f)
    if d.get("format") != "sinkcert-weights":
        fail(path, "not a sinkcert weight file")
    if d.get("kind") not in ("single-layer", "residual"):
        fail(path, f"kind {d.get('kind')!r}: expected single-layer or residual")
    if d.get("attention") not in ("softmax", "relu"):
        fail(path, f"attention {d.get('attention')!r}: expected softmax or relu")
    n = d["n"]
    # the score scale multiplies A (a decimal literal, read exactly then rounded)
    scale = float(Fraction(str(d.get("score_scale", 1))))
    layers = []
    for layer in d["weights"]:
        heads = []
        for h in layer:
            if "A" in h:
                A, M = matrix(path, h, "A", n), matrix(path, h, "M", n)
            else:
                W = {k: matrix(path, h, k, n) for k in ("W_Q", "W_K", "W_V", "W_O")}
                # A = W_Q^T W_K, M = W_O W_V
                A, M = W["W_Q"].T @ W["W_K"], W["W_O"] @ W["W_V"]
            heads.append((scale * A, M))
        layers.append(heads)
    return d, layers


def attention(S, kind, mask, div):
    """P from the scores S (B, L, L)."""
    if kind == "softmax":
        Z = np.where(mask, S, -np.inf)
        Z = Z - Z.max(axis=-1, keepdims=True)
        E = np.exp(Z)
        return E / E.sum(axis=-1, keepdims=True)
    # a_ik = max(s_ik, 0) / max(i, 1)
    return np.where(mask, np.maximum(S, 0.0), 0.0) / div


def forward(layers, kind, residual, X):
    """f(X) and what the backward pass needs."""
    L = X.shape[1]
    mask = np.tril(np.ones((L, L), dtype=bool))
    div = np.maximum(np.arange(L), 1).astype(np.float64)[:, None]
    tape, x = [], X
    for heads in layers:
        out = x.copy() if residual else np.zeros_like(x)
        saved = []
        for A, M in heads:
            # S = X A X^T, V = X M^T, O = P V
            S = (x @ A) @ np.swapaxes(x, 1, 2)
            P = attention(S, kind, mask, div)
            V = x @ M.T
            out = out + P @ V
            saved.append((S, P, V))
        tape.append((x, saved))
        x = out
    return x, (tape, mask, div)


def backward(layers, kind, residual, saved, G):
    """de/dX from G = de/df."""
    tape, mask, div = saved
    for heads, (x, per_head) in zip(reversed(layers), reversed(tape)):
        dx = G.copy() if residual else np.zeros_like(G)
        for (A, M), (S, P, V) in zip(heads, per_head):
            # dV = P^T G, dP = G V^T
            dV = np.swapaxes(P, 1, 2) @ G
            dP = G @ np.swapaxes(V, 1, 2)
            if kind == "softmax":
                # dS = P * (dP - rowsum(P * dP))
                dS = P * (dP - (P * dP).sum(axis=-1, keepdims=True))
            else:
                # dS = [S > 0] dP / max(i, 1)
                dS = np.where(mask & (S > 0), dP, 0.0) / div
            # dX += dV M + dS X A^T + dS^T X A
            dx = dx + dV @ M + dS @ x @ A.T + np.swapaxes(dS, 1, 2) @ x @ A
        G = dx
    return G


def build_inputs(C, j, n):
    """X (B, L, n) from content C (B, L-1, n-3) with the trigger at j."""
    B, Lm1, _ = C.shape
    # BOS: e_0; ordinary token k >= 1: (0, 0, c_k, 1); the trigger j: (0, 1, c_j, 0)
    X = np.zeros((B, Lm1 + 1, n))
    X[:, 0, 0] = 1.0
    X[:, 1:, 2:n - 1] = C
    X[:, 1:, n - 1] = 1.0
    X[:, j, n - 1] = 0.0
    X[:, j, 1] = 1.0
    return X


def target(X, j, residual):
    Y = X.copy() if residual else np.zeros_like(X)
    # y_j (+)= (1/j) sum_{k=1..j} x_k
    Y[:, j, :] += X[:, 1:j + 1, :].sum(axis=1) / j
    return Y


def error_and_gradient(layers, kind, residual, C, j, n):
    """e(X) per start, and de/dC at the worst entry of each."""
    X = build_inputs(C, j, n)
    f, saved = forward(layers, kind, residual, X)
    r = f - target(X, j, residual)
    B, L, _ = r.shape
    flat = np.abs(r).reshape(B, -1).argmax(axis=1)
    rows, cols = flat // n, flat % n
    e = np.abs(r).reshape(B, -1)[np.arange(B), flat]
    sign = np.sign(r[np.arange(B), rows, cols])
    G = np.zeros_like(r)
    G[np.arange(B), rows, cols] = sign
    dX = backward(layers, kind, residual, saved, G)
    # minus dy_{i*d*}/dX: residual y_i = x_i, and row j's mean (both targets)
    for b in range(B):
        if residual:
            dX[b, rows[b], cols[b]] -= sign[b]
        if rows[b] == j:
            dX[b, 1:j + 1, cols[b]] -= sign[b] / j
    return e, dX[:, 1:, 2:n - 1], X


def pgd_trigger(layers, kind, residual, n, L, j, starts, steps, rng):
    C = rng.uniform(-1.0, 1.0, size=(starts, L - 1, n - 3))
    best_val = np.full(starts, -1.0)
    best_C = C.copy()
    for s in range(steps + 1):
        e, g, _ = error_and_gradient(layers, kind, residual, C, j, n)
        better = e > best_val
        best_val = np.where(better, e, best_val)
        best_C[better] = C[better]
        if s == steps:
            break
        # eta_s = 0.1 (1 - s/S) + 0.002
        eta = 0.1 * (1 - s / steps) + 0.002
        # C <- clamp(C + eta sign(de/dC), -1, 1)
        C = np.clip(C + eta * np.sign(g), -1.0, 1.0)
    k = int(np.argmax(best_val))
    return float(best_val[k]), best_C[k:k + 1]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("weights")
    p.add_argument("--L", type=int, default=None)
    p.add_argument("--trigger-range", choices=["paper", "reference-code"], default=None)
    p.add_argument("--starts", type=int, default=64)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--witness", default=None, help="write the witness as a sinkcert input")
    args = p.parse_args(argv)
    d, layers = load_model(args.weights)
    kind, residual = d["attention"], d["kind"] == "residual"
    task = d.get("task", {})
    L = args.L or task.get("L")
    convention = args.trigger_range or task.get("trigger_range") or "paper"
    if L is None or L < 2:
        raise SystemExit("deep_pgd_attack: error: --L: expected an integer >= 2 (the file has none)")
    n = d["n"]
    triggers = list(range(1 if convention == "paper" else 2, L))
    rng = np.random.default_rng(args.seed)
    start = time.time()
    per_trigger, best = {}, None
    for j in triggers:
        val, C = pgd_trigger(layers, kind, residual, n, L, j, args.starts, args.steps, rng)
        per_trigger[j] = val
        if best is None or val > best[0]:
            best = (val, j, C)
    val, j, C = best
    X = build_inputs(C, j, n)
    f, _ = forward(layers, kind, residual, X)
    r = np.abs(f - target(X, j, residual))[0]
    flat = int(r.argmax())
    witness = {"format": "sinkcert-input", "version": 1, "tokens": X[0].tolist()}
    if args.witness:
        with open(args.witness, "w") as out:
            json.dump(witness, out)
    print(json.dumps({
        "weights": args.weights, "L": L, "trigger_range": convention,
        "starts": args.starts, "steps": args.steps, "seed": args.seed,
        "worst": float(r.max()), "evidence": "SEARCH(lower bound), NUMERIC(53)",
        "trigger": j, "row": flat // n, "coordinate": flat % n,
        "per_trigger": {str(k): v for k, v in per_trigger.items()},
        "seconds": round(time.time() - start, 3), "numpy": np.__version__,
        "witness": witness}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
