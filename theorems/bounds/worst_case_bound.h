// SPDX-License-Identifier: MIT
//
// Certified worst-case loss by interval branch-and-bound over the content box.
//
//   E(theta) = max_j sup_{C in [-1,1]^((L-1)(n-3))} e(X(j, C)),
//   e(X) = max_{i,d} |f(X)_{i,d} - y_{i,d}|     (single-layer models, plain target)
//
// Upper bound on a box B of content (trigger j fixed). Write the error of a
// single-layer model as one linear form in the token coordinates:
//   f(X)_i - y_i = sum_{k<=i} G_ik x_k,
//   G_ik = sum_h a^h_ik M_h - [i = j, 1 <= k <= j] I / j.
// The attention weights a^h_ik are enclosed over B by forward<Mpfi> on the
// interval input (the exact softmax range of attention.h, with scores
// s_ik = x_i^T A x_k enclosed by interval arithmetic); then G_ik is an
// interval matrix and the sum is evaluated in MPFI. Every content variable
// occurs once in each (i, d) term, so, when the attention does not depend on
// the content (scores reading flags only, as for the sink family and the
// ReLU construction), this is the exact range of f - y over B up to outward
// rounding, and one box per trigger certifies E. Otherwise
// the looseness comes from the attention's enclosure and shrinks with B.
// For content-dependent softmax scores that enclosure is also taken from
// score differences and intersected with the per-score one:
//   a_ik = 1 / (1 + sum_{m != k} exp(x_i^T A (x_m - x_k))),
// in which a term shared by all scores of row i (the query's content times
// A's flag columns) cancels; the sink models of the Theorem 1 search are of
// this kind, and per-score ranges left their bound at 6e-3 against E ~ 2e-11.
//   upper(B) = max_{i,d} max |enclosure of (f - y)_{i,d}|
// Lower bound: a witness X, evaluated on the point input in MPFI; the lower
// end of its enclosure of e(X) is a certified lower bound on E. Each box
// offers the vertex of B that maximizes its worst term's linear form
// (x_m = hi where sign(term) * mid(G) > 0, else lo) and the box's centre;
// before branching, the attack's best input per trigger is offered too
// (search/attack.h, seed 0, round 0).
// Caps: on single-head ReLU and softmax models a certified bound on each
// trigger's whole worst case (relu_vertex_bound.h, before branching;
// softmax_vertex_bound.h, once the witnesses give a lower bound to aim at)
// caps every box of that trigger: upper(B) = min(upper(B), cap_j).
// Gated attention, o_i = sigma(G x_i) * M V_i, has no coefficient form G_ik;
// its boxes are bounded by the forms of the deep bound
// (deep_worst_case_bound.h: plain interval evaluation intersected with
// centred forms whose gradients come from the reverse pass), which hold for
// one layer as for several.
// The driver (witnesses, precision raises, per-trigger summary, stopping
// rules) is theorems/bounds/worst_case_search.h, shared with the deep bound.
// Under several ranks (options.ranks) the first pass (gated attention's
// included) and the softmax vertex bound's caps are split by trigger there,
// and the boxes after it by batch, with the same result bit for bit; the
// ReLU vertex bound (one search over the query shared by every trigger)
// runs whole on every rank.
// Branch and bound: a max-heap of boxes by upper(B) over all triggers; pop
// the top, stop once top.upper <= lower (1 + relative_gap), otherwise bisect
// (at even depth) the coordinate with the largest width_m * |dphi/dx_m|
// (Ratz-Csendes rule C; |mid G| without a centered form) or (at odd depth)
// the widest coordinate that enters the worst term (rule C alone stalls on
// the sink models, the widest rule alone on random ones; the widest of all
// if no weight is positive) and push the
// children whose upper bound exceeds the best lower bound (others cannot hold
// the maximum). On stopping, every live box has upper <= top.upper, so
//   lower <= E(theta) <= upper = top.upper          CERTIFIED
// If the budget (boxes, seconds) runs out first, upper is still a valid
// bound (max over live boxes), only the gap is larger than requested.
// NaN: an enclosure with a NaN (or infinite) end bounds nothing, so such a
// term counts as +inf: the box is never pruned, and upper = +inf, never a
// finite number, while any live box has one.
// Precision: the bound is limited by rounding, not by the box, when the
// width of the point enclosure of e(X) at the box's vertex (pure rounding)
// is at least kRoundingShare of the current gap upper - lower; no bisection
// can then close the gap (the sink family at beta = 100 with 128 bits: the
// trigger row's a_jk - 1/j is rounding noise of 1e-38 against E ~ 1e-43).
// Then the precision is raised by options.step_bits and the search goes on:
// boxes evaluated at a lower precision keep their (valid) bounds and are
// re-evaluated when they reach the top of the heap. At the cap
// max(options.bits, options.max_bits) the search stops with a precision
// floor, and the report estimates the precision that would help:
//   bits + log2(rounding width / (kRoundingShare * relative_gap * lower)),
// rounded up to a multiple of 64. A box whose coordinates are all adjacent
// doubles cannot be split (the midpoint rounds to an end: a child would be
// its parent); if rounding does not limit its bound, more precision cannot
// help either, and the search stops with that reason (never loops).
// The report states the precision used at the end. If no witness has a
// valid enclosure (NaN), lower = 0 (E >= 0 always) and there is no witness.
#pragma once

#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/evidence.h"
#include "src/exact_parts.h"
#include "src/model.h"
#include "src/scalar_traits.h"
#include "src/task.h"
#include "theorems/bounds/box_search.h"
#include "theorems/bounds/claim.h"

namespace sinkcert::theorems::bounds {

// Content box for one trigger (content layout of src/task.h): variable
// m = (k - 1) (n - 3) + c holds
// x_k[2 + c], bounds [lo[m], hi[m]] (dyadic, so exact in double).
struct ContentBox {
  int trigger = 1;
  std::vector<double> lo, hi;
  int depth = 0;  // bisections from the full box
};

ContentBox full_content_box(const Task& task, int trigger);

// Bisects variable m at its midpoint into left (hi[m] = mid) and right
// (lo[m] = mid), depth + 1. Returns false, leaving left and right unchanged,
// when the midpoint rounds to an end (lo[m] and hi[m] equal or adjacent
// doubles): one child would be the parent itself.
bool bisect(const ContentBox& box, int m, ContentBox& left, ContentBox& right);

// One box's certified bound (computed in the current PrecisionScope).
struct BoxBound {
  Mpfr upper;                        // >= e(X) for every X in the box; +inf if any
                                     // term's enclosure has a NaN or infinite end
  int position = 0, coordinate = 0;  // the (i, d) attaining upper
  std::vector<double> vertex;        // the vertex maximizing that term's linear form
  std::vector<double> weight;        // |mid G| per variable for that term
};
// Only the terms that can attain the maximum are tightened by their centred
// form (the header's cost note); tighten_every_term tightens all of them,
// for the tests: the result is the same by construction.
BoxBound bound_box(const Model<Mpfi>& model, const Task& task, const ContentBox& box,
                   bool tighten_every_term = false);

// The same bound computed first in outward-rounded double intervals
// (src/double_interval.h), on the model's entries rounded outward to
// doubles: every operation encloses its exact result, so the bound is as
// certified as MPFI's. It is kept when it is finite and double's rounding,
// measured as the width of the error's enclosure at the box's centre (a
// point: rounding alone), is at most kDoubleRoundingShare of the gap asked
// (relative_gap times the bound) and at most kDoubleRoundingCeiling of the
// bound; otherwise (sink models, whose errors sit near double's rounding;
// exponents beyond double's range; gaps below kMinDoubleGap) the box is
// bounded in MPFI at the current precision.
// *used_double says which.
// Share of the asked gap that double's rounding may take: 2^-10 leaves the
// closing of the gap to the boxes (the MPFI bound of the same box differs
// from the double one by rounding amplified through O(L n) operations,
// about 1e-13 relative on the trained models against a gap of 1e-2).
inline constexpr double kDoubleRoundingShare = 0x1p-10;
// And at most 2^-30 (1e-9) of the bound whatever the gap: the double bound
// then differs from MPFI's below every digit a report or table prints (at
// 2^-10 of a gap of 0.1 the certified path models' upper ends moved in
// their sixth digit).
inline constexpr double kDoubleRoundingCeiling = 0x1p-30;
// Below this asked gap double is not tried (its rounding, about 2^-52
// relative per operation, could then hold the search above the gap).
inline constexpr double kMinDoubleGap = 0x1p-30;
BoxBound bound_box_double_first(const Model<Mpfi>& model, const Task& task, const ContentBox& box,
                                double relative_gap, bool* used_double = nullptr);

// A BoxBound as one rank hands it to the others (src/exact_parts.h):
// upper exactly (its precision, sign, mantissa and exponent), position,
// coordinate, vertex, weight; read back bit for bit.
void write_box_bound(const BoxBound& b, PartWriter& w);
BoxBound read_box_bound(PartReader& r);

// The MPFI enclosure of e(X) at one input (content as in ContentBox), and
// its lower end, a certified lower bound on E (NaN when the enclosure is).
Mpfi certified_error(const Model<Mpfi>& model, const Task& task, int trigger,
                     const std::vector<double>& content);
Mpfr certified_error_lower(const Model<Mpfi>& model, const Task& task, int trigger,
                           const std::vector<double>& content);

// The softmax vertex bound's time (its caps wait for a certified lower
// bound, so it runs inside the first pass, or before it under ranks): a
// share of the time left, kVertexBudgetShare (0.8, in the source), but
// never so much that the first pass's boxes left (one per trigger, each a
// trigger's only bound where no cap comes) lack kFirstPassMargin times
// their measured pace: a trigger the first pass does not reach leaves
// upper = +inf. The margin covers the boxes' spread (a few per cent over
// the triggers, results/benchmarks/double_first_benchmark.txt) and a
// machine shared with one more job (twice the time).
inline constexpr double kFirstPassMargin = 2.0;
// min(0.8 remaining, remaining - kFirstPassMargin boxes_left seconds_per_box),
// at least 0 (seconds).
double vertex_bound_seconds(double remaining, int boxes_left, double seconds_per_box);

// relative_gap: stop when upper <= lower (1 + relative_gap).
struct WorstCaseOptions : BoxSearchOptions {
  std::vector<int> triggers;  // empty = every position of the convention
  // Also offer the attack's witnesses (search/attack.h, seed 0, round 0) as
  // lower-bound candidates before branching.
  bool adversary_witnesses = true;
  // (threads, of BoxSearchOptions, are also the softmax vertex bound's; its
  // caps are the same on any count.)
  // (progress, of BoxSearchOptions, also receives the lines of the first
  // pass, of the attack's witnesses and of the vertex bounds.)
};

// One trigger's enclosure at the end of a run: its own worst case
// max_C e(X(j, C)) lies in [lower, upper] (upper: the largest bound of its
// boxes, live or pruned, at least lower); boxes: the boxes of this trigger
// evaluated.
struct TriggerBound {
  int trigger = 0;
  Mpfr lower, upper;
  long boxes = 0;
};

struct WorstCaseBound : BoxSearchOutcome {
  Mpfr lower, upper;                      // lower <= E(theta) <= upper, both certified
  double relative_gap = 0.0;              // (upper - lower) / lower
  int witness_trigger = 0;                // 0: no witness (lower = 0)
  std::vector<double> witness_content;    // attains e(X) >= lower
  std::vector<TriggerBound> per_trigger;  // ascending trigger order of the run
  // With precision_floor: an estimate of the starting precision (--bits)
  // that would shrink the rounding enough; 0 when it cannot be estimated
  // (lower <= 0).
  int bits_suggested = 0;
  std::string note;  // how the upper bound was helped, if it was (one line)
  // What the time budget left out, if anything (one line): the attack's
  // witnesses, a vertex bound, the refinements of boxes or whole triggers
  // evaluated after the deadline.
  std::string budget_note;
  int triggers_unbounded = 0;  // triggers the first pass reached after the deadline
  // The attack's own certified value (search/attack.h, round 0, seed 0: the
  // largest lower end of e(X) at its per-trigger witnesses, rounded down),
  // which lower is at least; NaN when the attack did not run
  // (options.adversary_witnesses off, or skipped: budget_note says why).
  double attack_lower = std::numeric_limits<double>::quiet_NaN();
  // How many triggers that round searched: all of them, or as many as fit
  // its work limit and its share of the budget (worst_case_search.h,
  // attack_triggers); 0 when it did not run.
  int attack_triggers = 0;
};

// Throws std::invalid_argument unless the model is single-layer with
// dimension task.n. T = double, Mpfr (a model refined beyond double,
// least_squares_refiner.h) or Rational (the exact model a weight file
// denotes); the entries are enclosed in MPFI at the working precision
// (matrix_cast), and the adversary's lower-bound candidates come from the
// model rounded to double.
template <class T>
WorstCaseBound bound_worst_case(const Model<T>& model, const Task& task,
                                const WorstCaseOptions& options);

// A claim "E(theta) <= claimed": VERIFIED if the certified upper bound is at
// or below it, NOT VERIFIED (with the witness) if the certified lower bound
// is above it, UNDECIDED otherwise. Runs the branch and bound with the
// relative gap it needs to decide, within the options' budget.
struct UpperBoundCheck {
  Verdict verdict = Verdict::kUndecided;
  Evidence evidence = Evidence::certified(0);
  Claim claimed;        // exact, as written (claim.h)
  double margin = 0.0;  // claimed - upper (VERIFIED) or lower - claimed (NOT VERIFIED)
  WorstCaseBound bound;
};
// T = double, Mpfr or Rational, as for bound_worst_case.
template <class T>
UpperBoundCheck check_upper_bound(const Model<T>& model, const Task& task, const Claim& claimed,
                                  const WorstCaseOptions& options);

// "E in [lower, upper]", lower rounded down and upper rounded up (6 digits).
std::string enclosure_text(const WorstCaseBound& bound);

// What the enclosure means for the task, one line: whether the model
// solves it, against the run's tolerance (bound.bars; src/verdict_bars.h,
// solves_verdict), e.g. "solves the task: E <= 4.405e-03 <= 5e-3
// (tolerance), CERTIFIED".
std::string task_meaning(const WorstCaseBound& bound);

// Reports ending in the verdict line (verdict, margin, precision, evidence)
// and the meaning line (task_meaning): lower rounded down, upper rounded up,
// the witness of the lower bound. Without a claim the verdict is ENCLOSED
// when the requested relative gap was reached (margin = requested -
// achieved gap), else NOT ENCLOSED (the enclosure printed is still
// certified); for a claim, as check_upper_bound says.
std::string summary_text(const WorstCaseBound& bound, const Task& task, double requested_gap);
std::string summary_text(const UpperBoundCheck& check, const Task& task);

// The same as one JSON object: "quantity", "verdict" (ENCLOSED / NOT
// ENCLOSED, or the claim's), "evidence", "lo" / "lo_exact", "hi" / "hi_exact"
// (put_certified_end), "relative_gap", "witness" ({"trigger", "content"} or
// null), "per_trigger", "meaning", the search's fields (outcome_json), the
// task, and for a claim "claim" and "margin".
nlohmann::json to_json(const WorstCaseBound& bound, const Task& task, double requested_gap);
nlohmann::json to_json(const UpperBoundCheck& check, const Task& task);

// The witness of the lower end as an input X (L x n) that eval --input
// reads (make_input of its trigger and content); none without a witness.
std::optional<Matrix<double>> witness_input(const WorstCaseBound& bound, const Task& task);

}  // namespace sinkcert::theorems::bounds
