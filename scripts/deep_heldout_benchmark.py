#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A held-out check of the deep (residual) worst-case bound: its certified
upper end must never be below a worst case that a search finds, neither
sinkcert's own attack nor a PGD written independently in numpy
(scripts/deep_pgd_attack.py), on the same models, at every size.

Models: the committed deep models (results/theorem2/path_start*.weights.json,
softmax 2 x 2 at n = L = 16; results/theorem3/relu_residual_*.weights.json,
ReLU 2 x 2 and 4 x 4 at n = L = 16; the residual models of
results/benchmarks/pytorch_models/ (weight file kind "residual": softmax
2 x 2 and 4 x 4 at n = L = 16 trained by the paper's PyTorch recipe,
scripts/train_pytorch_models.py)) and random
residual softmax models at
n = 5, L = 4, made here from numpy's generator with the seeds listed:
A^{l,h} = a Z, M^{l,h} = m Z' (Z, Z' standard normal n x n), scales a and m
in RANDOM_MODELS (the bound closes on the small ones; entries of order 1
make every score read the content and the gap stays wide).

Per model:
  PGD      /usr/bin/python3 scripts/deep_pgd_attack.py W --seed S (numpy
           float64, 64 starts x 200 steps per trigger; SEARCH(lower bound),
           NUMERIC(53))
  attack   BIN attack --weights W --seed S --json (the default round;
           SEARCH(lower bound), certified at its witness)
  PGD cert the lower end of BIN eval --certify 17 at PGD's witness: PGD's
           value in float64 may exceed the true e(X) by rounding (a model
           with E = 0 gives 1e-16), its witness's certified value does not
  bound    BIN verify bound --weights W --seconds T --json: the CERTIFIED
           enclosure [lower, upper] of E and the wall seconds
  held     upper >= max(attack, PGD cert): "yes", or "NO" (a wrong bound or
           a wrong search; the run then exits 1)

  /usr/bin/python3 scripts/deep_heldout_benchmark.py [--binary build/sinkcert]
      [--seed 0] [--seconds 60] [--small-seconds 20] [--out FILE] [--keep DIR]
--keep DIR writes the random models' weight files there.
"""
import argparse
import datetime
import glob
import json
import os
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from benchmark_output import (binary_revision, git_revision, load_average,  # noqa: E402
                              read_kind, run_json, write_lines)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = "deep_heldout_benchmark"
# (name, numpy seed, scales a of A and m of M, layers, heads) of the random
# models at n = 5, L = 4
RANDOM_MODELS = [("random_0.05_s5", 5, 0.05, 0.05, 2, 2), ("random_0.05_s7_3x2", 7, 0.05, 0.05, 3, 2),
                 ("random_0.15_s6", 6, 0.15, 0.15, 2, 2), ("random_1_s1", 1, 1.0, 0.5, 2, 2),
                 ("random_3_s3", 3, 3.0, 0.5, 2, 2)]


def random_model(path, seed, a, m, layers, heads, n=5, L=4):
    rng = np.random.default_rng(seed)
    ws = [[{"A": (a * rng.standard_normal((n, n))).tolist(),
            "M": (m * rng.standard_normal((n, n))).tolist()} for _ in range(heads)]
          for _ in range(layers)]
    with open(path, "w") as f:
        json.dump({"format": "sinkcert-weights", "version": 1, "kind": "residual",
                   "attention": "softmax", "n": n, "layers": layers, "heads": heads,
                   "weights": ws, "task": {"L": L, "trigger_range": "paper"}}, f)


def certified_lower(binary, weights, witness):
    """The lower end of e(X) at the witness, certified by eval --certify."""
    out, _ = run_json([binary, "eval", "--weights", weights, "--input", witness, "--certify",
                       "17", "--json"], PROGRAM)
    # "[lo, hi]" with exact decimal ends
    return float(out["linf_error"].strip("[]").split(",")[0])


def upper_end(b):
    """verify bound's upper end (None in the JSON is +inf)."""
    hi = b.get("hi")
    return float("inf") if hi is None else hi


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "sinkcert"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seconds", type=float, default=60, help="verify bound's budget at n = 16")
    p.add_argument("--small-seconds", type=float, default=20,
                   help="verify bound's budget at n = 5, L = 4")
    p.add_argument("--out", default=None, help="also write the output to this file")
    p.add_argument("--keep", default=None, metavar="DIR", help="write the random models here")
    args = p.parse_args(argv)
    scratch = tempfile.mkdtemp(prefix="deep_heldout_")
    folder = args.keep or scratch
    os.makedirs(folder, exist_ok=True)
    models = []
    for pattern in ("theorem2/path_start*.weights.json", "theorem3/relu_residual_*.weights.json",
                    "benchmarks/pytorch_models/*.weights.json"):
        for f in sorted(glob.glob(os.path.join(ROOT, "results", pattern))):
            # the single-layer recipe models are scripts/pytorch_models_benchmark.py's
            if read_kind(f) == "residual":
                models.append((os.path.basename(f).split(".")[0], f, args.seconds))
    for name, seed, a, m, layers, heads in RANDOM_MODELS:
        path = os.path.join(folder, name + ".weights.json")
        random_model(path, seed, a, m, layers, heads)
        models.append((name, path, args.small_seconds))
    lines = [
        "# deep_heldout_benchmark output: the deep bound's upper end against two searches",
        "# command: /usr/bin/python3 scripts/deep_heldout_benchmark.py " + " ".join(argv),
        f"# revision: {git_revision()} (binary: {binary_revision(args.binary)})",
        f"# time_utc: {datetime.datetime.utcnow().strftime('%Y-%m-%dT%H:%MZ')}, "
        f"load average before: {load_average()}",
        f"# seed {args.seed}; PGD: scripts/deep_pgd_attack.py, 64 starts x 200 steps per "
        "trigger, numpy float64 (NUMERIC(53)); attack: sinkcert attack, default round, "
        "certified at the witness; both SEARCH(lower bound); PGD cert: eval --certify 17 at "
        "PGD's witness, its lower end",
        f"# bound: sinkcert verify bound --seconds {args.seconds:g} (n = 16) or "
        f"{args.small_seconds:g} (n = 5, L = 4): CERTIFIED enclosure [lower, upper] of E; "
        "held: upper >= max(attack, PGD cert)",
        "# random models (n = 5, L = 4, paper triggers): A = a Z, M = m Z', numpy "
        "default_rng(seed), as in RANDOM_MODELS of the script; name random_<a>_s<seed>",
    ]
    header = (f"{'model':<26} {'n':>3} {'L':>3} {'LxH':>5} {'attack':>11} {'PGD':>11} "
              f"{'PGD cert':>11} "
              f"{'att s':>6} {'PGD s':>6} | {'lower':>11} {'upper':>11} {'bound s':>7} "
              f"{'verdict':<13} held")
    lines.append(header)
    for line in lines:
        print(line, flush=True)
    failures = 0
    for name, path, seconds in models:
        with open(path) as f:
            d = json.load(f)
        L = d.get("task", {}).get("L", 16)
        witness = os.path.join(scratch, name + ".witness.json")
        pgd, pgd_s = run_json(["/usr/bin/python3",
                               os.path.join(ROOT, "scripts", "deep_pgd_attack.py"), path,
                               "--seed", str(args.seed), "--L", str(L), "--witness", witness], PROGRAM)
        pgd_cert = certified_lower(args.binary, path, witness)
        att, att_s = run_json([args.binary, "attack", "--weights", path, "--L", str(L),
                               "--seed", str(args.seed), "--json", "--quiet"], PROGRAM)
        a = att["best"]["certified"]
        b, bound_s = run_json([args.binary, "verify", "bound", "--weights", path, "--L", str(L),
                               "--seconds", f"{seconds:g}", "--json", "--quiet"], PROGRAM)
        hi = upper_end(b)
        held = hi >= max(a, pgd_cert)
        failures += 0 if held else 1
        line = (f"{name:<26} {d['n']:>3} {L:>3} {str(d['layers']) + 'x' + str(d['heads']):>5} "
                f"{a:>11.4e} {pgd['worst']:>11.4e} {pgd_cert:>11.4e} {att_s:>6.1f} "
                f"{pgd_s:>6.1f} | "
                f"{b.get('lo', float('nan')):>11.4e} {hi:>11.4e} {bound_s:>7.1f} "
                f"{b.get('verdict', '?'):<13} {'yes' if held else 'NO'}")
        lines.append(line)
        print(line, flush=True)
    summary = f"# {len(models) - failures} of {len(models)} held; load average after: {load_average()}"
    lines.append(summary)
    print(summary)
    if args.out:
        write_lines(args.out, lines)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
