#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The scaling table: the attack against PGD and the certified bound on
single-layer models trained by the paper's PyTorch recipe at growing sizes
(n = L = 8, 16, 32, 64 and n = 16 with L = 32 ... 256), with the fitted
growth exponent of each time in n and in L.

Models: results/benchmarks/scaling_models/*.weights.json (written by
scripts/train_pytorch_models.py --n N --L L, their README gives the
commands) and the n = L = 16 seed-0 models of results/benchmarks/pytorch_models/.
A row's name is <attention>_n<N>_L<L>, read from the file, not its name.

  scaling_benchmark.py measure [--only NAME ...] [--seconds 300] [--gap 0.05]
                               [--mpiexec PATH] [--binary build/sinkcert]
      per model: PGD (scripts/pgd_attack.py, run once and kept in
      scaling_models/pgd/<file stem>.json), the attack's default round and
      `verify bound --gap G --seconds T` (scripts/pytorch_models_benchmark.py's
      measure_model), and with --mpiexec the same bound under
      `mpiexec -np 2`; writes scaling_models/runs/<row name>.json (its
      command, revisions, time and load average inside)
  scaling_benchmark.py table [--out results/benchmarks/scaling.txt]
      the table from every runs/*.json, and the fits

Fits: for a series (attention kind; n = L, or n = 16 with L varying) and a
time column, the least-squares slope b of log t = a + b log size over the
series' rows (at least 3), the growth exponent of that time; the bound's
time is fitted only over rows where the bound ENCLOSED within its budget (a
budget-bound time measures the budget, not the bound), and PGD's only
over rows run with its full budget. Exponents are
NUMERIC descriptions of wall times on one machine, not bounds.
"""
import argparse
import datetime
import glob
import json
import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from benchmark_output import (binary_revision, git_revision, load_average,  # noqa: E402
                              run_json, write_lines)
from pytorch_models_benchmark import fmt, measure_model, bound_fields  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = "scaling_benchmark"
MODELS = os.path.join(ROOT, "results", "benchmarks", "scaling_models")
EXTRA = [os.path.join(ROOT, "results", "benchmarks", "pytorch_models", s + ".weights.json")
         for s in ("softmax_s0", "relu_s0")]
# PGD's cost grows as starts x steps x triggers x L^2 n; its full budget
# (64 x 200, the one every other benchmark uses) took 17 min at
# n = L = 64 and would take hours at n = 16, L >= 128, so beyond
# L = FULL_PGD_MAX_L it runs a quarter of the starts and half the steps
# (12 min at n = 16, L = 128 under load), and beyond SMALL_PGD_MAX_L a
# quarter of those again (each row prints its budget).
FULL_PGD = (64, 200)
FULL_PGD_MAX_L = 64
SMALL_PGD = (16, 100)
SMALL_PGD_MAX_L = 128
SMALLEST_PGD = (4, 50)
# a fit needs at least this many sizes to say more than a line through two points
MIN_FIT_POINTS = 3


def model_files():
    return sorted(glob.glob(os.path.join(MODELS, "*.weights.json"))) + EXTRA


def describe(path):
    with open(path) as fh:
        d = json.load(fh)
    n, L = d["n"], d["task"]["L"]
    return dict(n=n, L=L, attention=d["attention"], name=f"{d['attention']}_n{n}_L{L}")


def pgd_budget(L):
    if L <= FULL_PGD_MAX_L:
        return FULL_PGD
    return SMALL_PGD if L <= SMALL_PGD_MAX_L else SMALLEST_PGD


def measure(args):
    runs = os.path.join(MODELS, "runs")
    pgd_dir = os.path.join(MODELS, "pgd")
    os.makedirs(runs, exist_ok=True)
    for f in model_files():
        info = describe(f)
        if args.only and info["name"] not in args.only:
            continue
        stem = os.path.basename(f).split(".")[0]
        budget = pgd_budget(info["L"])
        cached = os.path.join(pgd_dir, stem + ".json")
        if not os.path.exists(cached):
            print(f"{info['name']}: PGD {budget[0]} starts x {budget[1]} steps ...", flush=True)
            pgd, _ = run_json(["/usr/bin/python3", os.path.join(ROOT, "scripts", "pgd_attack.py"),
                               os.path.relpath(f, ROOT), "--seed", str(args.seed), "--starts",
                               str(budget[0]), "--steps", str(budget[1])], PROGRAM)
            write_lines(cached, [json.dumps(pgd, indent=1)])
        load_before = load_average()
        print(f"{info['name']}: attack and bound ...", flush=True)
        m = measure_model(f, args.binary, args.seed, args.gap, args.seconds, False, pgd_dir,
                          budget)
        if args.mpiexec:
            # Open MPI refuses to run as root without these (CI runs as root)
            os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            b, m["bound2_s"] = run_json([args.mpiexec, "-np", "2", "--oversubscribe", args.binary,
                                         "verify", "bound", "--weights", f, "--gap",
                                         f"{args.gap:g}", "--seconds", f"{args.seconds:g}",
                                         "--json", "--quiet"], PROGRAM)
            m["lower2"], m["upper2"], m["gap2"], m["verdict2"] = bound_fields(b)
        m.update(info, file=os.path.relpath(f, ROOT), seconds_budget=args.seconds, gap_goal=args.gap,
                 seed=args.seed,
                 provenance=dict(command="/usr/bin/python3 scripts/scaling_benchmark.py " +
                                 " ".join(args.argv), revision=git_revision(),
                                 binary=binary_revision(args.binary),
                                 time_utc=datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%MZ"),
                                 load_before=load_before, load_after=load_average()))
        write_lines(os.path.join(runs, info["name"] + ".json"), [json.dumps(m, indent=1)])
        print(f"{info['name']}: attack {m['attack']:.4e} PGD {m['pgd']:.4e} bound "
              f"[{fmt(m['lower'])}, {fmt(m['upper'])}] {m['verdict']}", flush=True)
    return 0


def slope(points):
    """Least-squares slope of log y against log x."""
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def fits(rows):
    lines = []
    for attention in ("softmax", "relu"):
        for series, pick, size in (("n = L", lambda r: r["n"] == r["L"], "n"),
                                   ("n = 16", lambda r: r["n"] == 16, "L")):
            rs = sorted((r for r in rows if r["attention"] == attention and pick(r)),
                        key=lambda r: r[size])
            parts = []
            for col, label, keep in (("attack_s", "attack", lambda r: True),
                                     ("pgd_s", "PGD", lambda r: tuple(r["pgd_budget"]) == FULL_PGD),
                                     ("bound_s", "bound", lambda r: r["verdict"] == "ENCLOSED")):
                pts = [(r[size], r[col]) for r in rs if keep(r) and r[col] and r[col] > 0]
                if len(pts) >= MIN_FIT_POINTS:
                    parts.append(f"{label} t ~ {size}^{slope(pts):.2f} "
                                 f"({len(pts)} sizes {pts[0][0]}..{pts[-1][0]})")
                else:
                    parts.append(f"{label}: {len(pts)} sizes, no fit")
            lines.append(f"# fit {attention}, {series}: " + "; ".join(parts))
    return lines


def table(args):
    rows = []
    for p in sorted(glob.glob(os.path.join(MODELS, "runs", "*.json"))):
        with open(p) as fh:
            rows.append(json.load(fh))
    if not rows:
        raise SystemExit(f"{PROGRAM}: error: {MODELS}/runs: no measurements (run `measure`)")
    rows.sort(key=lambda r: (r["attention"] != "softmax", r["n"] != r["L"], r["n"], r["L"]))
    two = any("bound2_s" in r for r in rows)
    lines = [
        "# scaling_benchmark output: the attack's default round against PGD and the certified "
        "bound, at growing n and L",
        "# command: /usr/bin/python3 scripts/scaling_benchmark.py " + " ".join(args.argv) +
        " (rows from results/benchmarks/scaling_models/runs/*.json: each row's own command, "
        "revision, time and load average are there)",
        f"# revision: {git_revision()}",
        "# models: trained by scripts/train_pytorch_models.py (the paper's recipe, seed 0, "
        "reference-code trigger range); attack: sinkcert attack, default round, certified at the "
        "witness; PGD: scripts/pgd_attack.py (torch float64, NUMERIC(53)) with the row's starts x "
        "steps per trigger; both SEARCH(lower bound)",
        "# bound: sinkcert verify bound --gap G --seconds T (each row's budget): CERTIFIED "
        "enclosure [lower, upper] of E, relative gap, wall seconds" +
        ("; 2 ranks: the same under mpiexec -np 2 (same budget)" if two else ""),
    ]
    head = (f"{'model':<18} {'attack':>10} {'PGD':>10} {'ratio':>7} {'att s':>7} {'PGD s':>7} "
            f"{'PGD budget':>10} | {'lower':>10} {'upper':>10} {'gap':>8} {'bound s':>7} "
            f"{'budget':>6} verdict")
    if two:
        head += f" | {'upper 2r':>10} {'bound s 2r':>10}"
    lines.append(head)
    for r in rows:
        line = (f"{r['name']:<18} {r['attack']:>10.4e} {r['pgd']:>10.4e} {r['ratio']:>7.4f} "
                f"{r['attack_s']:>7.1f} {r['pgd_s']:>7.1f} "
                f"{'%d x %d' % tuple(r['pgd_budget']):>10} | {fmt(r['lower']):>10} "
                f"{fmt(r['upper']):>10} {fmt(r['gap'], '.2e'):>8} {fmt(r['bound_s'], '.1f'):>7} "
                f"{r['seconds_budget']:>6g} {r['verdict']}")
        if two:
            line += f" | {fmt(r.get('upper2')):>10} {fmt(r.get('bound2_s'), '.1f'):>10}"
        lines.append(line)
    worst = min(r["ratio"] for r in rows)
    lines.append(f"# smallest attack / PGD: {worst:.4f} (goal >= 0.999)")
    lines += fits(rows)
    for line in lines:
        print(line)
    if args.out:
        write_lines(args.out, lines)
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--binary", default=os.path.join(ROOT, "build", "sinkcert"))
    m.add_argument("--only", nargs="*", default=None, help="row names (softmax_n32_L32 ...)")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--gap", type=float, default=0.05)
    m.add_argument("--seconds", type=float, default=300)
    m.add_argument("--mpiexec", default=None, help="also run the bound under MPIEXEC -np 2")
    t = sub.add_parser("table")
    t.add_argument("--out", default=None)
    args = p.parse_args(argv)
    args.argv = argv
    return measure(args) if args.cmd == "measure" else table(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
