#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The attack against an independent PGD baseline, and the certified bound,
on the models trained by the paper's PyTorch recipe
(results/benchmarks/pytorch_models/, written by scripts/train_pytorch_models.py).

Per model (each file's own L and trigger convention):
  PGD      /usr/bin/python3 scripts/pgd_attack.py W --seed S   (torch float64,
           64 starts x 200 steps per trigger; SEARCH(lower bound), NUMERIC(53))
  attack   BIN attack --weights W --seed S --json   (the default round, no
           --seconds; SEARCH(lower bound), certified at its witness)
  ratio    attack / PGD: the goal is >= 0.999 on every model
  bound    BIN verify bound --weights W --gap G --seconds T --json: the
           CERTIFIED enclosure [lower, upper] of E, its relative gap and the
           wall seconds (the last column changes whenever the bound improves)
Seconds are wall seconds on whatever machine runs it (its load average is
printed). Re-runnable on any build: --binary names the sinkcert to measure.

  /usr/bin/python3 scripts/pytorch_models_benchmark.py [--binary build/sinkcert]
      [--models DIR] [--seed 0] [--gap 0.05] [--seconds 600] [--no-bound]
      [--out results/benchmarks/pytorch_models.txt] [--pgd-json DIR]
Exit 1 when some ratio attack / PGD is below 0.999.
"""
import argparse
import datetime
import glob
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from benchmark_output import (binary_revision, git_revision, load_average,  # noqa: E402
                              read_kind, run_json, write_lines)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = "pytorch_models_benchmark"
# The goal of the default round: at least this fraction of PGD's value.
TARGET_RATIO = 0.999


def bound_fields(b):
    """lower, upper, relative gap, verdict from verify bound's JSON (an upper
    end of null is +inf: hi_exact says so)."""
    hi = b.get("hi")
    return b.get("lo"), hi if hi is not None else b.get("hi_exact", "inf"), \
        b.get("relative_gap"), b.get("verdict", "?")


def fmt(x, spec=".4e"):
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    return format(x, spec)


def measure_model(f, binary, seed, gap, seconds, no_bound=False, pgd_json=None,
                  pgd_budget=(64, 200)):
    """One model's row: PGD (or its cached output DIR/<model>.json, which
    must be of this seed and budget), the attack's default round, and
    unless no_bound the certified bound. Returns a dict: name, range,
    attack, pgd, ratio, attack_s, pgd_s, lower, upper, gap, bound_s,
    verdict, pgd_budget."""
    name = os.path.basename(f).split(".")[0]
    starts, steps = pgd_budget
    cached = os.path.join(pgd_json, name + ".json") if pgd_json else None
    if cached and os.path.exists(cached):
        with open(cached) as fh:
            pgd = json.load(fh)
        if (pgd["seed"], pgd["starts"], pgd["steps"]) != (seed, starts, steps):
            raise SystemExit(f"{PROGRAM}: error: {cached}: another seed or budget than this "
                             f"run's (expected seed {seed}, {starts} starts x {steps} steps)")
        pgd_s = pgd["seconds"]
    else:
        pgd, pgd_s = run_json(["/usr/bin/python3", os.path.join(ROOT, "scripts", "pgd_attack.py"),
                               f, "--seed", str(seed), "--starts", str(starts), "--steps",
                               str(steps)], PROGRAM)
    att, att_s = run_json([binary, "attack", "--weights", f, "--seed", str(seed), "--json",
                           "--quiet"], PROGRAM)
    a = att["best"]["certified"]
    m = dict(name=name, range=pgd["trigger_range"], attack=a, pgd=pgd["worst"],
             ratio=a / pgd["worst"] if pgd["worst"] > 0 else float("nan"), attack_s=att_s,
             pgd_s=pgd_s, lower=None, upper=None, gap=None, bound_s=None, verdict="-",
             pgd_budget=[starts, steps])
    if not no_bound:
        b, m["bound_s"] = run_json([binary, "verify", "bound", "--weights", f, "--gap", f"{gap:g}",
                                    "--seconds", f"{seconds:g}", "--json", "--quiet"], PROGRAM)
        m["lower"], m["upper"], m["gap"], m["verdict"] = bound_fields(b)
    return m


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "sinkcert"))
    p.add_argument("--models", default=os.path.join(ROOT, "results", "benchmarks",
                                                    "pytorch_models"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gap", type=float, default=0.05)
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--no-bound", action="store_true", help="skip verify bound")
    p.add_argument("--only", nargs="*", default=None, help="model names to run")
    p.add_argument("--out", default=None, help="also write the output to this file")
    p.add_argument("--pgd-json", default=None, metavar="DIR",
                   help="reuse DIR/<model>.json written by scripts/pgd_attack.py with this seed "
                        "(64 x 200) instead of running it (its seconds are then that run's)")
    args = p.parse_args(argv)
    files = sorted(glob.glob(os.path.join(args.models, "*.weights.json")))
    # single-layer models only: scripts/pgd_attack.py runs one layer; the
    # residual ones (softmax_2x2_*, softmax_4x4_*) are scripts/deep_heldout_benchmark.py's
    files = [f for f in files if read_kind(f) == "single-layer"]
    if args.only:
        files = [f for f in files if os.path.basename(f).split(".")[0] in args.only]
    if not files:
        raise SystemExit(f"pytorch_models_benchmark: error: {args.models}: no *.weights.json")
    lines = [
        "# pytorch_models_benchmark output: the attack's default round against PGD, and the "
        "certified bound",
        "# command: /usr/bin/python3 scripts/pytorch_models_benchmark.py " + " ".join(argv),
        f"# revision: {git_revision()} (binary: {binary_revision(args.binary)})",
        f"# time_utc: {datetime.datetime.utcnow().strftime('%Y-%m-%dT%H:%MZ')}, "
        f"load average before: {load_average()}",
        f"# seed {args.seed}; PGD: scripts/pgd_attack.py, 64 starts x 200 steps per trigger, "
        "torch float64 (NUMERIC(53)); attack: sinkcert attack, default round, certified at the "
        "witness; both SEARCH(lower bound)",
        f"# bound: sinkcert verify bound --gap {args.gap:g} --seconds {args.seconds:g}: CERTIFIED "
        "enclosure [lower, upper] of E, relative gap, wall seconds" +
        (" (skipped: --no-bound)" if args.no_bound else ""),
    ]
    header = (f"{'model':<20} {'range':<14} {'attack':>10} {'PGD':>10} {'ratio':>7} "
              f"{'att s':>6} {'PGD s':>6} | {'lower':>10} {'upper':>10} {'gap':>8} "
              f"{'bound s':>7} verdict")
    lines.append(header)
    for line in lines:
        print(line, flush=True)
    worst_ratio = float("inf")
    for f in files:
        m = measure_model(f, args.binary, args.seed, args.gap, args.seconds, args.no_bound,
                          args.pgd_json)
        worst_ratio = min(worst_ratio, m["ratio"])
        line = (f"{m['name']:<20} {m['range']:<14} {m['attack']:>10.4e} {m['pgd']:>10.4e} "
                f"{m['ratio']:>7.4f} {m['attack_s']:>6.1f} {m['pgd_s']:>6.1f} | "
                f"{fmt(m['lower']):>10} {fmt(m['upper']):>10} {fmt(m['gap'], '.2e'):>8} "
                f"{fmt(m['bound_s'], '.1f'):>7} {m['verdict']}")
        lines.append(line)
        print(line, flush=True)
    summary = (f"# smallest attack / PGD: {worst_ratio:.4f} (goal >= {TARGET_RATIO}); "
               f"load average after: {load_average()}")
    lines.append(summary)
    print(summary)
    if args.out:
        write_lines(args.out, lines)
    return 0 if worst_ratio >= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
