#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Convert a saved PyTorch state dict on the command line, then load it.

What it shows: a state dict in the common q_proj / k_proj / v_proj / o_proj
layout (here two layers of a residual model, prefix model.layers.{l}.attn)
saved with torch.save is converted by scripts/convert_pytorch.py. A state
dict does not say how many heads its rows hold, nor whether scores were
scaled, so --heads and --score-scale are given; --L becomes the file's
default task. Nor can a state dict be run: the file's metadata says that
no self-test compared the conversion with a module. The file is read back
with Model.from_file and its forward pass matches PyTorch's float64 one on
a task input (NUMERIC(53)). A layer norm in the same weights (saved as a
.npz, which needs numpy alone) is refused, named. Runs in a few seconds.

Run: PYTHONPATH=build/python /usr/bin/python3 examples/convert_state_dict.py
"""
import os
import subprocess
import sys
import tempfile

import sinkcert  # first: names the Python to use if this one lacks numpy

import numpy as np

torch = sinkcert.require("torch")  # likewise for torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
n, heads, width, L = 5, 2, 5, 6
torch.manual_seed(1)
state = {}
for l in range(2):
    for p in ("q", "k", "v"):
        state[f"model.layers.{l}.attn.{p}_proj.weight"] = torch.randn(heads * width, n) * 0.4
    state[f"model.layers.{l}.attn.o_proj.weight"] = torch.randn(n, heads * width) * 0.4


def torch_forward(x):
    """x^(l+1) = x^(l) + sum_h W_O^h sum_k a_ik W_V^h x_k, unscaled scores."""
    mask = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)
    for l in range(2):
        w = {p: state[f"model.layers.{l}.attn.{p}_proj.weight"].double() for p in "qkvo"}
        q, k, v = ((x @ w[p].T).view(L, heads, width).transpose(0, 1) for p in "qkv")
        a = torch.softmax((q @ k.transpose(1, 2)).masked_fill(mask, float("-inf")), dim=-1)
        x = x + (a @ v).transpose(0, 1).reshape(L, heads * width) @ w["o"].T
    return x


with tempfile.TemporaryDirectory() as tmp:
    pt, out = os.path.join(tmp, "state.pt"), os.path.join(tmp, "weights.json")
    torch.save(state, pt)
    command = [sys.executable, os.path.join(ROOT, "scripts", "convert_pytorch.py"), pt, out,
               "--heads", str(heads), "--score-scale", "1", "--L", str(L)]
    print(subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip())
    model = sinkcert.Model.from_file(out)
    print(model)
    # a state dict cannot be run: the file says that no self-test checked it
    print("self-test:", model.metadata["self_test"]["reason"])
    assert model.metadata["self_test"]["ran"] is False

    X = np.zeros((L, n))
    X[0, 0] = 1
    for i in range(1, L):
        X[i, 1 if i == 3 else n - 1] = 1
        X[i, 2:n - 1] = np.random.default_rng(i).uniform(-1, 1, n - 3)
    got = model.eval(X)
    diff = np.abs(got.output - torch_forward(torch.tensor(X)).numpy()).max()
    print(f"max |sinkcert - PyTorch| = {diff:.2e} [{got.evidence}]; "
          f"e(X) = {got.error:.6g} [{got.evidence}]")
    assert diff <= 1e-12

    # the same weights with a layer norm, as a .npz (read with numpy alone)
    npz = os.path.join(tmp, "state.npz")
    np.savez(npz, **{k: v.numpy() for k, v in state.items()},
             **{"model.layers.0.input_layernorm.weight": np.ones(n)})
    refused = subprocess.run([command[0], command[1], npz, *command[3:]], capture_output=True,
                             text=True)
    print(f"with a layer norm: exit {refused.returncode}: {refused.stderr.strip()}")
    assert refused.returncode == 2 and "input_layernorm.weight" in refused.stderr
