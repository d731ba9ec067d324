#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Independent reference for sinkcert's forward pass, written the PyTorch way.

Generates a few random models in the PyTorch nn.Linear convention (a weight W
of shape out x in, applied as x @ W.T), valid task inputs, and the outputs and
attention matrices computed the way a PyTorch implementation would:

    Q = X W_Q^T,  K = X W_K^T,  V = X W_V^T,  S = Q K^T   (no 1/sqrt(d) scaling)
    softmax:            a = exp(S - rowmax) / rowsum     (causal mask k <= i)
    softmax-off-by-one: a = exp(S - m) / (exp(-m) + rowsum),  m = max(0, rowmax)
    relu:               a = max(S, 0) / max(i, 1)
    relu-count-all:     a = max(S, 0) / (i + 1)
    sigmoid:            a = sigma(S) / max(i, 1)
    softpick:           a = max(expm1(S), 0) / rowsum |expm1(S)|   (0 where the sum is 0)
    gated:              softmax weights
    head output = (a V) W_O^T, gated: times sigma(x W_g^T) elementwise;
    single-layer: f = sum over heads; residual: x <- x + sum over heads, per layer.

It never forms A = W_Q^T W_K or M = W_O W_V (sinkcert does), so agreement is
an independent check of the conventions. Writes, into --out (default
tests/data/numpy next to this script's repository):
    <case>.weights.json    sinkcert-weights, factored W_Q, W_K, W_V, W_O (and gate)
    <case>.input.json      sinkcert-input
    <case>.reference.json  output (L x n) and attention[layer][head] (L x L)
    index.json             the list of cases
Python's json writes floats with repr, which reads back bit-identically.
Run with Debian's /usr/bin/python3 (python3-numpy). Deterministic: one
numpy.random.default_rng(seed) per case.
"""
import argparse
import json
import os
import sys

import numpy as np

# name, attention, kind, n, L, layers, heads, d_k, d_v, weight std, seed
CASES = [
    ("softmax_single", "softmax", "single-layer", 6, 8, 1, 1, 6, 6, 0.5, 101),
    ("relu_single", "relu", "single-layer", 5, 7, 1, 1, 3, 4, 0.7, 202),
    ("residual_softmax_2x2", "softmax", "residual", 6, 8, 2, 2, 6, 6, 0.4, 303),
    ("softmax_off_by_one_single", "softmax-off-by-one", "single-layer", 5, 6, 1, 2, 5, 5, 0.6, 404),
    ("sigmoid_single", "sigmoid", "single-layer", 5, 6, 1, 1, 5, 5, 0.8, 505),
    ("softpick_single", "softpick", "single-layer", 5, 7, 1, 2, 5, 5, 0.8, 606),
    ("gated_residual_2x2", "gated", "residual", 5, 6, 2, 2, 4, 5, 0.6, 707),
    ("relu_count_all_single", "relu-count-all", "single-layer", 5, 6, 1, 1, 5, 5, 0.7, 808),
]


def make_input(rng, n, L):
    """A valid task input: BOS e_0, one trigger at j in 1..L-1, content U(-1, 1)."""
    j = int(rng.integers(1, L))
    X = np.zeros((L, n))
    X[0, 0] = 1.0
    for i in range(1, L):
        X[i, 1 if i == j else n - 1] = 1.0
        X[i, 2:n - 1] = rng.uniform(-1.0, 1.0, size=n - 3)
    return X, j


def attention(S, kind):
    L = S.shape[0]
    mask = np.tril(np.ones((L, L), dtype=bool))
    count = np.maximum(np.arange(L), 1).astype(float)[:, None]
    if kind in ("softmax", "softmax-off-by-one", "gated"):
        masked = np.where(mask, S, -np.inf)
        m = masked.max(axis=1, keepdims=True)
        if kind == "softmax-off-by-one":
            m = np.maximum(m, 0.0)
        E = np.where(mask, np.exp(masked - m), 0.0)
        Z = E.sum(axis=1, keepdims=True)
        if kind == "softmax-off-by-one":
            Z = Z + np.exp(-m)
        return E / Z
    if kind == "relu":
        return np.where(mask, np.maximum(S, 0.0), 0.0) / count
    if kind == "relu-count-all":
        return np.where(mask, np.maximum(S, 0.0), 0.0) / np.arange(1, L + 1).astype(float)[:, None]
    if kind == "sigmoid":
        return np.where(mask, 1.0 / (1.0 + np.exp(-S)), 0.0) / count
    if kind == "softpick":
        U = np.where(mask, np.expm1(S), 0.0)
        Z = np.abs(U).sum(axis=1, keepdims=True)
        return np.maximum(U, 0.0) / np.where(Z > 0, Z, 1.0)
    raise ValueError(kind)


def forward(X, layers, kind, model_kind):
    x = X
    attns = []
    for heads in layers:
        delta = np.zeros_like(x)
        attns.append([])
        for h in heads:
            Q = x @ h["W_Q"].T
            K = x @ h["W_K"].T
            V = x @ h["W_V"].T
            a = attention(Q @ K.T, kind)
            attns[-1].append(a)
            o = (a @ V) @ h["W_O"].T
            if kind == "gated":
                o = o / (1.0 + np.exp(-(x @ h["gate"].T)))
            delta = delta + o
        x = x + delta if model_kind == "residual" else delta
    return x, attns


def dumps(value, indent=0):
    """JSON text with every list of numbers (a matrix row) on one line."""
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = ["%s%s: %s" % (pad, json.dumps(k), dumps(v, indent + 2)) for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, list) and value and all(isinstance(v, (list, dict)) for v in value):
        items = [pad + dumps(v, indent + 2) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    return json.dumps(value)  # floats as repr: they read back bit-identically


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(dumps(doc) + "\n")
    os.replace(tmp, path)


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(repo, "tests", "data", "numpy"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    index = {"format": "sinkcert-numpy-reference-index", "cases": []}
    for name, kind, model_kind, n, L, nl, nh, dk, dv, std, seed in CASES:
        rng = np.random.default_rng(seed)
        layers = []
        for _ in range(nl):
            layers.append([{"W_Q": rng.normal(0.0, std, (dk, n)),
                            "W_K": rng.normal(0.0, std, (dk, n)),
                            "W_V": rng.normal(0.0, std, (dv, n)),
                            "W_O": rng.normal(0.0, std, (n, dv))} for _ in range(nh)])
            if kind == "gated":
                for h in layers[-1]:
                    h["gate"] = rng.normal(0.0, std, (n, n))
        keys = ("W_Q", "W_K", "W_V", "W_O") + (("gate",) if kind == "gated" else ())
        X, j = make_input(rng, n, L)
        out, attns = forward(X, layers, kind, model_kind)
        meta = {"generator": "scripts/numpy_reference.py", "case": name, "seed": seed,
                "numpy": np.__version__,
                "convention": "PyTorch nn.Linear: y = x @ W.T (rows of W = outputs)"}
        write_json(os.path.join(args.out, name + ".weights.json"), {
            "format": "sinkcert-weights", "version": 1, "kind": model_kind, "attention": kind,
            "n": n, "layers": nl, "heads": nh,
            "weights": [[{k: h[k].tolist() for k in keys} for h in hs]
                        for hs in layers],
            "metadata": meta})
        write_json(os.path.join(args.out, name + ".input.json"),
                   {"format": "sinkcert-input", "version": 1, "tokens": X.tolist()})
        write_json(os.path.join(args.out, name + ".reference.json"), {
            "format": "sinkcert-numpy-reference", "metadata": meta, "trigger": j,
            "output": out.tolist(),
            "attention": [[a.tolist() for a in hs] for hs in attns]})
        index["cases"].append({"name": name, "weights": name + ".weights.json",
                               "input": name + ".input.json",
                               "reference": name + ".reference.json"})
    write_json(os.path.join(args.out, "index.json"), index)
    print("wrote %d cases to %s" % (len(CASES), args.out), file=sys.stderr)


if __name__ == "__main__":
    main()
