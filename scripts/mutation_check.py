#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Mutation check of the certified bounds: does some test fail when one
term of a bound is made unsound?

Each mutant below changes one line of a bound's source so that the bound
leaves out, or shrinks, a term its proof needs (a remainder, a floor, an
end of a range, a part of a sum). The mutant is sound only if the term was
never needed, so every mutant must be KILLED: one of the tests named with
it (tests/theorems/bounds/*, pointwise-enclosure and property tests)
fails. A mutant that SURVIVES is a term no test watches, and a reviewer's
hostile model could break it unseen.

For each mutant the script checks that its line occurs exactly once in
the file, writes the mutated file, builds the named test targets in the
build directory, runs them (from the source directory, as ctest does),
and restores the file, also when interrupted; at the end it builds the
targets again from the restored sources. Terms that only hold rounding
errors (kRound, the raises by unit roundoffs) are left out: a pointwise
test cannot see an error of one ulp, and double_interval_test and
symbolic_form_test's rounding case test them directly.

  /usr/bin/python3 scripts/mutation_check.py [--build DIR] [--only NAME]...
      [--out FILE] [--timeout S]
  /usr/bin/python3 scripts/mutation_check.py --check-lines [--root DIR]

--check-lines only checks that every mutant's line occurs exactly once
(tests/scripts/mutation_check_test.py runs it in ctest, so that an edit of
a bound cannot silently retire a mutant). The full run takes about
fifteen minutes on two cores (39 mutants) and needs a configured build
directory; the mutated files must have no uncommitted changes (the script
restores what it read, and refuses to mutate a file git reports as
modified). Exit 1 when a mutant survives.
"""
import argparse
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from benchmark_output import finish_output, git_revision, load_average  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = "mutation_check"

SF = "theorems/bounds/symbolic_form.cc"
DSP = "theorems/bounds/deep_symbolic_pass.cc"
SOR = "theorems/bounds/second_order_row.cc"
QF = "theorems/bounds/quadratic_form.cc"
VH = "theorems/bounds/value_hull_bound.cc"
DWC = "theorems/bounds/deep_worst_case_bound.cc"
BOS = "theorems/bounds/bos_bound.cc"
DBOS = "theorems/bounds/deep_bos_bound.cc"

SYMBOLIC_TESTS = ["symbolic_form_test", "deep_symbolic_pass_test", "second_order_row_test",
                  "quadratic_form_test", "deep_worst_case_bound_test"]
DEEP_TESTS = ["deep_worst_case_bound_test", "deep_symbolic_pass_test"]
BOS_TESTS = ["bos_bound_test", "bos_box_search_test"]

# (name, file, line as it is, line mutated, tests that must catch it, the term)
MUTANTS = [
    ("product-remainder", SF,
     "bracket = add_up(bracket, mul_up(wa, wb));",
     "bracket = add_up(bracket, 0.0);",
     SYMBOLIC_TESTS, "a product's quadratic remainder (La + ra)(Lb + rb)"),
    ("product-carried-remainder", SF,
     "double bracket = add_up(mul_up(ca, b.r), mul_up(cb, a.r));",
     "double bracket = 0.0;",
     SYMBOLIC_TESTS, "a product's |ca| rb + |cb| ra (the factors' own remainders)"),
    ("convex-gap-one-end", SF,
     "const Mpfr hmax = bmp::upper(hl) > bmp::upper(hh) ? bmp::upper(hl) : bmp::upper(hh);",
     "const Mpfr hmax = bmp::upper(hl);",
     SYMBOLIC_TESTS, "exp and 1/x: the chord-tangent gap at the larger of the two ends"),
    ("convex-carried-remainder", SF,
     "out.r = add_up(add_up(mul_up(k, a.r), centre.rad), rounding(mul_up(k, a.norm), vars_));",
     "out.r = add_up(centre.rad, rounding(mul_up(k, a.norm), vars_));",
     SYMBOLIC_TESTS, "exp and 1/x: the argument's remainder times the slope"),
    ("norm-raise", SF,
     "a.norm = s == 0 ? 0.0 : mul_up(s, raise);",
     "a.norm = s;",
     SYMBOLIC_TESTS, "a form's norm: the round-to-nearest sum raised by 4 (N + 2) u"),
    ("min-range-exp-slope", SF,
     "f == Convex::kExp ? lower_double(e.f_lo) : -lower_double(Mpfi(1) / (e.x_hi * e.x_hi));",
     "f == Convex::kExp ? lower_double(exp_of((e.x_lo + e.x_hi) / Mpfi(2))) "
     ": -lower_double(Mpfi(1) / (e.x_hi * e.x_hi));",
     SYMBOLIC_TESTS, "exp's min-range form: the slope e^lo, so that e^x - mu x rises"),
    ("min-range-reciprocal-slope", SF,
     "f == Convex::kExp ? lower_double(e.f_lo) : -lower_double(Mpfi(1) / (e.x_hi * e.x_hi));",
     "f == Convex::kExp ? lower_double(e.f_lo) : -lower_double(Mpfi(1) / (e.x_lo * e.x_hi));",
     SYMBOLIC_TESTS, "1/x's min-range form: the slope -1/hi^2, so that 1/x - mu x falls"),
    ("reciprocal-floor", SF,
     "const double lo = std::max(x.lo, floor);",
     "const double lo = std::max(x.lo, 2 * floor);",
     SYMBOLIC_TESTS, "1/x: the denominator's floor (softmax: 1 plus the other terms' lower ends)"),
    ("range-without-remainder", SF,
     "const double w = add_up(a.norm, a.r);",
     "const double w = a.norm;",
     SYMBOLIC_TESTS, "a form's range: c +- (norm + r)"),
    ("fresh-symbol-half", SF,
     "a.g[m] = a.r;  // the symbol is fresh: g_m was 0",
     "a.g[m] = 0.5 * a.r;",
     SYMBOLIC_TESTS, "a layer's remainder as a fresh symbol of the same size"),
    ("denominator-floor-upper-end", DSP,
     "floor += exp_of(point_interval(Mpfr(symbolic_range(exponent).lo)));",
     "floor += exp_of(point_interval(Mpfr(symbolic_range(exponent).hi)));",
     DEEP_TESTS, "softmax: the denominator's floor from the lower ends of exp(s_m - s_k)"),
    ("off-by-one-zero-logit", DSP,
     "if (p.off_by_one) term(p.sa.difference(SymbolicForm{}, s[k]));",
     "if (false) term(p.sa.difference(SymbolicForm{}, s[k]));",
     DEEP_TESTS, "off-by-one softmax: the extra logit 0 (a row-constant score shift matters)"),
    ("weighted-value-eta", DSP,
     "p.sa.add_scaled(centred, radius_double(eta), centre);",
     "p.sa.add_scaled(centred, radius_double(Mpfi(0)), centre);",
     DEEP_TESTS, "the values around the weights' centres: eta c, eta = 1 - sum_k abar_k"),
    ("fusion-ratio-growth", DSP,
     "const double ratio = upper_double((exp_of(W) - Mpfi(1)) * sum);",
     "const double ratio = upper_double((exp_of(W / Mpfi(2)) - Mpfi(1)) * sum);",
     DEEP_TESTS, "fused heads: the weight ratio's growth e^w - 1"),
    ("fusion-total-variation", DSP,
     "const Mpfi half = exp_of(W / Mpfi(2));",
     "const Mpfi half = exp_of(W / Mpfi(4));",
     DEEP_TESTS, "fused heads: the total variation tanh(w / 4) of two rows"),
    ("fusion-values-spread", DSP,
     "const Mpfi spread = point_interval(Mpfr(hi)) - point_interval(Mpfr(lo));",
     "const Mpfi spread = (point_interval(Mpfr(hi)) - point_interval(Mpfr(lo))) / Mpfi(2);",
     DEEP_TESTS, "fused heads: the values' spread hi - lo"),
    ("fusion-bos-weight", DSP,
     "if (K > 0) up[0] = std::min({1.0, upper_double(Mpfi(1) - others), weights[0].hi});",
     "if (K > 0) up[0] = std::max(0.0, weights[0].lo);",
     DEEP_TESTS, "fused heads: the upper end of BOS's weight"),
    ("mean-term", DSP,
     "const RadiusDouble minus_inv_j = radius_double(Mpfi(-1) / Mpfi(j));",
     "const RadiusDouble minus_inv_j = radius_double(Mpfi(-1) / Mpfi(j + 1));",
     DEEP_TESTS, "the target's mean term -(1/j) sum_(k<=j) x_k"),
    ("second-order-e2", SOR,
     "best.r = add_up(best.r, e2);",
     "best.r = add_up(best.r, 0.0);",
     SYMBOLIC_TESTS, "the second-order expansion's E2 (|R| + P |F|)"),
    ("second-order-cubic", SOR,
     "split_cubic = add_up(split_cubic, cubic.bound);",
     "split_cubic = add_up(split_cubic, 0.0);",
     SYMBOLIC_TESTS, "the expansion's cubic coefficients, each major symbol's split bound"),
    ("second-order-cubic-shift", SOR,
     "g.g[m] += v;",
     "g.g[m] += 0.0;",
     SYMBOLIC_TESTS, "the cubic part's diagonal: e_m sum_a C_m,aa / 2 in the form's linear part"),
    ("vertex-split-vertices", QF,
     "worst = std::max(worst, diagonal_split(B, V).bound);",
     "worst = std::max(worst, 0.0);",
     SYMBOLIC_TESTS, "the quadratic and cubic parts per vertex: every vertex of the cubic symbols"),
    ("second-order-diagonal", QF,
     "double s0 = diagonal_abs, s1 = 0.0, s2 = 0.0, s3 = 0.0;",
     "double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;",
     SYMBOLIC_TESTS, "the quadratic part's diagonal, e_a^2 in [0, 1]: its half spread"),
    ("second-order-diagonal-shift", SOR,
     "f.c += quad.shift;",
     "f.c += 0.0;",
     SYMBOLIC_TESTS, "the quadratic part's diagonal: the centre's shift sum_a X_aa / 2"),
    ("dot-quadratic", SF,
     "const double joint = add_up(add_up(split.bound, split.shift_error), entries);",
     "const double joint = add_up(split.shift_error, entries);",
     SYMBOLIC_TESTS, "a dot product of forms sharing symbols: its quadratic form's split bound"),
    ("dot-shift", SF,
     "out.c += split.shift;",
     "out.c += 0.0;",
     SYMBOLIC_TESTS, "a dot product of forms sharing symbols: the centre's shift sum_m S_mm / 2"),
    ("covariance-shift", SOR,
     "return upper_double(A * I(phi_max) + A * shift * shift);",
     "return upper_double(A * I(phi_max));",
     SYMBOLIC_TESTS, "the covariance form: the core mean's distance A (P_c - P)^2"),
    ("covariance-largest-rho", SOR,
     "std::max(upper_double(half * a * a), upper_double(half * b * b * e_b)), in.rho_max);",
     "std::max(upper_double(half * a * a), upper_double(half * b * b)), in.rho_max);",
     SYMBOLIC_TESTS, "the covariance form: the largest rho, b^2 e^b / 2 above the mean"),
    ("covariance-mean-rho-growth", SOR,
     "const I Pc(upper_double(half * eD * (tt * W * W + eps * eps)));",
     "const I Pc(upper_double(half * (tt * W * W + eps * eps)));",
     SYMBOLIC_TESTS, "the covariance form: the core's mean rho, e^D (t (1 - t) W^2 + eps^2) / 2"),
    ("covariance-mean-offset", SOR,
     "const I Pc(upper_double(half * eD * (tt * W * W + eps * eps)));",
     "const I Pc(upper_double(half * eD * (tt * W * W)));",
     SYMBOLIC_TESTS, "the covariance form: the core's own mean of delta, eps^2 in its mean rho"),
    ("covariance-outlier-rho", SOR,
     "const I shift = Pc_any * (one - I(in.core_alpha_lo)) + I(in.out_rho);",
     "const I shift = Pc_any * (one - I(in.core_alpha_lo));",
     SYMBOLIC_TESTS, "the covariance form: the other keys' sum_out alpha sup rho in |P_c - P|"),
    ("covariance-r-outliers", SOR,
     "add_up(outliers, mul_up(out.alpha_up[k], mul_up(std::max(out.rho_hi[k], P), dev)));",
     "outliers;",
     SYMBOLIC_TESTS, "E2's covariance form: the other keys' alpha max(sup rho, P) sup |W - c|"),
    ("kappa-spread", SOR,
     "std::max(next_up(out.rho_hi[k] - kappa), next_up(kappa - out.rho_lo[k]));",
     "0.5 * std::max(next_up(out.rho_hi[k] - kappa), next_up(kappa - out.rho_lo[k]));",
     SYMBOLIC_TESTS, "E2 per key: |rho_k - kappa| sup |V_k|"),
    ("covariance-value-deviation", SOR,
     "const double dev = std::max(next_up(w.hi - c), next_up(c - w.lo));",
     "const double dev = 0.5 * std::max(next_up(w.hi - c), next_up(c - w.lo));",
     SYMBOLIC_TESTS, "E2's covariance form: the values' deviation from the middle of their hull"),
    ("variance-width", SOR,
     "double S2 = mul_up(mul_up(0.5 * W, 0.5 * W), core_alpha);",
     "double S2 = mul_up(mul_up(0.25 * W, 0.5 * W), core_alpha);",
     SYMBOLIC_TESTS, "the variance form: (W / 2)^2 over the core keys"),
    ("variance-outliers", SOR,
     "S2 = add_up(S2, mul_up(o.alpha, mul_up(o.reach, o.reach)));",
     "S2 = add_up(S2, mul_up(o.alpha, mul_up(o.reach, 0.0)));",
     SYMBOLIC_TESTS, "the variance form: the other keys' alpha_k reach_k^2"),
    ("hull-without-zero", VH,
     "const bool with_zero = model.attention != AttentionKind::kSoftmax;",
     "const bool with_zero = false;",
     ["value_hull_bound_test"], "the values' hull taken with 0 where weights sum to at most 1"),
    ("hull-residual-stream", VH,
     "const Matrix<Mpfi> x = X + r;",
     "const Matrix<Mpfi> x = X;",
     ["value_hull_bound_test"], "residual models: each layer's input x + r^(l)"),
    ("centred-form-last-variable", DWC,
     "for (std::size_t m = 0; m < g.size(); ++m) {\n    const Mpfi term =",
     "for (std::size_t m = 0; m + 1 < g.size(); ++m) {\n    const Mpfi term =",
     DEEP_TESTS, "the centred form: every variable's g_m (B_m - p_m)"),
    ("layer-centred-form", DWC,
     "r += dX(k, kFirstContent + c) * offset(box.lo[m], box.hi[m], centre[m]);",
     "if (c > 0) r += dX(k, kFirstContent + c) * offset(box.lo[m], box.hi[m], centre[m]);",
     DEEP_TESTS, "an intermediate layer's centred form (every variable)"),
    ("residual-gradient", DWC,
     "if (model.kind == ModelKind::kResidual) dX(i, d) -= Mpfi(1);",
     "if (false) dX(i, d) -= Mpfi(1);",
     DEEP_TESTS, "the gradient of the residual target's x_i"),
    ("affine-product-remainder", DWC,
     "out.r = a.c * b.r + b.c * a.r + (linear_range(a) + a.r) * (linear_range(b) + b.r);",
     "out.r = a.c * b.r + b.c * a.r;",
     DEEP_TESTS, "the affine (Taylor) forms: a product's quadratic remainder"),
    ("bos-key-content", BOS,
     "T += Mpfi(ordinary) * exp_of(Mpfi(query_dot(w) + signed_norm));",
     "T += Mpfi(ordinary) * exp_of(Mpfi(query_dot(w)));",
     BOS_TESTS, "the BOS bound: the keys' content term +-||v(q)||_1 of the odds"),
    ("bos-key-count", BOS,
     "const int ordinary = i - 1 - (j < i ? 1 : 0);  // ordinary tokens m = 1..i-1",
     "const int ordinary = std::max(0, i - 2 - (j < i ? 1 : 0));",
     BOS_TESTS, "the BOS bound: every ordinary key before row i"),
    ("bos-trigger-key", BOS,
     "if (j < i) {\n    const Vector<Mpfi> w = A.col(kTriggerFlag) - col0;",
     "if (false) {\n    const Vector<Mpfi> w = A.col(kTriggerFlag) - col0;",
     BOS_TESTS, "the BOS bound: the trigger's key when it comes before row i"),
    ("bos-self-square", BOS,
     "d += A(p, p) * square_of(q[l]);",
     "d += A(p, p) * q[l] * Mpfi(0);",
     BOS_TESTS, "the BOS bound: the query's own key, its diagonal quadratic term"),
    ("bos-self-cross", BOS,
     "d += Mpfi(A(p, p2) + A(p2, p)) * q[l] * q[l2];",
     "d += Mpfi(0) * q[l] * q[l2];",
     BOS_TESTS, "the BOS bound: the query's own key, its cross terms"),
    ("bos-off-by-one", BOS,
     "  T += exp_of(d);\n  if (kind == AttentionKind::kSoftmaxOffByOne) T += exp_of(Mpfi(-s_i0));",
     "  T += exp_of(d);",
     BOS_TESTS, "the BOS bound: off-by-one softmax's extra logit 0"),
    ("deep-bos-off-by-one", DBOS,
     "if (kind == AttentionKind::kSoftmaxOffByOne) T += exp_of(Mpfi(-dot(q, x0)));",
     "if (false) T += exp_of(Mpfi(-dot(q, x0)));",
     ["deep_bos_bound_test"], "the deep BOS bound: off-by-one softmax's extra logit 0"),
    ("deep-bos-layer-centred-form", DBOS,
     "r += dX(m, kFirstContent + e) * Mpfi(bmp::lower(lo), bmp::upper(hi));",
     "if (e > 0) r += dX(m, kFirstContent + e) * Mpfi(bmp::lower(lo), bmp::upper(hi));",
     ["deep_bos_bound_test"], "the deep BOS bound: a lower layer's centred form (every variable)"),
    ("deep-bos-centred-form", DBOS,
     "centred += g * Mpfi(bmp::lower(lo_off), bmp::upper(hi_off));",
     "if (c > 0) centred += g * Mpfi(bmp::lower(lo_off), bmp::upper(hi_off));",
     ["deep_bos_bound_test"], "the deep BOS bound: a_i0's centred form (every variable)"),
]


def check_lines(root, names):
    """{file: text} after checking that each mutant's line occurs once in
    the tree at root."""
    texts = {}
    bad = []
    for name, path, old, _new, _tests, _term in MUTANTS:
        if names and name not in names:
            continue
        if path not in texts:
            with open(os.path.join(root, path)) as f:
                texts[path] = f.read()
        count = texts[path].count(old)
        if count != 1:
            bad.append(f"{name}: {path} holds its line {count} times (expected once): {old!r}")
    if bad:
        raise SystemExit(f"{PROGRAM}: error: " + "\n".join(bad))
    return texts


def git_modified(path):
    p = subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "--", path])
    return p.returncode != 0


def build(build_dir, targets):
    p = subprocess.run(["cmake", "--build", build_dir, "--target", *targets, "--", "-j2"],
                       capture_output=True, text=True)
    return p.returncode == 0, (p.stdout + p.stderr)[-2000:]


def run_tests(build_dir, tests, timeout):
    """The first test that fails (the mutant is KILLED), or None."""
    for t in tests:
        try:
            p = subprocess.run([os.path.join(build_dir, "tests", t)], cwd=ROOT,
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"{t} (timed out after {timeout} s)"
        if p.returncode != 0:
            return t
    return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", action="append", default=[], metavar="NAME")
    ap.add_argument("--out", help="write the table here (atomically)")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds a test may run before it counts as failed (a mutant "
                         "that makes a search loop forever is caught, not waited for)")
    ap.add_argument("--check-lines", action="store_true")
    ap.add_argument("--root", default=ROOT,
                    help="the source tree --check-lines reads (the tests point it at a copy)")
    a = ap.parse_args(argv)
    unknown = [n for n in a.only if n not in {m[0] for m in MUTANTS}]
    if unknown:
        raise SystemExit(f"{PROGRAM}: error: --only {', '.join(unknown)}: no such mutant "
                         f"(expected one of {', '.join(m[0] for m in MUTANTS)})")
    texts = check_lines(a.root if a.check_lines else ROOT, a.only)
    if a.check_lines:
        print(f"{PROGRAM}: every mutant's line occurs exactly once "
              f"({len(a.only) or len(MUTANTS)} mutants)")
        return 0
    if not os.path.isfile(os.path.join(a.build, "CMakeCache.txt")):
        raise SystemExit(f"{PROGRAM}: error: --build {a.build}: not a configured build "
                         "directory (expected CMakeCache.txt; run the README's build first)")
    dirty = [p for p in texts if git_modified(p)]
    if dirty:
        raise SystemExit(f"{PROGRAM}: error: {', '.join(dirty)}: uncommitted changes "
                         "(expected a clean file: commit or stash them first)")
    lines = [
        "# Mutation check of the certified bounds: each mutant makes one term of a bound "
        "unsound; KILLED when one of its tests fails",
        f"# command: /usr/bin/python3 scripts/{PROGRAM}.py " + " ".join(argv),
        f"# revision: {git_revision()}",
        f"# time_utc: {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}, load average "
        f"before: {load_average()} ({os.cpu_count()} cores, shared)",
        f"# {'mutant':<28} {'file':<40} {'verdict':<9} caught by / term",
    ]
    print("\n".join(lines))
    all_targets = set()
    survivors = ran = 0
    try:
        for name, path, old, new, tests, term in MUTANTS:
            if a.only and name not in a.only:
                continue
            full = os.path.join(ROOT, path)
            original = texts[path]
            all_targets.update(tests)
            t0 = time.time()
            try:
                with open(full, "w") as f:
                    f.write(original.replace(old, new, 1))
                ok, log = build(a.build, tests)
                if not ok:
                    raise SystemExit(f"{PROGRAM}: error: mutant {name} does not build "
                                     f"(its line is out of date):\n{log}")
                killer = run_tests(a.build, tests, a.timeout)
            finally:
                with open(full, "w") as f:
                    f.write(original)
            verdict = "KILLED" if killer else "SURVIVED"
            survivors += killer is None
            ran += 1
            row = (f"{name:<30} {path:<40} {verdict:<9} "
                   f"{killer or 'none of ' + ', '.join(tests)}; {term} "
                   f"({time.time() - t0:.0f} s)")
            lines.append(row)
            print(row, flush=True)
    finally:
        if all_targets:
            print(f"{PROGRAM}: building {', '.join(sorted(all_targets))} from the restored "
                  "sources", flush=True)
            build(a.build, sorted(all_targets))
    lines.append(f"# {survivors} of {ran} mutants survived")
    print(lines[-1])
    finish_output(lines, a.out)
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
