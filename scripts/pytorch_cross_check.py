#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Acceptance check of `sinkcert eval` against real PyTorch (float64).

Builds single-layer causal attention heads from torch.nn.Linear layers
(no bias, no 1/sqrt(d) scaling, docs/definitions.md, Definitions 2), exports their weights
exactly as nn.Linear stores them (y = x @ W.T) into a sinkcert weight file,
runs `sinkcert eval --json` on a sampled task input and compares outputs and
attention with PyTorch's:

  Q = X W_Q^T, K = X W_K^T, S = Q K^T (causal), a = softmax / relu rows,
  out = (a (X W_V^T)) W_O^T

Needs Debian's python3-torch (not installed by scripts/build.sh: it is large
and only this manual check uses it):
  apt-get install python3-torch
  /usr/bin/python3 scripts/pytorch_cross_check.py build/sinkcert
Exit 0 when every case agrees to 1e-12 (absolute, on O(1) values).
"""
import json
import subprocess
import sys
import tempfile

import torch

# Tolerance: both sides compute the same O(L n^2) double-precision sums in a
# different order; 1e-12 on O(1) values leaves ~3 orders of margin.
TOLERANCE = 1e-12


class Head(torch.nn.Module):
    def __init__(self, n, attention):
        super().__init__()
        self.q = torch.nn.Linear(n, n, bias=False, dtype=torch.float64)
        self.k = torch.nn.Linear(n, n, bias=False, dtype=torch.float64)
        self.v = torch.nn.Linear(n, n, bias=False, dtype=torch.float64)
        self.o = torch.nn.Linear(n, n, bias=False, dtype=torch.float64)
        self.attention = attention

    def forward(self, x):
        L = x.shape[0]
        s = self.q(x) @ self.k(x).T
        causal = torch.tril(torch.ones(L, L, dtype=torch.bool))
        if self.attention == "softmax":
            a = torch.softmax(s.masked_fill(~causal, float("-inf")), dim=-1)
        else:  # relu: max(s, 0) / max(i, 1)
            denom = torch.clamp(torch.arange(L, dtype=torch.float64), min=1).unsqueeze(1)
            a = torch.relu(s).masked_fill(~causal, 0.0) / denom
        return self.o(a @ self.v(x)), a


def task_input(n, L, trigger, gen):
    x = torch.zeros(L, n, dtype=torch.float64)
    x[0, 0] = 1
    for i in range(1, L):
        x[i, 1 if i == trigger else n - 1] = 1
        x[i, 2:n - 1] = torch.rand(n - 3, generator=gen, dtype=torch.float64) * 2 - 1
    return x


def main():
    sinkcert = sys.argv[1] if len(sys.argv) > 1 else "build/sinkcert"
    torch.manual_seed(20260311)
    gen = torch.Generator().manual_seed(7)
    worst = 0.0
    for attention, n, L, std in [("softmax", 16, 16, 0.5), ("softmax", 8, 12, 2.0), ("relu", 16, 16, 0.5)]:
        head = Head(n, attention)
        for lin in (head.q, head.k, head.v, head.o):
            torch.nn.init.normal_(lin.weight, std=std)
        x = task_input(n, L, trigger=7, gen=gen)
        with torch.no_grad():
            out, attn = head(x)
        weights = {k: m.weight.detach().tolist() for k, m in
                   [("W_Q", head.q), ("W_K", head.k), ("W_V", head.v), ("W_O", head.o)]}
        with tempfile.TemporaryDirectory() as tmp:
            wpath, xpath = f"{tmp}/W.json", f"{tmp}/X.json"
            json.dump({"format": "sinkcert-weights", "version": 1, "kind": "single-layer",
                       "attention": attention, "n": n, "layers": 1, "heads": 1,
                       "weights": [[weights]]}, open(wpath, "w"))
            json.dump({"format": "sinkcert-input", "tokens": x.tolist()}, open(xpath, "w"))
            result = json.loads(subprocess.run(
                [sinkcert, "eval", "--weights", wpath, "--input", xpath, "--json"],
                check=True, capture_output=True, text=True).stdout)
        d_out = (torch.tensor(result["output"], dtype=torch.float64) - out).abs().max().item()
        d_attn = (torch.tensor(result["attention"][0][0], dtype=torch.float64) - attn).abs().max().item()
        worst = max(worst, d_out, d_attn)
        print(f"{attention:8s} n={n:2d} L={L:2d} std={std}: max |out diff| = {d_out:.3e}, "
              f"max |attention diff| = {d_attn:.3e}  [NUMERIC(53) vs torch {torch.__version__} float64]")
    verdict = "AGREE" if worst <= TOLERANCE else "DISAGREE"
    print(f"{verdict}: worst difference {worst:.3e} (tolerance {TOLERANCE:g})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
