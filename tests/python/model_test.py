# SPDX-License-Identifier: MIT
"""The sinkcert package with its compiled extension (run by ctest with
build/python on PYTHONPATH).

Checked:
1. Model.from_torch on real nn.Modules, against PyTorch's own float64
   forward pass: nn.MultiheadAttention (causal mask, no bias; one layer,
   and two residual layers) and a q_proj/k_proj/v_proj/o_proj module with
   scaled scores; outputs and every head's attention to TOLERANCE.
2. A module with a bias is refused, the bias named.
3. The typed results of attack, bound and bos_bound on an n = 5, L = 4
   model: evidence labels, enclosures whose float ends bracket their exact
   decimal ends, a true claim VERIFIED and a false one NOT VERIFIED with a
   witness that re-evaluates above the claim.
4. from_numpy, from_file and save agree; bad input is a ValueError naming
   the field; progress callbacks are called, and the GIL is released during
   a long call; check() is NotImplementedError unless built in.
5. "Solves" and "sinks" (tolerance=, sink_bar=): the CLI's words and bars,
   a case on each side of each bar, bad bars a ValueError.
6. Parity with the command line: __version__ is the project version;
   eval on a batch [B, L, n] equals eval one by one; a weight or value that
   is infinite or NaN in double is a ValueError naming it; from_numpy's task
   is the saved file's own; bos_bound on a residual model, one head (with
   claims, both ways) and every head, intersecting `verify bos`'s enclosure;
   check(out=DIR) writes the files of `sinkcert check --out`.
"""
import decimal
import json
import os
import re
import subprocess
import threading
from fractions import Fraction

import numpy as np
import pytest
import torch

import sinkcert

# sinkcert evaluates the converted model in double with the scale folded
# into W_Q (rounded once per entry) and A = W_Q^T W_K, M = W_O W_V formed
# first; PyTorch multiplies the unfolded matrices in another order. Both
# are O(L n^2) float64 sums of values of order 1: a few ulps each (1e-15),
# so 1e-12 leaves three orders of margin and still catches a wrong head
# split, a missing scale or a transposed matrix (order 1e-2 or more).
TOLERANCE = 1e-12


def task_input(rng, n, L, trigger):
    X = np.zeros((L, n))
    X[0, 0] = 1
    for i in range(1, L):
        X[i, 1 if i == trigger else n - 1] = 1
        X[i, 2:n - 1] = rng.uniform(-1, 1, n - 3)
    return X


def causal_mask(L):
    return torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)  # True = not attended


class MhaStack(torch.nn.Module):
    """Layers of nn.MultiheadAttention, residual when more than one."""

    def __init__(self, n, heads, layers):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.MultiheadAttention(n, heads, bias=False) for _ in range(layers))

    def forward(self, x):  # x: L x n
        attention = []
        for mha in self.layers:
            xb = x[:, None, :]  # (L, batch 1, n)
            out, w = mha(xb, xb, xb, attn_mask=causal_mask(x.shape[0]), need_weights=True,
                         average_attn_weights=False)
            x = x + out[:, 0, :] if len(self.layers) > 1 else out[:, 0, :]
            attention.append(w[0])  # heads x L x L
        return x, attention


class QkvoAttention(torch.nn.Module):
    """One causal attention layer in the q_proj/k_proj/v_proj/o_proj layout,
    scores scaled by 1/sqrt(head width)."""

    def __init__(self, n, heads, width):
        super().__init__()
        self.num_heads, self.width = heads, width
        self.q_proj = torch.nn.Linear(n, heads * width, bias=False)
        self.k_proj = torch.nn.Linear(n, heads * width, bias=False)
        self.v_proj = torch.nn.Linear(n, heads * width, bias=False)
        self.o_proj = torch.nn.Linear(heads * width, n, bias=False)

    def forward(self, x):
        L, H, d = x.shape[0], self.num_heads, self.width
        q, k, v = (p(x).view(L, H, d).transpose(0, 1) for p in (self.q_proj, self.k_proj,
                                                                   self.v_proj))
        s = (q @ k.transpose(1, 2)) / d ** 0.5
        a = torch.softmax(s.masked_fill(causal_mask(L), float("-inf")), dim=-1)
        return self.o_proj((a @ v).transpose(0, 1).reshape(L, H * d)), list(a[None])


def compare(module, model, n, L, seed):
    rng = np.random.default_rng(seed)
    worst = 0.0
    for trigger in range(1, L):
        X = task_input(rng, n, L, trigger)
        with torch.no_grad():
            want, attention = module(torch.tensor(X))
        got = model.eval(X)
        assert got.evidence == "NUMERIC(53)" and got.trigger == trigger
        worst = max(worst, float(np.abs(got.output - want.numpy()).max()))
        for l, heads in enumerate(attention):
            for h in range(heads.shape[0]):
                worst = max(worst,
                            float(np.abs(got.attention[l][h] - heads[h].numpy()).max()))
    assert worst <= TOLERANCE, worst
    return worst


@pytest.mark.parametrize("n,heads,layers", [(6, 2, 1), (8, 2, 2)])
def test_multihead_attention_matches_pytorch(n, heads, layers):
    torch.manual_seed(10 + layers)
    module = MhaStack(n, heads, layers).double().eval()
    model = sinkcert.Model.from_torch(module, L=6)
    assert (model.n, model.layers, model.heads) == (n, layers, heads)
    assert model.kind == ("single-layer" if layers == 1 else "residual")
    assert model.metadata["task"]["score_scale"] == 1 / (n // heads) ** 0.5
    compare(module, model, n, 6, seed=layers)
    # the comparison fails on a wrong scale: the same weights unscaled
    wrong = sinkcert.Model.from_torch(
        {k.replace("in_proj_weight", "W_QKV"): v for k, v in module.state_dict().items()},
        layout="map", heads=heads, score_scale=1.0,
        key_map={"W_QKV": "layers.{l}.W_QKV", "W_O": "layers.{l}.out_proj.weight"})
    with pytest.raises(AssertionError):
        compare(module, wrong, n, 6, seed=layers)


def test_qkvo_matches_pytorch():
    torch.manual_seed(20)
    module = QkvoAttention(6, 3, 4).double().eval()
    model = sinkcert.Model.from_torch(module, score_scale=0.5, L=5)  # 1/sqrt(4), heads from it
    assert (model.heads, model.n) == (3, 6)
    compare(module, model, 6, 5, seed=3)


def test_bias_refused_by_name():
    torch.manual_seed(30)
    module = MhaStack(6, 2, 1).double()
    module.layers[0].out_proj.bias = torch.nn.Parameter(torch.full((6,), 0.5,
                                                                   dtype=torch.float64))
    with pytest.raises(sinkcert.ConvertError, match=r"layers\.0\.out_proj\.bias: a nonzero bias"):
        sinkcert.Model.from_torch(module, L=6)


@pytest.fixture(scope="module")
def small():
    """A random single-layer softmax model, n = 5, L = 4, with small scores
    (A of scale 0.1), so that the bound reaches a 5 % gap in about a second."""
    rng = np.random.default_rng(40)
    return sinkcert.Model.from_numpy({"A": rng.normal(0, 0.1, (5, 5)),
                                      "M": rng.normal(0, 0.7, (5, 5))}, L=4)


def test_attack_typed(small):
    r = small.attack(seed=0)
    assert isinstance(r, sinkcert.AttackResult)
    assert r.evidence == "SEARCH(lower bound)" and r.quantity == "error"
    assert r.witness.shape == (4, 5) and r.value > 0
    # certified at the witness: the double evaluation agrees to rounding
    assert small.eval(r.witness).error == pytest.approx(r.value, rel=1e-9)
    assert [w.trigger for w in r.per_trigger] == [1, 2, 3]
    bos = small.attack(seed=0, bos=True)
    assert bos.evidence == "SEARCH(upper bound)" and 0 <= bos.value <= 1


def test_bound_typed_and_claims(small):
    found = small.attack(seed=0).value
    b = small.bound(seconds=20, gap=0.05)
    assert isinstance(b, sinkcert.BoundResult)
    assert b.verdict is sinkcert.Verdict.ENCLOSED and b.evidence == "CERTIFIED"
    assert b.claim is None and b.quantity == "worst-case error E"
    # the float ends enclose the exact ends, which enclose the attack's value
    assert Fraction(b.lo) <= Fraction(b.lo_exact) <= Fraction(b.hi_exact) <= Fraction(b.hi)
    assert b.lo <= found * (1 + 1e-9) and found <= b.hi
    assert b.witness.shape == (4, 5) and small.eval(b.witness).error >= b.lo * (1 - 1e-9)
    true = small.bound(seconds=20, claim=2 * b.hi)
    assert true.verdict is sinkcert.Verdict.VERIFIED and true.margin > 0
    false = small.bound(seconds=20, claim=b.lo / 2)
    assert false.verdict is sinkcert.Verdict.NOT_VERIFIED and false.margin > 0
    assert small.eval(false.witness).error > b.lo / 2


def test_bos_bound_typed(small):
    s = small.bos_bound(seconds=20, gap=0.05)
    assert s.quantity == "min BOS mass" and s.evidence == "CERTIFIED"
    assert s.verdict in (sinkcert.Verdict.ENCLOSED, sinkcert.Verdict.NOT_ENCLOSED)
    assert 0 <= s.lo <= s.hi <= 1
    assert Fraction(s.lo) <= Fraction(s.lo_exact) <= Fraction(s.hi_exact) <= Fraction(s.hi)
    false = small.bos_bound(seconds=20, claim=min(1.0, s.hi * 1.5 + 0.01))
    assert false.verdict is sinkcert.Verdict.NOT_VERIFIED and false.witness.shape == (4, 5)
    cap = small.bos_bound(seconds=20, max=True)
    assert cap.quantity == "max BOS mass" and cap.hi >= s.lo


def test_numpy_file_roundtrip_and_errors(tmp_path):
    rng = np.random.default_rng(50)
    head = {k: rng.normal(0, 1, (5, 5)) for k in ("W_Q", "W_K", "W_V", "W_O")}
    m = sinkcert.Model.from_numpy([head, head], L=6, trigger_range="reference-code")
    path = tmp_path / "w.json"
    m.save(path)
    back = sinkcert.Model.from_file(path)
    assert (back.L, back.trigger_range, back.heads) == (6, "reference-code", 2)
    X = task_input(rng, 5, 6, 3)
    assert np.array_equal(m.eval(X).output, back.eval(X).output)
    X[2, 4] = 0  # an ordinary token without its flag
    with pytest.raises(ValueError, match="X: "):
        m.eval(X)
    with pytest.raises(ValueError, match="L: required"):
        sinkcert.Model.from_numpy(head).attack()
    with pytest.raises(ValueError, match="bad.json: version: missing"):
        sinkcert.Model.from_text('{"format": "sinkcert-weights"}', "bad.json")


def test_progress_and_gil_release(small):
    lines = []
    counter = [0]
    done = threading.Event()

    def spin():
        while not done.is_set():
            counter[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        r = small.attack(seconds=2.5, seed=1, progress=lines.append)
    finally:
        done.set()
        t.join()
    assert r.rounds >= 1
    assert lines, "no progress line in a 2.5 s attack"
    # with the GIL held for 2.5 s the thread would barely have run
    assert counter[0] > 10000


def test_check():
    m = sinkcert.Model.from_numpy({"A": np.eye(5), "M": np.eye(5)}, L=4)
    if not sinkcert._ext.HAVE_CHECK:
        with pytest.raises(NotImplementedError):
            m.check(seconds=1)
    else:
        c = m.check(seconds=5)
        assert isinstance(c, sinkcert.CheckResult) and c.summary and isinstance(c.json, dict)


@pytest.fixture(scope="module")
def sink10():
    """The sink family at beta = 10, n = 5, L = 4: E = 3 / (e^10 + 3) =
    1.3618e-4 and min BOS = 1 - 1.3618e-4 over the whole box."""
    A = np.zeros((5, 5))
    A[1, 0], A[4, 0] = -10, 10
    M = np.eye(5)
    M[0, 0] = 0
    return sinkcert.Model.from_numpy({"A": A, "M": M}, L=4)


# the verdict words of docs/definitions.md, Definitions 7, with the printed
# ends replaced by N: the CLI's tests (verdict_bars_cli_test.sh) match the
# same lines from check, verify bound and verify bos
END = r"[0-9]\.[0-9]+e[-+][0-9]+"


def words(text):
    return re.sub(END, "N", text)


def test_solves_and_sinks_bars(sink10):
    b = sink10.bound(seconds=10)
    assert words(b.details["meaning"]) == "solves the task: E <= N <= 5e-3 (tolerance), CERTIFIED"
    # each side of E = 1.36e-4, a str as written and a float by its repr
    b = sink10.bound(seconds=10, tolerance="1e-4")
    assert words(b.details["meaning"]) == \
        "does not solve the task: E >= N > 1e-4 (tolerance), CERTIFIED"
    b = sink10.bound(seconds=10, tolerance=2e-4)
    assert words(b.details["meaning"]) == "solves the task: E <= N <= 0.0002 (tolerance), CERTIFIED"
    s = sink10.bos_bound(seconds=10)
    assert words(s.details["meaning"]) == \
        "sinks on every input: min BOS >= N >= 0.5 (sink bar), CERTIFIED"
    s = sink10.bos_bound(seconds=10, sink_bar="0.9999")
    assert re.fullmatch(r"does not sink on every input: BOS mass <= N < 0\.9999 \(sink bar\) at "
                        r"the witness \(head 0, row 3, trigger [12]\), CERTIFIED",
                        words(s.details["meaning"])), s.details["meaning"]
    s = sink10.bos_bound(seconds=10, sink_bar=decimal.Decimal("0.9998"))
    assert words(s.details["meaning"]) == \
        "sinks on every input: min BOS >= N >= 0.9998 (sink bar), CERTIFIED"
    if sinkcert._ext.HAVE_CHECK:
        c = sink10.check(seconds=5, tolerance="1e-4", sink_bar="0.9998").json["conclusion"]
        assert words(c["solves_text"]) == \
            "does not solve the task: E >= N > 1e-4 (tolerance), CERTIFIED"
        assert words(c["sinks_text"]) == \
            "sinks on every input: min BOS >= N >= 0.9998 (sink bar), CERTIFIED"
        assert c["tolerance"] == "1e-4" and c["sink_bar"] == "0.9998"
    # bad bars: a ValueError naming the keyword
    with pytest.raises(ValueError, match="tolerance: expected a decimal number >= 0"):
        sink10.bound(seconds=1, tolerance="-1")
    with pytest.raises(ValueError, match=r"sink_bar: expected a decimal number"):
        sink10.bos_bound(seconds=1, sink_bar=[0.5])
    with pytest.raises(ValueError, match=r"sink bar: expected a decimal number in \(0, 1\]"):
        sink10.bos_bound(seconds=1, sink_bar="1.5")


def test_progress_error_raised_after_the_call():
    rng = np.random.default_rng(40)
    # larger scores: the bound does not reach its gap within the 4 s budget, and
    # prints progress lines (every 3 s) on the way
    m = sinkcert.Model.from_numpy({"A": rng.normal(0, 0.7, (5, 5)),
                                   "M": rng.normal(0, 0.7, (5, 5))}, L=4)

    def broken(line):
        raise KeyError(line)

    with pytest.raises(RuntimeError, match="progress callback: KeyError"):
        m.bound(seconds=4, gap=1e-6, progress=broken)


def test_gated_and_softpick_state_dicts_match_numpy():
    rng = np.random.default_rng(60)
    n, L = 5, 5
    state = {f"layers.0.{m}.weight": rng.normal(0, 0.5, (n, n))
             for m in ("W_Q", "W_K", "W_V", "W_O", "W_G")}
    W = {m: state[f"layers.0.{m}.weight"] for m in ("W_Q", "W_K", "W_V", "W_O", "W_G")}
    X = task_input(rng, n, L, 2)
    S = (X @ W["W_Q"].T) @ (X @ W["W_K"].T).T
    causal = np.tril(np.ones((L, L), dtype=bool))
    # gated: softmax weights, head output times sigma(W_g x_i) coordinatewise
    e = np.where(causal, np.exp(S - np.where(causal, S, -np.inf).max(axis=1, keepdims=True)), 0)
    a = e / e.sum(axis=1, keepdims=True)
    gate = 1 / (1 + np.exp(-(X @ W["W_G"].T)))
    want = gate * ((a @ X) @ (W["W_O"] @ W["W_V"]).T)
    got = sinkcert.Model.from_torch(state, attention="gated", score_scale=1.0).eval(X)
    assert np.abs(got.output - want).max() <= TOLERANCE
    # softpick: relu(exp(s) - 1) / sum |exp(s) - 1|
    del state["layers.0.W_G.weight"]
    d = np.where(causal, np.exp(S) - 1, 0)
    a = np.maximum(d, 0) / np.abs(d).sum(axis=1, keepdims=True)
    want = (a @ X) @ (W["W_O"] @ W["W_V"]).T
    got = sinkcert.Model.from_torch(state, attention="softpick", score_scale=1.0).eval(X)
    assert np.abs(got.output - want).max() <= TOLERANCE


def test_probe(small):
    p = small.probe(samples=200, fixed_trigger=2)
    assert p["evidence"] == "NUMERIC(53)" and p["probe_set"]["samples"] == 200
    assert p["probe_set"]["fixed_trigger"] == 2 and p["sampled_error"]["max"] > 0
    overall = p["bos_mass"]["heads"][0]["overall"]
    assert 0 <= overall["min"] <= overall["mean"] <= 1


def test_eval_certified_encloses_an_independent_high_precision_forward(small):
    """eval(certify=DIGITS) brackets f(X) and e(X) as mpmath computes them at
    60 digits from the same A, M (written here, not sinkcert's forward)."""
    import mpmath
    mpmath.mp.dps = 60
    rng = np.random.default_rng(41)
    X = task_input(rng, 5, 4, 2)
    r = small.eval(X, certify=12)
    assert isinstance(r, sinkcert.CertifiedEvalResult)
    assert r.evidence == "CERTIFIED" and r.reached and r.digits >= 12 and r.bits >= 64
    rng = np.random.default_rng(40)  # the fixture's matrices, drawn again
    A, M = rng.normal(0, 0.1, (5, 5)), rng.normal(0, 0.7, (5, 5))
    Xm = mpmath.matrix(X.tolist())
    Am, Mm = mpmath.matrix(A.tolist()), mpmath.matrix(M.tolist())
    worst = mpmath.mpf(0)
    for i in range(4):
        s = [(Xm[i, :] * Am * Xm[k, :].T)[0] for k in range(i + 1)]
        w = [mpmath.exp(v - max(s)) for v in s]
        z = sum(w)
        mix = sum((w[k] / z * Xm[k, :] for k in range(i + 1)), mpmath.matrix(1, 5))
        out = Mm * mix.T
        # target y: the mean of x_1..x_j at the trigger row, 0 elsewhere
        y = (sum((Xm[k, :] for k in range(1, 3)), mpmath.matrix(1, 5)) / 2) if i == 2 \
            else mpmath.matrix(1, 5)
        for d in range(5):
            assert r.output_lo[i, d] <= out[d] <= r.output_hi[i, d]
            worst = max(worst, abs(out[d] - y[d]))
    assert r.error_lo <= worst <= r.error_hi
    assert r.error_hi - r.error_lo <= 1e-11 * worst
    with pytest.raises(ValueError, match="certify"):
        small.eval(X, certify=0)


def test_verify_relu_exact_verdicts(small):
    """The ReLU construction (s_ik = x_i[1] (x_k[4] + x_k[1]), M = I) is
    VERIFIED; M = 1.01 I is NOT VERIFIED with a witness whose double forward
    pass is off target; a softmax model is NOT APPLICABLE."""
    A = np.zeros((5, 5))
    A[1, 4] = A[1, 1] = 1
    good = sinkcert.Model.from_numpy({"A": A, "M": np.eye(5)}, attention="relu", L=4)
    r = good.verify_relu()
    assert isinstance(r, sinkcert.ReluResult)
    assert r.verdict is sinkcert.Verdict.VERIFIED and r.evidence == "EXACT" and r.margin == "0/1"
    bad = sinkcert.Model.from_numpy({"A": A, "M": 1.01 * np.eye(5)}, attention="relu", L=4)
    r = bad.verify_relu()
    assert r.verdict is sinkcert.Verdict.NOT_VERIFIED and r.witness is not None
    assert Fraction(r.margin) > 0
    assert bad.eval(r.witness).error > 1e-3
    r = small.verify_relu()
    assert r.verdict is sinkcert.Verdict.NOT_APPLICABLE and r.reason


# --- parity with the command line -------------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_version_is_the_project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        want = re.search(r"project\(sinkcert\s+VERSION\s+([0-9.]+)", f.read()).group(1)
    assert sinkcert.__version__ == want


def test_eval_batched_matches_one_by_one(small):
    rng = np.random.default_rng(70)
    X = np.stack([task_input(rng, 5, 4, j) for j in (1, 2, 3, 2)])
    r = small.eval(X)
    assert r.output.shape == (4, 4, 5) and r.target.shape == (4, 4, 5)
    assert r.attention[0][0].shape == (4, 4, 4) and r.evidence == "NUMERIC(53)"
    assert list(r.trigger) == [1, 2, 3, 2]
    for b in range(4):
        one = small.eval(X[b])
        assert np.array_equal(r.output[b], one.output)
        assert np.array_equal(r.attention[0][0][b], one.attention[0][0])
        assert r.error[b] == one.error and r.error_position[b] == one.error_position
    X[2, 1, 4] = 0  # input 2 (trigger 3): an ordinary token without its flag
    with pytest.raises(ValueError, match=r"X\[2\]: X: "):
        small.eval(X)
    with pytest.raises(ValueError, match="shape"):
        small.eval(X[0, 0])


def weight_text(head):
    matrix = lambda m: "[" + ", ".join("[" + ", ".join(r) + "]" for r in m) + "]"
    return ('{"format": "sinkcert-weights", "version": 1, "kind": "single-layer", '
            '"attention": "softmax", "n": 5, "layers": 1, "heads": 1, "weights": [[{' +
            ", ".join(f'"{k}": {matrix(v)}' for k, v in head.items()) + "}]]}")


def test_non_finite_in_double_raises_naming_it():
    """A = W_Q^T W_K beyond the double range (every entry of the file is
    finite), and finite entries whose scores overflow, are ValueErrors
    naming the entry or the value, as the CLI exits 5; never error = nan."""
    zero = [["0"] * 5 for _ in range(5)]
    eye = [["1" if i == k else "0" for k in range(5)] for i in range(5)]
    W_Q = [row[:] for row in zero]
    W_K = [row[:] for row in zero]
    W_Q[0][2], W_K[0][3] = "1e200", "1e200"  # A[2][3] = 1e400 exactly
    m = sinkcert.Model.from_text(weight_text({"W_Q": W_Q, "W_K": W_K, "W_V": eye, "W_O": eye}),
                                 "inf.json", L=4)
    X = task_input(np.random.default_rng(0), 5, 4, 2)
    with pytest.raises(ValueError, match=r"layer 0 head 0 A\[2\]\[3\] is Infinity"):
        m.eval(X)
    big = [["1e308"] * 5 for _ in range(5)]  # finite, but the scores overflow
    m = sinkcert.Model.from_text(weight_text({"A": big, "M": eye}), "big.json", L=4)
    X = np.zeros((4, 5))
    X[0, 0] = 1
    X[1:, 4] = 1
    X[2, 4], X[2, 1] = 0, 1
    X[1:, 2:4] = 1
    with pytest.raises(ValueError, match=r"the (output|attention layer 0 head 0) at .* is NaN"):
        m.eval(X)


def test_from_numpy_task_is_saved_for_the_command_line(tmp_path):
    m = sinkcert.Model.from_numpy({"A": np.eye(5), "M": np.eye(5)}, L=7,
                                  trigger_range="reference-code")
    path = tmp_path / "w.json"
    m.save(path)
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    # the file's own task, which `sinkcert check --weights` reads without --L
    assert doc["task"] == {"L": 7, "trigger_range": "reference-code"}
    back = sinkcert.Model.from_file(path)
    assert (back.L, back.trigger_range) == (7, "reference-code")


@pytest.fixture(scope="module")
def residual():
    """Two residual softmax layers of two heads, n = 5, L = 4, small scores
    (entries of scale 0.1: each head's enclosure reaches a 30 % gap on the
    deficit 1 - min BOS in about a second)."""
    rng = np.random.default_rng(80)
    head = lambda: {"A": rng.normal(0, 0.1, (5, 5)), "M": rng.normal(0, 0.1, (5, 5))}
    return sinkcert.Model.from_numpy([[head(), head()], [head(), head()]], L=4)


def test_bos_bound_residual_one_head_and_claims(residual):
    b = residual.bos_bound(layer=1, head=0, seconds=10, gap=0.3)
    assert b.quantity == "min BOS mass" and b.evidence.startswith("CERTIFIED")
    assert b.verdict is sinkcert.Verdict.ENCLOSED
    assert Fraction(b.lo) <= Fraction(b.lo_exact) <= Fraction(b.hi_exact) <= Fraction(b.hi)
    assert 0 < b.lo <= b.hi < 1 and b.details["witness_layer"] == 1
    # the witness's own BOS mass at (layer 1, head 0) lies at or above the lower end
    w = residual.eval(b.witness)
    row = b.details["witness_row"]
    # (1e-12: the double forward pass against the certified ends, a few ulps apart)
    assert b.lo * (1 - 1e-12) <= w.attention[1][0][row, 0] <= b.hi * (1 + 1e-12)
    assert "layer 1, head 0" in b.summary
    true = residual.bos_bound(layer=1, head=0, seconds=10, claim=b.lo / 2)
    assert true.verdict is sinkcert.Verdict.VERIFIED
    false = residual.bos_bound(layer=1, head=0, seconds=10, claim=min(1.0, b.hi + 0.01))
    assert false.verdict is sinkcert.Verdict.NOT_VERIFIED and false.witness.shape == (4, 5)
    cap = residual.bos_bound(layer=1, head=0, seconds=10, max=True)
    assert cap.quantity == "max BOS mass" and cap.hi >= b.lo
    with pytest.raises(ValueError, match="claim: on a residual model"):
        residual.bos_bound(claim=0.1, seconds=5)
    with pytest.raises(ValueError, match="layer: expected"):
        residual.bos_bound(layer=2, head=0)


def test_bos_bound_residual_every_head_encloses_the_minimum(residual):
    every = residual.bos_bound(seconds=20, gap=0.3)
    heads = every.details["heads"]
    assert [(h["layer"], h["head"]) for h in heads] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert every.lo == min(h["lo"]["value"] for h in heads)
    assert every.hi == min(h["hi"]["value"] for h in heads)
    assert every.evidence.startswith("CERTIFIED")
    one = residual.bos_bound(layer=0, seconds=10, gap=0.3)
    assert [(h["layer"], h["head"]) for h in one.details["heads"]] == [(0, 0), (0, 1)]


def test_bos_bound_residual_agrees_with_the_command_line(residual, tmp_path):
    """Both enclose the same quantity (verify bos --layer 1 --head 0), so
    the two enclosures intersect."""
    sinkcert_cli = os.path.join(os.path.dirname(os.path.dirname(sinkcert.__file__)), os.pardir,
                                "sinkcert")
    if not os.path.exists(sinkcert_cli):
        pytest.skip(f"no sinkcert program next to the package ({sinkcert_cli})")
    path = tmp_path / "w.json"
    residual.save(path)
    r = subprocess.run([sinkcert_cli, "verify", "bos", "--weights", str(path), "--layer", "1",
                        "--head", "0", "--seconds", "10", "--gap", "0.3", "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cli = json.loads(r.stdout)
    py = residual.bos_bound(layer=1, head=0, seconds=10, gap=0.3)
    (entry,) = cli["heads"]
    assert (entry["layer"], entry["head"]) == (1, 0)
    deficit = entry["min"]  # D = 1 - min BOS: min BOS in [1 - D_hi, 1 - D_lo]
    lo, hi = 1 - Fraction(deficit["hi_exact"]), 1 - Fraction(deficit["lo_exact"])
    assert max(lo, Fraction(py.lo_exact)) <= min(hi, Fraction(py.hi_exact)), (lo, hi, py)


def test_check_writes_the_command_lines_files(tmp_path):
    if not sinkcert._ext.HAVE_CHECK:
        pytest.skip("this build has no model check")
    m = sinkcert.Model.from_numpy({"A": np.eye(5), "M": np.eye(5)}, L=4)
    out = tmp_path / "report"
    c = m.check(seconds=5, out=out)
    assert c.out == str(out)
    names = set(os.listdir(out))
    assert {"report.json", "report.md", "attention_mean_std.dat",
            "attention_mean_std.gp"} <= names, names
    assert set(c.written) == names
    png = "attention_mean_std.png"
    assert png in names or any(png in f for f in c.failures), (names, c.failures)
    with open(out / "report.json", encoding="utf-8") as f:
        doc = json.load(f)
    assert doc == c.json and "provenance" in doc and doc["provenance"]["revision"]
    assert (out / "report.md").read_text(encoding="utf-8") == c.markdown
    if "witness.json" in names:
        with open(out / "witness.json", encoding="utf-8") as f:
            assert json.load(f)["tokens"]
    # the command line's rule: never into results/
    with pytest.raises(ValueError, match="out: .*outside results/"):
        m.check(seconds=1, out=os.path.join(ROOT, "results", "x"))
