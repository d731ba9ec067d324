#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes docs/results.md and docs/benchmarks.md from the committed files.

Every number in the two pages is read from a file under results/ (the
appendix tables results/tables/*.json, the Theorem 1 and Theorem 2 study
JSON, the benchmark outputs results/benchmarks/*.txt); nothing is typed in
by hand. The text around the numbers (what a table is, which command wrote
it) lives in this script and holds no result.

  python3 scripts/results_doc.py [--root DIR] [--out-dir DIR]

writes DIR/results.md and DIR/benchmarks.md (default: docs/ of the
repository holding this script). tests/scripts/results_doc_test.py
regenerates both and compares them with the committed pages.
Standard library only.
"""

import argparse
import json
import os
import sys
import tempfile

# The appendix tables, in the appendix's order, each with the claim it
# serves. The caption, columns, rows, notes and provenance come from the
# table's JSON file.
TABLES = [
    ("Theorem 3: the exact ReLU certificate", ["p3_relu_certificate"]),
    ("The softmax sink family: certified values beside four precisions",
     ["p1_sink_loss", "p1_sink_bos", "p4_beyond_double"]),
    ("Certified worst-case loss by branch and bound", ["b1_worst_case_bound"]),
    ("The Theorem 1 search models, re-measured and certified",
     ["p2_search_models"]),
    ("Beyond double for a search model", ["p5_refined_search_path",
                                          "p5_refined_paper_size"]),
    ("The certified path: loss and BOS deficit over the whole box",
     ["c1_certified_path"]),
    ("Theorem 1 at the hypothesis edges", ["t1_hypothesis_edges"]),
    ("Theorem 2 in residual models",
     ["t2_theorem2_study", "t2b_theorem2_every_head", "t2c_theorem2_certified"]),
    ("Which normalizations need a sink",
     ["normalizations_n5_L4", "normalizations_n16_L16"]),
    ("The row-1 frontier: certified lower curve and certified models",
     ["q1_row1_frontier"]),
]

# The benchmark outputs, each with what it measures and the program that
# wrote it (the exact command lines are in the files' own headers).
BENCHMARKS = [
    ("benchmarks/appendix_benchmark.txt", "The appendix on one worker and on every core",
     "`python3 scripts/appendix_benchmark.py` (run from the source folder)",
     "`sinkcert appendix` run twice in one benchmark, with `--threads 1` and "
     "with its default (one worker process per core), from the committed "
     "models of `results/`: wall and CPU seconds, the ratio of wall times, "
     "and whether every table and figure data file equals the committed one "
     "cell by cell (`scripts/compare_appendix.py`, timing columns and "
     "provenance apart)."),
    ("benchmarks/attack_benchmark.txt", "The attack against projected gradient ascent",
     "`build/tests/attack_benchmark` (run from the source folder)",
     "Worst cases found by plain projected sign-gradient ascent (PGD), by "
     "the gradient adversary alone and by `sinkcert attack`, on the "
     "n = L = 16 path models of the Theorem 1 study and on models trained "
     "by the paper's recipe, under both trigger conventions. Every value is "
     "SEARCH(lower bound), certified at its witness."),
    ("benchmarks/pytorch_models.txt", "Models trained by the paper's PyTorch recipe",
     "`/usr/bin/python3 scripts/pytorch_models_benchmark.py [--seconds T]`",
     "On the twelve n = L = 16 models of `results/benchmarks/pytorch_models/` "
     "(trained in float32 by `scripts/train_pytorch_models.py`; softmax and "
     "ReLU, both trigger conventions, two softmax models whose scores read "
     "the content): the default round of `sinkcert attack` against an "
     "independent PGD (`scripts/pgd_attack.py`, torch float64, 64 starts x "
     "200 steps per trigger), both SEARCH(lower bound), with their ratio; "
     "then `verify bound`'s CERTIFIED enclosure of E within the budget the "
     "header names, its relative gap and wall seconds."),
    ("benchmarks/scaling.txt", "Beyond the paper's size",
     "`/usr/bin/python3 scripts/scaling_benchmark.py measure [--seconds T] [--mpiexec M]`, then "
     "`/usr/bin/python3 scripts/scaling_benchmark.py table --out results/benchmarks/scaling.txt`",
     "The same comparison on single-layer models trained by the same recipe "
     "at growing sizes: n = L = 8, 16, 32, 64 and n = 16 with L = 32 up to "
     "256 (`results/benchmarks/scaling_models/`, whose README gives the "
     "training commands; the n = L = 16 rows are the seed-0 models of "
     "`results/benchmarks/pytorch_models/`). Per row: the attack's default "
     "round against PGD (whose outputs are committed in "
     "`scaling_models/pgd/`: they take minutes to hours at the larger "
     "sizes, so beyond L = 64 PGD runs a smaller budget, printed in the "
     "row), `verify bound`'s CERTIFIED enclosure within the row's budget "
     "and, where measured, the same bound under `mpiexec -np 2`. Each row "
     "was measured on its own (`scaling_models/runs/`, with its command, "
     "revision, time and load average). The last lines fit each time's "
     "growth exponent in n (n = L) and in L (n = 16), NUMERIC descriptions "
     "of wall times on one shared machine, not bounds. At L = 128 and 256 "
     "the first pass reaches few triggers within the budget; the others "
     "keep their values' hull bound (docs/methods.md, \"Interval branch "
     "and bound\"), so the upper end is finite but loose."),
    ("benchmarks/softmax_vertex_branch.txt",
     "The softmax vertex bound beyond n = 16",
     "`build/sinkcert verify bound` (the command lines are in the file)",
     "`verify bound` on the paper-recipe softmax models once the softmax "
     "vertex bound searches the query box by branch and bound beyond n = 16 "
     "(`theorems/bounds/softmax_vertex_bound.h`, step 3b): at n = L = 16 "
     "(where it still enumerates the query vertices) before and after the "
     "change, and at n = L = 32 and n = L = 64 on the models of the previous "
     "section (`results/benchmarks/scaling_models/`), each run's CERTIFIED enclosure, its wall and CPU seconds and "
     "the load of the shared 2-core machine. At n = L = 32 the enclosure "
     "reaches the asked gap; at n = L = 64 the attack's lower bound within "
     "the budget is far below the worst case, every candidate of the few "
     "units reached fails, and the run ends without a finite upper bound."),
    ("benchmarks/double_first_benchmark.txt",
     "Double intervals against MPFI in verify bound's boxes",
     "`build/tests/double_first_benchmark --triggers 3 FILE...` (the files "
     "are in its header)",
     "One whole-trigger content box (the boxes of `verify bound`'s first "
     "pass) bounded in MPFI at 128 bits and in outward-rounded double "
     "intervals first (`src/double_interval.h`; docs/methods.md, "
     "\"Outward-rounded double intervals\"), on recipe-trained models from "
     "n = L = 8 to n = L = 64, one thread: both upper ends (CERTIFIED), "
     "whether double was kept, the wall seconds of each and their ratio, "
     "and the relative difference of the two upper ends, which is rounding "
     "alone."),
    ("benchmarks/deep_heldout.txt", "The deep bound against two searches",
     "`/usr/bin/python3 scripts/deep_heldout_benchmark.py [--seconds T]`",
     "On the committed residual models (the Theorem 2 path models, the "
     "ReLU constructions, two softmax 2 x 2 models and one 4 x 4 model "
     "trained by the paper's PyTorch recipe, `softmax_2x2_*` and "
     "`softmax_4x4_*`, all at n = L = 16) and on "
     "random residual softmax "
     "models at n = 5, L = 4: `verify bound`'s CERTIFIED upper end of E "
     "beside the worst cases of `sinkcert attack` and of an independent "
     "PGD in numpy (`scripts/deep_pgd_attack.py`, hand-written gradients, "
     "64 starts x 200 steps per trigger), both SEARCH(lower bound); the "
     "last column says whether the upper end is at or above both."),
    ("benchmarks/bound_check_benchmark.txt", "The attack against the certified bound",
     "`build/tests/attack_benchmark --bound-check`",
     "For the n = 5, L = 4 models of `results/theorem1/edges/n5_L4_*`, the "
     "attack's value beside the branch and bound's CERTIFIED enclosure of "
     "E: the ratio attack / upper end says how close the search comes to "
     "the true worst case."),
    ("benchmarks/bound16_benchmark.txt", "Certified bounds at the paper's size",
     "`build/tests/attack_benchmark --bound16 [--seconds T]`",
     "`verify bound`'s branch and bound (with the ReLU and softmax vertex "
     "bounds where they apply) on the three n = L = 16 path models and on "
     "one softmax and one ReLU model trained by the paper's recipe. Each "
     "block is one run at the revision its header names; later blocks add "
     "the vertex bounds."),
    ("theorem1/benchmark.txt", "The minimax against the paper's recipe",
     "`build/tests/search_benchmark --seed 0`",
     "Time for the minimax to bring the worst case (SEARCH, lower bound) "
     "below each threshold at n = L = 16, beside the paper's training "
     "recipe (its batch criterion and the adversary's worst case of the "
     "model it trains), and the cost of one Levenberg-Marquardt round by "
     "n and L."),
    ("benchmarks/theorem1_benchmark.txt", "Speed of the Theorem 1 study",
     "`build/tests/theorem1_benchmark --baseline-per-row`",
     "The n = L = 16 study three times in one process: with one Ceres "
     "block per row, then with the compressed normal-equations block on "
     "one and on two threads."),
    ("benchmarks/deep_descent_benchmark.txt", "Descent in residual models",
     "`build/tests/deep_descent_benchmark --solver compressed --baseline "
     "dense --threads 2 --seconds S`",
     "The Theorem 2 descent (2 x 2 and 4 x 4 heads, n = L = 16) with the "
     "compressed block against Ceres' per-row blocks, and (run 6, "
     "`--isa avx2 --baseline-isa baseline`) with the AVX2 dense kernels "
     "against the baseline ones, and (run 7, `--init-weights`) a 4 x 4 "
     "model warm-started from the committed 2 x 2 path model, continued from "
     "its checkpoint to about 4 hours: worst case (SEARCH, lower bound) per "
     "round and wall time."),
    ("benchmarks/ranks_benchmark.txt", "Threads and MPI ranks in the Theorem 2 search",
     "`build/tests/ranks_benchmark [--n N --L L --rounds R]` (it runs itself "
     "under `mpiexec -np 2` for the rows with 2 ranks)",
     "Seconds per minimax round of a 2 x 2 residual model from the paper's "
     "init, on 1 and 2 threads and 1 and 2 MPI ranks, each against 1 x 1 in "
     "the same run, and whether the final model and worst case are the "
     "same bits. A simple cost model of a round (P = 2 n^2 Y H parameters, "
     "R = rows of the active set, about triggers x 10 x L x n; K ranks, T "
     "threads each): lm_iterations x [R P^2 / (2 K T) multiply-adds for the "
     "sums G = sum J_t^T J_t, plus the rows' reverse passes, R / (K T) of "
     "them; plus 4 P^2 doubles broadcast to the other ranks (the parts' "
     "upper triangles); plus about P^3 / 3 + P^3 for Ceres' Cholesky and "
     "its (P + 1) x P product, the same on every rank, not shared] + the "
     "adversary's refinements / K. The sums dominate while R >> P (n = 16, "
     "2 x 2: R ~ 1.2e4, P = 2048); the unshared P^3 terms bound the gain of "
     "more ranks to R / (2 P) or so; on a machine with 2 cores, 2 ranks of "
     "1 thread compete with 2 threads of 1 rank for the same cores."),
    ("benchmarks/box_ranks_benchmark.txt", "MPI ranks in verify bound",
     "`/usr/bin/python3 scripts/box_ranks_benchmark.py [--boxes B]` (it runs "
     "the second row under `mpiexec -np 2`)",
     "`verify bound` on the n = L = 32 softmax model of "
     "`results/benchmarks/scaling_models/` with a fixed box budget (the "
     "seconds do not bind), on one process and on 2 MPI ranks in one run: "
     "wall seconds, the ratio one process / this, and whether the JSON is "
     "the one process's, timings apart. Under ranks the first pass is split "
     "by trigger and the box phase by batch (docs/methods.md, \"verify bound "
     "under MPI\"); one process runs the first pass on one core and the "
     "box phase's batches on every core, each rank on the cores divided by "
     "the ranks. The vertex bounds do not apply at this size. The header's "
     "load averages say how much of the 2 shared cores the runs found."),
    ("benchmarks/box_ranks_deep.txt", "MPI ranks in verify bound, residual model",
     "`/usr/bin/python3 scripts/box_ranks_benchmark.py --weights "
     "results/benchmarks/pytorch_models/softmax_2x2_s7.weights.json --boxes 60`",
     "The same on the residual 2 x 2 softmax model at n = L = 16 trained by "
     "the paper's recipe (`results/benchmarks/pytorch_models/`), whose boxes "
     "take about a second each: the first pass (the plain interval form, "
     "milliseconds a trigger) split by trigger and the box phase by batch, "
     "as for one layer. One process bounds a batch's boxes on every core, "
     "so 2 ranks on 2 cores gain nothing here; before the residual bound was "
     "split it bounded one box at a time on one core (docs/methods.md, "
     "\"verify bound under MPI\", compares the two builds)."),
    ("benchmarks/deep_batch_benchmark.txt", "Residual models' boxes in batches",
     "`/usr/bin/python3 scripts/deep_batch_benchmark.py --binary B --baseline B0` "
     "(B0: a sinkcert built at c807e95, which bounds one box at a time)",
     "`verify bound` and `verify bos` on residual models with fixed box "
     "budgets, on one process: the build before the residual bounds were "
     "split by ranks, which bounded one box at a time on one core, against "
     "this one, which bounds the boxes of a batch (and the BOS bound's first "
     "pass) on every core (docs/methods.md, \"verify bound under MPI\"). The "
     "same box budget reaches the same enclosure where the boxes' order does "
     "not matter, and may reach another where it does (the batches take the "
     "best boxes at their start)."),
    ("benchmarks/value_hull_benchmark.txt", "The values' hull bound on a short budget",
     "`/usr/bin/python3 scripts/value_hull_benchmark.py --binary B --baseline B0` "
     "(B0: a sinkcert built at 9b36caa, before the hull bound)",
     "`verify bound` with a budget of seconds, without and with the values' "
     "hull bound (`theorems/bounds/value_hull_bound.h`; docs/methods.md, "
     "\"Interval branch and bound\"): every trigger the first pass does not "
     "reach before the deadline keeps the hull bound instead of +inf, and "
     "on a deep model whose boxes' forms blow up the hull can be the smaller "
     "of the two. ReLU attention has no hull bound: its row shows the "
     "unreached triggers' +inf in both builds."),
    ("benchmarks/key_slope_structure.txt", "Why the softmax vertex bound stops at n = 32",
     "`/usr/bin/python3 scripts/key_slope_structure.py W... --out "
     "results/benchmarks/key_slope_structure.txt`",
     "The trigger row's key slopes b(q) = b0 + A_cc^T q of the recipe's "
     "softmax models at n = 64, 32 and 16: the worst input splits the keys "
     "at +-sign(b(q)), with error about tanh(||b(q)||_1), so the vertex bound "
     "must certify the largest ||b(q)||_1 over the query's cube; the root "
     "cell's bound against the local search's maximum, and A_cc's rank-one "
     "part and tail (docs/methods.md, \"Interval branch and bound\", why "
     "n = 64 is hard). NUMERIC(53) numpy; the maxima found are SEARCH lower "
     "bounds."),
    ("benchmarks/fused_difference_benchmark.txt", "Fused heads: the total-variation form",
     "`/usr/bin/python3 scripts/fused_difference_benchmark.py --binary B --baseline B0` "
     "(B0: a sinkcert built at 7c30de2, before the total-variation form)",
     "`verify bound --seconds 60` on the committed residual models whose "
     "layers fuse heads, with the fused heads' weight-difference term as "
     "(e^w - 1) max_k |W_k - c| (baseline) and as tanh(w/4) (hi - lo), the "
     "total variation of two softmax rows whose scores differ by at most w "
     "(docs/methods.md, \"Interval branch and bound\", deep models). The "
     "lower ends are the attack's, the same in both builds."),
    ("benchmarks/cubic_split_benchmark.txt",
     "Second-order expansion: the cubic part split at its diagonal",
     "`/usr/bin/python3 scripts/cubic_split_benchmark.py --binary B --baseline B0` "
     "(B0: a sinkcert built at 07a3481, before the split)",
     "`verify bound` (60 s at n = 16, 30 s on the random n = 5, L = 4 models) "
     "with the expansion's cubic part bounded by the absolute values of its "
     "coefficients (baseline) and split at its diagonal, the diagonal's half "
     "moved into the form's linear part and the first query symbols' cubic "
     "parts bounded with the quadratic part per vertex of their signs "
     "(docs/methods.md, \"Interval branch and bound\", deep models). The lower "
     "ends are the attack's, the same in both builds; a build that bounds "
     "fewer boxes in the budget is the slower one."),
    ("benchmarks/min_range_benchmark.txt",
     "Symbolic forms: exp and 1/x by their min-range form",
     "`/usr/bin/python3 scripts/min_range_benchmark.py --binary B --baseline B0` "
     "(B0: a sinkcert built at 8765952, before the min-range form)",
     "`verify bound` (60 s at n = 16, 30 s on the random n = 5, L = 4 models) "
     "with exp and 1/x replaced by their plain range wherever the tangent "
     "form is wider (baseline) and by the min-range form there, which keeps "
     "part of the slope at the same range (docs/methods.md, \"Interval branch "
     "and bound\", deep models). The lower ends are the attack's, the same in "
     "both builds; the budget is seconds on a shared machine, so the box "
     "counts differ between the builds, and a row's difference in its upper "
     "end comes from both the form and the boxes bounded."),
    ("benchmarks/symbolic_cost_benchmark.txt",
     "Symbolic forms: cheaper boxes",
     "`/usr/bin/python3 scripts/symbolic_cost_benchmark.py --binary B --baseline B0` "
     "(B0: a sinkcert built at dfdf503)",
     "`verify bound` (60 s at n = 16, 30 s on the random n = 5, L = 4 models) "
     "with the covariance form's factor S_rho bounded in MPFI at 128 bits, the "
     "next double taken by glibc's nextafter and a form's norm summed in one "
     "serial chain of upward steps (baseline), and with S_rho in "
     "outward-rounded double intervals (two exponentials for its 64 slices), "
     "the next double from the bit pattern and the norm summed in round to "
     "nearest and raised by its a priori error bound (docs/methods.md, "
     "\"Interval branch and bound\", deep models). The lower ends are the "
     "attack's, the same in both builds; the budget is seconds, so the ratio "
     "of the boxes bounded is the speed-up (on a shared machine, with its "
     "noise)."),
    ("benchmarks/small_deep_benchmark.txt",
     "Deep bound at six content variables: the symbolic forms alone",
     "`/usr/bin/python3 scripts/small_deep_benchmark.py --binary B --baseline B0` "
     "(B0: a sinkcert built at e8ca472)",
     "`verify bound` (30 s, gap 0.01) on n = 5, L = 4 residual softmax models "
     "(the random models of scripts/deep_heldout_benchmark.py and the Theorem 2 "
     "search's path and eps_one models), with the centred forms beside the "
     "symbolic ones and their gradients' split rule (baseline), and with the "
     "symbolic forms alone, bisecting the widest variable the worst term reads "
     "(docs/methods.md, \"Interval branch and bound\", deep models). The lower "
     "ends are the attack's, the same in both builds; the budget is seconds "
     "(on a shared machine, with its noise)."),
    ("benchmarks/self_score_benchmark.txt",
     "Symbolic forms: a row's score against its own key",
     "`/usr/bin/python3 scripts/self_score_benchmark.py --binary B --baseline B0` "
     "(B0: a sinkcert built at fdc5de4)",
     "`verify bound` (60 s at n = 16, 30 s on the random n = 5, L = 4 models) "
     "with a row's score against its own key, s_i = sum_e q_e y_ie with "
     "q = A^T y_i, bounded as a sum of products (baseline), and with its "
     "quadratic part as one quadratic form split at its diagonal where "
     "narrower (docs/methods.md, \"Interval branch and bound\", deep models). "
     "The lower ends are the attack's, the same in both builds; the budget is "
     "seconds, so the ratio of the boxes bounded is the speed-up (on a shared "
     "machine, with its noise)."),
    ("benchmarks/mutants.txt", "Mutation check of the certified bounds",
     "`/usr/bin/python3 scripts/mutation_check.py --out results/benchmarks/mutants.txt`",
     "Each mutant changes one line of a bound's source so that the bound "
     "leaves out or shrinks a term its proof needs, builds the tests named "
     "with it and runs them: KILLED when one of them fails. Every mutant "
     "must be killed; a survivor is a term no test watches "
     "(docs/methods.md, \"Cross-checks\")."),
    ("benchmarks/recipe_benchmark.txt", "Training speed of the paper's recipe",
     "`build/tests/recipe_benchmark [--seconds 2] [--repeats 3]`, "
     "`--train SECONDS`, and `scripts/recipe_benchmark.py --binary "
     "build/tests/recipe_benchmark`",
     "Adam steps per second at n = L = 16, batch 128, for the generic "
     "reverse pass and the batched kernel (baseline and AVX2 compilations), "
     "against an independent numpy implementation; the `--train` runs "
     "also give the attack's worst case of the trained model."),
    ("theorem3/check_time.md", "Checking the Theorem 3 certificate with Coq",
     "`build/sinkcert verify relu --n 16 --L 16 --coq FILE.v`, then "
     "`/usr/bin/time coqc FILE.v`",
     "How the committed Coq certificate was written and how long `coqc` "
     "took to check it."),
]

HEADER_RESULTS = """\
<!-- Generated by scripts/results_doc.py from the files under results/.
     Do not edit: run `python3 scripts/results_doc.py` after a change. -->

# Committed results

Every table below is read from a committed file under `results/`, which
`build/sinkcert appendix` (or the study command named in its provenance
line) wrote. Each number carries its evidence level in its column name or
its cell: EXACT, CERTIFIED (an MPFI enclosure, the true value inside),
NUMERIC(p) (p-bit floating point, no error bound) or SEARCH (an optimizer's
best value, a bound in the one direction the label names). The terms are
defined in [definitions.md](definitions.md), the methods in
[methods.md](methods.md). A SEARCH value on a model's worst case is a
lower bound on that model's E and bounds nothing about the frontier
eps*(delta).

To re-derive any certified number from its weight file:
`build/sinkcert verify bound --weights FILE --L L` (worst-case loss) and
`build/sinkcert verify bos --weights FILE --L L` (BOS mass).
"""

HEADER_BENCHMARKS = """\
<!-- Generated by scripts/results_doc.py from results/benchmarks/*.txt and
     the other measurement files under results/ listed below.
     Do not edit: run `python3 scripts/results_doc.py` after a change. -->

# Benchmarks

Timings and search-quality measurements, each the verbatim output of a
benchmark program under `build/tests/` (built by `scripts/test.sh`, never run
by ctest). Each file's header names the command, the revision and the
state of the machine; wall-clock rates depend on the load of the machine
they ran on, rates per CPU second less so. The results in
[results.md](results.md) do not depend on timing: every bound and search
there runs on a budget of rounds and boxes, never seconds.
"""


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def text_md(text):
    """Plain text from a results file as Markdown: emphasis marks escaped,
    newlines folded."""
    return text.replace("*", "\\*").replace("_", "\\_").replace("\n", " ")


def cell(value):
    """A table cell as Markdown: pipes and emphasis marks escaped."""
    text = value if isinstance(value, str) else json.dumps(value)
    return text_md(text).replace("|", "\\|")


def markdown_table(columns, rows):
    lines = ["| " + " | ".join(cell(c) for c in columns) + " |",
             "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return lines


def stamp(document):
    """A file's provenance stamp: under "provenance" (older files: "run_info")."""
    return document.get("provenance", document.get("run_info", {}))


def provenance(run_info, source):
    keys = ["command_line", "revision", "time_utc", "seed", "precision"]
    parts = ["%s `%s`" % (k, run_info[k]) for k in keys if k in run_info]
    if "revision" not in run_info:
        raise SystemExit("results_doc: %s: no provenance stamp (command line, revision)" % source)
    return "Source: `%s`; %s." % (source, ", ".join(parts))


def table_section(root, name):
    path = os.path.join("results", "tables", name + ".json")
    table = read_json(os.path.join(root, path))
    out = ["### `%s`" % table.get("table", name), "", text_md(table["caption"]), ""]
    out += markdown_table(table["columns"], table["rows"])
    out.append("")
    for note in table.get("notes", []):
        out += ["- " + text_md(note)]
    if table.get("notes"):
        out.append("")
    out += [provenance(stamp(table), path), ""]
    return out


def fmt(x, digits=4):
    """A float read from a file, to `digits` significant digits."""
    if isinstance(x, bool) or x is None:
        return str(x)
    if isinstance(x, str):
        return x
    return "%.*g" % (digits, x)


def deficit(x):
    """1 - x for a mass x close to 1, written as `1 - d`."""
    return "1 - %.2e" % (1.0 - x) if x > 0.5 else fmt(x)


def overall_bos(stats):
    """Mean and minimum BOS mass pooled over every head of a study model."""
    heads = stats["bos_mass"]["heads"]
    mean = sum(h["overall"]["mean"] for h in heads) / len(heads)
    low = min(h["overall"]["min"] for h in heads)
    return mean, low


def theorem1_section(root):
    path = os.path.join("results", "theorem1", "theorem1.json")
    d = read_json(os.path.join(root, path))
    task = d["task"]
    out = ["## The Theorem 1 study", "",
           "The adversarial search of `sinkcert theorem1` at n = %s, L = %s "
           "(trigger range `%s`), read from `%s`." % (task["n"], task["L"],
                                                     task["trigger_range"], path),
           "", "**Verdict: %s.** %s" % (d["verdict"], d["verdict_reason"]), "",
           "Descent path (each start's best model; worst case SEARCH(lower "
           "bound), certified at the witness; BOS mass NUMERIC(53) over the "
           "probe set):", ""]
    rows = []
    for p in d["path"]:
        mean, low = overall_bos(p["bos_statistics"])
        rows.append([str(p["start"]), p["init"], fmt(p["worst_case"]),
                     p["worst_case_found_by"], deficit(mean), deficit(low),
                     p["stop_reason"]])
    out += markdown_table(["start", "init", "worst case [SEARCH(lower bound)]",
                           "found by", "mean BOS", "min BOS", "stop"], rows)
    out += ["", "Frontier (the best model found with mean probe BOS mass at "
            "most 1 - delta; eps is SEARCH(lower bound) on that model's E, "
            "no bound on eps*(delta)):", ""]
    rows = [[fmt(f["delta"]), fmt(f["eps"]), f["eps_found_by"],
             fmt(f["mean_bos"]), "yes" if f["converged"] else "no",
             f["stop_reason"]]
            for f in d["frontier"]]
    out += markdown_table(["delta", "eps [SEARCH(lower bound)]", "found by",
                           "mean BOS [NUMERIC(53)]", "converged", "stop"], rows)
    fit = d["frontier_fit"]
    out += ["", "Log-log slope of eps against delta: %s +- %s (%s)." % (
        fmt(fit["slope"], 3), fmt(fit["slope_stderr"], 2), fit["uncertainty"]), ""]
    whp = d["with_high_probability"]
    out += ["BOS mass against the content scale (the \"with high probability\" "
            "nuance: content drawn uniform on [-scale, scale]; %s):" %
            whp["evidence"], ""]
    rows = [[p["model"], fmt(p["content_scale"]), deficit(p["bos_mean"]),
             deficit(p["bos_min"]), fmt(p["sampled_error_max"])]
            for p in whp["points"]]
    out += markdown_table(["model", "content scale", "mean BOS", "min BOS",
                           "sampled max error"], rows)
    out += ["", provenance(stamp(d), path), ""]
    return out


def theorem2_section(root):
    path = os.path.join("results", "theorem2", "theorem2.json")
    d = read_json(os.path.join(root, path))
    task, model = d["task"], d["model"]
    out = ["## The Theorem 2 study", "",
           "The adversarial search of `sinkcert theorem2` on residual %s models "
           "of %s layers x %s heads at n = %s, L = %s, read from `%s` (the "
           "table `t2_theorem2_study` above summarizes the same file)." % (
               model["attention"], model["layers"], model["heads"], task["n"],
               task["L"], path),
           "", "**Verdict: %s.** %s" % (d["verdict"], d["verdict_reason"]), "",
           "Descent path (worst case SEARCH(lower bound); sink score sigma and "
           "BOS masses NUMERIC(53) over the probe set):", ""]
    rows = []
    for p in d["path"]:
        s = p["sink_score"]
        rows.append([str(p["start"]), p["init"], fmt(p["worst_case"]),
                     deficit(s["sigma"]),
                     "layer %s, head %s, position %s" % (s["layer"], s["head"],
                                                         s["position"]),
                     p["stop_reason"]])
    out += markdown_table(["start", "init", "worst case [SEARCH(lower bound)]",
                           "sink score", "where", "stop"], rows)
    out += ["", "Where the sink is: each head's non-trigger BOS mass over the "
            "probe set in each start's best model (NUMERIC(53)):", ""]
    rows = []
    for p in d["path"]:
        for h in p["bos_statistics"]["bos_mass"]["heads"]:
            rows.append([str(p["start"]), str(h["layer"]), str(h["head"]),
                         deficit(h["overall"]["mean"]),
                         deficit(h["overall"]["min"])])
    out += markdown_table(["start", "layer", "head", "mean BOS", "min BOS"], rows)
    out += ["", "Frontiers (the kept model's worst case, SEARCH(lower bound) on that "
            "model's E; its capped heads' largest BOS mass at the worst case's witness, "
            "CERTIFIED at that input; `start`: which start's model was kept; "
            "`theorem2.json` lists every start):", ""]
    rows = []
    for p in d["frontier"]["points"]:
        head = p["capped_head"]
        rows.append([p["capped"] + ("" if head is None else " (layer %s, head %s)" % (
                         head["layer"], head["head"])),
                     fmt(p["delta"]), fmt(p["eps"]), fmt(p["witness_capped_bos"], 6),
                     p["start"], "yes" if p["feasible"] else "no"])
    out += markdown_table(["capped", "delta", "eps [SEARCH(lower bound)]",
                           "capped BOS at the witness [CERTIFIED]", "start", "feasible"], rows)
    every = d["every_head"]
    out += ["", "The every-head question (%s): %s" % (
        every["evidence"] if isinstance(every["evidence"], str) else "SEARCH",
        every["summary"]), "",
        "Head ablation in each candidate model with worst case at most 1e-4 "
        "(zeroing the head's M; the worst cases are SEARCH lower bounds, "
        "found by the same adversary with the same seed; largest BOS mass "
        "over the probes NUMERIC(53)):", ""]
    rows = []
    for c in every["candidates"]:
        if c["worst_case"] > 1e-4:
            continue
        for h, max_bos in zip(c["heads"], c["head_max_bos"]):
            rows.append([c["source"], "layer %s, head %s" % (h["layer"], h["head"]),
                         fmt(h["worst_case"]), fmt(h["ablated_worst_case"]),
                         "yes" if h["necessary"] else "no", fmt(max_bos)])
    out += markdown_table(["model", "head", "worst case", "ablated worst case",
                           "necessary", "max BOS"], rows)
    out += ["", provenance(stamp(d), path), ""]
    return out


def theorem2_frontier_section(root):
    """The small Theorem 2 study's frontiers, with the eps_one certificates."""
    path = os.path.join("results", "theorem2", "n5_L4", "theorem2.json")
    d = read_json(os.path.join(root, path))
    task, model = d["task"], d["model"]
    out = ["## The Theorem 2 frontiers at n = %s, L = %s, certified" % (task["n"], task["L"]), "",
           "`sinkcert theorem2 --certify-boxes` on residual %s models of %s layers x %s heads, "
           "read from `%s`. eps: the worst case of the kept model at delta (SEARCH, lower "
           "bound). For eps_one the kept model is also given to the deep bounds over the whole "
           "content box: E <= 1e-6 and the capped head's max BOS <= 1 - delta (CERTIFIED "
           "verdicts, with each bound's upper end); both VERIFIED make eps_one(delta) <= 1e-6 a "
           "certified statement about the model in `eps_one_delta<delta>.weights.json`." % (
               model["attention"], model["layers"], model["heads"], path), ""]
    rows = []
    for p in d["frontier"]["points"]:
        c = p.get("certificate")
        head = p["capped_head"]
        rows.append([p["capped"] + ("" if head is None else " (layer %s, head %s)" % (
                         head["layer"], head["head"])),
                     fmt(p["delta"]), fmt(p["eps"]), p["start"],
                     "" if c is None else "%s (E <= %s)" % (c["loss_verdict"], fmt(c["loss_upper"])),
                     "" if c is None else "%s (max BOS <= %s)" % (c["cap_verdict"],
                                                                  fmt(c["cap_upper"], 9))])
    out += markdown_table(["capped", "delta", "eps [SEARCH(lower bound)]", "start",
                           "E <= 1e-6 [CERTIFIED]", "cap [CERTIFIED]"], rows)
    out += ["", provenance(stamp(d), path), ""]
    return out


def seeds_section(root):
    """The frontier of the Theorem 1 study for every committed seed."""
    runs = [("0", os.path.join("results", "theorem1", "theorem1.json"))]
    seeds_dir = os.path.join(root, "results", "theorem1", "seeds")
    if os.path.isdir(seeds_dir):
        for name in sorted(os.listdir(seeds_dir)):
            path = os.path.join("results", "theorem1", "seeds", name,
                                "theorem1.json")
            if os.path.exists(os.path.join(root, path)):
                runs.append((name[len("seed"):], path))
    studies = [(seed, path, read_json(os.path.join(root, path)))
               for seed, path in runs]
    out = ["## Theorem 1 across seeds", "",
           "The frontier eps (SEARCH, lower bound on each frontier model's "
           "E) of the same study run with other seeds. The runs may come "
           "from different revisions (provenance below each).", ""]
    deltas = [f["delta"] for f in studies[0][2]["frontier"]]
    rows = []
    for delta in deltas:
        row = [fmt(delta)]
        for _, _, d in studies:
            eps = [f["eps"] for f in d["frontier"] if f["delta"] == delta]
            row.append(fmt(eps[0]) if eps else "-")
        rows.append(row)
    rows.append(["slope"] + ["%s +- %s" % (fmt(d["frontier_fit"]["slope"], 3),
                                          fmt(d["frontier_fit"]["slope_stderr"], 2))
                             for _, _, d in studies])
    rows.append(["verdict"] + [d["verdict"] for _, _, d in studies])
    out += markdown_table(["delta"] + ["seed %s" % seed for seed, _, _ in studies],
                          rows)
    out.append("")
    for seed, path, d in studies:
        out += ["- seed %s: %s" % (seed, provenance(stamp(d), path))]
    out.append("")
    return out


def table_json(root, name):
    return read_json(os.path.join(root, "results", "tables", name + ".json"))


def column(table, name):
    return table["columns"].index(name)


def summary_section(root):
    """One line per claim, every number read from the tables below."""
    out = ["## At a glance", ""]
    p3 = table_json(root, "p3_relu_certificate")
    sizes = ", ".join("(%s, %s)" % (r[column(p3, "n")], r[column(p3, "L")])
                      for r in p3["rows"])
    verdicts = sorted({"%s %s" % (r[column(p3, "verdict")],
                                  r[column(p3, "evidence")]) for r in p3["rows"]})
    out.append("- **Theorem 3.** The ReLU construction: %s at (n, L) = %s "
               "(`p3_relu_certificate`)." % (" / ".join(verdicts), sizes))
    t1 = read_json(os.path.join(root, "results", "theorem1", "theorem1.json"))
    eps = sorted(t1["frontier"], key=lambda f: f["delta"])
    out.append("- **Theorem 1, search** (n = L = %s): %s. Path worst cases "
               "%s to %s and frontier eps from %s (delta = %s) down to %s "
               "(delta = %s), all SEARCH(lower bound) (the Theorem 1 study "
               "below)." % (
                   t1["task"]["n"], t1["verdict"],
                   fmt(min(p["worst_case"] for p in t1["path"])),
                   fmt(max(p["worst_case"] for p in t1["path"])),
                   fmt(eps[-1]["eps"]), fmt(eps[-1]["delta"]),
                   fmt(eps[0]["eps"]), fmt(eps[0]["delta"])))
    c1 = table_json(root, "c1_certified_path")
    last = c1["rows"][-1]
    out.append("- **Theorem 1, certified path.** Along the descent path and "
               "its MPFR continuation the loss and the BOS deficit fall "
               "together, both CERTIFIED over the whole box; the last model "
               "(%s): E in %s, 1 - min BOS in %s (`c1_certified_path`)." % (
                   last[column(c1, "model")], last[column(c1, "E CERTIFIED")],
                   last[column(c1, "1 - min BOS CERTIFIED")]))
    t2 = read_json(os.path.join(root, "results", "theorem2", "theorem2.json"))
    out.append("- **Theorem 2, search** (%s layers x %s heads, n = L = %s): %s: %s "
               "(SEARCH; `t2_theorem2_study`)." % (
                   t2["model"]["layers"], t2["model"]["heads"],
                   t2["task"]["n"], t2["verdict"], t2["verdict_reason"]))
    big = [p for p in t2["frontier"]["points"] if p["feasible"]]
    big_one = [p for p in big if p["capped"] == "one"]
    big_all = [p for p in big if p["capped"] == "all"]
    if big_one and big_all:
        out.append("- **Theorem 2, frontiers** (%s layers x %s heads, n = L = %s): eps_one(delta) "
                   "from %s to %s and eps_all(delta) from %s to %s at delta = %s, all "
                   "SEARCH(lower bound) on the kept models' E (the Theorem 2 study below)." % (
                       t2["model"]["layers"], t2["model"]["heads"], t2["task"]["n"],
                       fmt(min(p["eps"] for p in big_one)), fmt(max(p["eps"] for p in big_one)),
                       fmt(min(p["eps"] for p in big_all)), fmt(max(p["eps"] for p in big_all)),
                       ", ".join(fmt(x) for x in sorted({p["delta"] for p in big}, reverse=True))))
    small = read_json(os.path.join(root, "results", "theorem2", "n5_L4", "theorem2.json"))
    points = small["frontier"]["points"]
    one = [p for p in points if p["capped"] == "one"]
    certified = [p for p in one if p.get("certificate") and p["certificate"]["certified"]]
    every = [p for p in points if p["capped"] == "all"]
    out.append("- **Theorem 2, frontiers** (%s layers x %s heads, n = %s, L = %s): "
               "eps_one(delta) <= 1e-6 CERTIFIED at %d of %d deltas (upper ends %s to %s on E "
               "and the capped head's BOS cap, over the whole box); eps_all from %s to %s "
               "(SEARCH(lower bound)) (the Theorem 2 frontiers below)." % (
                   small["model"]["layers"], small["model"]["heads"], small["task"]["n"],
                   small["task"]["L"], len(certified), len(one),
                   fmt(min(p["certificate"]["loss_upper"] for p in certified)) if certified else "-",
                   fmt(max(p["certificate"]["loss_upper"] for p in certified)) if certified else "-",
                   fmt(min(p["eps"] for p in every)), fmt(max(p["eps"] for p in every))))
    norm = table_json(root, "normalizations_n5_L4")
    kinds = "; ".join("%s: %s (%s)" % (r[column(norm, "attention")],
                                       r[column(norm, "verdict")],
                                       r[column(norm, "evidence")])
                      for r in norm["rows"])
    out.append("- **Which normalizations need a sink** (n = 5, L = 4): %s "
               "(`normalizations_n5_L4`)." % kinds)
    out.append("")
    return out


def results_page(root):
    out = [HEADER_RESULTS]
    out += summary_section(root)
    out += ["## Appendix tables", "",
            "Written by `build/sinkcert appendix` into `results/tables/` "
            "(LaTeX, CSV and JSON of each; the JSON is read here).", ""]
    for title, names in TABLES:
        out += ["## " + title, ""]
        for name in names:
            out += table_section(root, name)
    out += theorem1_section(root)
    out += seeds_section(root)
    out += theorem2_section(root)
    out += theorem2_frontier_section(root)
    return "\n".join(out).rstrip("\n") + "\n"


def benchmarks_page(root):
    out = [HEADER_BENCHMARKS]
    for name, title, command, what in BENCHMARKS:
        path = os.path.join("results", name)
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read().rstrip("\n")
        fence = "```"
        while fence in text:  # a fence longer than any run of backticks inside
            fence += "`"
        out += ["## " + title, "", what, "", "Program: " + command + ".", "",
                "`%s`:" % path, "", fence + "text", text, fence, ""]
    return "\n".join(out).rstrip("\n") + "\n"


def write_atomically(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".results_doc.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(here),
                        help="repository root (holds results/)")
    parser.add_argument("--out-dir", default=None,
                        help="folder for results.md and benchmarks.md "
                             "(default ROOT/docs)")
    args = parser.parse_args(argv)
    out_dir = args.out_dir or os.path.join(args.root, "docs")
    try:
        results = results_page(args.root)
        benchmarks = benchmarks_page(args.root)
    except (OSError, ValueError, KeyError) as e:
        print("results_doc: error: %s" % e, file=sys.stderr)
        return 2
    os.makedirs(out_dir, exist_ok=True)
    write_atomically(os.path.join(out_dir, "results.md"), results)
    write_atomically(os.path.join(out_dir, "benchmarks.md"), benchmarks)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
