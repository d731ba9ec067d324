#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Label consistency, end to end: every number sinkcert prints is true.

A property test over random (seeded), constructed and trained (a short Adam
run in this file, torch) models of every attention kind, single-layer and
residual, small enough (n = 4..5, L = 3..4) that the whole content box can
be sampled at its vertices. For each model it runs

    check --out DIR            (the summary, and DIR/report.json)
    verify bound               (text and --json, the same box budget)
    verify bound --claim C     (text and --json)
    verify bos [--max]         (text and --json)
    verify relu                (text and --json; ReLU files)
    attack --out W             (text and --json; no --seconds: one round)

and `eval --certify` (MPFI, CERTIFY_DIGITS relative digits) at every
witness those commands name, at inputs known to be bad, and at the vertices
of the content box of every trigger position: all 2^((n-3)(L-1)) of them
up to MAX_VERTICES per trigger, a seeded sample of MAX_VERTICES beyond
(n = 5: 8 of 16 at L = 3, 8 of 64 at L = 4; eval reads one input per
run). Then, comparing
exact rationals (fractions.Fraction of the strings the JSON carries,
`*_exact`, of the exact value of each double, and of the text's directed
roundings), never rounded doubles:

  containment   every upper end printed CERTIFIED or EXACT (E overall and
                per trigger, 1 - min BOS and max BOS overall, per head and
                per layer) is >= the certified lower end of the value it
                bounds at every witness and vertex;
  lower-upper   every lower end (CERTIFIED, SEARCH(lower bound), EXACT),
                from any command, is <= every certified upper end of the
                same quantity, overall and per trigger;
  witness       a lower end with a witness is <= the certified upper end
                of the value at that witness;
  text-json     the text and the JSON of a command say the same: the text's
                6-digit (check: 4-digit) numbers are the JSON's exact ends
                rounded outward, the verdicts and labels are equal;
  false-EXACT   no E and no "solves" carries EXACT unless the exact ReLU
                checker ran and applied (VERIFIED or NOT VERIFIED);
  claim         a VERIFIED "E <= c" (or "max BOS <= c") has c, as written
                on the command line, >= every certified lower end, a NOT
                VERIFIED one has a lower end > c;
  claim-printed the claim printed (text and JSON) is c as written.

The models named `bug1_*` (ReLU scores that read the content: no EXACT E),
`bug2_*` (a trigger whose boxes are all pruned: its upper end must stay
above its worst input, given here) and `bug3_*` (a claim of 0.1 against a
model whose E is 0.1000000000000000001) reproduce known label errors;
every failure line names its model and check. At the end a self-test
reads the first model's outputs again, each time with one kind of output
made false (TAMPERS), and requires the check of that kind to fail.

Usage: label_consistency_test.py SINKCERT [--models REGEX] [--keep DIR]
  [--jobs N]. Exit 0 when every check holds, 1 otherwise. Seeded: the
models, budgets (boxes, rounds; never seconds where text and JSON are
compared) and vertices are the same on every run.
"""
import argparse
import concurrent.futures
import itertools
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from decimal import Decimal, localcontext
from fractions import Fraction

# eval --certify: relative digits certified. The bounds print their ends at
# 128 bits (about 38 digits); an upper end wrong by one unit there (the
# clamp to a witness rounded down) is seen only when the value at the
# vertex is enclosed more tightly than that.
CERTIFY_DIGITS = 45
# Vertices per trigger: all 2^((n-3)(L-1)) up to this many (n = 4, and
# n = 5 at L = 3 has 16), a seeded sample of this many beyond (8 of 16 and
# of 64).
MAX_VERTICES = 8
# Box budgets (reproducible: the same boxes every run, so the text run and
# the --json run print the same numbers).
BOUND_BOXES = 150
CLAIM_BOXES = 60  # a claim's run (its verdict is checked, whichever it is)
BOS_BOXES = 200
# check has only a time budget (its own text and report.json come from one
# run, so they agree whatever the budget gave).
CHECK_SECONDS = "1"
SEED = 20261206
# The model whose outputs the self-test tampers with (TAMPERS).
SELF_TEST_MODEL = "random_softmax_n4L3"


# ---------------------------------------------------------------- models

def weights_doc(kind, attention, n, heads_per_layer, metadata=None):
    doc = {"format": "sinkcert-weights", "version": 1, "kind": kind,
           "attention": attention, "n": n, "layers": len(heads_per_layer),
           "heads": len(heads_per_layer[0]), "weights": heads_per_layer}
    if metadata is not None:
        doc["metadata"] = metadata
    return doc


def zeros(n):
    return [[0] * n for _ in range(n)]


def identity(n):
    return [[1 if i == j else 0 for j in range(n)] for i in range(n)]


def random_matrix(rng, n, scale=1.0):
    return [[round(rng.uniform(-scale, scale), 3) for _ in range(n)] for _ in range(n)]


def random_head(rng, n, attention):
    head = {"A": random_matrix(rng, n, 2.0), "M": random_matrix(rng, n)}
    if attention == "gated":
        head["gate"] = random_matrix(rng, n)
    return head


def relu_construction(n, extra=None):
    """Definitions 4: A = e_1 (e_{n-1} + e_1)^T, M = I; extra {(r, c): v}."""
    A = zeros(n)
    A[1][n - 1] = 1
    A[1][1] = 1
    for (r, c), v in (extra or {}).items():
        A[r][c] = v
    return weights_doc("single-layer", "relu", n, [[{"A": A, "M": identity(n)}]])


def bug2_three_heads():
    A = [[0, 0, 0, 0], [0, -2024.4851600000002, 5698.400000000001, 0],
         [0, 0, -4000, 0], [40000, 0, 0, 0]]
    M0, M1, A2, M2 = zeros(4), zeros(4), zeros(4), zeros(4)
    M0[3][1], M1[3][1] = 11.5, -6.8
    A2[1][3], M2[2][3] = 30, 10
    return weights_doc("single-layer", "softmax", 4,
                       [[{"A": A, "M": M0}, {"A": A, "M": M1}, {"A": A2, "M": M2}]])


def sink_family(n, beta):
    A = zeros(n)
    A[n - 1][0], A[1][0] = beta, -beta
    M = identity(n)
    M[0][0] = 0
    return weights_doc("single-layer", "softmax", n, [[{"A": A, "M": M}]])


def relu_residual_construction(n):
    """Two layers, one head: the first adds nothing (A = M = 0), the second
    is the single-layer construction (its update on the residual stream is
    the target's mean term)."""
    first = {"A": zeros(n), "M": zeros(n)}
    second = relu_construction(n)["weights"][0][0]
    return weights_doc("residual", "relu", n, [[first], [second]])


def train(n, L, attention, layers, seed, steps=150):
    """A short Adam run on the task (batch l_inf error), torch, float64."""
    import torch
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    residual = layers > 1
    params = [[torch.nn.Parameter(0.3 * torch.randn(n, n, generator=g, dtype=torch.float64))
               for _ in range(2)] for _ in range(layers)]
    opt = torch.optim.Adam([p for layer in params for p in layer], lr=0.02)
    causal = torch.tril(torch.ones(L, L, dtype=torch.bool))
    rows = torch.clamp(torch.arange(L, dtype=torch.float64), min=1).unsqueeze(1)

    def batch(size):
        X = torch.zeros(size, L, n, dtype=torch.float64)
        X[:, 0, 0] = 1
        X[:, 1:, 2:n - 1] = 2 * torch.rand(size, L - 1, n - 3, generator=g, dtype=torch.float64) - 1
        X[:, 1:, n - 1] = 1
        j = torch.randint(1, L, (size,), generator=g)
        X[torch.arange(size), j, n - 1] = 0
        X[torch.arange(size), j, 1] = 1
        Y = torch.zeros_like(X)
        csum = torch.cumsum(X[:, 1:], dim=1)
        Y[torch.arange(size), j] = csum[torch.arange(size), j - 1] / j.unsqueeze(1)
        return X, (X + Y if residual else Y)

    def forward(X):
        x = X
        for A, M in params:
            S = torch.einsum("bin,nm,bkm->bik", x, A, x)
            if attention == "softmax":
                a = torch.softmax(S.masked_fill(~causal, float("-inf")), dim=-1)
            else:
                a = torch.relu(S) * causal / rows
            o = torch.einsum("bik,bkm,dm->bid", a, x, M)
            x = x + o if residual else o
        return x

    for _ in range(steps):
        X, Y = batch(64)
        loss = (forward(X) - Y).abs().amax(dim=(1, 2)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    heads = [[{"A": [[float(v) for v in row] for row in A.detach().tolist()],
               "M": [[float(v) for v in row] for row in M.detach().tolist()]}]
             for A, M in params]
    return weights_doc("residual" if residual else "single-layer", attention, n, heads,
                       {"training": f"Adam, {steps} steps, batch 64, seed {seed}"})


def model_set():
    """(name, weights document, L, extras) with extras: witnesses known to be
    bad ([(trigger, content)]), bound_claim / bos_max_claim (exact decimal
    strings)."""
    rng = random.Random(SEED)
    models = []
    for attention in ("softmax", "relu", "relu-count-all", "softmax-off-by-one", "sigmoid",
                      "softpick", "gated"):
        models.append((f"random_{attention}_n4L3",
                       weights_doc("single-layer", attention, 4,
                                   [[random_head(rng, 4, attention)]]),
                       3, {}))
    models.append(("random_softmax_2heads_n5L3",
                   weights_doc("single-layer", "softmax", 5,
                               [[random_head(rng, 5, "softmax"), random_head(rng, 5, "softmax")]]),
                   3, {}))
    models.append(("random_softmax_n5L4",
                   weights_doc("single-layer", "softmax", 5, [[random_head(rng, 5, "softmax")]]),
                   4, {}))
    models.append(("random_residual_softmax_n4L3",
                   weights_doc("residual", "softmax", 4,
                               [[random_head(rng, 4, "softmax")],
                                [random_head(rng, 4, "softmax")]]),
                   3, {}))
    models.append(("relu_construction_n4L4", relu_construction(4), 4, {"bound_claim": "0"}))
    models.append(("relu_residual_construction_n4L3", relu_residual_construction(4), 3, {}))
    models.append(("softmax_sink_family_n4L3", sink_family(4, 6), 3, {}))
    models.append(("trained_softmax_n4L3", train(4, 3, "softmax", 1, 1), 3, {}))
    models.append(("trained_residual_softmax_n4L3", train(4, 3, "softmax", 2, 2), 3, {}))
    # the known label errors
    models.append(("bug1_trained_relu_n5L4", train(5, 4, "relu", 1, 3), 4, {}))
    models.append(("bug1_relu_content_scores_n4L3", relu_construction(4, {(2, 0): 0.5}), 3, {}))
    models.append(("bug2_three_heads_n4L3", bug2_three_heads(), 3,
                   {"witnesses": [(1, [0.7123000000000002, -1])], "bound_gap": "1e-6",
                    "bound_boxes": 400,
                    # scores of 40000: every BOS deficit 1 - a_i0 cancels to
                    # about e^-40000, so eval --certify climbs to its cap of
                    # 8192 bits at every input (1.5 s each); the vertices
                    # are left out, the known witness and the commands'
                    # witnesses are evaluated
                    "vertices": False}))
    models.append(("bug3_claim_n4L3",
                   relu_construction(4, {(1, 0): "0.1000000000000000001"}), 3,
                   {"bound_claim": "0.1"}))
    models.append(("bug3_bos_claim_n4L3",
                   relu_construction(4, {(3, 0): "0.1000000000000000001"}), 3,
                   {"bos_max_claim": "0.1"}))
    return models


# ---------------------------------------------------------------- exact numbers

# "inf" stands for this (above every value here; round_to keeps it).
INF = Fraction(10) ** 1000


def exact(text):
    """The rational a decimal string denotes ("inf" as INF)."""
    text = text.strip()
    if text in ("inf", "+inf", "Infinity"):
        return INF
    if text in ("-inf", "-Infinity"):
        return -INF
    return Fraction(text)


def of_double(x):
    """A JSON double as the rational it is (never its shortest decimal)."""
    if x is None or x == "Infinity":
        return INF
    return Fraction(Decimal(x))


def interval(text):
    """"[lo, hi]" as two rationals."""
    m = re.fullmatch(r"\s*\[\s*([^,\s]+)\s*,\s*([^\]\s]+)\s*\]\s*", text)
    if not m:
        raise ValueError(f"not an interval: {text!r}")
    return exact(m.group(1)), exact(m.group(2))


def round_to(q, digits, up):
    """q rounded to `digits` significant digits, up or down (toward +-inf)."""
    if q == 0 or abs(q) == INF:
        return q
    e = 0
    a = abs(q)
    while a >= 10:
        a /= 10
        e += 1
    while a < 1:
        a *= 10
        e -= 1
    scale = Fraction(10) ** (digits - 1 - e)
    v = q * scale
    r = -((-v.numerator) // v.denominator) if up else v.numerator // v.denominator
    return Fraction(r) / scale


def decimal_of(q, digits=None):
    """A rational as a decimal string: exact when q is a finite decimal
    (digits None), else to `digits` significant digits."""
    if digits is not None:
        with localcontext() as ctx:
            ctx.prec = digits
            return f"{Decimal(q.numerator) / Decimal(q.denominator):.{digits - 1}e}"
    m = 0
    while (q * 10 ** m).denominator != 1:
        m += 1
    return f"{Decimal(int(q * 10 ** m)).scaleb(-m):f}"


def decimal_text(x):
    """A double as the exact decimal it is, for an input file."""
    return str(Decimal(x))


# ---------------------------------------------------------------- running

TIMES = {}  # seconds per subcommand, summed over the runs (printed at the end)


class Runner:
    """Runs sinkcert; remembers each command's output (a tampered rerun of
    the checks reads the same runs), and passes it through `tamper`."""

    def __init__(self, sinkcert, folder, tamper=None, cache=None):
        self.sinkcert = sinkcert
        self.folder = folder
        self.tamper = tamper or (lambda args, out: out)
        self.cache = {} if cache is None else cache
        self.commands = 0

    def run(self, args, expect=(0, 3, 4)):
        key = tuple(args)
        if key not in self.cache:
            self.commands += 1
            t = time.time()
            p = subprocess.run([self.sinkcert] + args, capture_output=True, text=True)
            what = " ".join(a for a in args[:2] if not a.startswith("-"))
            TIMES[what] = TIMES.get(what, 0) + time.time() - t
            if p.returncode not in expect:
                raise RuntimeError(f"sinkcert {' '.join(args)}: exit {p.returncode}\n"
                                   f"{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
            self.cache[key] = p.stdout
        return self.tamper(args, self.cache[key])

    def run_json(self, args, expect=(0, 3, 4)):
        return json.loads(self.run(args + ["--json"], expect))


def task_input(n, L, trigger, content):
    """Tokens of Definitions 1; content[k - 1] is position k's content."""
    tokens = [[1] + [0] * (n - 1)]
    for k in range(1, L):
        flags = [0, 1] if k == trigger else [0, 0]
        tokens.append(flags + list(content[k - 1]) + [0 if k == trigger else 1])
    return tokens


def vertices(count, rng):
    """Every vertex of [-1, 1]^count when there are at most MAX_VERTICES,
    else MAX_VERTICES of them drawn by rng (eval reads one input per run,
    about 0.05 s each)."""
    if 2 ** count <= MAX_VERTICES:
        return list(itertools.product((-1, 1), repeat=count))
    return [tuple(rng.choice((-1, 1)) for _ in range(count)) for _ in range(MAX_VERTICES)]


def flat_content(n, L, flat):
    c = n - 3
    return [flat[(k - 1) * c:k * c] for k in range(1, L)]


class Certified:
    """eval --certify at one input: e(X) and every BOS deficit enclosed."""

    def __init__(self, doc, trigger):
        self.error = interval(doc["linf_error"])
        self.trigger = trigger
        # deficits[(layer, head)][i] = (lo, hi) of 1 - a_i0
        self.deficits = {(d["layer"], d["head"]): [interval(t) for t in d["one_minus_bos"]]
                         for d in doc["bos_deficit"]}

    def non_trigger_deficits(self, layer=None, head=None):
        for (l, h), rows in self.deficits.items():
            if (layer is None or l == layer) and (head is None or h == head):
                for i, d in enumerate(rows):
                    if i >= 1 and i != self.trigger:
                        yield (l, h, i), d


def certify(runner, weights_path, tokens, trigger, name):
    path = os.path.join(runner.folder, name)
    with open(path, "w") as f:
        json.dump({"format": "sinkcert-input", "version": 1, "tokens": tokens}, f)
    return certify_file(runner, weights_path, path, trigger)


def certify_file(runner, weights_path, path, trigger=None):
    if trigger is None:
        with open(path) as f:
            tokens = json.load(f)["tokens"]
        trigger = next(i for i, t in enumerate(tokens) if i > 0 and Fraction(str(t[1])) == 1)
    doc = runner.run_json(["eval", "--weights", weights_path, "--input", path,
                           "--certify", str(CERTIFY_DIGITS)], expect=(0, 4))
    return Certified(doc, trigger)


# ---------------------------------------------------------------- one model

class Checks:
    def __init__(self, model):
        self.model = model
        self.failures = []
        self.count = 0

    def require(self, category, ok, message):
        self.count += 1
        if not ok:
            self.failures.append(f"FAIL [{category}] {self.model}: {message}")


def number(pattern, text, what):
    m = re.search(pattern, text, re.M)
    if not m:
        raise ValueError(f"no {what} in the output (pattern {pattern!r}):\n{text}")
    return m


NUM = r"([-+0-9.eE]+|inf|-inf|nan)"


def check_model(sinkcert, name, doc, L, extras, keep, base=None, tamper=None):
    """Runs every command on one model and checks its output. base: the
    (folder, cache) of an earlier run of the same model, whose outputs are
    read again through tamper (the self-test)."""
    if base is None:
        folder = tempfile.mkdtemp(prefix=f"label-{name}-", dir=keep)
        runner = Runner(sinkcert, folder)
    else:
        folder = base[0]
        runner = Runner(sinkcert, folder, tamper, base[1])
    checks = Checks(name)
    W = os.path.join(folder, "weights.json")
    if base is None:
        with open(W, "w") as f:
            json.dump(doc, f)
    n = doc["n"]
    single = doc["kind"] == "single-layer"
    relu_kind = doc["attention"] in ("relu", "relu-count-all")
    Ls = ["--L", str(L)]

    # ---- certified values at every vertex, per trigger, and at the known witnesses
    cd = (n - 3) * (L - 1)
    values = {}  # trigger -> [Certified]
    for j in range(1, L):
        values[j] = []
        if not extras.get("vertices", True):
            continue
        for v, signs in enumerate(vertices(cd, random.Random(f"{SEED} {name} {j}"))):
            tokens = task_input(n, L, j, flat_content(n, L, list(signs)))
            values[j].append(certify(runner, W, tokens, j, f"vertex_j{j}_{v}.json"))
    for k, (j, content) in enumerate(extras.get("witnesses", [])):
        tokens = task_input(n, L, j, flat_content(n, L, [decimal_text(c) for c in content]))
        values[j].append(certify(runner, W, tokens, j, f"known_{k}.json"))

    def every_value():
        return [c for j in values for c in values[j]]

    def largest_error_lower(j=None):
        vs = every_value() if j is None else values.get(j, [])
        return max((c.error[0] for c in vs), default=Fraction(0))

    # ---- verify bound: text and JSON of one box budget
    gap = extras.get("bound_gap", "0.01")
    boxes = str(extras.get("bound_boxes", BOUND_BOXES))
    bound_args = ["verify", "bound", "--weights", W] + Ls + [
        "--boxes", boxes, "--seconds", "60", "--gap", gap]
    btext = runner.run(bound_args + ["--out", os.path.join(folder, "bound_witness.json")])
    bjson = runner.run_json(bound_args)
    lo, hi = exact(bjson["lo_exact"]), exact(bjson["hi_exact"])
    checks.require("text-json", bjson["evidence"] == "CERTIFIED",
                   f"verify bound JSON evidence {bjson['evidence']}")
    t_lo = exact(number(r"^E >= " + NUM + r"  \[CERTIFIED\]", btext, "E >=").group(1))
    t_hi = exact(number(r"^E <= " + NUM + r"  \[CERTIFIED\]", btext, "E <=").group(1))
    checks.require("text-json", t_lo == round_to(lo, 6, False),
                   f"verify bound: text E >= {t_lo} but JSON lo_exact {bjson['lo_exact']}")
    checks.require("text-json", t_hi == round_to(hi, 6, True),
                   f"verify bound: text E <= {t_hi} but JSON hi_exact {bjson['hi_exact']}")
    t_verdict = number(r"^verdict: (ENCLOSED|NOT ENCLOSED|VERIFIED|NOT VERIFIED|UNDECIDED)",
                       btext, "verdict").group(1)
    checks.require("text-json", t_verdict == bjson["verdict"],
                   f"verify bound: text verdict {t_verdict}, JSON {bjson['verdict']}")
    per_text = {int(m.group(1)): (exact(m.group(2)), exact(m.group(3)))
                for m in re.finditer(r"^  trigger j = (\d+): " + NUM + r" <= E_j <= " + NUM +
                                     r"\s+\[CERTIFIED\]", btext, re.M)}
    per, per_json = {}, {}
    for p in bjson["per_trigger"]:
        j = p["trigger"]
        per[j] = (exact(p["lo_exact"]), exact(p["hi_exact"]))
        per_json[j] = p
        tl, th = per_text.get(j, (None, None))
        checks.require("text-json", tl == round_to(per[j][0], 6, False) and
                       th == round_to(per[j][1], 6, True),
                       f"verify bound trigger {j}: text [{tl}, {th}] but JSON "
                       f"[{p['lo_exact']}, {p['hi_exact']}]")
    checks.require("text-json", set(per) == set(per_text) == set(range(1, L)),
                   f"verify bound: per-trigger lines for {sorted(per_text)}, JSON {sorted(per)}")
    checks.require("lower-upper", lo <= hi, f"verify bound: lo {lo} > hi {hi}")
    for j, (pl, ph) in per.items():
        checks.require("lower-upper", pl <= ph <= hi,
                       f"verify bound trigger {j}: [{float(pl)}, {float(ph)}] vs overall "
                       f"[{float(lo)}, {float(hi)}]")
        # containment per trigger: E_j <= hi_j at every vertex and known witness
        worst = largest_error_lower(j)
        checks.require("containment", worst <= ph,
                       f"verify bound prints E_j <= {per_json[j]['hi_exact']} "
                       f"[CERTIFIED] for trigger j = {j}, but eval --certify gives e(X) >= "
                       f"{decimal_of(worst, 50)} at an input "
                       f"with that trigger (a vertex or known witness), "
                       f"{decimal_of(worst - ph, 3)} above it")
    worst = largest_error_lower()
    checks.require("containment", worst <= hi,
                   f"verify bound prints E <= {bjson['hi_exact']} [CERTIFIED], but eval --certify "
                   f"gives e(X) >= {float(worst)!r} at a vertex")
    if bjson["witness"] is not None:
        w = certify_file(runner, W, os.path.join(folder, "bound_witness.json"))
        checks.require("witness", lo <= w.error[1],
                       f"verify bound: E >= {bjson['lo_exact']} but at its witness e(X) <= "
                       f"{float(w.error[1])!r} (eval --certify)")
        values.setdefault(w.trigger, []).append(w)

    # ---- attack: text and JSON of the same round
    attack_args = ["attack", "--weights", W] + Ls + ["--seed", "0"]
    atext = runner.run(attack_args + ["--out", os.path.join(folder, "attack_witness.json")])
    ajson = runner.run_json(attack_args)
    # "certified" is a double: the MPFI lower end at the witness rounded
    # down (search/attack.h), so itself a lower bound; compared exactly, no
    # slack needed
    best = of_double(ajson["best"]["certified"])
    checks.require("text-json", ajson["evidence"].startswith("SEARCH(lower bound)"),
                   f"attack evidence {ajson['evidence']}")
    m = number(r"^worst case found: E >= " + NUM + r" (.*)$", atext, "attack E >=")
    checks.require("text-json", "SEARCH(lower bound)" in m.group(2),
                   f"attack text label {m.group(2)}")
    digits = len(re.sub(r"[^0-9]", "", m.group(1).split("e")[0]).lstrip("0")) or 1
    checks.require("text-json", exact(m.group(1)) == round_to(best, digits, False),
                   f"attack: text E >= {m.group(1)}, JSON certified {ajson['best']['certified']!r}")
    w = certify_file(runner, W, os.path.join(folder, "attack_witness.json"))
    checks.require("witness", best <= w.error[1],
                   f"attack: E >= {ajson['best']['certified']!r} but at its witness e(X) <= "
                   f"{float(w.error[1])!r}")
    checks.require("lower-upper", best <= hi,
                   f"attack SEARCH(lower bound) E >= {ajson['best']['certified']!r} above verify "
                   f"bound's E <= {bjson['hi_exact']}")
    for p in ajson["per_trigger"]:
        if p["certified"] is None:
            continue
        j = p["trigger"]
        checks.require("lower-upper", of_double(p["certified"]) <= per[j][1],
                       f"attack finds e(X) >= {p['certified']!r} at trigger j = {j} [SEARCH(lower "
                       f"bound), certified], above verify bound's E_j <= "
                       f"{decimal_of(per[j][1], 30)} "
                       f"[CERTIFIED] (hi_exact {per_json[j]['hi_exact']})")

    # ---- verify bound --claim
    claim = extras.get("bound_claim")
    if claim is None:
        # an exact decimal a little above the certified upper end: VERIFIED
        # is expected, and its truth is what is checked
        claim = decimal_of(round_to(hi * Fraction(11, 10), 3, True))
    claim_args = ["verify", "bound", "--weights", W] + Ls + [
        "--boxes", str(CLAIM_BOXES), "--seconds", "60", "--claim", claim]
    ctext = runner.run(claim_args)
    cjson = runner.run_json(claim_args)
    c = exact(claim)
    cverdict = number(r"^verdict: (VERIFIED|NOT VERIFIED|UNDECIDED)", ctext, "verdict").group(1)
    checks.require("text-json", cverdict == cjson["verdict"],
                   f"verify bound --claim {claim}: text {cverdict}, JSON {cjson['verdict']}")
    printed = cjson["claim"].split("<=")[1].strip()
    checks.require("claim-printed", exact(printed) == c,
                   f"verify bound --claim {claim}: JSON says the claim was E <= {printed}")
    t_claim = number(r"^claim: E <= " + NUM, ctext, "claim").group(1)
    checks.require("claim-printed", exact(t_claim) == c,
                   f"verify bound --claim {claim}: text says claim: E <= {t_claim}")
    lowers = [("verify bound --claim's lower end", exact(cjson["lo_exact"])),
              ("verify bound's lower end", lo), ("the attack's witness", best),
              ("eval --certify at a vertex or witness", largest_error_lower())]
    if cjson["verdict"] == "VERIFIED":
        for what, value in lowers:
            checks.require("claim", value <= c,
                           f"verify bound --claim {claim} says VERIFIED, but {what} certifies "
                           f"E >= {decimal_of(value, 30)}")
    elif cjson["verdict"] == "NOT VERIFIED":
        checks.require("claim", exact(cjson["lo_exact"]) > c and cjson["witness"] is not None,
                       f"verify bound --claim {claim}: NOT VERIFIED with lower end "
                       f"{cjson['lo_exact']}")
    checks.require("containment", exact(cjson["hi_exact"]) >= largest_error_lower(),
                   f"verify bound --claim {claim}: E <= {cjson['hi_exact']} below a certified "
                   f"vertex value")

    # ---- verify bos (min; single-layer also --max)
    bos_args = ["verify", "bos", "--weights", W] + Ls + [
        "--boxes", str(BOS_BOXES), "--seconds", "60"]
    if doc["attention"] == "softpick":
        # the min BOS bound refuses softpick (exit 2, "not supported"); the
        # max BOS bound covers it
        mtext = runner.run(bos_args + ["--max"])
        mjson = runner.run_json(bos_args + ["--max"])
        check_max_bos(checks, mtext, mjson, every_value)
    elif single:
        stext = runner.run(bos_args + ["--out", os.path.join(folder, "bos_witness.json")])
        sjson = runner.run_json(bos_args)
        check_single_bos(checks, runner, W, folder, stext, sjson, every_value)
        mtext = runner.run(bos_args + ["--max"])
        mjson = runner.run_json(bos_args + ["--max"])
        check_max_bos(checks, mtext, mjson, every_value)
    else:
        stext = runner.run(bos_args)
        sjson = runner.run_json(bos_args)
        check_deep_bos(checks, stext, sjson, every_value)
    bos_claim = extras.get("bos_max_claim")
    if bos_claim is not None:
        qjson = runner.run_json(bos_args + ["--max", "--claim", bos_claim])
        qc = exact(bos_claim)
        printed = qjson["claim"].split("<=")[1].strip()
        checks.require("claim-printed", exact(printed) == qc,
                       f"verify bos --max --claim {bos_claim}: JSON says the claim was "
                       f"max BOS <= {printed}")
        if qjson["verdict"] == "VERIFIED":
            most = max(1 - d[1] for c in every_value() for _, d in c.non_trigger_deficits())
            checks.require("claim", most <= qc,
                           f"verify bos --max --claim {bos_claim} says VERIFIED, but eval "
                           f"--certify gives a_i0 >= "
                           f"{decimal_of(most, 30)} at a vertex")
            checks.require("claim", exact(qjson["lo_exact"]) <= qc,
                           f"verify bos --max --claim {bos_claim} says VERIFIED, but its own "
                           f"lower end is max BOS >= {qjson['lo_exact']}")

    # ---- verify relu (ReLU files)
    relu_applied = False
    if relu_kind:
        rtext = runner.run(["verify", "relu", "--weights", W] + Ls, expect=(0, 2, 3, 4))
        rjson = runner.run_json(["verify", "relu", "--weights", W] + Ls, expect=(0, 2, 3, 4))
        rverdict = number(r"^verdict: (VERIFIED|NOT VERIFIED|UNDECIDED|NOT APPLICABLE)", rtext,
                          "verdict").group(1)
        checks.require("text-json", rverdict == rjson["verdict"],
                       f"verify relu: text {rverdict}, JSON {rjson['verdict']}")
        relu_applied = rjson["verdict"] in ("VERIFIED", "NOT VERIFIED")
        if relu_applied:
            margin = exact(rjson["margin"]["exact"])
            checks.require("containment", largest_error_lower() <= margin,
                           f"verify relu: exact max error {rjson['margin']['exact']} [EXACT] below "
                           f"a certified vertex value")
            checks.require("lower-upper", lo <= margin <= hi,
                           f"verify relu's exact E = {rjson['margin']['exact']} outside verify "
                           f"bound's [{bjson['lo_exact']}, {bjson['hi_exact']}]")
            for p in rjson["per_trigger"]:
                j, e = p["trigger"], exact(p["max_abs_error"]["exact"])
                checks.require("containment", largest_error_lower(j) <= e,
                               f"verify relu trigger {j}: exact max error {e} [EXACT] below a "
                               f"certified vertex value")
                checks.require("lower-upper", per[j][0] <= e <= per[j][1],
                               f"verify relu trigger {j}: exact E_j = {e} outside verify bound's "
                               f"[{float(per[j][0])}, {float(per[j][1])}]")
        else:
            checks.require("false-EXACT", "EXACT" not in rtext.split("verdict:")[-1] and
                           rjson.get("evidence") is None,
                           f"verify relu: {rjson['verdict']} but an EXACT label: "
                           f"{rtext.strip().splitlines()[-1]}")

    # ---- check: the summary and report.json of one run
    out = os.path.join(folder, "check")
    ktext = runner.run(["check", "--weights", W] + Ls + ["--seconds", CHECK_SECONDS,
                                                         "--seed", "0", "--out", out])
    with open(os.path.join(out, "report.json")) as f:
        kjson = json.load(f)
    check_report(checks, runner, W, out, ktext, kjson, relu_applied, hi, per, every_value,
                 largest_error_lower)
    return checks, runner.commands, (folder, runner.cache)


def check_single_bos(checks, runner, W, folder, text, doc, every_value):
    """1 - min BOS over the box, every head (single-layer)."""
    lo = exact(doc["lo_exact"]) if doc["lo_exact"] != "-inf" else None
    hi = exact(doc["hi_exact"])
    t_hi = exact(number(r"^1 - min BOS <= " + NUM + r"  \[CERTIFIED\]", text, "1 - min BOS <=")
                 .group(1))
    checks.require("text-json", t_hi == round_to(hi, 6, True),
                   f"verify bos: text 1 - min BOS <= {t_hi}, JSON hi_exact {doc['hi_exact']}")
    if lo is not None:
        t_lo = exact(number(r"^1 - min BOS >= " + NUM, text, "1 - min BOS >=").group(1))
        checks.require("text-json", t_lo == round_to(lo, 6, False),
                       f"verify bos: text 1 - min BOS >= {t_lo}, JSON lo_exact {doc['lo_exact']}")
        checks.require("lower-upper", lo <= hi, f"verify bos: lo {lo} > hi {hi}")
        w = certify_file(runner, W, os.path.join(folder, "bos_witness.json"))
        d = w.deficits[(0, doc["witness"]["head"])][doc["witness"]["row"]]
        checks.require("witness", lo <= d[1],
                       f"verify bos: 1 - min BOS >= {doc['lo_exact']} but at its witness 1 - a_i0 "
                       f"<= {float(d[1])!r}")
    most = max(d[0] for c in every_value() for _, d in c.non_trigger_deficits())
    checks.require("containment", most <= hi,
                   f"verify bos: 1 - min BOS <= {doc['hi_exact']} [CERTIFIED], but eval --certify "
                   f"gives 1 - a_i0 >= {float(most)!r} at a vertex")
    # per head (several heads): "  head h: ... 1 - min BOS in [lo, hi]"
    for h, (hl, hh) in per_head_deficits(text).items():
        most = max((d[0] for c in every_value() for _, d in c.non_trigger_deficits(0, h)),
                   default=Fraction(-1))
        checks.require("containment", most <= hh,
                       f"verify bos head {h}: 1 - min BOS <= {hh} (text, rounded up) but eval "
                       f"--certify gives {float(most)!r} at a vertex")
        checks.require("lower-upper", hl <= hh and hl <= hi,
                       f"verify bos head {h}: [{hl}, {hh}] vs overall upper {hi}")


def per_head_deficits(text):
    """Per-head enclosures of 1 - min BOS printed in the text (rounded
    outward by the printer, so each is still a bound)."""
    found = {}
    for m in re.finditer(r"^\s*head (\d+):.*?1 - min BOS in \[" + NUM + r", " + NUM + r"\]",
                         text, re.M):
        found[int(m.group(1))] = (exact(m.group(2)), exact(m.group(3)))
    return found


def check_max_bos(checks, text, doc, every_value):
    hi = exact(doc["hi_exact"])
    t_hi = exact(number(r"^max BOS <= " + NUM + r"  \[CERTIFIED\]", text, "max BOS <=").group(1))
    checks.require("text-json", t_hi == round_to(hi, 17, True),
                   f"verify bos --max: text max BOS <= {t_hi}, JSON hi_exact {doc['hi_exact']}")
    most = max(1 - d[1] for c in every_value() for _, d in c.non_trigger_deficits())
    checks.require("containment", most <= hi,
                   f"verify bos --max: max BOS <= {doc['hi_exact']} [CERTIFIED], but eval "
                   f"--certify gives a_i0 >= {float(most)!r} at a vertex")
    if doc["lo_exact"] != "-inf":
        checks.require("lower-upper", exact(doc["lo_exact"]) <= hi,
                       f"verify bos --max: [{doc['lo_exact']}, {doc['hi_exact']}]")
    for m in re.finditer(r"^head (\d+): max BOS in \[" + NUM + r", " + NUM + r"\]", text, re.M):
        h, hh = int(m.group(1)), exact(m.group(3))
        most = max((1 - d[1] for c in every_value() for _, d in c.non_trigger_deficits(0, h)),
                   default=Fraction(-1))
        checks.require("containment", most <= hh,
                       f"verify bos --max head {h}: max BOS <= {m.group(3)} (text, rounded up) but "
                       f"eval --certify gives a_i0 >= {float(most)!r} at a vertex")
        checks.require("lower-upper", exact(m.group(2)) <= hh and exact(m.group(2)) <= hi,
                       f"verify bos --max head {h}: {m.group(0)} vs overall upper {hi}")


def check_deep_bos(checks, text, doc, every_value):
    """Residual: one enclosure of min BOS per (layer, head)."""
    for h in doc["heads"]:
        l, k = h["layer"], h["head"]
        b = h["min"]
        hi = exact(b["hi_exact"])  # of 1 - min BOS
        most = max((d[0] for c in every_value() for _, d in c.non_trigger_deficits(l, k)),
                   default=Fraction(-1))
        checks.require("containment", most <= hi,
                       f"verify bos layer {l} head {k}: 1 - min BOS <= {b['hi_exact']} "
                       f"[CERTIFIED], but eval --certify gives {float(most)!r} at a vertex")
        if b["lo_exact"] != "-inf":
            checks.require("lower-upper", exact(b["lo_exact"]) <= hi,
                           f"verify bos layer {l} head {k}: [{b['lo_exact']}, {b['hi_exact']}]")
        m = re.search(rf"^layer {l}, head {k}: min BOS in \[" + NUM + r", " + NUM +
                      r"\], 1 - min BOS in \[" + NUM + r", " + NUM + r"\]", text, re.M)
        if m is None:
            checks.require("text-json", False, f"verify bos: no text line for layer {l} head {k}")
            continue
        # min BOS to 12 digits and 1 - min BOS to 6, each rounded outward
        # from the exact ends (one_minus at twice the bound's bits is exact)
        want = [round_to(1 - hi, 12, False), None, None, round_to(hi, 6, True)]
        if b["lo_exact"] != "-inf":
            lo = exact(b["lo_exact"])
            want[1], want[2] = round_to(1 - lo, 12, True), round_to(lo, 6, False)
        got = [exact(m.group(g)) for g in range(1, 5)]
        checks.require("text-json", all(w is None or w == g for w, g in zip(want, got)),
                       f"verify bos layer {l} head {k}: text '{m.group(0)}' but JSON 1 - min BOS "
                       f"in [{b['lo_exact']}, {b['hi_exact']}]")


def check_report(checks, runner, W, out, text, doc, relu_applied, bound_hi, per, every_value,
                 largest_error_lower):
    """check's summary and report.json. report.json carries doubles: each
    end is rounded outward to double by sinkcert (model_check.h,
    Enclosure), so each double is itself a bound and is compared exactly;
    the text prints them to 4 digits rounded outward again."""
    con = doc["conclusion"]
    e_lo, e_hi = of_double(con["worst_case_lower"]), of_double(con["worst_case_upper"])
    line = number(r"^worst-case loss E: (.*)$", text, "E line").group(1)
    solves = number(r"^  -> (.*solve.*)$", text, "solves line").group(1)
    exact_line = "[EXACT]" in line
    checks.require("text-json", exact_line == (con["evidence"] == "EXACT") and
                   (con["evidence"] in solves),
                   f"check: text E line '{line}', solves '{solves}', JSON evidence "
                   f"{con['evidence']}")
    if not relu_applied:
        checks.require("false-EXACT", not exact_line and "EXACT" not in solves and
                       con["evidence"] != "EXACT" and con["worst_case_lower_from"] != "exact",
                       f"check prints 'worst-case loss E: {line}' and '{solves}' (report.json "
                       f"evidence {con['evidence']}, worst_case_upper "
                       f"{con['worst_case_upper']}), but the exact ReLU checker "
                       f"{doc['relu_exact'].get('verdict')}")
    if exact_line:
        m = re.search(r"E = (\S+) \[EXACT\]", line)
        value = Fraction(m.group(1)) if m else None
        checks.require("containment", value is not None and largest_error_lower() <= value,
                       f"check: 'E = {m.group(1) if m else '?'} [EXACT]' but eval --certify "
                       f"gives e(X) >= {float(largest_error_lower())!r} at a vertex")
    else:
        m = re.match(NUM + r" <= E <= " + NUM + r" \[CERTIFIED; lower end from the (.*)\]$", line)
        checks.require("text-json", m is not None and exact(m.group(1)) == round_to(e_lo, 4, False)
                       and exact(m.group(2)) == round_to(e_hi, 4, True) and
                       m.group(3) == con["worst_case_lower_from"],
                       f"check: text '{line}', JSON [{con['worst_case_lower']!r}, "
                       f"{con['worst_case_upper']!r}] from {con['worst_case_lower_from']}")
    checks.require("containment", largest_error_lower() <= e_hi,
                   f"check: E <= {con['worst_case_upper']!r} ({con['evidence']}), but eval "
                   f"--certify gives e(X) >= {float(largest_error_lower())!r} at a vertex")
    checks.require("lower-upper", e_lo <= bound_hi and e_lo <= e_hi,
                   f"check: E >= {con['worst_case_lower']!r} above an upper end (check's "
                   f"{con['worst_case_upper']!r}, verify bound's {float(bound_hi)!r})")
    wc = doc["worst_case_bound"]
    if wc.get("verdict") in ("ENCLOSED", "NOT ENCLOSED") and wc.get("upper") is not None:
        up = of_double(wc["upper"])
        checks.require("containment", largest_error_lower() <= up,
                       f"check worst-case bound E <= {wc['upper']!r} below a certified vertex "
                       f"value")
    if isinstance(doc.get("attack"), dict) and "best" in doc["attack"]:
        a = of_double(doc["attack"]["best"]["certified"])
        checks.require("lower-upper", a <= e_hi and a <= bound_hi,
                       f"check's attack finds e(X) >= {doc['attack']['best']['certified']!r} "
                       f"[SEARCH(lower bound)], above check's E <= {con['worst_case_upper']!r} "
                       f"[{con['evidence']}] or verify bound's {float(bound_hi)!r}")
        for p in doc["attack"]["per_trigger"]:
            if p["certified"] is not None and p["trigger"] in per:
                checks.require("lower-upper", of_double(p["certified"]) <= per[p["trigger"]][1],
                               f"check's attack at trigger {p['trigger']}: e(X) >= "
                               f"{p['certified']!r} above verify bound's E_j <= "
                               f"{decimal_of(per[p['trigger']][1], 30)}")
    if os.path.exists(os.path.join(out, "witness.json")):
        w = certify_file(runner, W, os.path.join(out, "witness.json"))
        from_attack = con["worst_case_lower_from"] == "attack witness"
        checks.require("witness", e_lo <= w.error[1] or not from_attack,
                       f"check: E >= {con['worst_case_lower']!r} from the attack witness, but "
                       f"there e(X) <= {float(w.error[1])!r}")
    mb = doc["min_bos_bound"]
    if "deficit" in mb:
        dh = of_double(mb["deficit"]["upper"])
        most = max(d[0] for c in every_value() for _, d in c.non_trigger_deficits())
        checks.require("containment", most <= dh,
                       f"check: 1 - min BOS <= {mb['deficit']['upper']!r} [CERTIFIED], but eval "
                       f"--certify gives 1 - a_i0 >= {float(most)!r} at a vertex")


# ---------------------------------------------------------------- self-test

def is_cmd(args, *words, claim=None, json_out=None):
    if list(args[:len(words)]) != list(words):
        return False
    if claim is not None and ("--claim" in args) != claim:
        return False
    return json_out is None or ("--json" in args) == json_out


def edit_json(out, edit):
    doc = json.loads(out)
    edit(doc)
    return json.dumps(doc)


def tamper_first_trigger(field, value):
    def edit(doc):
        doc["per_trigger"][0][field + "_exact"] = value
        doc["per_trigger"][0][field] = float(value)
    return edit


# Each tamper makes one kind of output false, as a label error would; the
# checks must then fail in the named category (a test that cannot fail is
# no test).
TAMPERS = {
    "containment": lambda a, o: edit_json(o, tamper_first_trigger("hi", "0"))
    if is_cmd(a, "verify", "bound", claim=False, json_out=True) else o,
    "lower-upper": lambda a, o: edit_json(o, tamper_first_trigger("lo", "1e6"))
    if is_cmd(a, "verify", "bound", claim=False, json_out=True) else o,
    "witness": lambda a, o: edit_json(o, lambda d: d["best"].update(certified=1e6))
    if is_cmd(a, "attack", json_out=True) else o,
    "claim": lambda a, o: edit_json(o, lambda d: d.update(lo_exact="1e6"))
    if is_cmd(a, "verify", "bound", claim=True, json_out=True) else o,
    "claim-printed": lambda a, o: edit_json(o, lambda d: d.update(claim="E <= 7"))
    if is_cmd(a, "verify", "bound", claim=True, json_out=True) else o,
    "text-json": lambda a, o: re.sub(r"^E <= \S+", "E <= 1e+06", o, flags=re.M)
    if is_cmd(a, "verify", "bound", claim=False, json_out=False) else o,
    "false-EXACT": lambda a, o: re.sub(r"^worst-case loss E: .*$", "worst-case loss E: E = 0/1 "
                                       "[EXACT]", o, flags=re.M)
    if is_cmd(a, "check") else o,
}


# ---------------------------------------------------------------- main

def main(argv):
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)  # exact ends of 1000 bits and more
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sinkcert")
    ap.add_argument("--models", default="", help="only models whose name matches this regex")
    ap.add_argument("--keep", default=None, help="keep every file under this folder")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv[1:])
    start = time.time()
    models = [m for m in model_set() if re.search(args.models, m[0])]
    if not models:
        print(f"no model matches {args.models!r}")
        return 1
    keep = args.keep or tempfile.mkdtemp(prefix="label-consistency-")
    failures, total_checks, commands = [], 0, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(check_model, args.sinkcert, name, doc, L, extras, keep): name
                   for name, doc, L, extras in models}
        results = {}
        bases = {}
        for future in concurrent.futures.as_completed(futures):
            name = futures[future]
            try:
                checks, n, bases[name] = future.result()
                results[name] = checks
                commands += n
            except Exception as e:  # a crash or a missing line is a failure too
                results[name] = None
                failures.append(f"FAIL [error] {name}: {e}")
    for name, _, _, _ in models:
        checks = results.get(name)
        if checks is None:
            print(f"{name}: ERROR")
            continue
        total_checks += checks.count
        failures += checks.failures
        categories = sorted({f.split("]")[0][6:] for f in checks.failures})
        print(f"{name}: {checks.count} checks, "
              + ("ok" if not checks.failures else
                 f"{len(checks.failures)} FAILED ({', '.join(categories)})"))
    for f in failures:
        print(f)
    # self-test: one model's outputs, each tampered once, must fail
    for name, doc, L, extras in models:
        if name != SELF_TEST_MODEL or name not in bases:
            continue
        for category, tamper in TAMPERS.items():
            checks, _, _ = check_model(args.sinkcert, name, doc, L, extras, keep,
                                       bases[name], tamper)
            caught = [f for f in checks.failures if f.startswith(f"FAIL [{category}]")]
            if caught:
                print(f"self-test: {category} tamper on {name} detected: {caught[0][:160]}")
            else:
                failures.append(f"FAIL [self-test] {category} tamper on {name} not detected "
                                f"(failures: {checks.failures})")
                print(failures[-1])
    print("seconds per command (summed over both jobs): " +
          ", ".join(f"{k} {v:.1f}" for k, v in sorted(TIMES.items())))
    print(f"{len(models)} models, {total_checks} checks, {commands} sinkcert runs, "
          f"{len(failures)} failed, {time.time() - start:.1f} s")
    if not args.keep:
        import shutil
        shutil.rmtree(keep, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
