# SPDX-License-Identifier: MIT
"""Attention weights from PyTorch (or numpy) to a sinkcert weight file.

Pure Python: numpy, and torch only to read a .pt/.pth file or a module;
the compiled extension is not needed. `scripts/convert_pytorch.py` is the
command-line entry point; `sinkcert.Model.from_torch` calls `convert` and
reads its text with the C++ reader.

The model written
-----------------
Every matrix is stored as used in y = W x (rows = outputs), which is how
nn.Linear stores its weight (it computes x @ W.T). A layer of H heads on
tokens of dimension n, head h with query/key width d_k and value width d_v:

    W_Q^h, W_K^h: d_k x n,  W_V^h: d_v x n,  W_O^h: n x d_v
    s_ik = S (W_Q^h x_i) . (W_K^h x_k) = x_i^T A^h x_k,  A^h = S W_Q^h^T W_K^h
    o_i  = W_O^h sum_k a_ik W_V^h x_k

with S the score scale (1 in the paper's recipe, 1/sqrt(d_k) for scaled
dot-product attention). The file holds S W_Q^h as its W_Q: each entry is
fl(S * w), exact when S is a power of two and otherwise rounded once (the
converter says so). Every entry is written as the exact decimal expansion
of its float64 value (float32 tensors are widened exactly), so the file
denotes exactly those doubles, and EXACT or CERTIFIED claims about the file
are about that model.

Layouts (`layout=`), recognized by key pattern under any common prefix
(`P` below: "", "model.", "blocks.", ...), one block per layer numbered by
the last integer in its prefix that stands between dots ("layers.0.",
"h.3.attn."; "P0." has none), 0, 1, ... without gaps (a single block may
have no number):

fused   P{l}.W_Q.weight, W_K, W_V: (H d_k) x n, head h = rows h d_k ..
        h d_k + d_k - 1 (W_V likewise with d_v); P{l}.W_O.weight:
        n x (H d_v), head h = those columns. Without `heads`, H is
        rows / n (heads of width n, the paper's recipe).
qkvo    P{l}.<attn>.q_proj.weight, k_proj, v_proj, o_proj (or out_proj),
        e.g. layers.0.self_attn.q_proj.weight or h.3.attn.q_proj.weight;
        heads split by rows as in fused. `heads` is required (a state dict
        cannot tell d_k = n / H from d_k = n) unless a module says it.
mha     nn.MultiheadAttention: P{l}.in_proj_weight, 3E x E, rows Q, K, V
        stacked, each (H d) x E with d = E / H; P{l}.out_proj.weight,
        E x E. PyTorch scales the scores by 1/sqrt(d): the converter applies
        that scale (S = the double nearest 1/sqrt(d)) and records it.
        `heads` is required for a state dict (a module gives num_heads).
map     any other naming, from a JSON object (`key_map`, `--map FILE`)
        mapping sinkcert's names to the file's keys, "{l}" standing for
        the layer number:
          {"W_Q": "enc.{l}.wq.weight", "W_K": ..., "W_V": ..., "W_O": ...,
           "W_G": ... (gated only),
           "W_QKV": ... (instead of W_Q, W_K, W_V: rows Q, K, V stacked),
           "heads": 2, "score_scale": 1.0 (both optional),
           "ignore": ["regex", ...] (keys deliberately left out)}
        or, instead of the projections, the bilinear form itself (the
        paper's parametrization, as a weight file stores it):
          {"A": "enc.{l}.A", "M": "enc.{l}.M"}
        with A = W_Q^T W_K and M = W_O W_V of every head, H x n x n per
        layer (n x n for one head), or one n x n matrix per head with
        "{h}" in the key ("enc.{l}.h{h}.A"); H is read from the shapes
        (a declared count must match), the scores are x_i^T A x_k (score
        scale 1 unless one is given, then applied to A).
        A mapped key K ending in ".weight" has its bias at K with ".bias".
auto    the one of fused, mha, qkvo whose query key is present.

Gated attention (attention="gated") also needs the gate W_g of every head:
`P{l}.W_G.weight` (fused) or `P{l}.<attn>.g_proj.weight` (qkvo), or "W_G"
in a map, shape (H n) x n, head h = rows h n .. h n + n - 1; the head's
output W_O^h sum_k a_ik W_V^h x_k is multiplied coordinatewise by
sigma(W_g^h x_i). Softpick and the other normalizations need no more keys.

What is refused, with one line naming the key or module: an unknown key
(nothing is silently ignored); a nonzero bias (`*.bias`, `in_proj_bias`,
`out_proj.bias`); `bias_k` / `bias_v` (add_bias_kv: a learned key and
value appended to every sequence, an extra attended position even when
zero) and nn.MultiheadAttention's add_zero_attn (a zero key and value: a
built-in sink); cross-attention (kdim or vdim != embed_dim); an
attention-mask buffer (a key whose last component contains "mask", or
GPT-2's "bias", square in its last two dimensions) that is not causal
under any reading (1 = attend, 1 = masked, or added 0 / -inf; a causal one
is accepted and noted); an nn.Sequential of several blocks (chained
without residual connections) or an nn.ModuleList (no forward: how its
blocks are connected cannot be checked); a declared head count that the
module's num_heads or the A/M shapes contradict, or that makes a head of a
state dict wider than n (one head of width 2n and two of width n have the
same rows, so a state dict cannot show its head count, and a head wider
than a token is where a wrong count shows); any normalization layer (a key
or a module named like a layer norm, or a LayerNorm/RMSNorm module, which
may have no parameters at all); a missing or misshapen matrix; NaN or
infinity. A bias that is exactly zero changes nothing and is accepted (the
conversion's notes list it). The architecture itself (causal, residual or
not) is not in the weights: `kind` says it (single-layer for one layer,
residual otherwise, as the models of sinkcert define them), and for a
module the self-test checks it.

The self-test
-------------
When the source is a module (not only a state dict), the module itself and
the converted model are run on task inputs (task_inputs: every trigger
position j = 1..L-1 with 8 random contents and 8 vertices of the content
box, at the given L or else 8) and compared: the module in its own dtype,
in eval mode, without gradients (run_module says how it is called; a
`forward(module, X)` callable overrides it), the converted model by
model_forward, a numpy float64 forward pass of the A and M read back from
the written text (every attention kind, single layer and residual),
independent of the module and of torch. The inputs are rounded to the
module's dtype first, so both see the same X. A difference above

    tol = 64 eps max(1, max |f(X)|, rho32 / 2^-23)

(eps the machine epsilon of the module's dtype, rho32 the largest
difference between the converted model evaluated in float32 and in
float64 on the same inputs: this model's rounding, measured; the
justification is at SELF_TEST_C) is refused in one line naming the largest
difference, the input (index, trigger, random or vertex content), the
position and the coordinate. The file's metadata "self_test" records the tolerance and its
rule, the number of inputs, L, the largest difference and where it is;
for a state dict it says that no self-test ran and what is therefore only
as declared (head count, kind, score scale, attention kind).

Task: the file's "task" gets {"L": ..., "trigger_range": ..., "source": ...}
(L and trigger_range only when given), which sinkcert uses as the default
task of the model; the file's "metadata" records the same with
"score_scale": S, the exact decimal expansion of the double applied to
W_Q (so the file's own task carries no score_scale: it is applied once).
"""
import json
import math
import os
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Dict, List, Optional

import numpy as np

ATTENTIONS = ["softmax", "relu", "relu-count-all", "softmax-off-by-one", "sigmoid", "softpick",
              "gated"]
KINDS = ["single-layer", "residual"]
LAYOUTS = ["auto", "fused", "qkvo", "mha", "map"]
TRIGGER_RANGES = ["paper", "reference-code"]
MATRICES = ["W_Q", "W_K", "W_V", "W_O"]
CONVERTER = "sinkcert.convert"

# Normalization layers by key or module name (the whole path component or
# a component ending in it: ln_1, input_layernorm, norm1, rms_norm, ...).
_NORM_NAME = re.compile(r"(^|[._])(ln(_?\w*)?|\w*norm\w*)\.(weight|bias)$", re.IGNORECASE)
# Normalization modules by class name (LayerNorm, RMSNorm, GroupNorm, ...).
_NORM_CLASS = re.compile(r"norm", re.IGNORECASE)


class ConvertError(ValueError):
    """A problem with the input, one line naming the file, the key and what
    was expected."""


@dataclass
class Source:
    """Weights to convert: {key: float64 array}, where they came from, and
    what a module said about itself."""
    state: Dict[str, np.ndarray]
    name: str
    heads: Optional[int] = None          # num_heads read from a module
    norm_modules: List[str] = field(default_factory=list)  # "name (LayerNorm)"
    module: Any = None                   # the nn.Module itself, for the self-test


@dataclass
class Conversion:
    """The weight file's text and what the conversion did."""
    text: str
    layout: str
    layers: int
    heads: int
    n: int
    score_scale: float
    notes: List[str]
    self_test: Dict[str, Any] = field(default_factory=dict)


def exact(x):
    """The exact decimal expansion of a float64 (a dyadic rational)."""
    return str(Decimal(float(x)))


def _matrix_text(m):
    return "[" + ", ".join("[" + ", ".join(exact(v) for v in row) + "]" for row in m) + "]"


def _shape(a):
    return " x ".join(str(s) for s in np.shape(a))


# --- Reading --------------------------------------------------------------


def _to_array(value, name, key):
    if hasattr(value, "detach"):  # a torch tensor
        return value.detach().cpu().double().numpy()
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConvertError(f"{name}: {key}: expected a tensor or array, got "
                           f"{type(value).__name__}")


def _module_heads(module):
    """num_heads of the attention submodules (nn.MultiheadAttention and the
    common num_heads / num_attention_heads attributes), if they agree."""
    found = set()
    for _, sub in module.named_modules():
        for attr in ("num_heads", "num_attention_heads", "n_head", "n_heads"):
            v = getattr(sub, attr, None)
            if isinstance(v, int) and v >= 1:
                found.add(v)
                break
    return found.pop() if len(found) == 1 else None


def from_torch_object(obj, name="(module)"):
    """A Source from an nn.Module (its state_dict, num_heads and
    normalization layers) or a mapping of names to tensors / arrays."""
    try:
        import torch
        is_module = isinstance(obj, torch.nn.Module)
    except ImportError:
        is_module = False
    if is_module:
        norms = [f"{n or '(root)'} ({type(m).__name__})" for n, m in obj.named_modules()
                 if _NORM_CLASS.search(type(m).__name__)]
        state = {k: _to_array(v, name, k) for k, v in obj.state_dict().items()}
        return Source(state, name, _module_heads(obj), norms, obj)
    if isinstance(obj, dict) or (hasattr(obj, "keys") and hasattr(obj, "__getitem__")):
        return Source({str(k): _to_array(obj[k], name, k) for k in obj.keys()}, name)
    raise ConvertError(f"{name}: (object): expected an nn.Module or a state dict (a mapping of "
                       f"names to tensors), got {type(obj).__name__}")


def load_source(path, allow_pickle=False):
    """A Source from a .npz (numpy alone), or a .pt/.pth state dict or whole
    module (torch). A whole module is a pickle whose loading runs code:
    only with allow_pickle."""
    if not os.path.isfile(path):
        raise ConvertError(f"{path}: (file): expected a readable regular file")
    if path.endswith(".npz"):
        try:
            with np.load(path, allow_pickle=False) as z:
                return Source({k: np.asarray(z[k], dtype=np.float64) for k in z.files}, path)
        except (OSError, ValueError) as e:
            raise ConvertError(f"{path}: (file): expected a numpy .npz archive ({e})")
    if not path.endswith((".pt", ".pth")):
        raise ConvertError(f"{path}: (file): expected a .npz, .pt or .pth file")
    try:
        import torch
    except ImportError:
        raise ConvertError(f"{path}: (file): reading a .pt file needs torch, which is not "
                           "installed; save the state dict with numpy.savez instead")
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds (UnpicklingError, RuntimeError, ...)
        if not allow_pickle:
            raise ConvertError(f"{path}: (file): expected a state dict of tensors (this file "
                               "holds other objects, e.g. a whole saved module; pass "
                               "--allow-pickle / allow_pickle=True to load it, only for a file "
                               f"you trust: unpickling runs code) ({str(e).splitlines()[0]})")
        try:
            obj = torch.load(path, map_location="cpu", weights_only=False)
        except Exception as e2:
            raise ConvertError(f"{path}: (file): cannot load it with torch "
                               f"({str(e2).splitlines()[0]})")
    return from_torch_object(obj, path)


# --- Layouts --------------------------------------------------------------

# Per layout: the tail of a key after its block prefix -> (role, is_bias).
_TAILS = {
    "fused": {f"{m}.{w}": (m, w == "bias") for m in MATRICES + ["W_G"]
              for w in ("weight", "bias")},
    "qkvo": {f"{p}.{w}": (r, w == "bias")
             for p, r in (("q_proj", "W_Q"), ("k_proj", "W_K"), ("v_proj", "W_V"),
                          ("o_proj", "W_O"), ("out_proj", "W_O"), ("g_proj", "W_G"))
             for w in ("weight", "bias")},
    "mha": {"in_proj_weight": ("W_QKV", False), "in_proj_bias": ("W_QKV", True),
            "out_proj.weight": ("W_O", False), "out_proj.bias": ("W_O", True),
            "bias_k": ("bias_k", True), "bias_v": ("bias_v", True)},
}
# The key that identifies a layout in auto mode.
_QUERY_TAIL = {"fused": "W_Q.weight", "mha": "in_proj_weight", "qkvo": "q_proj.weight"}
_LAYOUT_TEXT = {
    "fused": "fused: P{l}.W_Q.weight, W_K, W_V ((H d_k) x n) and W_O (n x (H d_v))",
    "qkvo": "qkvo: P{l}.q_proj.weight, k_proj, v_proj ((H d_k) x n) and o_proj (n x (H d_v))",
    "mha": "mha: nn.MultiheadAttention P{l}.in_proj_weight (3E x E, Q, K, V stacked) and "
           "out_proj.weight (E x E)",
    "map": "map: the keys named by the key map",
}
_LAYER_NUMBER = re.compile(r"(?:^|(?<=\.))(\d+)(?=\.)")


def _split_key(key, tails):
    """(block prefix, tail) if the key ends in one of the tails after a '.'
    or as a whole, else None."""
    for tail in tails:
        if key == tail:
            return "", tail
        if key.endswith("." + tail):
            return key[:-len(tail)], tail
    return None


def _detect(state, name):
    found = [lay for lay, tail in _QUERY_TAIL.items()
             if any(k == tail or k.endswith("." + tail) for k in state)]
    if not found:
        raise ConvertError(f"{name}: (layout): expected the keys of a known layout (a key ending "
                           "in W_Q.weight, q_proj.weight or in_proj_weight), found none; pass a "
                           "key map (--layout map --map FILE)")
    if len(found) > 1:
        raise ConvertError(f"{name}: (layout): keys of the {' and '.join(found)} layouts are both "
                           "present; choose one with --layout")
    return found[0]


def _refuse_norms(source):
    if source.norm_modules:
        raise ConvertError(f"{source.name}: {source.norm_modules[0]}: a normalization layer; "
                           "sinkcert's models have none and cannot represent it")


def _unknown_key(source, key, layout):
    if _NORM_NAME.search(key):
        raise ConvertError(f"{source.name}: {key}: a normalization layer's parameter; sinkcert's "
                           "models have no normalization layers and cannot represent it")
    raise ConvertError(f"{source.name}: {key}: expected only keys of the layout "
                       f"({_LAYOUT_TEXT[layout]}; an unknown key would be silently ignored; "
                       "a key map, --layout map, can list keys to leave out)")


def _layers_from_blocks(source, blocks):
    """Sorted block prefixes -> list indexed by layer."""
    if len(blocks) == 1:
        return list(blocks)
    numbered = {}
    template = None
    for b in blocks:
        numbers = list(_LAYER_NUMBER.finditer(b))
        if not numbers:
            raise ConvertError(f"{source.name}: {b or '(top level)'}: expected one attention block "
                               "per layer, numbered by a dotted integer component of its "
                               "prefix (as layers.0.); this block has none")
        last = numbers[-1]
        t = b[:last.start()] + "{l}" + b[last.end():]
        if template is None:
            template = t
        elif t != template:
            raise ConvertError(f"{source.name}: {b}: expected every layer's block to be named "
                               f"{template}, with l = 0, 1, ...")
        numbered[int(last.group(1))] = b
    for l in range(len(numbered)):
        if l not in numbered:
            raise ConvertError(f"{source.name}: {template.format(l=l)}: missing; expected layers "
                               f"numbered 0..{max(numbered)} without gaps")
    return [numbered[l] for l in range(len(numbered))]


def _refuse_bias_kv(source, key):
    raise ConvertError(f"{source.name}: {key}: a learned {'key' if key.endswith('k') else 'value'}"
                       " appended to every sequence (add_bias_kv=True), an extra attended "
                       "position that sinkcert's models do not have (even when zero: it is a "
                       "sink); expected no bias_k / bias_v")


# Attention-mask buffers: a last key component containing "mask", or
# "bias" as GPT-2 names its causal mask, square in its last two dimensions.
def _mask_buffer(source, key, value, notes):
    """True, with a note, for a causal attention-mask buffer; refuses any
    other mask; False for a key that is not a mask buffer."""
    last = key.rsplit(".", 1)[-1]
    if "mask" not in last.lower() and last != "bias":
        return False
    if value.ndim < 2 or value.shape[-1] != value.shape[-2] or value.shape[-1] < 2:
        return False
    stack = value.reshape(-1, value.shape[-2], value.shape[-1])
    if not np.all(stack == stack[0]):
        raise ConvertError(f"{source.name}: {key}: an attention mask that differs between "
                           "batch entries or heads; expected one causal mask (k <= i)")
    m = stack[0]
    size = m.shape[0]
    lower = np.tril(np.ones((size, size), dtype=bool))
    if np.array_equal(m, lower.astype(np.float64)):
        reading = "1 = attend, k <= i"
    elif np.array_equal(m, (~lower).astype(np.float64)):
        reading = "1 = masked (PyTorch's boolean attn_mask), k > i masked"
    elif np.all(m[lower] == 0) and np.all(np.isneginf(m[~lower])):
        reading = "added to the scores: 0 for k <= i, -inf for k > i"
    else:
        bad = np.argwhere(m != lower.astype(np.float64))[0]
        raise ConvertError(f"{source.name}: {key}: an attention mask that is not causal under "
                           "any reading (1 = attend, 1 = masked, or added 0 / -inf), first "
                           f"differing from k <= i at entry ({bad[0]}, {bad[1]}) = "
                           f"{m[bad[0], bad[1]]:g}; sinkcert's models attend to exactly the "
                           "positions k <= i and cannot represent it")
    notes.append(f"{key}: a causal attention mask ({reading}, {size} x {size}), which "
                 "sinkcert's models apply themselves; not stored")
    return True


def _collect(source, layout, notes):
    """{layer: {role: array}} and {layer: {role: bias array}} by key pattern."""
    tails = _TAILS[layout]
    by_block = {}
    for key, value in source.state.items():
        split = _split_key(key, tails)
        if split is None:
            if _mask_buffer(source, key, value, notes):
                continue
            _unknown_key(source, key, layout)
        block, tail = split
        role, is_bias = tails[tail]
        if role in ("bias_k", "bias_v"):
            _refuse_bias_kv(source, key)
        slot = by_block.setdefault(block, {})
        if (role, is_bias) in slot:
            raise ConvertError(f"{source.name}: {key}: expected one key for {role} in this block, "
                               f"got it and {slot[(role, is_bias)][0]}")
        slot[(role, is_bias)] = (key, value)
    order = _layers_from_blocks(source, sorted(by_block))
    return [by_block[b] for b in order], order


def _collect_map(source, key_map, notes):
    """The same from a key map. A and M (the products) are per layer an
    H x n x n tensor or an n x n matrix (one head), or with "{h}" in the
    key one n x n matrix per head, stacked here into H x n x n."""
    allowed = {"W_Q", "W_K", "W_V", "W_O", "W_G", "W_QKV", "A", "M", "heads", "score_scale",
               "ignore"}
    where = f"{source.name}: (key map)"
    if not isinstance(key_map, dict):
        raise ConvertError(f"{where}: expected a JSON object of sinkcert names to keys")
    for k in key_map:
        if k not in allowed:
            raise ConvertError(f"{where}: {k}: expected only the names "
                               f"{', '.join(sorted(allowed))}")
    fused_qkv = "W_QKV" in key_map
    products = "A" in key_map or "M" in key_map
    if products:
        needed = ["A", "M"]
        both = [k for k in ("W_Q", "W_K", "W_V", "W_O", "W_QKV") if k in key_map]
        if both:
            raise ConvertError(f"{where}: {both[0]}: expected either the products A, M or the "
                               "projection weights, not both")
    else:
        needed = (["W_QKV"] if fused_qkv else ["W_Q", "W_K", "W_V"]) + ["W_O"]
    if fused_qkv and any(k in key_map for k in ("W_Q", "W_K", "W_V")):
        raise ConvertError(f"{where}: W_QKV: expected either W_QKV or W_Q, W_K, W_V, not both")
    for k in needed + ["W_G"]:
        if k in key_map and not isinstance(key_map[k], str):
            raise ConvertError(f"{where}: {k}: expected a key (a string, \"{{l}}\" for the layer"
                               + (", \"{h}\" for the head" if k in ("A", "M") else "") + ")")
    for k in needed:
        if k not in key_map:
            raise ConvertError(f"{where}: {k}: missing; expected the key of that matrix")
    for k in ("W_Q", "W_K", "W_V", "W_O", "W_QKV", "W_G"):
        if k in key_map and "{h}" in key_map[k]:
            raise ConvertError(f"{where}: {k}: \"{{h}}\" is only for A and M; expected the "
                               "heads' rows stacked in one key")
    ignore = key_map.get("ignore", [])
    if not isinstance(ignore, list) or not all(isinstance(r, str) for r in ignore):
        raise ConvertError(f"{where}: ignore: expected a list of regular expressions")
    try:
        ignore_re = [re.compile(r) for r in ignore]
    except re.error as e:
        raise ConvertError(f"{where}: ignore: expected valid regular expressions ({e})")
    roles = [r for r in needed + ["W_G"] if r in key_map]
    layered = any("{l}" in key_map[r] for r in roles)
    layers, used = [], set()

    def product(r, l):
        """A or M of layer l as (key, H x n x n array), or None if missing."""
        pattern = key_map[r].replace("{l}", str(l))
        if "{h}" not in pattern:
            if pattern not in source.state:
                return None
            used.add(pattern)
            a = source.state[pattern]
            return pattern, (a[None] if a.ndim == 2 else a)
        found = []
        while pattern.replace("{h}", str(len(found))) in source.state:
            key = pattern.replace("{h}", str(len(found)))
            used.add(key)
            a = source.state[key]
            if a.ndim != 2:
                raise ConvertError(f"{source.name}: {key}: expected an n x n matrix (one head), "
                                   f"got shape {_shape(a)}")
            found.append(a)
        if not found:
            return None
        if any(a.shape != found[0].shape for a in found):
            raise ConvertError(f"{source.name}: {pattern}: expected every head's matrix of one "
                               "shape")
        return pattern.replace("{h}", f"{{0..{len(found) - 1}}}"), np.stack(found)

    l = 0
    while True:
        entry = {}
        for r in roles:
            key = key_map[r].replace("{l}", str(l))
            if r in ("A", "M"):
                got = product(r, l)
                if got is None:
                    if l > 0 and r == needed[0]:
                        break
                    raise ConvertError(f"{source.name}: {key.replace('{h}', '0')}: missing (key "
                                       f"map {r}, layer {l})")
                entry[(r, False)] = got
                continue
            if key not in source.state:
                if l > 0 and r == needed[0]:
                    break
                raise ConvertError(f"{source.name}: {key}: missing (key map {r}, layer {l})")
            entry[(r, False)] = (key, source.state[key])
            used.add(key)
            if key.endswith(".weight"):
                bias = key[:-len("weight")] + "bias"
                if bias in source.state:
                    entry[(r, True)] = (bias, source.state[bias])
                    used.add(bias)
        else:
            layers.append(entry)
            l += 1
            if layered:
                continue
        break
    ignored = []
    for key in source.state:
        if key in used:
            continue
        if key.endswith(("bias_k", "bias_v")):
            _refuse_bias_kv(source, key)
        if any(r.search(key) for r in ignore_re):
            ignored.append(key)
            continue
        if _mask_buffer(source, key, source.state[key], notes):
            continue
        if _NORM_NAME.search(key):
            _unknown_key(source, key, "map")
        raise ConvertError(f"{source.name}: {key}: not in the key map; expected every key to be "
                           "mapped, or matched by its \"ignore\" list (an unknown key would be "
                           "silently ignored)")
    return layers, [f"layer {i}" for i in range(len(layers))], ignored


# --- The self-test: the module against the converted model ----------------

SELF_TEST_SEED = 20260311          # the probe seed of Definitions 3
SELF_TEST_RANDOM = 8               # inputs with random content, per trigger position
SELF_TEST_VERTICES = 8             # box vertices per trigger position
SELF_TEST_L = 8                    # the length tested when no L is given
SELF_TEST_CHUNK = 64               # sequences per batch (memory: B L^2 scores)
# The tolerance (tolerance() below) is C eps kappa: eps the machine epsilon
# of the module's dtype, kappa the scale of this model's rounding error,
# the largest of 1, max |f(X)| over the inputs, and rho / eps32, where rho
# is the largest difference between the converted model evaluated by
# model_forward in float32 and in float64 on the same inputs: the rounding
# of a float32 forward pass of this very model, measured. A float
# computation's rounding error is, to first order, proportional to the
# unit of its dtype, so the module's own forward in its dtype errs by about
# kappa eps; C = 64 covers the module summing in other orders than
# model_forward (the factors W_Q x, W_K x instead of A, blocked BLAS sums,
# a fused kernel): the module's difference from model_forward was measured
# at 0.4 to 1.3 kappa eps on nn.MultiheadAttention, single-layer modules
# and residual stacks of up to 4 x 4 heads at n = L = 16, float32 and
# float64 (docs/pytorch.md). A worst-case rounding bound (the sum of the
# absolute values of every term) is not used: at n = L = 16 it exceeds the
# measured rounding by 10^4 to 10^5 (0.12 on a 4 x 4 residual stack whose
# outputs are of order 2).
# A wrong conversion (a transposed matrix, a missing or wrong score scale,
# a head split wrongly, a sink the file lacks, no residual stream) changes
# the output at the scale of the output itself.
SELF_TEST_C = 64


def task_inputs(n, L, random=SELF_TEST_RANDOM, vertices=SELF_TEST_VERTICES, seed=SELF_TEST_SEED):
    """Inputs of the task T(n, L) (Definitions 1) at every trigger position
    j = 1 .. L-1: `random` with content i.i.d. uniform on [-1, 1), then
    `vertices` vertices of the content box (every content coordinate +1,
    every one -1, then random signs). Returns X (B x L x n), the triggers
    (B) and each input's kind ("random" or "vertex")."""
    rng = np.random.default_rng(seed)
    c = n - 3
    X, triggers, kinds = [], [], []
    for j in range(1, L):
        for r in range(random + vertices):
            x = np.zeros((L, n))
            x[0, 0] = 1
            for i in range(1, L):
                x[i, 1 if i == j else n - 1] = 1
            if r < random:
                content = rng.uniform(-1, 1, (L - 1, c))
            elif r == random:
                content = np.ones((L - 1, c))
            elif r == random + 1:
                content = -np.ones((L - 1, c))
            else:
                content = rng.choice([-1.0, 1.0], (L - 1, c))
            x[1:, 2:n - 1] = content
            X.append(x)
            triggers.append(j)
            kinds.append("random" if r < random else "vertex")
    return np.array(X), np.array(triggers), kinds


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def attention_weights(S, attention):
    """a_ik from the scores S (B x L x L, entries k > i unused) by the
    attention kind (Definitions 2); 0 for k > i."""
    L = S.shape[-1]
    causal = np.tril(np.ones((L, L), dtype=bool))
    i = np.arange(L)[:, None].astype(np.float64)
    Sc = np.where(causal, S, 0.0)
    if attention in ("softmax", "gated", "softmax-off-by-one"):
        m = np.where(causal, S, -np.inf).max(axis=-1, keepdims=True)
        if attention == "softmax-off-by-one":
            m = np.maximum(m, 0.0)
        e = np.where(causal, np.exp(Sc - m), 0.0)
        Z = e.sum(axis=-1, keepdims=True)
        if attention == "softmax-off-by-one":
            Z = Z + np.exp(-m)
        return e / Z
    if attention in ("relu", "relu-count-all"):
        div = np.maximum(i, 1.0) if attention == "relu" else i + 1.0
        return np.where(causal, np.maximum(Sc, 0.0), 0.0) / div
    if attention == "sigmoid":
        return np.where(causal, _sigmoid(Sc), 0.0) / np.maximum(i, 1.0)
    if attention == "softpick":
        # u = exp(s) - 1 scaled by exp(-m), m = max(0, max s), without
        # cancellation (src/attention.h)
        m = np.maximum(np.where(causal, S, -np.inf).max(axis=-1, keepdims=True), 0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.where(Sc > 0, -np.exp(Sc - m) * np.expm1(-Sc), np.exp(-m) * np.expm1(Sc))
        e = np.where(causal, e, 0.0)
        D = np.abs(e).sum(axis=-1, keepdims=True)
        return np.where(D > 0, np.maximum(e, 0.0) / np.where(D > 0, D, 1.0), 0.0)
    raise ValueError(f"attention: unknown kind {attention!r}")


def model_forward(weights, attention, kind, X, dtype=np.float64):
    """f(X) of a converted model, computed in numpy in `dtype` (float64 by
    default) from its A and M (formed from the factors when the file holds
    factors), for a batch X (B x L x n). weights: [layer][head] of
    {"W_Q", "W_K", "W_V", "W_O"} or {"A", "M"}, plus "gate"; lists or
    arrays, as in a weight file."""
    x = np.asarray(X, dtype=dtype)
    for layer in weights:
        out = np.zeros_like(x)
        for head in layer:
            h = {k: np.asarray(v, dtype=dtype) for k, v in head.items()}
            if "A" in h:
                A, M = h["A"], h["M"]
            else:
                A, M = h["W_Q"].T @ h["W_K"], h["W_O"] @ h["W_V"]
            S = np.einsum("bin,nm,bkm->bik", x, A, x)
            o = (attention_weights(S, attention) @ x) @ M.T
            if attention == "gated":
                o = o * _sigmoid(x @ h["gate"].T)
            out += o
        x = x + out if kind == "residual" else out
    return x


def tolerance(eps, largest_output, rho32):
    """The self-test's tolerance C eps kappa (SELF_TEST_C above)."""
    return SELF_TEST_C * eps * max(1.0, largest_output, rho32 / EPS32)


EPS32 = 2.0 ** -23  # float32's machine epsilon


def _module_dtype(module):
    import torch
    for t in list(module.parameters()) + list(module.buffers()):
        if t.is_floating_point():
            return t.dtype, t.device
    return torch.get_default_dtype(), torch.device("cpu")


def run_module(module, X, forward=None):
    """The module's own output on the batch X (a B x L x n tensor in its
    dtype), in eval mode (dropout off), without gradients: forward(module,
    X) when given; an nn.MultiheadAttention as self-attention with the
    causal mask; any other module called on the batch, and if that raises or
    gives another shape, on each sequence (L x n). A tuple's first element
    is the output. Returns (B x L x n float64 array, how it was called)."""
    import torch
    B, L, n = X.shape
    was_training = module.training
    module.eval()

    def output(y):
        if isinstance(y, (tuple, list)) and y:
            y = y[0]
        if not isinstance(y, torch.Tensor):
            raise TypeError(f"returned a {type(y).__name__}, not a tensor")
        return y

    try:
        with torch.no_grad():
            if forward is not None:
                return output(forward(module, X)), "forward(module, X)"
            if isinstance(module, torch.nn.MultiheadAttention):
                mask = torch.triu(torch.ones(L, L, dtype=torch.bool, device=X.device), 1)
                x = X if module.batch_first else X.transpose(0, 1)
                y = module(x, x, x, attn_mask=mask, need_weights=False)[0]
                return (y if module.batch_first else y.transpose(0, 1)), \
                    "module(x, x, x, attn_mask=causal)"
            try:
                y = output(module(X))
                if tuple(y.shape) == (B, L, n):
                    return y, "module(X) on a batch B x L x n"
                first = f"module(X) on a batch B x L x n gave shape {tuple(y.shape)}"
            except Exception as e:  # any error of the user's forward
                first = f"module(X) on a batch B x L x n raised {type(e).__name__}: " + \
                    (str(e).splitlines() or [""])[0]
            try:
                ys = [output(module(X[b])) for b in range(B)]
                if all(tuple(y.shape) == (L, n) for y in ys):
                    return torch.stack(ys), "module(x) on each sequence L x n"
                second = f"on one sequence L x n it gave shape {tuple(ys[0].shape)}"
            except Exception as e:
                second = f"on one sequence L x n it raised {type(e).__name__}: " + \
                    (str(e).splitlines() or [""])[0]
            raise ConvertError(f"{first}; {second}")
    finally:
        module.train(was_training)


def self_test(source, weights, attention, kind, n, L, forward=None):
    """Runs the module and the converted model (model_forward, from the
    written matrices) on task_inputs and refuses, in one line naming the
    largest difference, when they differ by more than tolerance(); else the
    provenance record written into the file's metadata."""
    import torch
    length = L if L is not None else SELF_TEST_L
    dtype, device = _module_dtype(source.module)
    X, triggers, kinds = task_inputs(n, length)
    Xt = torch.tensor(X, dtype=dtype, device=device)
    X = Xt.detach().cpu().double().numpy()  # the inputs as the module sees them
    got, want, rho32 = [], [], 0.0
    for start in range(0, X.shape[0], SELF_TEST_CHUNK):
        chunk = slice(start, start + SELF_TEST_CHUNK)
        try:
            out, how = run_module(source.module, Xt[chunk], forward)
        except ConvertError as e:
            raise ConvertError(f"{source.name}: self-test: cannot run the module on task "
                               f"inputs: {e}; expected forward=callable(module, X) -> f(X), or "
                               "convert its state_dict() (then no module self-test runs)")
        except Exception as e:  # any error of the user's module or forward
            raise ConvertError(f"{source.name}: self-test: running the module on task inputs "
                               f"raised {type(e).__name__}: {(str(e).splitlines() or [''])[0]}")
        out = out.detach().cpu().double().numpy()
        if out.shape != X[chunk].shape:
            raise ConvertError(f"{source.name}: self-test: the module returned shape "
                               f"{' x '.join(map(str, out.shape))} on a batch of "
                               f"{' x '.join(map(str, X[chunk].shape))}; expected f(X) of the "
                               "same shape")
        ref = model_forward(weights, attention, kind, X[chunk])
        with np.errstate(over="ignore", invalid="ignore"):
            low = model_forward(weights, attention, kind, X[chunk], np.float32)
        # where float32 overflows, its rounding says nothing: those entries
        # are left out (an infinite rho32 would accept anything)
        finite = np.isfinite(low) & np.isfinite(ref)
        if finite.any():
            rho32 = max(rho32, float(np.abs(low - ref)[finite].max()))
        got.append(out)
        want.append(ref)
    got, want = np.concatenate(got), np.concatenate(want)
    eps = float(torch.finfo(dtype).eps)
    bits = int(round(-math.log2(eps))) + 1
    for values, whose in ((got, "the module's output"),
                          (want, "the converted model's float64 forward")):
        bad = np.argwhere(~np.isfinite(values))
        if bad.size:
            b, i, d = bad[0]
            raise ConvertError(f"{source.name}: self-test: {whose} is {values[b, i, d]} at input "
                               f"{b} (trigger j = {triggers[b]}, {kinds[b]} content), position "
                               f"{i}, coordinate {d}; expected finite outputs on task inputs")
    largest_output = float(np.abs(want).max())
    tol = tolerance(eps, largest_output, rho32)
    diff = np.abs(got - want)
    b, i, d = np.unravel_index(int(np.argmax(diff)), diff.shape)
    largest = float(diff[b, i, d])
    at = {"input": int(b), "trigger": int(triggers[b]), "content": kinds[b], "position": int(i),
          "coordinate": int(d), "module": float(got[b, i, d]), "converted": float(want[b, i, d])}
    dtype_name = str(dtype).replace("torch.", "")
    if not largest <= tol:
        raise ConvertError(
            f"{source.name}: self-test: the converted model differs from the module by "
            f"{largest:.3e} at input {b} (trigger j = {at['trigger']}, {kinds[b]} content), "
            f"position {i}, coordinate {d} (module {at['module']:.9g}, converted "
            f"{at['converted']:.9g}), beyond the tolerance {tol:.3e} for {dtype_name} rounding; "
            "the weight file would describe another function")
    return {"ran": True, "module": type(source.module).__name__, "called_as": how,
            "dtype": dtype_name, "mode": "eval (dropout off)",
            "inputs": int(X.shape[0]), "L": length,
            "input_set": f"every trigger position j = 1..{length - 1}, each with "
                         f"{SELF_TEST_RANDOM} random contents (seed {SELF_TEST_SEED}) and "
                         f"{SELF_TEST_VERTICES} box vertices",
            "tolerance": tol,
            "tolerance_rule": f"{SELF_TEST_C} eps max(1, max |f(X)|, rho32 / 2^-23), eps = "
                              f"{eps!r} ({dtype_name}), max |f(X)| = {largest_output!r}, "
                              f"rho32 = {rho32!r}: the largest difference between the "
                              "converted model in float32 and in float64 on these inputs",
            "largest_difference": largest, "at": at,
            "evidence": f"NUMERIC({bits}) module, NUMERIC(53) converted model"}


# --- Conversion -----------------------------------------------------------


def _check_bias(source, key, value, zero_biases):
    if value.size and not np.all(value == 0):
        biggest = float(np.max(np.abs(value))) if np.all(np.isfinite(value)) else float("nan")
        raise ConvertError(f"{source.name}: {key}: a nonzero bias (max |b| = {biggest:.6g}); "
                           "sinkcert's models have no biases and cannot represent it")
    zero_biases.append(key)


def _matrix(source, entry, role, want, what):
    if (role, False) not in entry:
        raise ConvertError(f"{source.name}: {what(role)}: missing; expected a "
                           f"{' x '.join(str(w) for w in want)} matrix")
    key, a = entry[(role, False)]
    if tuple(a.shape) != tuple(want):
        raise ConvertError(f"{source.name}: {key}: expected shape "
                           f"{' x '.join(str(w) for w in want)}, got {_shape(a)}")
    if not np.all(np.isfinite(a)):
        raise ConvertError(f"{source.name}: {key}: expected finite entries, got NaN or infinity")
    return a


def _refuse_module_structure(source):
    """One-line refusals for what a module says about itself that no weight
    file can express (nn.MultiheadAttention's extra keys and values, and
    cross-attention)."""
    import torch
    for path, sub in source.module.named_modules():
        if not isinstance(sub, torch.nn.MultiheadAttention):
            continue
        where = f"{source.name}: {path or '(root)'} (MultiheadAttention)"
        if sub.add_zero_attn:
            raise ConvertError(f"{where}: add_zero_attn=True appends a zero key and value to "
                               "every sequence, a built-in sink that sinkcert's models do not "
                               "have; expected add_zero_attn=False")
        if sub.bias_k is not None or sub.bias_v is not None:
            raise ConvertError(f"{where}: bias_k / bias_v (add_bias_kv=True) append a learned "
                               "key and value to every sequence, an extra attended position "
                               "that sinkcert's models do not have; expected add_bias_kv=False")
        if not sub._qkv_same_embed_dim:
            raise ConvertError(f"{where}: kdim = {sub.kdim}, vdim = {sub.vdim}, embed_dim = "
                               f"{sub.embed_dim}: keys and values from another sequence "
                               "(cross-attention); expected self-attention, kdim = vdim = "
                               "embed_dim")


def _refuse_plain_stack(source):
    """A container root of several blocks: its blocks are not connected
    residually (nn.Sequential) or not connected at all (nn.ModuleList),
    which kind residual would silently assume."""
    import torch
    root = source.module
    count = len(root) if isinstance(root, (torch.nn.Sequential, torch.nn.ModuleList,
                                           torch.nn.ModuleDict)) else 0
    if count < 2:
        return
    what = f"{source.name}: (root) ({type(root).__name__})"
    if isinstance(root, torch.nn.Sequential):
        raise ConvertError(f"{what}: chains its {count} blocks without residual "
                           "connections (x -> block(x)), a plain stack sinkcert's models do not "
                           "have; expected a module whose forward adds each block's output to "
                           "its input (x -> x + block(x), kind residual)")
    if isinstance(root, (torch.nn.ModuleList, torch.nn.ModuleDict)):
        raise ConvertError(f"{what}: has no forward, so how its {count} blocks are "
                           "connected (residual or not) cannot be checked; expected the module "
                           "that runs them, or its state_dict() with kind declared (then no "
                           "module self-test runs)")


def convert(source, layout="auto", attention="softmax", kind=None, heads=None, score_scale=None,
            L=None, trigger_range=None, key_map=None, forward=None):
    """The weight file for `source` (a Source, see load_source and
    from_torch_object). When the source holds a module, the module and the
    converted model are run on task inputs and compared (self_test below);
    forward(module, X) -> f(X) says how to call it (default: see
    run_module). Raises ConvertError, one line naming the key."""
    name = source.name
    if layout not in LAYOUTS:
        raise ConvertError(f"{name}: layout: expected one of {', '.join(LAYOUTS)}, got {layout!r}")
    if attention not in ATTENTIONS:
        raise ConvertError(f"{name}: attention: expected one of {', '.join(ATTENTIONS)}, got "
                           f"{attention!r}")
    if kind is not None and kind not in KINDS:
        raise ConvertError(f"{name}: kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    if heads is not None and (not isinstance(heads, int) or heads < 1):
        raise ConvertError(f"{name}: heads: expected an integer >= 1, got {heads!r}")
    if L is not None and (not isinstance(L, int) or L < 2):
        raise ConvertError(f"{name}: L: expected an integer >= 2, got {L!r}")
    if trigger_range is not None and trigger_range not in TRIGGER_RANGES:
        raise ConvertError(f"{name}: trigger_range: expected one of {', '.join(TRIGGER_RANGES)}, "
                           f"got {trigger_range!r}")
    if score_scale is not None and (not isinstance(score_scale, (int, float)) or
                                    not math.isfinite(score_scale) or score_scale == 0):
        raise ConvertError(f"{name}: score_scale: expected a finite nonzero number, got "
                           f"{score_scale!r}")
    if (layout == "map") != (key_map is not None):
        raise ConvertError(f"{name}: {'key map' if layout == 'map' else 'layout'}: expected a key "
                           "map (--map FILE) exactly with layout map")
    if forward is not None and not callable(forward):
        raise ConvertError(f"{name}: forward: expected a callable forward(module, X) -> f(X)")
    if forward is not None and source.module is None:
        raise ConvertError(f"{name}: forward: given, but the source is a state dict, not a "
                           "module; expected a module to run")
    _refuse_norms(source)
    if source.module is not None:
        _refuse_module_structure(source)
        _refuse_plain_stack(source)
    notes = []
    if layout == "auto":
        layout = _detect(source.state, name)
    ignored = []
    products = layout == "map" and isinstance(key_map, dict) and ("A" in key_map or
                                                                    "M" in key_map)
    if layout == "map":
        entries, blocks, ignored = _collect_map(source, key_map, notes)
        if "heads" in key_map:
            if not isinstance(key_map["heads"], int) or key_map["heads"] < 1:
                raise ConvertError(f"{name}: (key map): heads: expected an integer >= 1")
            if heads is None:
                heads = key_map["heads"]
        if score_scale is None and "score_scale" in key_map:
            score_scale = key_map["score_scale"]
            if not isinstance(score_scale, (int, float)) or not math.isfinite(score_scale) \
                    or score_scale == 0:
                raise ConvertError(f"{name}: (key map): score_scale: expected a finite nonzero "
                                   "number")
        if ignored:
            notes.append(f"{len(ignored)} key(s) left out as the key map's \"ignore\" says: "
                         + ", ".join(ignored[:5]) + (", ..." if len(ignored) > 5 else ""))
    else:
        entries, blocks = _collect(source, layout, notes)
    count = len(entries)
    if heads is not None and source.heads is not None and heads != source.heads:
        raise ConvertError(f"{name}: heads: declared {heads}, but the module's attention has "
                           f"num_heads = {source.heads}; expected {source.heads} (or omit heads)")
    if heads is None:
        heads = source.heads
    if heads is None and layout in ("qkvo", "mha") or (heads is None and layout == "map"
                                                        and not products):
        raise ConvertError(f"{name}: heads: required for the {layout} layout (the weights do not "
                           "say how many heads their rows hold); pass --heads H")
    zero_biases = []
    gated = attention == "gated"

    qkvo_names = {"W_Q": "q_proj", "W_K": "k_proj", "W_V": "v_proj", "W_O": "o_proj",
                  "W_G": "g_proj"}

    def what(l):
        """The key a role of layer l would have (for 'missing' errors)."""
        def key(role):
            if layout == "fused":
                return f"{blocks[l]}{role}.weight"
            if layout == "qkvo":
                return f"{blocks[l]}{qkvo_names[role]}.weight"
            if layout == "mha":
                return blocks[l] + ("in_proj_weight" if role == "W_QKV" else "out_proj.weight")
            return key_map.get(role, role).replace("{l}", str(l))
        return key

    if products:
        a0key, a0 = entries[0][("A", False)]
        if a0.ndim != 3 or a0.shape[1] != a0.shape[2] or a0.shape[2] < 3:
            raise ConvertError(f"{name}: {a0key}: expected shape n x n or H x n x n with n >= 3, "
                               f"got {_shape(a0[0] if a0.shape[0] == 1 else a0)}")
        n = a0.shape[2]
        if heads is not None and heads != a0.shape[0]:
            raise ConvertError(f"{name}: heads: declared {heads}, but {a0key} holds "
                               f"{a0.shape[0]} head(s) ({_shape(a0)}); expected {a0.shape[0]}")
        heads = a0.shape[0]
        dk = dv = n
        if score_scale is None:
            score_scale = 1.0
            notes.append("A, M: the scores are x_i^T A x_k as given (score scale 1)")
    else:
        # the query (or stacked) matrix of layer 0 fixes n, and with H, d_k
        first_role = "W_QKV" if (layout == "mha" or (layout == "map" and "W_QKV" in key_map)) \
            else "W_Q"
        if (first_role, False) not in entries[0]:
            raise ConvertError(f"{name}: {what(0)(first_role)}: missing; expected a matrix with n "
                               "columns")
        q0key, q0 = entries[0][(first_role, False)]
        stacked = 3 if first_role == "W_QKV" else 1
        if q0.ndim != 2 or q0.shape[1] < 3 or q0.shape[0] < stacked or q0.shape[0] % stacked:
            raise ConvertError(f"{name}: {q0key}: expected shape ({'3 ' if stacked == 3 else ''}"
                               f"H d_k) x n with n >= 3, got {_shape(q0)}")
        n = q0.shape[1]
        rows_q = q0.shape[0] // stacked
        declared = heads is not None
        if heads is None:  # fused: heads of width n
            if rows_q % n:
                raise ConvertError(f"{name}: {q0key}: expected shape (H d) x d = (H * {n}) x {n}, "
                                   f"got {q0.shape[0]} x {n}")
            heads = rows_q // n
        if rows_q % heads:
            raise ConvertError(f"{name}: {q0key}: expected {'3 ' if stacked == 3 else ''}H d_k "
                               f"rows with H = {heads} heads, got {q0.shape[0]}")
        dk = rows_q // heads
        others = [h for h in range(1, rows_q + 1)
                  if rows_q % h == 0 and rows_q // h <= n and h != heads]
        if source.module is None and declared and others:
            notes.append(f"{heads} head(s) as declared: a state dict cannot show its head count "
                         f"(its {rows_q} query rows also split into "
                         + ", ".join(f"{h} x {rows_q // h}" for h in others[:4])
                         + (", ..." if len(others) > 4 else "")
                         + "); converting the module itself checks it")
        # The head count of a state dict cannot be read from its shapes (one
        # head of width 2n and two of width n have the same rows); a head
        # wider than the token is where a wrong count shows.
        if dk > n and source.module is None:
            raise ConvertError(f"{name}: {q0key}: {rows_q} query rows as {heads} head(s) of "
                               f"width {dk} > n = {n}, wider than a token: a head count a state "
                               f"dict cannot confirm; expected heads >= {-(-rows_q // n)} (width "
                               "<= n), or the module itself (whose self-test checks it)")
        # the value width: W_V's rows (stacked: equal to d_k)
        if stacked == 1 and ("W_V", False) in entries[0]:
            rows_v = entries[0][("W_V", False)][1].shape[0]
            dv = rows_v // heads if rows_v % heads == 0 else dk
        else:
            dv = dk
    if layout == "mha":
        implied = 1.0 / math.sqrt(dk)
        if score_scale is not None and score_scale != implied:
            raise ConvertError(f"{name}: score_scale: nn.MultiheadAttention scales scores by "
                               f"1/sqrt(head width {dk}) = {implied!r}; omit it or pass that "
                               f"value, got {score_scale!r}")
        score_scale = implied
        notes.append(f"nn.MultiheadAttention: scores scaled by 1/sqrt({dk}), applied as W_Q times "
                     f"{implied!r}")
    if score_scale is None:
        raise ConvertError(f"{name}: score_scale: required for the {layout} layout (the weights do "
                           "not say whether scores were scaled): pass --score-scale 1 for the "
                           "paper's unscaled scores, or 1/sqrt(d_k) for scaled dot-product")
    score_scale = float(score_scale)
    mantissa, _ = math.frexp(score_scale)
    if abs(mantissa) != 0.5:
        notes.append(f"score scale {score_scale!r} is not a power of two: each entry of the scaled "
                     f"{'A' if products else 'W_Q'} is rounded to float64 once")
    if kind is None:
        kind = "single-layer" if count == 1 else "residual"
    if kind == "single-layer" and count != 1:
        raise ConvertError(f"{name}: (layers): kind single-layer needs exactly one layer, got "
                           f"{count}")
    out_layers = []
    for l, entry in enumerate(entries):
        w = what(l)
        for (role, is_bias), (key, value) in sorted(entry.items()):
            if is_bias:
                _check_bias(source, key, value, zero_biases)
        if (("W_G", False) in entry) and not gated:
            raise ConvertError(f"{name}: {entry[('W_G', False)][0]}: a gate; only attention "
                               f"\"gated\" has one (this conversion's attention is \"{attention}\")")
        if products:
            mats = {r: _matrix(source, entry, r, (heads, n, n), w) for r in ("A", "M")}
        elif stacked == 3:
            qkv = _matrix(source, entry, "W_QKV", (3 * heads * dk, n), w)
            mats = {"W_Q": qkv[:heads * dk], "W_K": qkv[heads * dk:2 * heads * dk],
                    "W_V": qkv[2 * heads * dk:]}
        else:
            mats = {r: _matrix(source, entry, r, (heads * (dv if r == "W_V" else dk), n), w)
                    for r in ("W_Q", "W_K", "W_V")}
        if not products:
            mats["W_O"] = _matrix(source, entry, "W_O", (n, heads * dv), w)
        if gated:
            if layout == "mha":
                raise ConvertError(f"{name}: attention: nn.MultiheadAttention has no gate; "
                                   "attention \"gated\" needs the fused, qkvo or map layout")
            mats["W_G"] = _matrix(source, entry, "W_G", (heads * n, n), w)
        heads_out = []
        for h in range(heads):
            if products:
                head = {"A": mats["A"][h] * score_scale, "M": mats["M"][h]}
            else:
                qk = slice(h * dk, (h + 1) * dk)
                vo = slice(h * dv, (h + 1) * dv)
                head = {"W_Q": mats["W_Q"][qk, :].astype(np.float64) * score_scale,
                        "W_K": mats["W_K"][qk, :], "W_V": mats["W_V"][vo, :],
                        "W_O": mats["W_O"][:, vo]}
            if gated:
                head["gate"] = mats["W_G"][h * n:(h + 1) * n, :]
            heads_out.append(head)
        out_layers.append(heads_out)
    if zero_biases:
        notes.append(f"{len(zero_biases)} bias(es) exactly zero, accepted (they do not change the "
                     "function): " + ", ".join(zero_biases[:4]) +
                     (", ..." if len(zero_biases) > 4 else ""))
    rows = []
    for heads_out in out_layers:
        heads_text = []
        for head in heads_out:
            heads_text.append("      {\n" + ",\n".join(
                f'        "{k}": {_matrix_text(v)}' for k, v in head.items()) + "\n      }")
        rows.append("    [\n" + ",\n".join(heads_text) + "\n    ]")
    weights_text = "[\n" + ",\n".join(rows) + "\n  ]"
    # The self-test reads the matrices back from the text that is written.
    written = json.loads(weights_text)
    if source.module is not None:
        test = self_test(source, written, attention, kind, n, L, forward)
    else:
        test = {"ran": False,
                "reason": "a state dict was converted, not a module: no module self-test ran, "
                          "so the head count, the kind (single-layer or residual), the score "
                          "scale and the attention kind are as declared, not checked against "
                          "the module's function"}
    task = {}
    if L is not None:
        task["L"] = L
    if trigger_range is not None:
        task["trigger_range"] = trigger_range
    task["score_scale"] = "@SCORE_SCALE@"  # written as its exact decimal below
    task["source"] = os.path.basename(name) if os.path.sep in name else name
    # The file's own task (what sinkcert reads as the model's default task):
    # L, trigger range and source, without the score scale, which is already
    # in W_Q (a task.score_scale would be applied a second time).
    file_task = {k: v for k, v in task.items() if k != "score_scale"}
    heads_text = (f"{heads} head(s) given as A = W_Q^T W_K and M = W_O W_V ({n} x {n})"
                  if products else f"{heads} head(s) of width {dk} (values {dv})")
    meta = {"converter": CONVERTER, "layout": _LAYOUT_TEXT[layout],
            "heads": f"{heads_text} on n = {n}", "task": task, "self_test": test}
    if notes:
        meta["notes"] = notes
    text = ("{\n"
            '  "format": "sinkcert-weights",\n  "version": 1,\n'
            f'  "kind": "{kind}",\n  "attention": "{attention}",\n'
            f'  "n": {n},\n  "layers": {count},\n  "heads": {heads},\n'
            '  "weights": ' + weights_text + ",\n"
            '  "task": ' + json.dumps(file_task) + ",\n"
            '  "metadata": ' + json.dumps(meta).replace('"@SCORE_SCALE@"', exact(score_scale))
            + "\n}\n")
    return Conversion(text, layout, count, heads, n, score_scale, notes, test)


def read_key_map(path):
    """A key map from a JSON file."""
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise ConvertError(f"{path}: (file): expected a readable JSON key map ({e.strerror})")
    except ValueError as e:
        raise ConvertError(f"{path}: (file): expected a JSON key map ({e})")


def write_atomically(path, text):
    """Writes text to path through a temporary file and a rename."""
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
