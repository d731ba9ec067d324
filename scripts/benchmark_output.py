# SPDX-License-Identifier: MIT
"""What the benchmark scripts share (scripts/pytorch_models_benchmark.py,
scripts/deep_heldout_benchmark.py, ...): running a command that prints one
JSON object, the revisions a header names (and the header lines of the
scripts that compare builds), the load average, a weight file's kind, and
writing the output file atomically (a temporary beside it, then a
rename)."""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_kind(path):
    """The weight file's "kind" ("single-layer" when absent): the two
    benchmarks split results/benchmarks/pytorch_models/ by it."""
    with open(path) as f:
        return json.load(f).get("kind", "single-layer")


def run_json(cmd, program):
    """(the JSON the command prints, its wall seconds); exit codes 0 done or
    ENCLOSED, 3 NOT VERIFIED, 4 NOT ENCLOSED (docs/commands.md) are
    answers, any other stops the benchmark."""
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.time() - t0
    if p.returncode not in (0, 3, 4):
        raise SystemExit(f"{program}: error: {' '.join(cmd)} exited "
                         f"{p.returncode}: {p.stderr.strip()[-400:]}")
    return json.loads(p.stdout), secs


BOUND_HEADER = (f"{'model':<16} {'build':<9} {'boxes':>5} {'wall s':>7} {'lower':>12} "
                f"{'upper':>12} {'upper/lower':>11}")


def bound_rows(models, builds, program, lines):
    """Runs `verify bound --weights W --L L --seconds S --json --quiet` for
    each model (name, weight file, L, seconds) with each build (label,
    binary), in that order, and appends (and prints) one BOUND_HEADER row
    each: the CERTIFIED enclosure, the boxes, and the upper end over the
    lower one."""
    for name, weights, L, seconds in models:
        for build, binary in builds:
            out, secs = run_json([binary, "verify", "bound", "--weights", weights, "--L", str(L),
                                  "--seconds", str(seconds), "--json", "--quiet"], program)
            lo, hi = out["lo"], out["hi"]
            hi = float("inf") if hi is None else hi
            ratio = hi / lo if lo else float("inf")
            line = (f"{name:<16} {build:<9} {out['boxes']:>5} {secs:>7.1f} {lo:>12.5e} "
                    f"{hi:>12.5e} {ratio:>11.3f}")
            lines.append(line)
            print(line, flush=True)


def git_revision():
    p = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=12"],
                       capture_output=True, text=True)
    return p.stdout.strip() or "unknown"


def binary_revision(binary):
    p = subprocess.run([binary, "--version"], capture_output=True, text=True)
    return (p.stdout or p.stderr).strip().splitlines()[0] if p.returncode == 0 else "unknown"


def load_average():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_header(program, argv, binaries):
    """The lines a benchmark output starts with after its title: the
    command, the revisions (binaries: [(label, path)], e.g. [("binary", B),
    ("baseline", B0)]) and the time with the load average before."""
    names = "; ".join(f"{label}: {binary_revision(path)}" for label, path in binaries)
    return [
        f"# command: /usr/bin/python3 scripts/{program}.py " + " ".join(argv),
        f"# revision: {git_revision()} ({names})",
        f"# time_utc: {datetime.datetime.utcnow().strftime('%Y-%m-%dT%H:%MZ')}, "
        f"load average before: {load_average()} ({os.cpu_count()} cores, shared)",
    ]


def two_build_parser(doc, baseline_help):
    """The options every two-build comparison has: --binary (this build),
    --baseline (the earlier one, `baseline_help` says which revision) and
    --out; `doc` is the script's docstring, its first paragraph the --help
    text. The caller adds its budgets."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "sinkcert"))
    p.add_argument("--baseline", required=True, help=baseline_help)
    p.add_argument("--out", default=None, help="also write the output to this file")
    return p


def require_positive(program, budgets):
    """Stops with an error naming the option when a budget [(flag, value)]
    is below 1."""
    for flag, v in budgets:
        if v < 1:
            raise SystemExit(f"{program}: error: {flag} {v}: expected at least 1")


def two_build_rows(program, argv, args, title, each_row, models):
    """The whole output of a two-build comparison, from the repository's
    root: the title, run_header, the line `each_row` that says what a row
    ran, BOUND_HEADER, then bound_rows over models(scratch) (a temporary
    folder, removed after) with the baseline first, and finish_output."""
    os.chdir(ROOT)
    lines = [
        f"# {program} output: {title}",
        *run_header(program, argv, [("binary", args.binary), ("baseline", args.baseline)]),
        each_row,
        BOUND_HEADER,
    ]
    for line in lines:
        print(line, flush=True)
    scratch = tempfile.mkdtemp(prefix=program + "_")
    try:
        bound_rows(models(scratch), [("baseline", args.baseline), ("this", args.binary)], program,
                   lines)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    finish_output(lines, args.out)
    return 0


def finish_output(lines, out):
    """Appends and prints the load average after, and writes the lines to
    `out` when given."""
    lines.append(f"# load average after: {load_average()}")
    print(lines[-1])
    if out:
        write_lines(out, lines)


def write_lines(path, lines):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    os.replace(tmp, path)
