#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""End-to-end test of scripts/convert_pytorch.py (run by ctest).

Writes .npz state dicts of random fused weights in the paper's layout
(W_Q, W_K, W_V: (H d) x d, head h = rows h d .. h d + d - 1; W_O: d x (H d),
head h = those columns), converts them, and checks:

1. every entry of the converted file is exactly the float64 in the .npz
   (read back as fractions.Fraction);
2. `sinkcert eval --input X --json` of the converted file agrees, on a few
   task inputs, with an independent numpy forward pass of the fused model
   written here from the fused matrices (Q = X W_Q^T etc., the heads'
   outputs concatenated and multiplied by W_O^T: the per-head blocks and
   the products A, M are never formed), to TOLERANCE;
3. a bad .npz (a missing key, a wrong shape, an unknown key, a nonzero
   bias, a layer norm) or a missing --score-scale gives exit 2 and one
   line naming the key and what was expected;
4. a whole saved module (--allow-pickle) is run against the converted
   model (the self-test): an nn.MultiheadAttention with add_zero_attn is
   refused in one line, a plain one passes and its file's metadata records
   the self-test, a state dict's says that none ran;
5. the converter's own numpy forward (sinkcert.convert.model_forward, the
   self-test's reference) agrees with `sinkcert eval` for every attention
   kind, single layer and residual, to TOLERANCE relative to the outputs'
   scale.

The layouts other than the fused one, whole modules and the Python API are
tested in tests/python/.

Usage: tests/scripts/convert_pytorch_test.py SINKCERT (from the source root).
"""
import json
import os
import subprocess
import sys
import tempfile
from fractions import Fraction

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONVERTER = os.path.join(ROOT, "scripts", "convert_pytorch.py")
sys.path.insert(0, os.path.join(ROOT, "python"))
from sinkcert import convert as conv  # noqa: E402  (after the path is set)

# Both sides sum the same O(L d^2 H) float64 terms in different orders, on
# values of order 1 over two layers: a few ulps (1e-16) each, so 1e-12
# leaves three orders of margin and still catches any wrong index or
# missing scale (those change the output at order 1e-2 or more).
TOLERANCE = 1e-12

failures = 0


def fail(message):
    global failures
    failures += 1
    print("FAIL:", message)


def fused_forward(state, X, layers, H, attention, residual, scale=1.0):
    """The fused model the way the paper's code computes it (scores times
    `scale`; the paper's recipe has none)."""
    x = X.copy()
    L, d = x.shape
    for l in range(layers):
        Q = x @ state[f"layers.{l}.W_Q.weight"].T  # L x (H d)
        K = x @ state[f"layers.{l}.W_K.weight"].T
        V = x @ state[f"layers.{l}.W_V.weight"].T
        heads = []
        for h in range(H):
            cols = slice(h * d, (h + 1) * d)
            S = (Q[:, cols] @ K[:, cols].T) * scale
            causal = np.tril(np.ones((L, L), dtype=bool))
            if attention == "softmax":
                S = np.where(causal, S, -np.inf)
                a = np.exp(S - S.max(axis=1, keepdims=True))
                a /= a.sum(axis=1, keepdims=True)
            else:  # relu: max(s, 0) / max(i, 1)
                a = np.where(causal, np.maximum(S, 0), 0) / np.maximum(np.arange(L), 1)[:, None]
            heads.append(a @ V[:, cols])
        out = np.concatenate(heads, axis=1) @ state[f"layers.{l}.W_O.weight"].T
        x = x + out if residual else out
    return x


def task_input(rng, d, L, trigger):
    X = np.zeros((L, d))
    X[0, 0] = 1
    for i in range(1, L):
        X[i, 1 if i == trigger else d - 1] = 1
        X[i, 2:d - 1] = rng.uniform(-1, 1, d - 3)
    return X


def random_state(rng, layers, H, d, std):
    state = {}
    for l in range(layers):
        for name in ("W_Q", "W_K", "W_V"):
            state[f"layers.{l}.{name}.weight"] = rng.normal(0, std, (H * d, d))
        state[f"layers.{l}.W_O.weight"] = rng.normal(0, std, (d, H * d))
    return state


def convert(tmp, state, name, *options):
    npz = os.path.join(tmp, name + ".npz")
    np.savez(npz, **state)
    out = os.path.join(tmp, name + ".json")
    if "--score-scale" not in options and "no-scale" not in name:
        options = (*options, "--score-scale", "1")
    r = subprocess.run([sys.executable, CONVERTER, npz, out, *options],
                       capture_output=True, text=True)
    return r, out


def check_case(sinkcert, tmp, rng, layers, H, d, L, attention, scale=1.0):
    name = f"{layers}x{H}_{attention}_scale{scale:g}"
    state = random_state(rng, layers, H, d, 0.4)
    r, out = convert(tmp, state, name, "--attention", attention, "--score-scale", repr(scale))
    if r.returncode != 0:
        fail(f"{name}: converter exit {r.returncode}: {r.stderr.strip()}")
        return
    with open(out) as f:
        w = json.load(f, parse_float=Fraction, parse_int=Fraction)
    if w["layers"] != layers or w["heads"] != H or w["n"] != d:
        fail(f"{name}: shape {w['layers']} x {w['heads']}, n = {w['n']}")
    if w["kind"] != ("residual" if layers > 1 else "single-layer"):
        fail(f"{name}: kind {w['kind']}")
    # 1. exact to the given doubles
    inexact = 0
    for l in range(layers):
        for h in range(H):
            head = w["weights"][l][h]
            blocks = {"W_Q": state[f"layers.{l}.W_Q.weight"][h * d:(h + 1) * d, :] * scale,
                      "W_K": state[f"layers.{l}.W_K.weight"][h * d:(h + 1) * d, :],
                      "W_V": state[f"layers.{l}.W_V.weight"][h * d:(h + 1) * d, :],
                      "W_O": state[f"layers.{l}.W_O.weight"][:, h * d:(h + 1) * d]}
            for key, block in blocks.items():
                for r_ in range(d):
                    for c in range(d):
                        if Fraction(head[key][r_][c]) != Fraction(float(block[r_, c])):
                            inexact += 1
    if inexact:
        fail(f"{name}: {inexact} entries are not the exact float64 values")
    # 2. sinkcert eval against the fused numpy model
    worst = 0.0
    for trigger in (1, L // 2, L - 1):
        X = task_input(rng, d, L, trigger)
        xpath = os.path.join(tmp, f"{name}_X{trigger}.json")
        with open(xpath, "w") as f:
            json.dump({"format": "sinkcert-input", "tokens": X.tolist()}, f)
        e = subprocess.run([sinkcert, "eval", "--weights", out, "--input", xpath, "--json"],
                           capture_output=True, text=True)
        if e.returncode != 0:
            fail(f"{name}: eval exit {e.returncode}: {e.stderr.strip()}")
            continue
        got = np.array(json.loads(e.stdout)["output"], dtype=np.float64)
        want = fused_forward(state, X, layers, H, attention, layers > 1, scale)
        worst = max(worst, float(np.abs(got - want).max()))
    status = "ok" if worst <= TOLERANCE else "FAIL"
    print(f"{name}: d = {d}, L = {L}: max |sinkcert eval - fused numpy| = {worst:.3e} "
          f"(tolerance {TOLERANCE:g}) {status}")
    if worst > TOLERANCE:
        fail(f"{name}: difference {worst:.3e}")


def expect_error(tmp, state, name, pattern, *options):
    r, out = convert(tmp, state, name, *options)
    lines = r.stderr.strip().splitlines()
    if r.returncode != 2 or len(lines) != 1 or pattern not in lines[0]:
        fail(f"{name}: expected exit 2 and one line containing '{pattern}', got exit "
             f"{r.returncode}: {r.stderr.strip()!r}")
    elif os.path.exists(out):
        fail(f"{name}: output written despite the error")
    else:
        print(f"{name}: {lines[0]}")


def check_modules(tmp):
    import torch
    torch.manual_seed(0)
    modules = {
        "zero_attn": torch.nn.MultiheadAttention(5, 1, bias=False, add_zero_attn=True,
                                                 batch_first=True),
        "mha": torch.nn.MultiheadAttention(5, 1, bias=False, batch_first=True)}
    for name, module in modules.items():
        pt, out = os.path.join(tmp, name + ".pt"), os.path.join(tmp, name + ".json")
        torch.save(module, pt)
        r = subprocess.run([sys.executable, CONVERTER, pt, out, "--allow-pickle", "--L", "4"],
                           capture_output=True, text=True)
        if name == "zero_attn":
            lines = r.stderr.strip().splitlines()
            if r.returncode != 2 or len(lines) != 1 or "add_zero_attn=True" not in lines[0] \
                    or os.path.exists(out):
                fail(f"{name}: expected exit 2, one line naming add_zero_attn and no file, got "
                     f"exit {r.returncode}: {r.stderr.strip()!r}")
            else:
                print(f"{name}: {lines[0]}")
            continue
        if r.returncode != 0 or "self-test: the module (float32) and the converted model " \
                "agree on 48 task inputs" not in r.stdout:
            fail(f"{name}: expected a passed self-test, got exit {r.returncode}: "
                 f"{r.stdout.strip()!r} {r.stderr.strip()!r}")
            continue
        print(f"{name}: {r.stdout.strip().splitlines()[0]}")
        with open(out) as f:
            test = json.load(f)["metadata"]["self_test"]
        if not (test["ran"] and test["inputs"] == 48 and
                test["largest_difference"] <= test["tolerance"]):
            fail(f"{name}: metadata self_test {test}")
        sd, out = os.path.join(tmp, name + "_sd.pt"), os.path.join(tmp, name + "_sd.json")
        torch.save(module.state_dict(), sd)
        r = subprocess.run([sys.executable, CONVERTER, sd, out, "--heads", "1"],
                           capture_output=True, text=True)
        with open(out) as f:
            test = json.load(f)["metadata"]["self_test"]
        if r.returncode != 0 or "no module self-test ran" not in r.stderr or test["ran"]:
            fail(f"{name} state dict: expected a note that no self-test ran, got exit "
                 f"{r.returncode}: {r.stderr.strip()!r}, {test}")
        else:
            print(f"{name} state dict: {test['reason']}")


def check_forward(sinkcert, tmp, rng, attention, layers):
    """sinkcert.convert.model_forward against `sinkcert eval`."""
    name = f"forward_{attention}_{layers}"
    state = random_state(rng, layers, 2, 5, 0.6)
    if attention == "gated":
        for l in range(layers):
            state[f"layers.{l}.W_G.weight"] = rng.normal(0, 1, (10, 5))
    # converted in-process (the command line is tested above): one sinkcert
    # run per input, two inputs per model, keeps this part to seconds
    out = os.path.join(tmp, name + ".json")
    text = conv.convert(conv.Source(state, name), attention=attention, score_scale=1.0).text
    conv.write_atomically(out, text)
    weights = json.loads(text)
    worst = 0.0
    for trigger in (1, 5):
        X = task_input(rng, 5, 6, trigger)
        xpath = os.path.join(tmp, f"{name}_X{trigger}.json")
        with open(xpath, "w") as f:
            json.dump({"format": "sinkcert-input", "tokens": X.tolist()}, f)
        e = subprocess.run([sinkcert, "eval", "--weights", out, "--input", xpath, "--json"],
                           capture_output=True, text=True)
        if e.returncode != 0:
            fail(f"{name}: eval exit {e.returncode}: {e.stderr.strip()}")
            return
        got = np.array(json.loads(e.stdout)["output"], dtype=np.float64)
        want = conv.model_forward(weights["weights"], attention, weights["kind"], X[None])[0]
        # relative to the outputs' scale (ReLU residual outputs reach 1e2)
        worst = max(worst, float(np.abs(got - want).max()) / max(1.0, float(np.abs(want).max())))
    status = "ok" if worst <= TOLERANCE else "FAIL"
    print(f"{name}: max |sinkcert eval - convert.model_forward| / max(1, max |f|) = "
          f"{worst:.3e} (tolerance {TOLERANCE:g}) {status}")
    if worst > TOLERANCE:
        fail(f"{name}: difference {worst:.3e}")


def main():
    sinkcert = sys.argv[1]
    rng = np.random.default_rng(20261201)
    with tempfile.TemporaryDirectory() as tmp:
        check_case(sinkcert, tmp, rng, 2, 2, 5, 6, "softmax")
        check_case(sinkcert, tmp, rng, 1, 3, 5, 5, "relu")
        # scores scaled by 1/sqrt(d) at d = 16 (a power of two: still exact)
        check_case(sinkcert, tmp, rng, 2, 1, 16, 5, "softmax", 0.25)
        # A wrong layout must be caught by check 2: heads swapped in W_O.
        state = random_state(rng, 2, 2, 5, 0.4)
        swapped = dict(state)
        wo = state["layers.1.W_O.weight"]
        swapped["layers.1.W_O.weight"] = np.concatenate([wo[:, 5:], wo[:, :5]], axis=1)
        r, out = convert(tmp, swapped, "swapped")
        X = task_input(rng, 5, 6, 3)
        xpath = os.path.join(tmp, "swapped_X.json")
        with open(xpath, "w") as f:
            json.dump({"format": "sinkcert-input", "tokens": X.tolist()}, f)
        e = subprocess.run([sinkcert, "eval", "--weights", out, "--input", xpath, "--json"],
                           capture_output=True, text=True, check=True)
        diff = np.abs(np.array(json.loads(e.stdout)["output"]) -
                      fused_forward(state, X, 2, 2, "softmax", True)).max()
        if not diff > TOLERANCE:
            fail(f"swapped W_O heads: difference {diff:.3e} not detected")
        else:
            print(f"swapped W_O heads: difference {diff:.3e} detected")

        base = random_state(rng, 2, 2, 5, 0.4)
        missing = dict(base)
        del missing["layers.1.W_V.weight"]
        expect_error(tmp, missing, "missing",
                     "layers.1.W_V.weight: missing; expected a 10 x 5 matrix")
        wrong = dict(base)
        wrong["layers.0.W_O.weight"] = base["layers.0.W_O.weight"][:, :9]
        expect_error(tmp, wrong, "wrong_shape",
                     "layers.0.W_O.weight: expected shape 5 x 10, got 5 x 9")
        ragged = dict(base)
        ragged["layers.0.W_Q.weight"] = base["layers.0.W_Q.weight"][:9, :]
        expect_error(tmp, ragged, "ragged_first",
                     "layers.0.W_Q.weight: expected shape (H d) x d = (H * 5) x 5, got 9 x 5")
        extra = dict(base)
        extra["layers.0.b_Q"] = np.zeros(10)
        expect_error(tmp, extra, "unknown_key", "layers.0.b_Q: expected only keys")
        nonfinite = dict(base)
        nonfinite["layers.1.W_K.weight"] = base["layers.1.W_K.weight"].copy()
        nonfinite["layers.1.W_K.weight"][2, 3] = np.nan
        expect_error(tmp, nonfinite, "nonfinite", "layers.1.W_K.weight: expected finite")
        biased = dict(base)
        biased["layers.1.W_O.bias"] = np.full(5, 0.25)
        expect_error(tmp, biased, "bias", "layers.1.W_O.bias: a nonzero bias (max |b| = 0.25)")
        normed = dict(base)
        normed["layers.0.ln_1.weight"] = np.ones(5)
        expect_error(tmp, normed, "layer_norm", "layers.0.ln_1.weight: a normalization layer")
        expect_error(tmp, base, "no-scale", "score_scale: required for the fused layout")
        # blocks named P0., P1.: the number is not a dotted component
        glued = {k.replace("layers.", "P"): v for k, v in base.items()}
        expect_error(tmp, glued, "glued_number",
                     "P0.: expected one attention block per layer, numbered by a dotted "
                     "integer component of its prefix (as layers.0.); this block has none",
                     "--score-scale", "1")
        # a zero bias changes nothing: accepted, and said so
        zero = dict(base)
        zero["layers.0.W_Q.bias"] = np.zeros(10)
        r, out = convert(tmp, zero, "zero_bias")
        if r.returncode != 0 or "exactly zero, accepted" not in r.stderr:
            fail(f"zero_bias: expected success with a note, got exit {r.returncode}: "
                 f"{r.stderr.strip()!r}")
        else:
            print(f"zero_bias: {r.stderr.strip()}")
        check_modules(tmp)
        for attention in conv.ATTENTIONS:
            for layers in (1, 2):
                check_forward(sinkcert, tmp, rng, attention, layers)
    print(f"convert_pytorch_test: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
