#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Search for the slowest row (docs/methods.md, "The row-1 frontier",
"Where the argument stops" (1)): single-layer, single-head softmax models
on T(n = 5, L = 4), paper trigger convention, with a small worst-case loss E
whose row i >= 2 does NOT sink on one fixed input with distinct contents
(the witness): 1 - a_i0(witness) >= delta. Row 1 sinks by the theorem
(`verify bound` prints its certified deficit bound); these models are
targets for a proof about rows i >= 2.

Model: s_ik = x_i^T A x_k, a_ik = softmax_{k <= i}(s_ik), f_i = M sum_k a_ik x_k
(the forward of scripts/pgd_attack.py with W_Q = A^T, W_K = W_V = I,
W_O = M; the task and target of scripts/pgd_attack.py and
scripts/row1_frontier_reference.py, imported, not copied).

Witnesses (ordinary token x^o(c) = (0, 0, c, 1), trigger x^t(c) = (0, 1, c, 0)):
  i = 2: trigger at j = 3 (after row 2): x_1 = x^o(+1, +1), x_2 = x^o(-1, -1), x_3 = x^t(+1, +1).
  i = 3: at L = 4 no ordinary row 3 has the trigger after it, so the trigger
         is at j = 1 and row 3 reads two ordinary tokens of distinct
         contents: x_1 = x^t(+1, +1), x_2 = x^o(+1, +1), x_3 = x^o(-1, -1).

Search (SEARCH evidence; float64 torch, seeded): Adam on (A, M) minimizing
  S_tau(A, M) + mu * max(0, delta + margin - (1 - a_i0(witness)))^2,
S_tau = (1/tau) log sum exp(tau |r|) over every residual coordinate r of a
fixed batch (all vertex contents and random contents of every trigger
position, plus PGD worst inputs of scripts/pgd_attack.py refreshed during
training), tau annealed upward. Several seeded restarts; the best by a PGD
estimate of E (a lower estimate) is kept. A model found is an UPPER bound
on the smallest E of a model whose row i does not sink at the witness;
never a lower bound.

  slowest_row_search.py search [--restarts R] [--steps S]
      writes results/row1_frontier/slowest_row/*.weights.json and *.witness.json
  slowest_row_search.py certify SINKCERT [--seconds 120]
      runs `SINKCERT verify bound --gap 0.05` (E, CERTIFIED; and its row-1
      deficit bound) and `SINKCERT eval --input witness --certify 6` (1 - a_i0
      at the witness, CERTIFIED), writes *.bound.json, *.eval.json,
      summary.json and README.md
  slowest_row_search.py readme
      rewrites README.md from summary.json (what certify writes last)
  slowest_row_search.py check
      re-reads the committed files: metadata, witness, 1 - a_i0 >= delta at the
      witness (numpy float64, NUMERIC(53)), the certified reports against the
      summary and the README against a regeneration; then tampers a copy
      (delta raised above the witness deficit, a witness token changed, the
      README's E altered) and requires each tampered copy to fail.
"""
import argparse
import copy
import json
import os
import subprocess
import sys
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgd_attack as pgd  # noqa: E402
import row1_frontier_reference as r1  # noqa: E402

N, L = 5, 4
K = N - 3
DELTAS = ["0.5", "0.2"]
ROWS = [2, 3]
OUT = os.path.join("results", "row1_frontier", "slowest_row")
# Margin on the witness constraint during the search, so that the written
# model (float64 rounded to repr decimals) keeps 1 - a_i0 >= delta with room
# for the certified enclosure (width ~1e-8 at 6 digits).
MARGIN = 1e-3
# Penalty weight of the witness constraint: its squared violation times MU
# dominates the loss surrogate (values <= 1) for violations above ~1e-3.
MU = 1e4
# Slack of the NUMERIC float64 check: a_i0 is a softmax of 4 scores of size
# <= 1e3 formed in O(30) float64 operations, so rounding is far below 1e-9.
FLOAT_SLACK = 1e-9


def witness_of(i):
    """(trigger j, contents c_1..c_3) of the witness for row i."""
    if i == 2:
        return 3, [[1.0, 1.0], [-1.0, -1.0], [1.0, 1.0]]
    if i == 3:
        return 1, [[1.0, 1.0], [1.0, 1.0], [-1.0, -1.0]]
    raise ValueError(i)


def name_of(i, delta):
    return "row%d_delta%s" % (i, delta)


def heads_of(A, M):
    eye = torch.eye(N, dtype=torch.float64)
    # s_ik = (A^T^T x_i) . x_k = x_i^T A x_k ; f_i = M sum_k a_ik x_k
    return [{"W_Q": A.T, "W_K": eye, "W_V": eye, "W_O": M}]


def batch(gen, random_per_j):
    """Fixed contents per trigger: every vertex of (c_1, c_2, c_3) and random ones."""
    verts = torch.tensor(np.array(np.meshgrid(*[[-1.0, 1.0]] * ((L - 1) * K), indexing="ij"))
                         .reshape((L - 1) * K, -1).T.reshape(-1, L - 1, K))
    out = {}
    for j in range(1, L):
        rnd = torch.rand(random_per_j, L - 1, K, generator=gen, dtype=torch.float64) * 2 - 1
        out[j] = torch.cat([verts, rnd, torch.zeros(1, L - 1, K, dtype=torch.float64)])
    return out


def residuals(A, M, Cs):
    rs = []
    for j, C in Cs.items():
        X = pgd.build_inputs(C, j, N)
        rs.append((pgd.forward(heads_of(A, M), "softmax", X) - pgd.target(X, j)).flatten())
    return torch.cat(rs)


def witness_deficit(A, i):
    j, cont = witness_of(i)
    C = torch.tensor([cont], dtype=torch.float64)
    X = pgd.build_inputs(C, j, N)[0]
    s = X[i] @ A @ X[:i + 1].T
    return 1 - torch.softmax(s, dim=0)[0]


def pgd_estimate(A, M, gen, starts=24, steps=60):
    """SEARCH(lower bound) on E and the worst contents per trigger."""
    heads = heads_of(A.detach(), M.detach())
    best, worst = 0.0, {}
    for j in range(1, L):
        v, C = pgd.pgd_trigger(heads, "softmax", N, L, j, starts, steps, gen)
        best = max(best, v)
        worst[j] = C
    return best, worst


def init_model(gen, delta):
    """A near-sink start: BOS keys preferred, M near the identity off BOS."""
    A = torch.randn(N, N, generator=gen, dtype=torch.float64) * 0.5
    A[:, 0] += 2.0
    M = torch.eye(N, dtype=torch.float64) + torch.randn(N, N, generator=gen,
                                                        dtype=torch.float64) * 0.1
    M[0, 0] = 0.0
    return A, M


def search_one(i, delta, seed, steps):
    gen = torch.Generator().manual_seed(seed)
    A, M = init_model(gen, delta)
    A.requires_grad_(True)
    M.requires_grad_(True)
    opt = torch.optim.Adam([A, M], lr=0.02)
    Cs = batch(gen, 48)
    extra = {j: torch.zeros(0, L - 1, K, dtype=torch.float64) for j in range(1, L)}
    for s in range(steps):
        if s % 100 == 0 and s > 0:
            _, worst = pgd_estimate(A, M, gen, starts=8, steps=30)
            for j in range(1, L):
                extra[j] = torch.cat([extra[j], worst[j]])[-20:]
        tau = 20.0 * (1 + 19.0 * s / max(steps - 1, 1))
        allC = {j: torch.cat([Cs[j], extra[j]]) for j in range(1, L)}
        r = residuals(A, M, allC).abs()
        smax = torch.logsumexp(tau * r, 0) / tau
        viol = torch.clamp(delta + MARGIN - witness_deficit(A, i), min=0)
        loss = smax + MU * viol ** 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        if s == steps // 2:
            for g in opt.param_groups:
                g["lr"] = 0.005
    E_est, _ = pgd_estimate(A, M, gen, starts=32, steps=100)
    with torch.no_grad():
        d = float(witness_deficit(A, i))
    return A.detach().numpy().copy(), M.detach().numpy().copy(), E_est, d


def cmd_search(args):
    os.makedirs(OUT, exist_ok=True)
    for i in ROWS:
        for ds in DELTAS:
            delta = float(ds)
            best = None
            for rs in range(args.restarts):
                seed = 1000 * i + int(round(100 * delta)) * 10 + rs
                A, M, E_est, d = search_one(i, delta, seed, args.steps)
                ok = d >= delta
                print("row %d delta %s seed %d: E >= %.6f SEARCH(PGD, lower estimate), "
                      "witness deficit %.6f NUMERIC(53)%s" % (i, ds, seed, E_est, d,
                                                               "" if ok else " (violates)"),
                      flush=True)
                if ok and (best is None or E_est < best[2]):
                    best = (A, M, E_est, d, seed)
            if best is None:
                print("row %d delta %s: no restart satisfied the witness constraint" % (i, ds))
                continue
            A, M, E_est, d, seed = best
            name = name_of(i, ds)
            j, cont = witness_of(i)
            X = r1.input_of(N, L, j, cont)
            wit = {"format": "sinkcert-input", "version": 1, "tokens": X.tolist()}
            with open(os.path.join(OUT, name + ".witness.json"), "w") as f:
                json.dump(wit, f)
                f.write("\n")
            doc = {"format": "sinkcert-weights", "version": 1, "kind": "single-layer",
                   "attention": "softmax", "n": N, "layers": 1, "heads": 1,
                   "weights": [[{"A": [[repr(float(v)) for v in row] for row in A],
                                 "M": [[repr(float(v)) for v in row] for row in M]}]],
                   "metadata": {"L": L, "trigger_range": "paper",
                                "study": "slowest row search (docs/methods.md, The row-1 frontier)",
                                "command": "/usr/bin/python3 scripts/slowest_row_search.py search "
                                           "--restarts %d --steps %d" % (args.restarts, args.steps),
                                "seed": seed, "row": i, "delta": ds,
                                "witness_trigger": j, "witness_contents": cont,
                                "witness_file": name + ".witness.json",
                                "witness_deficit_search": repr(d),
                                "E_pgd_search_lower": repr(E_est),
                                "evidence": "SEARCH: a model found by search (an upper bound on "
                                            "the smallest E for this row and delta once E is "
                                            "certified; never a lower bound)"}}
            with open(os.path.join(OUT, name + ".weights.json"), "w") as f:
                json.dump(doc, f, indent=1)
                f.write("\n")
    return 0


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return json.loads(out.stdout)
    except ValueError:
        raise SystemExit("slowest_row_search: %s gave no JSON (exit %d): %s"
                         % (" ".join(cmd), out.returncode, out.stderr[:400]))


def cmd_certify(args):
    summary = []
    for i in ROWS:
        for ds in DELTAS:
            name = name_of(i, ds)
            w = os.path.join(OUT, name + ".weights.json")
            x = os.path.join(OUT, name + ".witness.json")
            if not os.path.exists(w):
                continue
            b = run_json([args.sinkcert, "--quiet", "verify", "bound", "--weights", w, "--L",
                          str(L), "--gap", "0.05", "--seconds", str(args.seconds), "--json"])
            e = run_json([args.sinkcert, "--quiet", "eval", "--weights", w, "--input", x,
                          "--certify", "6", "--json"])
            for rep, suffix in ((b, ".bound.json"), (e, ".eval.json")):
                with open(os.path.join(OUT, name + suffix), "w") as f:
                    json.dump(rep, f, indent=1, sort_keys=True)
                    f.write("\n")
            summary.append(summary_row(i, ds, name, b, e))
            print(readme_row(summary[-1]), flush=True)
    with open(os.path.join(OUT, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write(readme(summary))
    return 0


def summary_row(i, ds, name, b, e):
    deficit = e["bos_deficit"][0]["one_minus_bos"][i]
    return {"row": i, "delta": ds, "file": name + ".weights.json",
            "witness": name + ".witness.json",
            "E_lo": b["lo"], "E_hi": b["hi"], "E_verdict": b["verdict"],
            "E_evidence": b["evidence"], "row_deficit_at_witness": deficit,
            "row_deficit_evidence": e["evidence"], "row1": b.get("row1")}


def interval_lo(s):
    return float(s.strip("[]").split(",")[0])


def directed(x, up, digits=6):
    """x rounded outward at DIGITS decimals (up: toward +inf), from its exact binary value."""
    q = Decimal(1).scaleb(-digits)
    return str(Decimal(x).quantize(q, rounding=ROUND_CEILING if up else ROUND_FLOOR))


def readme_row(s):
    r1d = s["row1"] or {}
    if r1d.get("applies"):
        # Does the certified row-1 bound separate row 1 from row i (below delta)?
        below = "every content" if Decimal(r1d["uniform_upper"]) < Decimal(s["delta"]) else \
            "mean only" if Decimal(r1d["mean_upper"]) < Decimal(s["delta"]) else "no"
        row1 = "<= %s at every content, mean <= %s [%s]; below delta: %s" % (
            directed(r1d["uniform_upper"], True, 4), directed(r1d["mean_upper"], True, 4),
            r1d["evidence"], below)
    else:
        row1 = "not applicable"
    # The upper end of a_i0 = 1 - (lower end of 1 - a_i0), rounded up.
    bos_hi = 1 - Decimal(s["row_deficit_at_witness"].strip("[]").split(",")[0])
    return "| %d | %s | [%s, %s] [%s; %s] | %s [%s] | %s [%s] | %s | `%s` |" % (
        s["row"], s["delta"], directed(s["E_lo"], False), directed(s["E_hi"], True),
        s["E_evidence"], s["E_verdict"], s["row_deficit_at_witness"], s["row_deficit_evidence"],
        directed(bos_hi, True), s["row_deficit_evidence"], row1, s["file"])


def readme(summary):
    lines = [
        "# The slowest row: searched models (n = 5, L = 4, paper convention)",
        "",
        "Generated by `scripts/slowest_row_search.py certify` (or `readme`, from",
        "summary.json); do not edit by hand.",
        "",
        "Single-layer, single-head softmax models found by search (SEARCH) whose row i",
        "does not sink on a fixed witness input with distinct contents (1 - a_i0 >= delta",
        "there), with the smallest worst-case loss E the search found. Each E is",
        "CERTIFIED for its model (`sinkcert verify bound`), so it is an UPPER bound on",
        "the smallest E of such a model, never a lower bound (verdict NOT ENCLOSED:",
        "the 120 s budget ended before the 0.05 relative gap; the enclosure is still",
        "CERTIFIED, only wider). Row 1 sinks at every",
        "content by the row-1 frontier theorem (docs/methods.md); its certified",
        "deficit bound from the certified E is the last-but-one column (trivial,",
        "1, when E >= (L-2)/(2(L-1)) = 1/3); \"below delta\" says whether it is below",
        "the row-i deficit delta of the witness at every content, in the mean over",
        "uniform content only, or not at all (then the certified E is too large for the",
        "theorem to separate row 1 from row i). Witnesses: row 2 with the trigger at 3,",
        "x_1 = x^o(+1,+1), x_2 = x^o(-1,-1); row 3 with the trigger at 1 (at L = 4 no",
        "ordinary row 3 has the trigger after it), x_2 = x^o(+1,+1), x_3 = x^o(-1,-1).",
        "",
        "| i | delta | E [CERTIFIED enclosure] | 1 - a_i0 at the witness | a_i0 at the witness "
        "(upper end) | row 1: 1 - a_10 from E | file |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [readme_row(s) for s in summary]
    lines += [
        "",
        "Regenerate (the search is deterministic, seeded; certification with a built sinkcert):",
        "",
        "    /usr/bin/python3 scripts/slowest_row_search.py search",
        "    /usr/bin/python3 scripts/slowest_row_search.py certify build/sinkcert",
        "    /usr/bin/python3 scripts/slowest_row_search.py check",
        "",
    ]
    return "\n".join(lines)


def cmd_readme(args):
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write(readme(load("summary.json")))
    return 0


# ---------------------------------------------------------------------------
# check
# ---------------------------------------------------------------------------

def check_entry(s, doc, wit, bound, ev):
    """Problems with one committed model (an empty list when consistent)."""
    bad = []
    i, ds = s["row"], s["delta"]
    md = doc["metadata"]
    j, cont = witness_of(i)
    if md.get("row") != i or md.get("delta") != ds or md.get("witness_trigger") != j \
            or md.get("witness_contents") != cont or md.get("L") != L:
        bad.append("metadata does not match row %d delta %s" % (i, ds))
    X = np.array(wit["tokens"], dtype=float)
    if not np.array_equal(X, r1.input_of(N, L, j, cont)):
        bad.append("witness tokens are not the recorded witness")
    A = np.array([[float(v) for v in row] for row in doc["weights"][0][0]["A"]])
    M = np.array([[float(v) for v in row] for row in doc["weights"][0][0]["M"]])
    _, a = r1.forward(A, M, X)
    if not 1 - a[i, 0] >= float(ds) - FLOAT_SLACK:
        bad.append("row %d: 1 - a_i0 = %r < delta = %s at the witness (NUMERIC(53))"
                   % (i, 1 - a[i, 0], ds))
    if not interval_lo(ev["bos_deficit"][0]["one_minus_bos"][i]) >= float(ds):
        bad.append("certified 1 - a_i0 lower end below delta")
    if ev["bos_deficit"][0]["one_minus_bos"][i] != s["row_deficit_at_witness"] \
            or bound["hi"] != s["E_hi"] or bound["lo"] != s["E_lo"] \
            or bound["evidence"] != "CERTIFIED" or ev["evidence"] != "CERTIFIED":
        bad.append("summary does not match the certified reports")
    # The certified enclosure must contain the witness's own loss (NUMERIC).
    R, _ = r1.err(A, M, X, j)
    if np.abs(R).max() > bound["hi"] + FLOAT_SLACK:
        bad.append("the witness's loss exceeds the certified upper end of E")
    return bad


def load(name):
    with open(os.path.join(OUT, name)) as f:
        return json.load(f)


def run_checks(summary, files, readme_text):
    bad = []
    if len(summary) != len(ROWS) * len(DELTAS):
        bad.append("summary has %d models, expected %d" % (len(summary), len(ROWS) * len(DELTAS)))
    for s in summary:
        stem = s["file"][:-len(".weights.json")]
        bad += ["%s: %s" % (stem, b) for b in
                check_entry(s, *(files[stem + suf] for suf in
                                 (".weights.json", ".witness.json", ".bound.json", ".eval.json")))]
    if readme_text != readme(summary):
        bad.append("README.md is not what the summary regenerates")
    return bad


def cmd_check(args):
    summary = load("summary.json")
    files = {}
    for s in summary:
        stem = s["file"][:-len(".weights.json")]
        for suf in (".weights.json", ".witness.json", ".bound.json", ".eval.json"):
            files[stem + suf] = load(stem + suf)
    with open(os.path.join(OUT, "README.md")) as f:
        text = f.read()
    bad = run_checks(summary, files, text)
    for s in summary:
        print("row %d delta %s: E in [%s, %s] CERTIFIED; 1 - a_i0 at the witness %s CERTIFIED"
              % (s["row"], s["delta"], directed(s["E_lo"], False), directed(s["E_hi"], True),
                 s["row_deficit_at_witness"]))
    print("committed files: %s" % ("ok" if not bad else "; ".join(bad)))
    # Tampered copies must fail.
    caught = True
    s0 = summary[0]
    stem = s0["file"][:-len(".weights.json")]
    w = files[stem + ".weights.json"]
    Aw = np.array([[float(v) for v in row] for row in w["weights"][0][0]["A"]])
    _, a = r1.forward(Aw, np.eye(N), np.array(files[stem + ".witness.json"]["tokens"]))
    tampers = []
    t1 = copy.deepcopy(summary)
    f1 = copy.deepcopy(files)
    raised = repr(round(1 - a[s0["row"], 0] + 0.01, 6))
    t1[0]["delta"] = raised
    f1[stem + ".weights.json"]["metadata"]["delta"] = raised
    tampers.append(("delta raised above the witness deficit", t1, f1, readme(t1)))
    f2 = copy.deepcopy(files)
    f2[stem + ".witness.json"]["tokens"][2][2] = 1.0
    tampers.append(("a witness content changed", summary, f2, text))
    tampers.append(("README's E altered", summary, files,
                    text.replace(directed(s0["E_hi"], True), directed(s0["E_hi"] - 0.01, True), 1)))
    for label, ts, tf, tt in tampers:
        tb = run_checks(ts, tf, tt)
        print("tampered (%s): %s" % (label, "caught" if tb else "NOT caught"))
        caught &= bool(tb)
    return 0 if not bad and caught else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("search")
    s.add_argument("--restarts", type=int, default=4)
    s.add_argument("--steps", type=int, default=4000)
    c = sub.add_parser("certify")
    c.add_argument("sinkcert")
    c.add_argument("--seconds", type=int, default=120)
    sub.add_parser("check")
    sub.add_parser("readme")
    args = ap.parse_args()
    torch.set_num_threads(1)
    return {"search": cmd_search, "certify": cmd_certify, "check": cmd_check,
            "readme": cmd_readme}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
