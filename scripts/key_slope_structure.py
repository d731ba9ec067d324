#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Why the softmax vertex bound does not close at large n: the key slopes of a trigger row.

For a single-layer softmax model (A = W_Q^T W_K, M = W_O W_V) and trigger
query qt = e_1 + q, a key xt = e_{n-1} + x has score qt^T A xt, whose slope in
the key's content is

    b(q) = b0 + A_cc^T q,   b0 = (A^T e_1)_content,   A_cc = A[content, content].

Keys at x = +sign(b(q)) and x = -sign(b(q)) have weights e^(+-||b(q)||_1)
relative to a key at 0, so a worst input splits the keys into two such
groups (with opposite x_d) and its error, at the trigger row, is about
tanh(||b(q)||_1). The vertex bound must certify max over the cube of
||b(q)||_1; its root cell gives ||b0||_1 + sum |A_cc|. This prints both,
the local search's maximum, the singular values of A_cc and what a rank-one
part and its tail contribute, and the error of the two-group input built
from the best query found (NUMERIC(53): numpy in double; the maxima are
SEARCH lower bounds, the root bound an upper one).

Usage: key_slope_structure.py WEIGHTS.json... [--L L] [--seed S]
       [--witness FILE] [--out FILE]
(--witness: the two-group input of the last model, for `sinkcert eval
--input FILE`; --out: the lines printed, with the command and revision, as
in results/benchmarks/key_slope_structure.txt).
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmark_output import git_revision, write_lines  # noqa: E402


def load(path):
    with open(path) as fh:
        doc = json.load(fh)
    if doc.get("kind") != "single-layer" or doc.get("attention") != "softmax":
        raise SystemExit(f"{path}: expected a single-layer softmax model "
                         f"(kind {doc.get('kind')!r}, attention {doc.get('attention')!r})")
    head = doc["weights"][0][0]
    if "A" in head:
        A, M = np.array(head["A"], float), np.array(head["M"], float)
    else:
        WQ, WK, WV, WO = (np.array(head[k], float) for k in ("W_Q", "W_K", "W_V", "W_O"))
        A, M = WQ.T @ WK, WO @ WV
    scale = float((doc.get("task") or {}).get("score_scale", 1))
    return doc, A * scale, M


def tokens(n, q, X):
    """BOS, the keys x in X (ordinary tokens), then the trigger with content q."""
    qt = np.zeros(n)
    qt[1] = 1
    qt[2:n - 1] = q
    return np.array([np.eye(n)[0]] + [np.r_[0, 0, x, 1] for x in X] + [qt])


def error(A, M, T):
    """e(X) = max_{i,d} |f(X)_{i,d} - y_{i,d}| (single layer, trigger last)."""
    j = len(T) - 1
    worst = 0.0
    for i in range(len(T)):
        s = T[:i + 1] @ A.T @ T[i]  # s_ik = x_i^T A x_k, k <= i
        a = np.exp(s - s.max())
        a /= a.sum()
        out = M @ (T[:i + 1].T @ a)
        y = T[1:].mean(0) if i == j else np.zeros(len(T[0]))
        worst = max(worst, np.abs(out - y).max())
    return worst


def report(path, L_arg, seed, starts, witness):
    """The lines for one model; writes its two-group input to `witness`
    (none: not written)."""
    doc, A, M = load(path)
    n = A.shape[0]
    L = L_arg or (doc.get("task") or {}).get("L")
    if not L:
        raise SystemExit(f"{path}: no task.L in the file: give --L")
    C = list(range(2, n - 1))
    Acc = A[np.ix_(C, C)]
    b0 = A[1, C]
    rng = np.random.default_rng(seed)
    root = np.abs(b0).sum() + np.abs(Acc).sum()
    # local search for max_q ||b0 + Acc^T q||_1: alternate the signs s of b
    # and q = sign(Acc s), from random vertices
    best, best_q = 0.0, None
    for _ in range(starts):
        q = np.sign(rng.standard_normal(n - 3))
        for _ in range(100):
            s = np.sign(b0 + Acc.T @ q)
            q2 = np.sign(Acc @ s)
            q2[q2 == 0] = 1
            if (q2 == q).all():
                break
            q = q2
        v = np.abs(b0 + Acc.T @ q).sum()
        if v > best:
            best, best_q = v, q
    U, S, Vt = np.linalg.svd(Acc)
    tail = Acc - S[0] * np.outer(U[:, 0], Vt[0])
    tail_top = np.linalg.svd(tail, compute_uv=False)[0]
    z = np.linspace(-np.abs(U[:, 0]).sum(), np.abs(U[:, 0]).sum(), 2001)
    rank1 = max(np.abs(b0 + S[0] * Vt[0] * t).sum() for t in z)
    # the two-group input at the best query, trigger j = L - 1
    j = L - 1
    worst = (0.0, None, None)
    b = b0 + Acc.T @ best_q
    for d in range(n - 3):
        s = np.sign(b)
        s[d] = 0
        for sg in (1, -1):
            X = np.zeros((j - 1, n - 3))
            half = (j - 1) // 2
            X[:half] = s
            X[:half, d] = sg
            X[half:] = -s
            X[half:, d] = -sg
            T = tokens(n, best_q, X)
            e = error(A, M, T)
            if e > worst[0]:
                worst = (e, d, T)
    if witness:
        with open(witness, "w") as fh:
            json.dump({"format": "sinkcert-input", "version": 1,
                       "tokens": worst[2].tolist()}, fh)
    return [
        f"# {path}: n = {n}, L = {L}; b(q) = b0 + A_cc^T q, the trigger row's key slopes",
        f"||b0||_1                         {np.abs(b0).sum():.4f}",
        f"sum |A_cc|                       {np.abs(Acc).sum():.4f}",
        f"root cell bound on max ||b||_1   {root:.4f}  (upper)",
        f"local search max ||b||_1         {best:.4f}  (SEARCH, {starts} starts)",
        f"A_cc singular values             {' '.join(f'{x:.2e}' for x in S[:4])} ...",
        f"rank-one part alone: max ||b||_1 {rank1:.4f}",
        f"tail (A_cc - rank one): sum |.|  {np.abs(tail).sum():.4f}, per content row "
        f"{np.abs(tail).sum() / (n - 3):.2e}, largest singular value "
        f"{tail_top:.2e}, times sqrt(C |F|) at the root {(n - 3) * tail_top:.4f}",
        f"two-group input at that query, trigger j = {j}: e(X) {worst[0]:.6e} "
        f"(d = {worst[1]}; tanh(max ||b||_1) = {np.tanh(best):.4f})  NUMERIC(53)",
    ]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("weights", nargs="+")
    p.add_argument("--L", type=int, default=None, help="default: each file's task.L")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--starts", type=int, default=200)
    p.add_argument("--witness", default=None,
                   help="write the last model's two-group input there (sinkcert-input JSON)")
    p.add_argument("--out", default=None, help="also write the lines there, with a header")
    args = p.parse_args(argv)
    lines = []
    for k, path in enumerate(args.weights):
        last = k + 1 == len(args.weights)
        lines += report(path, args.L, args.seed, args.starts, args.witness if last else None)
    for line in lines:
        print(line)
    if args.out:
        head = ["# key_slope_structure output: the trigger row's key slopes b(q) = b0 + A_cc^T q "
                "of single-layer softmax models (numpy, double: NUMERIC(53); maxima found are "
                "SEARCH lower bounds, the root cell's an upper bound)",
                "# command: /usr/bin/python3 scripts/key_slope_structure.py " + " ".join(argv),
                f"# revision: {git_revision()}"]
        write_lines(args.out, head + lines)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
