#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A plain PGD baseline for the worst-case error of a single-layer model,
written in torch float64 independently of sinkcert's C++ (it reads the
weight file's JSON itself and evaluates the model with its own forward).

Model (a sinkcert weight file, kind single-layer, H heads, attention
softmax or relu): for the input X (L x n),
  s^h_ik = (W_Q^h x_i) . (W_K^h x_k)  (k <= i),
  softmax: a^h_ik = exp(s^h_ik) / sum_{m<=i} exp(s^h_im),
  relu:    a^h_ik = max(s^h_ik, 0) / max(i, 1),
  f(X)_i = sum_h W_O^h sum_{k<=i} a^h_ik W_V^h x_k.
Target: y_i = 0 (i != j), y_j = (1/j) sum_{k=1..j} x_k. Error
e(X) = max_{i,d} |f(X)_{i,d} - y_{i,d}|; worst case E = max over the
trigger positions j of the convention and the content box [-1, 1].

Search, per trigger position j: K random starts C (content of positions
1..L-1, uniform in [-1, 1]), S steps of projected sign-gradient ascent on
e (whose gradient is that of the currently worst term |f_{i,d} - y_{i,d}|):
  C <- clamp(C + eta_s sign(de/dC), -1, 1),  eta_s = 0.1 (1 - s/S) + 0.002,
keeping every start's best iterate (e evaluated at each iterate, the start
included). The result is a SEARCH lower bound on E, in float64
(NUMERIC(53)); nothing here bounds E from above.

  /usr/bin/python3 scripts/pgd_attack.py W.json [--L 16] [--trigger-range paper|reference-code]
      [--starts 64] [--steps 200] [--seed 0] [--witness X.json]

Prints one JSON object: the worst value, where (trigger, row, coordinate),
the best value per trigger, the seconds, and the witness as a sinkcert
input ({"format": "sinkcert-input", ...}; --witness also writes it, so
`sinkcert eval --input` re-checks it). L and the convention default to the
file's task metadata.
"""
import argparse
import json
import sys
import time

import torch


def load_model(path):
    with open(path) as f:
        d = json.load(f)
    if d.get("format") != "sinkcert-weights":
        raise SystemExit(f"pgd_attack: error: {path}: not a sinkcert weight file")
    if d.get("kind") != "single-layer" or d.get("layers", 1) != 1:
        raise SystemExit(f"pgd_attack: error: {path}: expected a single-layer model")
    if d.get("attention") not in ("softmax", "relu"):
        raise SystemExit(f"pgd_attack: error: {path}: attention {d.get('attention')!r}: "
                         "expected softmax or relu")
    heads = [{k: torch.tensor(h[k], dtype=torch.float64) for k in ("W_Q", "W_K", "W_V", "W_O")}
             for h in d["weights"][0]]
    return d, heads


def forward(heads, attention, X):
    """f(X) for a batch X (B, L, n)."""
    B, L, n = X.shape
    mask = torch.tril(torch.ones(L, L, dtype=torch.bool))
    out = torch.zeros_like(X)
    for h in heads:
        q, k, v = X @ h["W_Q"].T, X @ h["W_K"].T, X @ h["W_V"].T
        # s_ik = q_i . k_k
        s = q @ k.transpose(-1, -2)
        if attention == "softmax":
            a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
        else:
            # a_ik = max(s_ik, 0) / max(i, 1)
            div = torch.clamp(torch.arange(L, dtype=X.dtype), min=1).unsqueeze(-1)
            a = torch.relu(s).masked_fill(~mask, 0.0) / div
        out = out + (a @ v) @ h["W_O"].T
    return out


def build_inputs(C, j, n):
    """X (B, L, n) from content C (B, L-1, n-3) with the trigger at j."""
    B, Lm1, _ = C.shape
    # BOS: e_0; ordinary token k >= 1: (0, 0, c_k, 1); the trigger j: (0, 1, c_j, 0)
    bos = torch.zeros(B, 1, n, dtype=C.dtype)
    bos[:, 0, 0] = 1.0
    rest = torch.cat([torch.zeros(B, Lm1, 2, dtype=C.dtype), C,
                      torch.ones(B, Lm1, 1, dtype=C.dtype)], dim=-1)
    X = torch.cat([bos, rest], dim=1)
    X[:, j, n - 1] = 0.0
    X[:, j, 1] = 1.0
    return X


def target(X, j):
    Y = torch.zeros_like(X)
    # y_j = (1/j) sum_{k=1..j} x_k
    Y[:, j, :] = X[:, 1:j + 1, :].sum(dim=1) / j
    return Y


def errors(heads, attention, C, j, n):
    """e(X) per batch entry and the residual."""
    X = build_inputs(C, j, n)
    r = forward(heads, attention, X) - target(X, j)
    return r.abs().flatten(1).max(dim=1).values, r, X


def pgd_trigger(heads, attention, n, L, j, starts, steps, gen):
    C = torch.rand(starts, L - 1, n - 3, generator=gen, dtype=torch.float64) * 2 - 1
    best_val = torch.full((starts,), -1.0, dtype=torch.float64)
    best_C = C.clone()
    for s in range(steps + 1):
        C.requires_grad_(True)
        e, _, _ = errors(heads, attention, C, j, n)
        with torch.no_grad():
            better = e > best_val
            best_val = torch.where(better, e, best_val)
            best_C[better] = C[better]
        if s == steps:
            break
        (g,) = torch.autograd.grad(e.sum(), C)
        with torch.no_grad():
            # eta_s = 0.1 (1 - s/S) + 0.002
            eta = 0.1 * (1 - s / steps) + 0.002
            # C <- clamp(C + eta sign(de/dC), -1, 1)
            C = torch.clamp(C + eta * torch.sign(g), -1.0, 1.0)
    k = int(torch.argmax(best_val))
    return float(best_val[k]), best_C[k:k + 1].detach()


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
    torch.set_num_threads(1)
    d, heads = load_model(args.weights)
    task = d.get("task", {})
    L = args.L or task.get("L")
    convention = args.trigger_range or task.get("trigger_range") or "paper"
    if L is None or L < 2:
        raise SystemExit("pgd_attack: error: --L: expected an integer >= 2 (the file has none)")
    n = d["n"]
    triggers = list(range(1 if convention == "paper" else 2, L))
    gen = torch.Generator().manual_seed(args.seed)
    start = time.time()
    per_trigger, best = {}, None
    for j in triggers:
        val, C = pgd_trigger(heads, d["attention"], n, L, j, args.starts, args.steps, gen)
        per_trigger[j] = val
        if best is None or val > best[0]:
            best = (val, j, C)
    val, j, C = best
    with torch.no_grad():
        e, r, X = errors(heads, d["attention"], C, j, n)
    flat = int(torch.argmax(r.abs()[0]))
    witness = {"format": "sinkcert-input", "version": 1, "tokens": X[0].tolist()}
    if args.witness:
        with open(args.witness, "w") as f:
            json.dump(witness, f)
    print(json.dumps({
        "weights": args.weights, "L": L, "trigger_range": convention,
        "starts": args.starts, "steps": args.steps, "seed": args.seed,
        "worst": float(e[0]), "evidence": "SEARCH(lower bound), NUMERIC(53)",
        "trigger": j, "row": flat // n, "coordinate": flat % n,
        "per_trigger": {str(k): v for k, v in per_trigger.items()},
        "seconds": round(time.time() - start, 3), "torch": torch.__version__,
        "witness": witness}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
