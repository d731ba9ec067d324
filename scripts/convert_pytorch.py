#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Convert a PyTorch state dict in the fused multi-head layout into a
sinkcert weight file (README, "PyTorch models in").

The fused layout stores each layer l of H heads on tokens of dimension d as
four nn.Linear(bias=False) weights (y = W x, as nn.Linear stores them):

    layers.{l}.W_Q.weight, layers.{l}.W_K.weight, layers.{l}.W_V.weight
        shape (H d) x d; head h is rows h d .. h d + d - 1
    layers.{l}.W_O.weight
        shape d x (H d); head h is columns h d .. h d + d - 1

so that, with W_Q^h, W_K^h, W_V^h the head's d x d row blocks and W_O^h its
d x d column block, head h computes

    s_ik = (W_Q^h x_i) . (W_K^h x_k) = x_i^T A^h x_k,   A^h = W_Q^h^T W_K^h
    o_i  = W_O^h sum_k a_ik W_V^h x_k = M^h sum_k a_ik x_k,   M^h = W_O^h W_V^h

(no 1/sqrt(d) scaling, as in the paper's recipe; --score-scale S multiplies
every W_Q^h by S for a model trained with scaled scores). The converter
writes each head in factored form (W_Q, W_K, W_V, W_O), every entry as the
exact decimal expansion of its float64 value (a float32 tensor is widened
exactly), so the file denotes exactly the given doubles and sinkcert forms
A and M itself (exactly for `verify relu`, as an enclosure for --certify).
With --score-scale other than a power of two the scaled W_Q is rounded to
float64 once per entry; the converter says so.

Input: a .npz (numpy.savez) with the keys above, or a .pt/.pth state dict
read through torch (only when torch is installed; .npz needs numpy alone).
Every key must be present with its shape, and no other key may be present
(nothing is silently ignored); layers are numbered 0, 1, ... without gaps.
Errors are one line on stderr naming the file, the key and what was
expected, exit code 2.

Usage:
  /usr/bin/python3 scripts/convert_pytorch.py STATE.npz|STATE.pt OUT.json
      [--attention softmax|relu|...] [--kind single-layer|residual]
      [--heads H] [--score-scale S]
  --kind defaults to single-layer for one layer and residual otherwise;
  --heads defaults to the rows of layers.0.W_Q.weight divided by its columns.
"""
import argparse
import json
import math
import os
import re
import sys
from decimal import Decimal

import numpy as np

ATTENTIONS = ["softmax", "relu", "relu-count-all", "softmax-off-by-one", "sigmoid"]
MATRICES = ["W_Q", "W_K", "W_V", "W_O"]
KEY = re.compile(r"^layers\.(\d+)\.(W_Q|W_K|W_V|W_O)\.weight$")


class ConvertError(Exception):
    """A problem with the input, reported as one line naming file and key."""


def load_state(path):
    """The state dict as {key: float64 numpy array}."""
    if not os.path.isfile(path):
        raise ConvertError(f"{path}: (file): expected a readable regular file")
    if path.endswith(".npz"):
        try:
            with np.load(path, allow_pickle=False) as z:
                return {k: np.asarray(z[k]) for k in z.files}
        except (OSError, ValueError) as e:
            raise ConvertError(f"{path}: (file): expected a numpy .npz archive ({e})")
    if path.endswith((".pt", ".pth")):
        try:
            import torch
        except ImportError:
            raise ConvertError(f"{path}: (file): reading a .pt file needs torch, which is not "
                               "installed; save the state dict with numpy.savez instead")
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except TypeError:  # torch < 1.13 has no weights_only
            state = torch.load(path, map_location="cpu")
        except Exception as e:  # torch raises many kinds
            raise ConvertError(f"{path}: (file): expected a torch state dict ({e})")
        if not isinstance(state, dict):
            raise ConvertError(f"{path}: (file): expected a state dict (a mapping of names to "
                               f"tensors), got {type(state).__name__}")
        out = {}
        for k, v in state.items():
            if not hasattr(v, "detach"):
                raise ConvertError(f"{path}: {k}: expected a tensor, got {type(v).__name__}")
            out[k] = v.detach().cpu().double().numpy()
        return out
    raise ConvertError(f"{path}: (file): expected a .npz, .pt or .pth file")


def exact(x):
    """The exact decimal expansion of a float64 (a dyadic rational)."""
    return str(Decimal(float(x)))


def matrix_text(m):
    return "[" + ", ".join("[" + ", ".join(exact(v) for v in row) + "]" for row in m) + "]"


def convert(state, path, attention, kind, heads, score_scale):
    """The weight file's text from the fused state dict."""
    layers = {}
    for k in state:
        match = KEY.match(k)
        if not match:
            raise ConvertError(f"{path}: {k}: expected only keys layers.{{l}}.W_Q.weight, "
                               "W_K, W_V, W_O (an unknown key would be silently ignored)")
        layers.setdefault(int(match.group(1)), set()).add(match.group(2))
    count = max(layers) + 1 if layers else 1
    first = "layers.0.W_Q.weight"
    if first not in state:
        raise ConvertError(f"{path}: {first}: missing; expected a (H d) x d matrix")
    q0 = state[first]
    if q0.ndim != 2 or q0.shape[1] < 3 or q0.shape[0] < q0.shape[1]:
        raise ConvertError(f"{path}: {first}: expected shape (H d) x d with d >= 3 and H >= 1, "
                           f"got {' x '.join(str(s) for s in q0.shape)}")
    d = q0.shape[1]
    if heads is None:
        if q0.shape[0] % d != 0:
            raise ConvertError(f"{path}: {first}: expected shape (H d) x d = (H * {d}) x {d}, "
                               f"got {q0.shape[0]} x {d}")
        heads = q0.shape[0] // d
    shapes = {"W_Q": (heads * d, d), "W_K": (heads * d, d), "W_V": (heads * d, d),
              "W_O": (d, heads * d)}
    for l in range(count):
        for name in MATRICES:
            key = f"layers.{l}.{name}.weight"
            want = shapes[name]
            if key not in state:
                raise ConvertError(f"{path}: {key}: missing; expected a {want[0]} x {want[1]} "
                                   f"matrix (H = {heads} heads, d = {d})")
            if tuple(state[key].shape) != want:
                raise ConvertError(f"{path}: {key}: expected shape {want[0]} x {want[1]} "
                                   f"(H = {heads} heads, d = {d}), got "
                                   f"{' x '.join(str(s) for s in state[key].shape)}")
            if not np.all(np.isfinite(state[key])):
                raise ConvertError(f"{path}: {key}: expected finite entries, got NaN or infinity")
    if kind is None:
        kind = "single-layer" if count == 1 else "residual"
    if kind == "single-layer" and count != 1:
        raise ConvertError(f"{path}: (layers): --kind single-layer needs exactly one layer, got "
                           f"{count}")
    rows = []
    for l in range(count):
        heads_text = []
        for h in range(heads):
            block = slice(h * d, (h + 1) * d)
            wq = state[f"layers.{l}.W_Q.weight"][block, :].astype(np.float64) * score_scale
            parts = {"W_Q": wq,
                     "W_K": state[f"layers.{l}.W_K.weight"][block, :],
                     "W_V": state[f"layers.{l}.W_V.weight"][block, :],
                     "W_O": state[f"layers.{l}.W_O.weight"][:, block]}
            heads_text.append("      {\n" + ",\n".join(
                f'        "{name}": {matrix_text(parts[name])}' for name in MATRICES) + "\n      }")
        rows.append("    [\n" + ",\n".join(heads_text) + "\n    ]")
    meta = {"source": os.path.basename(path), "converter": "scripts/convert_pytorch.py",
            "layout": "fused (H d) x d W_Q, W_K, W_V and d x (H d) W_O per layer",
            "score_scale": score_scale}
    return ("{\n"
            '  "format": "sinkcert-weights",\n  "version": 1,\n'
            f'  "kind": "{kind}",\n  "attention": "{attention}",\n'
            f'  "n": {d},\n  "layers": {count},\n  "heads": {heads},\n'
            '  "weights": [\n' + ",\n".join(rows) + "\n  ],\n"
            f'  "metadata": {json.dumps(meta)}\n' + "}\n")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("state", help="STATE.npz, or STATE.pt / .pth (needs torch)")
    p.add_argument("out", help="the sinkcert weight file to write")
    p.add_argument("--attention", choices=ATTENTIONS, default="softmax")
    p.add_argument("--kind", choices=["single-layer", "residual"], default=None)
    p.add_argument("--heads", type=int, default=None)
    p.add_argument("--score-scale", type=float, default=1.0,
                   help="multiply W_Q by this (1/sqrt(d) for scaled scores); default 1")
    args = p.parse_args(argv)
    try:
        if args.heads is not None and args.heads < 1:
            raise ConvertError(f"command line: --heads: expected an integer >= 1, got {args.heads}")
        if not math.isfinite(args.score_scale) or args.score_scale == 0:
            raise ConvertError("command line: --score-scale: expected a finite nonzero number, "
                               f"got {args.score_scale}")
        state = load_state(args.state)
        text = convert(state, args.state, args.attention, args.kind, args.heads,
                       args.score_scale)
        tmp = f"{args.out}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, args.out)
    except ConvertError as e:
        print(f"convert_pytorch: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"convert_pytorch: error: {args.out}: cannot write it ({e.strerror})",
              file=sys.stderr)
        return 2
    mantissa, _ = math.frexp(args.score_scale)
    if mantissa != 0.5 and mantissa != -0.5:
        print(f"convert_pytorch: note: --score-scale {args.score_scale!r} is not a power of two: "
              "the scaled W_Q entries are rounded to float64", file=sys.stderr)
    print(f"convert_pytorch: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
