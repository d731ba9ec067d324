# SPDX-License-Identifier: MIT
"""sinkcert.convert (python/sinkcert/convert.py), pure Python: no compiled
extension is needed, so these tests read the written text back with
fractions.Fraction and compare with numpy.

Checked: each layout (fused, qkvo, mha, map, auto) puts each head's rows
and columns where the fused reference says; every entry is exactly the
float64 given (times the score scale); the MHA scale is 1/sqrt(head width)
and recorded; the task metadata; and every refusal names its key (nonzero
bias, layer norm by key and by module, unknown key, missing heads or score
scale, a pickled module without allow_pickle).
"""
import json
import math
import os
import sys
from fractions import Fraction

import numpy as np
import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "python"))
from sinkcert import convert  # noqa: E402


def parse(text):
    return json.loads(text, parse_float=Fraction, parse_int=Fraction)


def heads_of(doc):
    """[layer][head] -> {name: matrix of Fractions}."""
    return doc["weights"]


def exact_equal(got, want):
    want = np.asarray(want, dtype=np.float64)
    return len(got) == want.shape[0] and all(
        Fraction(got[r][c]) == Fraction(float(want[r, c]))
        for r in range(want.shape[0]) for c in range(want.shape[1]))


def fused_state(rng, layers, H, n, dk=None):
    dk = dk or n
    s = {}
    for l in range(layers):
        for m in ("W_Q", "W_K", "W_V"):
            s[f"layers.{l}.{m}.weight"] = rng.normal(0, 0.5, (H * dk, n))
        s[f"layers.{l}.W_O.weight"] = rng.normal(0, 0.5, (n, H * dk))
    return s


def test_fused_exact_and_task_metadata():
    rng = np.random.default_rng(1)
    state = fused_state(rng, 2, 2, 5)
    r = convert.convert(convert.Source(state, "fused.npz"), score_scale=0.5, L=6,
                        trigger_range="reference-code")
    assert (r.layout, r.layers, r.heads, r.n) == ("fused", 2, 2, 5)
    doc = parse(r.text)
    assert doc["kind"] == "residual"
    for l in range(2):
        for h in range(2):
            rows = slice(h * 5, h * 5 + 5)
            head = heads_of(doc)[l][h]
            assert exact_equal(head["W_Q"], state[f"layers.{l}.W_Q.weight"][rows] * 0.5)
            assert exact_equal(head["W_K"], state[f"layers.{l}.W_K.weight"][rows])
            assert exact_equal(head["W_V"], state[f"layers.{l}.W_V.weight"][rows])
            assert exact_equal(head["W_O"], state[f"layers.{l}.W_O.weight"][:, rows])
    task = json.loads(r.text)["metadata"]["task"]
    assert task == {"L": 6, "trigger_range": "reference-code", "score_scale": 0.5,
                    "source": "fused.npz"}
    # the file's own task, which sinkcert reads: no score scale (it is in W_Q)
    assert json.loads(r.text)["task"] == {"L": 6, "trigger_range": "reference-code",
                                          "source": "fused.npz"}


def test_qkvo_any_prefix_and_heads_narrower_than_n():
    rng = np.random.default_rng(2)
    n, H, dk = 6, 3, 2
    state = {}
    for l in range(2):
        for p in ("q", "k", "v"):
            state[f"model.layers.{l}.self_attn.{p}_proj.weight"] = rng.normal(0, 1, (H * dk, n))
        state[f"model.layers.{l}.self_attn.o_proj.weight"] = rng.normal(0, 1, (n, H * dk))
    r = convert.convert(convert.Source(state, "hf"), heads=H, score_scale=1.0)
    assert (r.layout, r.layers, r.heads) == ("qkvo", 2, 3)
    head = heads_of(parse(r.text))[1][2]
    assert exact_equal(head["W_K"], state["model.layers.1.self_attn.k_proj.weight"][4:6])
    assert exact_equal(head["W_O"], state["model.layers.1.self_attn.o_proj.weight"][:, 4:6])
    with pytest.raises(convert.ConvertError, match="heads: required for the qkvo layout"):
        convert.convert(convert.Source(state, "hf"), score_scale=1.0)


def test_mha_split_and_scale():
    torch.manual_seed(3)
    mha = torch.nn.MultiheadAttention(8, 2, bias=False).double()
    src = convert.from_torch_object(mha, "mha")
    assert src.heads == 2
    r = convert.convert(src)
    assert r.layout == "mha" and r.score_scale == 0.5  # 1/sqrt(4), exact
    W = mha.in_proj_weight.detach().numpy()
    head = heads_of(parse(r.text))[0][1]
    assert exact_equal(head["W_Q"], W[4:8] * 0.5)
    assert exact_equal(head["W_K"], W[12:16])
    assert exact_equal(head["W_V"], W[20:24])
    assert exact_equal(head["W_O"], mha.out_proj.weight.detach().numpy()[:, 4:8])
    assert json.loads(r.text)["metadata"]["task"]["score_scale"] == 0.5
    with pytest.raises(convert.ConvertError, match="omit it or pass that value"):
        convert.convert(src, score_scale=1.0)
    # a state dict does not say how many heads
    with pytest.raises(convert.ConvertError, match="heads: required for the mha layout"):
        convert.convert(convert.from_torch_object(mha.state_dict(), "sd"))


def test_refusals_name_the_key():
    torch.manual_seed(4)
    mha = torch.nn.MultiheadAttention(6, 2, bias=True).double()
    with torch.no_grad():
        mha.in_proj_bias.fill_(0.125)
    with pytest.raises(convert.ConvertError, match=r"in_proj_bias: a nonzero bias"):
        convert.convert(convert.from_torch_object(mha, "biased"))
    with torch.no_grad():
        mha.in_proj_bias.zero_()  # zero biases: accepted, and said so
    r = convert.convert(convert.from_torch_object(mha, "zero"))
    assert any("exactly zero, accepted" in note and "in_proj_bias" in note for note in r.notes)

    class Block(torch.nn.Module):
        def __init__(self, norm):
            super().__init__()
            self.attn = torch.nn.MultiheadAttention(6, 2, bias=False)
            self.norm = norm

    # a LayerNorm without parameters has no key: the module still says it
    block = Block(torch.nn.LayerNorm(6, elementwise_affine=False))
    with pytest.raises(convert.ConvertError, match=r"norm \(LayerNorm\): a normalization layer"):
        convert.convert(convert.from_torch_object(block, "block"))
    state = dict(Block(torch.nn.LayerNorm(6)).state_dict())
    with pytest.raises(convert.ConvertError, match=r"norm\.weight: a normalization layer"):
        convert.convert(convert.from_torch_object(state, "sd"), heads=2)
    state = fused_state(np.random.default_rng(5), 1, 1, 5)
    state["layers.0.mlp.weight"] = np.zeros((5, 5))
    with pytest.raises(convert.ConvertError, match=r"layers\.0\.mlp\.weight: expected only keys"):
        convert.convert(convert.Source(state, "mlp"), score_scale=1.0)
    del state["layers.0.mlp.weight"]
    with pytest.raises(convert.ConvertError, match="score_scale: required for the fused layout"):
        convert.convert(convert.Source(state, "s"))
    with pytest.raises(convert.ConvertError, match="only attention \"gated\" has one"):
        gated = dict(state, **{"layers.0.W_G.weight": np.zeros((5, 5))})
        convert.convert(convert.Source(gated, "g"), score_scale=1.0)


def test_gated_and_softpick():
    rng = np.random.default_rng(6)
    state = fused_state(rng, 1, 2, 5)
    state["layers.0.W_G.weight"] = rng.normal(0, 1, (10, 5))
    doc = parse(convert.convert(convert.Source(state, "g"), attention="gated",
                                score_scale=1.0).text)
    assert doc["attention"] == "gated"
    assert exact_equal(doc["weights"][0][1]["gate"], state["layers.0.W_G.weight"][5:10])
    del state["layers.0.W_G.weight"]
    with pytest.raises(convert.ConvertError, match=r"layers\.0\.W_G\.weight: missing"):
        convert.convert(convert.Source(state, "g"), attention="gated", score_scale=1.0)
    doc = parse(convert.convert(convert.Source(state, "s"), attention="softpick",
                                score_scale=1.0).text)
    assert doc["attention"] == "softpick"


def test_key_map_with_stacked_qkv_and_ignore():
    rng = np.random.default_rng(7)
    n, H = 5, 1
    state = {}
    for l in range(2):
        state[f"enc.{l}.qkv.weight"] = rng.normal(0, 1, (3 * n, n))
        state[f"enc.{l}.qkv.bias"] = np.zeros(3 * n)
        state[f"enc.{l}.proj.weight"] = rng.normal(0, 1, (n, n))
        state[f"enc.{l}.mlp.weight"] = rng.normal(0, 1, (n, n))
    key_map = {"W_QKV": "enc.{l}.qkv.weight", "W_O": "enc.{l}.proj.weight", "heads": H,
               "score_scale": 1.0}
    with pytest.raises(convert.ConvertError, match=r"enc\.0\.mlp\.weight: not in the key map"):
        convert.convert(convert.Source(state, "m"), layout="map", key_map=key_map)
    key_map["ignore"] = [r"\.mlp\."]
    r = convert.convert(convert.Source(state, "m"), layout="map", key_map=key_map)
    assert r.layers == 2 and any("left out" in note for note in r.notes)
    head = heads_of(parse(r.text))[1][0]
    assert exact_equal(head["W_K"], state["enc.1.qkv.weight"][5:10])
    assert exact_equal(head["W_V"], state["enc.1.qkv.weight"][10:15])


def test_saved_module_needs_allow_pickle(tmp_path):
    torch.manual_seed(8)
    mha = torch.nn.MultiheadAttention(6, 3, bias=False).double()
    whole = str(tmp_path / "whole.pt")
    torch.save(mha, whole)
    with pytest.raises(convert.ConvertError, match="pass --allow-pickle"):
        convert.load_source(whole)
    src = convert.load_source(whole, allow_pickle=True)
    assert src.heads == 3
    assert convert.convert(src).heads == 3
    sd = str(tmp_path / "sd.pt")
    torch.save(mha.state_dict(), sd)
    assert convert.convert(convert.load_source(sd), heads=3).layout == "mha"


def test_exact_decimal():
    assert convert.exact(0.1) == "0.1000000000000000055511151231257827021181583404541015625"
    assert Fraction(convert.exact(1e-300)) == Fraction(1e-300)
    assert Fraction(convert.exact(math.pi)) == Fraction(math.pi)
