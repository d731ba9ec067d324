#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check a PyTorch attention model with sinkcert.

What it shows: an nn.MultiheadAttention layer (causal, no bias) goes
straight into sinkcert with Model.from_torch; PyTorch's 1/sqrt(head width)
score scale is applied and recorded, and the layer itself is run against
the converted model on task inputs (the self-test, recorded in the file's
metadata); a layer with add_zero_attn=True is refused. The attack then
finds a bad input (SEARCH: a lower bound on the worst-case error E,
certified at its witness) and the branch and bound encloses E over the
whole content box (CERTIFIED), for the task T(n = 5, L = 4). (Several heads make the
branch and bound much slower: with two heads at n = 6 it does not reach a
1 % gap in 30 s.)

An untrained model does not solve the task, so E is of order 1: the point
is the workflow and the labels, not the number. Runs in a few seconds.

Run: PYTHONPATH=build/python /usr/bin/python3 examples/check_pytorch_model.py
"""
import sinkcert  # first: names the Python to use if this one lacks numpy

torch = sinkcert.require("torch")  # likewise for torch

torch.manual_seed(0)
layer = torch.nn.MultiheadAttention(embed_dim=5, num_heads=1, bias=False).double()

model = sinkcert.Model.from_torch(layer, L=4)
print(model)
for note in model.notes:
    print("conversion note:", note)
# from_torch ran the layer itself against the converted model on task inputs
test = model.metadata["self_test"]
print(f"self-test: largest |module - converted| = {test['largest_difference']:.2e} "
      f"[{test['evidence']}] over {test['inputs']} task inputs <= tolerance "
      f"{test['tolerance']:.2e} ({test['dtype']})")

# a layer that appends a zero key and value (a built-in sink) is refused
try:
    sinkcert.Model.from_torch(torch.nn.MultiheadAttention(5, 1, bias=False, add_zero_attn=True),
                              L=4)
except sinkcert.ConvertError as e:
    print("refused:", e)
else:
    raise AssertionError("add_zero_attn=True was converted")

found = model.attack(seed=0)
print(f"attack: E >= {found.value:.6g} [{found.evidence}] at trigger {found.best.trigger}")

bound = model.bound(seconds=30, gap=0.01)
print(f"bound: {bound.lo:.6g} <= E <= {bound.hi:.6g} [{bound.evidence}], {bound.verdict}")
print(f"  exact ends: {bound.lo_exact[:24]}... <= E <= {bound.hi_exact[:24]}...")
print("  " + bound.details["meaning"])  # against the tolerance 5e-3 (docs/definitions.md)

claim = model.bound(seconds=30, claim=bound.lo / 2)
print(f"claim E <= {bound.lo / 2:.6g}: {claim.verdict} [{claim.evidence}]")
assert claim.verdict is sinkcert.Verdict.NOT_VERIFIED and claim.witness is not None
