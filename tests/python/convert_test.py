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

The self-test: modules written here in torch from the definitions (every
attention kind, single layer and residual) pass it and the provenance
records it; a wrong conversion fails it (a wrong score scale, transposed
matrices, another attention kind, another head count, a plain stack, a
leaky mask, add_zero_attn with its explicit refusal switched off). The
explicit one-line refusals (add_zero_attn, bias_k / bias_v, cross-attention,
non-causal masks, nn.Sequential / nn.ModuleList stacks, contradicted head
counts, non-finite outputs); A and M in key maps; the task inputs; and, where
the compiled extension is on PYTHONPATH, model_forward against Model.eval.
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
import sinkcert  # noqa: E402  (the source package: its Model wraps the extension below)
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


# --- The self-test: the module against the converted model ----------------


def task_x(n, L, trigger, rng):
    X = np.zeros((L, n))
    X[0, 0] = 1
    for i in range(1, L):
        X[i, 1 if i == trigger else n - 1] = 1
        X[i, 2:n - 1] = rng.uniform(-1, 1, n - 3)
    return X


class KindAttention(torch.nn.Module):
    """Layers of H heads of width n in the fused layout (blocks.{l}.W_Q,
    W_K, W_V, W_G: (H n) x n; W_O: n x (H n)), every attention kind of
    Definitions 2 written here in torch from the definitions (not from
    sinkcert.convert), residual when layers > 1; scores times `scale`."""

    def __init__(self, n, attention, heads=1, layers=1, scale=1.0, residual=None):
        super().__init__()
        self.attention, self.heads, self.n, self.scale = attention, heads, n, scale
        self.residual = layers > 1 if residual is None else residual
        names = ["W_Q", "W_K", "W_V", "W_O"] + (["W_G"] if attention == "gated" else [])
        self.blocks = torch.nn.ModuleList(torch.nn.ModuleDict(
            {w: torch.nn.Linear(heads * n if w == "W_O" else n, n if w == "W_O" else heads * n,
                                bias=False) for w in names}) for _ in range(layers))

    def weights(self, s):
        L = s.shape[-1]
        mask = torch.tril(torch.ones(L, L, dtype=torch.bool))
        row = torch.arange(L, dtype=s.dtype)[:, None]
        if self.attention in ("softmax", "gated"):
            return torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
        if self.attention == "softmax-off-by-one":
            zero = torch.zeros(*s.shape[:-1], 1, dtype=s.dtype)
            full = torch.cat([s.masked_fill(~mask, float("-inf")), zero], dim=-1)
            return torch.softmax(full, dim=-1)[..., :L]
        if self.attention == "relu":
            return torch.relu(s).masked_fill(~mask, 0) / row.clamp(min=1)
        if self.attention == "relu-count-all":
            return torch.relu(s).masked_fill(~mask, 0) / (row + 1)
        if self.attention == "sigmoid":
            return torch.sigmoid(s).masked_fill(~mask, 0) / row.clamp(min=1)
        u = torch.expm1(s).masked_fill(~mask, 0)  # softpick
        total = u.abs().sum(dim=-1, keepdim=True)
        return torch.where(total > 0, torch.relu(u) / total.clamp(min=1e-300),
                           torch.zeros_like(u))

    def forward(self, x):
        n = self.n
        for block in self.blocks:
            out = 0
            for h in range(self.heads):
                rows = slice(h * n, (h + 1) * n)
                q, k, v = (x @ block[w].weight[rows].T for w in ("W_Q", "W_K", "W_V"))
                a = self.weights((q @ k.transpose(-1, -2)) * self.scale)
                o = (a @ v) @ block["W_O"].weight[:, rows].T
                if self.attention == "gated":
                    o = o * torch.sigmoid(x @ block["W_G"].weight[rows].T)
                out = out + o
            x = x + out if self.residual else out
        return x


def kind_module(attention, heads, layers, seed, dtype=torch.float64, **kw):
    torch.manual_seed(seed)
    module = KindAttention(5, attention, heads, layers, **kw).to(dtype)
    with torch.no_grad():
        for p in module.parameters():
            p.mul_(1.5)  # scores of order 1: the kinds differ visibly
    return module


def refusal(callable_, *args, **kwargs):
    """The one-line message of the ConvertError that callable_ raises."""
    with pytest.raises(convert.ConvertError) as info:
        callable_(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message, message
    return message


def test_add_zero_attn_refused_in_one_line():
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(5, 1, bias=False, add_zero_attn=True, batch_first=True)
    message = refusal(convert.convert, convert.from_torch_object(mha, "zero_attn"), L=4)
    assert message == ("zero_attn: (root) (MultiheadAttention): add_zero_attn=True appends a "
                       "zero key and value to every sequence, a built-in sink that sinkcert's "
                       "models do not have; expected add_zero_attn=False")


def test_self_test_alone_catches_add_zero_attn(monkeypatch):
    """Without the explicit refusal, the self-test still sees the sink."""
    monkeypatch.setattr(convert, "_refuse_module_structure", lambda source: None)
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(5, 1, bias=False, add_zero_attn=True, batch_first=True)
    message = refusal(convert.convert, convert.from_torch_object(mha, "zero_attn"), L=4)
    assert message.startswith("zero_attn: self-test: the converted model differs from the "
                              "module by 1.056e-01 at input ")
    assert "position" in message and "coordinate" in message and "float32 rounding" in message


def test_bias_kv_and_cross_attention_refused():
    torch.manual_seed(1)
    mha = torch.nn.MultiheadAttention(6, 2, bias=False, add_bias_kv=True)
    with torch.no_grad():  # zero bias_k / bias_v still add a key and a value: a sink
        mha.bias_k.zero_()
        mha.bias_v.zero_()
    assert "bias_k / bias_v (add_bias_kv=True)" in refusal(
        convert.convert, convert.from_torch_object(mha, "kv"), L=4)
    assert refusal(convert.convert, convert.from_torch_object(mha.state_dict(), "kv"),
                   heads=2) .startswith("kv: bias_k: a learned key appended to every sequence")
    cross = torch.nn.MultiheadAttention(6, 2, bias=False, kdim=4, vdim=4)
    assert "kdim = 4, vdim = 4, embed_dim = 6: keys and values from another sequence" in refusal(
        convert.convert, convert.from_torch_object(cross, "cross"), L=4)


class MaskedAttention(KindAttention):
    """One softmax head that takes its mask from a buffer."""

    def __init__(self, mask):
        super().__init__(5, "softmax")
        self.register_buffer("attn_mask", mask)

    def weights(self, s):
        L = s.shape[-1]
        return torch.softmax(s.masked_fill(~self.attn_mask[:L, :L], float("-inf")), dim=-1)


def test_masks_other_than_causal_refused():
    causal = torch.tril(torch.ones(8, 8, dtype=torch.bool))
    module = MaskedAttention(causal).double()
    r = convert.convert(convert.from_torch_object(module, "causal"), L=8, score_scale=1.0)
    assert any("attn_mask: a causal attention mask (1 = attend" in note for note in r.notes)
    assert r.self_test["largest_difference"] <= r.self_test["tolerance"]
    # a sliding window of 3: refused by name, in the module and in its state dict
    band = causal & ~torch.tril(torch.ones(8, 8, dtype=torch.bool), -3)
    window = MaskedAttention(band).double()
    message = refusal(convert.convert, convert.from_torch_object(window, "window"), L=8,
                      score_scale=1.0)
    assert message.startswith("window: attn_mask: an attention mask that is not causal under "
                              "any reading") and "entry (3, 0) = 0" in message
    refusal(convert.convert, convert.from_torch_object(window.state_dict(), "sd"),
            score_scale=1.0)
    # the additive form and PyTorch's boolean form of the causal mask are causal too
    for mask in (torch.triu(torch.full((4, 4), float("-inf")), 1),
                 torch.triu(torch.ones(4, 4, dtype=torch.bool), 1)):
        state = dict(fused_state(np.random.default_rng(9), 1, 1, 5), **{"layers.0.mask": mask})
        convert.convert(convert.from_torch_object(state, "sd"), score_scale=1.0)
    # a module that ignores its causal buffer and attends to every position
    leaky = MaskedAttention(causal).double()
    leaky.weights = lambda s: torch.softmax(s, dim=-1)
    assert "self-test: the converted model differs" in refusal(
        convert.convert, convert.from_torch_object(leaky, "leaky"), L=8, score_scale=1.0)


class PlainStack(KindAttention):
    """Two blocks chained without residual connections."""

    def __init__(self):
        super().__init__(5, "softmax", 1, 2, residual=False)


def test_plain_stack_refused():
    torch.manual_seed(2)
    blocks = [KindAttention(5, "softmax").double() for _ in range(2)]
    message = refusal(convert.convert, convert.from_torch_object(
        torch.nn.Sequential(*blocks), "seq"), L=5, score_scale=1.0)
    assert message.startswith("seq: (root) (Sequential): chains its 2 blocks without "
                              "residual connections")
    stack = torch.nn.ModuleList(torch.nn.MultiheadAttention(6, 2, bias=False) for _ in range(2))
    assert "(root) (ModuleList): has no forward" in refusal(
        convert.convert, convert.from_torch_object(stack, "list"), L=5)
    plain = PlainStack().double()
    assert "self-test: the converted model differs" in refusal(
        convert.convert, convert.from_torch_object(plain, "plain"), L=5, score_scale=1.0)
    plain.residual = True  # the same weights with the residual stream: accepted
    r = convert.convert(convert.from_torch_object(plain, "plain"), L=5, score_scale=1.0)
    assert r.self_test["ran"] and parse(r.text)["kind"] == "residual"


def test_declared_heads_checked():
    rng = np.random.default_rng(3)
    state = {f"attn.{p}_proj.weight": rng.normal(0, 1, (10, 5)) for p in "qkv"}
    state["attn.o_proj.weight"] = rng.normal(0, 1, (5, 10))
    message = refusal(convert.convert, convert.Source(state, "two"), heads=1, score_scale=1.0)
    assert message == ("two: attn.q_proj.weight: 10 query rows as 1 head(s) of width 10 > n = "
                       "5, wider than a token: a head count a state dict cannot confirm; "
                       "expected heads >= 2 (width <= n), or the module itself (whose self-test "
                       "checks it)")
    r = convert.convert(convert.Source(state, "two"), heads=2, score_scale=1.0)
    assert r.heads == 2 and ("2 head(s) as declared: a state dict cannot show its head count "
                             "(its 10 query rows also split into 5 x 2, 10 x 1)") in r.notes[0]
    mha = torch.nn.MultiheadAttention(6, 2, bias=False)
    assert refusal(convert.convert, convert.from_torch_object(mha, "m"), heads=1) == (
        "m: heads: declared 1, but the module's attention has num_heads = 2; expected 2 (or "
        "omit heads)")
    # a module that does not say its head count: the self-test checks it
    module = kind_module("softmax", 2, 1, seed=4)
    assert "self-test: the converted model differs" in refusal(
        convert.convert, convert.from_torch_object(module, "k"), heads=5, L=5,
        score_scale=1.0)


@pytest.mark.parametrize("attention", convert.ATTENTIONS)
@pytest.mark.parametrize("layers", [1, 2])
def test_self_test_every_kind(attention, layers):
    """model_forward agrees with the torch modules above, for every kind,
    single layer and residual; declaring another kind is refused."""
    module = kind_module(attention, 2, layers, seed=5 + layers)
    r = convert.convert(convert.from_torch_object(module, "k"), attention=attention, L=5,
                        score_scale=1.0)
    test = r.self_test
    assert test["ran"] and test["dtype"] == "float64" and test["inputs"] == 4 * 16
    assert test["largest_difference"] <= test["tolerance"] < 1e-11
    others = {"softmax": "softmax-off-by-one", "softmax-off-by-one": "softmax",
              "relu": "relu-count-all", "relu-count-all": "relu", "sigmoid": "relu",
              "softpick": "softmax"}
    if attention in others:
        assert "self-test: the converted model differs" in refusal(
            convert.convert, convert.from_torch_object(module, "k"), attention=others[attention],
            L=5, score_scale=1.0)


def test_self_test_catches_wrong_conversions(monkeypatch):
    module = kind_module("gated", 1, 2, seed=8, dtype=torch.float32)
    source = convert.from_torch_object(module, "g")
    r = convert.convert(source, attention="gated", L=6, score_scale=1.0)
    assert r.self_test["largest_difference"] <= r.self_test["tolerance"]
    # a wrong score scale
    message = refusal(convert.convert, source, attention="gated", L=6, score_scale=0.5)
    assert message.startswith("g: self-test: the converted model differs from the module by ")
    # every written matrix transposed
    original = convert._matrix_text
    monkeypatch.setattr(convert, "_matrix_text", lambda m: original(np.asarray(m).T))
    message = refusal(convert.convert, source, attention="gated", L=6, score_scale=1.0)
    assert "beyond the tolerance" in message and "float32 rounding" in message


def test_provenance_records_the_self_test():
    torch.manual_seed(10)
    for dtype, eps in ((torch.float32, 2.0 ** -23), (torch.float64, 2.0 ** -52)):
        mha = torch.nn.MultiheadAttention(5, 1, bias=False, batch_first=True).to(dtype)
        r = convert.convert(convert.from_torch_object(mha, "mha"), L=4)
        test = json.loads(r.text)["metadata"]["self_test"]
        assert test == r.self_test
        assert test["ran"] and test["inputs"] == 3 * 16 and test["L"] == 4
        assert test["dtype"] == str(dtype).replace("torch.", "")
        assert f"eps = {eps!r}" in test["tolerance_rule"]
        assert 0 < test["largest_difference"] <= test["tolerance"] < 1e3 * eps
        assert set(test["at"]) == {"input", "trigger", "content", "position", "coordinate",
                                   "module", "converted"}
        assert test["evidence"].startswith("NUMERIC(24)" if dtype == torch.float32
                                           else "NUMERIC(53)")
    # without L the self-test runs at its default length
    r = convert.convert(convert.from_torch_object(mha, "mha"))
    assert r.self_test["L"] == convert.SELF_TEST_L
    r = convert.convert(convert.from_torch_object(mha.state_dict(), "sd"), heads=1)
    test = json.loads(r.text)["metadata"]["self_test"]
    assert test["ran"] is False and "no module self-test ran" in test["reason"]


class ProductAttention(torch.nn.Module):
    """Single-layer softmax heads parametrized by A (H x n x n) and M."""

    def __init__(self, A, M):
        super().__init__()
        self.A = torch.nn.Parameter(torch.tensor(A))
        self.M = torch.nn.Parameter(torch.tensor(M))

    def forward(self, x):
        L = x.shape[-2]
        mask = torch.tril(torch.ones(L, L, dtype=torch.bool))
        s = torch.einsum("...in,hnm,...km->...hik", x, self.A, x)
        a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
        return torch.einsum("...hik,...km,hdm->...id", a, x, self.M)


def test_key_map_products_round_trip():
    """Projection weights -> A = S W_Q^T W_K, M = W_O W_V -> a map of A and
    M -> the same function; A and M written exactly; heads from the
    shapes; a module parametrized by A, M passes its self-test."""
    rng = np.random.default_rng(11)
    state = fused_state(rng, 2, 2, 5)
    factors = convert.convert(convert.Source(state, "f"), score_scale=0.5)
    products = {}
    for l in range(2):
        W = {m: state[f"layers.{l}.{m}.weight"] for m in convert.MATRICES}
        products[f"enc.{l}.A"] = np.stack([0.5 * W["W_Q"][h * 5:h * 5 + 5].T @
                                           W["W_K"][h * 5:h * 5 + 5] for h in range(2)])
        products[f"enc.{l}.M"] = np.stack([W["W_O"][:, h * 5:h * 5 + 5] @
                                           W["W_V"][h * 5:h * 5 + 5] for h in range(2)])
    key_map = {"A": "enc.{l}.A", "M": "enc.{l}.M"}
    r = convert.convert(convert.Source(products, "am"), layout="map", key_map=key_map)
    assert (r.layers, r.heads, r.n, r.score_scale) == (2, 2, 5, 1.0)
    doc = parse(r.text)
    assert doc["kind"] == "residual"
    for l in range(2):
        for h in range(2):
            assert exact_equal(doc["weights"][l][h]["A"], products[f"enc.{l}.A"][h])
            assert exact_equal(doc["weights"][l][h]["M"], products[f"enc.{l}.M"][h])
    X = np.stack([task_x(5, 6, j, rng) for j in range(1, 6)])
    via_factors = convert.model_forward(json.loads(factors.text)["weights"], "softmax",
                                           "residual", X)
    via_products = convert.model_forward(json.loads(r.text)["weights"], "softmax",
                                            "residual", X)
    # the same sums in another order: a few ulps of values of order 1
    assert np.abs(via_factors - via_products).max() < 1e-12
    # one key per head, "{h}"; and a declared head count that the shapes contradict
    per_head = {f"enc.0.h{h}.{m}": products[f"enc.0.{m}"][h] for h in range(2) for m in "AM"}
    r = convert.convert(convert.Source(per_head, "ph"), layout="map",
                        key_map={"A": "enc.{l}.h{h}.A", "M": "enc.{l}.h{h}.M"})
    assert r.heads == 2 and r.layers == 1
    assert refusal(convert.convert, convert.Source(products, "am"), layout="map", heads=1,
                   key_map=key_map) == ("am: heads: declared 1, but enc.0.A holds 2 head(s) "
                                        "(2 x 5 x 5); expected 2")
    assert "expected either the products A, M or the projection weights" in refusal(
        convert.convert, convert.Source(products, "am"), layout="map",
        key_map=dict(key_map, W_O="enc.{l}.M"))
    module = ProductAttention(products["enc.0.A"], products["enc.0.M"])
    r = convert.convert(convert.from_torch_object(module, "pm"), layout="map", L=5,
                        key_map={"A": "A", "M": "M"})
    assert r.self_test["largest_difference"] <= r.self_test["tolerance"]
    wrong = ProductAttention(products["enc.0.A"].transpose(0, 2, 1), products["enc.0.M"])
    refusal(convert.convert, convert.from_torch_object(wrong, "pm"), layout="map", L=5,
            key_map={"A": "A", "M": "M"}, forward=lambda m, X: module(X))


def test_task_inputs():
    X, triggers, kinds = convert.task_inputs(6, 5)
    assert X.shape == (4 * 16, 5, 6) and sorted(set(triggers)) == [1, 2, 3, 4]
    for x, j, kind in zip(X, triggers, kinds):
        assert x[0].tolist() == [1, 0, 0, 0, 0, 0]
        assert all(x[i, 1] == (i == j) and x[i, 5] == (i != j) for i in range(1, 5))
        content = x[1:, 2:5]
        assert np.all(np.abs(content) <= 1)
        assert (kind == "vertex") == bool(np.all(np.abs(content) == 1))


def _extension():
    """The compiled extension _sinkcert from a folder on PYTHONPATH (ctest
    sets build/python), loaded by path (this test imports the source
    package, which has none); None when it is not built."""
    import glob
    import importlib.machinery
    import importlib.util
    for folder in filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)):
        for path in glob.glob(os.path.join(folder, "sinkcert", "_sinkcert*.so")):
            loader = importlib.machinery.ExtensionFileLoader("_sinkcert", path)
            spec = importlib.util.spec_from_file_location("_sinkcert", path, loader=loader)
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
            return module
    return None


# model_forward and the extension's double evaluation sum the same float64
# terms of order 1 in other orders (the extension multiplies the factors
# out as it reads them): a few ulps each, so 1e-12 leaves three orders of
# margin; a wrong kind or a transposed matrix changes outputs by 1e-2 or
# more (the kinds' tests above).
FORWARD_TOLERANCE = 1e-12


@pytest.mark.parametrize("attention", convert.ATTENTIONS)
def test_model_forward_against_the_extension(attention):
    ext = _extension()
    if ext is None:
        pytest.skip("the compiled extension is not on PYTHONPATH (build/python)")
    rng = np.random.default_rng(12)
    for layers, products in ((1, False), (2, False), (2, True)):
        state = fused_state(rng, layers, 2, 5)
        if attention == "gated":
            for l in range(layers):
                state[f"layers.{l}.W_G.weight"] = rng.normal(0, 1, (10, 5))
        r = convert.convert(convert.Source(state, "f"), attention=attention, score_scale=0.5)
        weights = json.loads(r.text)["weights"]
        if products:  # the same model as A and M
            am = {}
            for l, layer in enumerate(weights):
                for m, f in (("A", lambda h: np.array(h["W_Q"]).T @ np.array(h["W_K"])),
                             ("M", lambda h: np.array(h["W_O"]) @ np.array(h["W_V"]))):
                    am[f"l.{l}.{m}"] = np.stack([f(h) for h in layer])
                if attention == "gated":
                    am[f"l.{l}.G"] = state[f"layers.{l}.W_G.weight"]
            key_map = {"A": "l.{l}.A", "M": "l.{l}.M"}
            if attention == "gated":
                key_map["W_G"] = "l.{l}.G"
            r = convert.convert(convert.Source(am, "am"), layout="map", key_map=key_map,
                                attention=attention)
            weights = json.loads(r.text)["weights"]
        model = sinkcert.Model(ext.WeightFile.from_text(r.text, "converted"))
        X = np.stack([task_x(5, 6, j, rng) for j in range(1, 6)])
        want = convert.model_forward(weights, attention, parse(r.text)["kind"], X)
        for x, w in zip(X, want):
            got = model.eval(x).output
            assert np.abs(got - w).max() <= FORWARD_TOLERANCE, (layers, products)


def test_non_finite_outputs_refused():
    module = kind_module("relu", 1, 1, seed=13)
    with torch.no_grad():
        module.blocks[0]["W_O"].weight[0, 0] = float("nan")
    # NaN weights are refused before anything runs; a NaN made by the forward
    # itself is the self-test's
    assert "expected finite entries" in refusal(
        convert.convert, convert.from_torch_object(module, "nan"), attention="relu", L=4,
        score_scale=1.0)
    module = kind_module("relu", 1, 1, seed=13)
    message = refusal(convert.convert, convert.from_torch_object(module, "nan"),
                      attention="relu", L=4, score_scale=1.0,
                      forward=lambda m, X: m(X) * float("nan"))
    assert message.startswith("nan: self-test: the module's output is nan at input 0 (trigger "
                              "j = 1, random content), position 0, coordinate 0")
