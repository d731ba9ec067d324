// SPDX-License-Identifier: MIT
//
// Certified minimum BOS mass over the whole content box, by interval branch
// and bound (the twin of worst_case_bound.h for the BOS mass).
//
//   B(theta) = min over heads h, trigger positions j of the convention,
//              non-trigger rows i >= 1 (i != j) and content C in the box of
//              a^h_i0(X(j, C))
//   D(theta) = 1 - B(theta), the largest BOS deficit 1 - a_i0
//
// Softmax: with the score differences d_m = s_im - s_i0 = x_i^T A (x_m - e_0)
//   a_i0 = 1 / (1 + T),  T = sum_{m=1..i} exp(d_m)
//   (off-by-one softmax: T gains exp(-s_i0), the extra zero logit)
//   1 - a_i0 = 1 / (1 + 1 / T)
// increasing in T and computed without the cancellation of 1 - a_i0 (a
// deficit of 1e-120 needs no more than 128 bits). relu, relu-count-all,
// sigmoid: a_i0 = phi(s_i0) / divisor (src/attention.h), s_i0 = x_i^T A e_0.
//
// Reduction to the query's content. Row i reads x_1..x_i only (causal), so
// every trigger j > i gives row i the same value (one of them is kept). Write
// x_i = e_{n-1} + P q (q: its n - 3 content coordinates) and x_m = f_m + P c_m
// (m < i; f_m the flags: e_1 at the trigger, e_{n-1} otherwise). Then
//   d_m = x_i^T A (f_m - e_0) + v(q)^T c_m,   v_c(q) = (A^T x_i)_{2+c},
// c_m enters only d_m, linearly, and T increases in every d_m, so
//   max over c_m in [-1,1]^(n-3) of d_m = g_m(q) = x_i^T A (f_m - e_0) + ||v(q)||_1
// attained at c_m = sign(v(q)). Hence
//   D(theta) = max_{h, j, i} max_{q in [-1,1]^(n-3)} D_hji(q),
//   T_hji(q) = (i - 1 - [j < i]) exp(g_ord(q)) + [j < i] exp(g_trig(q))
//              + exp(x_i^T A (x_i - e_0))  [+ exp(-s_i0(q))],
// and the branch and bound splits only the n - 3 coordinates of q.
// Upper bound over a box Q of q: every linear form in q (x_i^T A w, v_c(q),
// s_i0(q)) is evaluated with each q_l once, so its interval is its exact range
// up to rounding; |v_c| takes the interval's magnitude; the quadratic
// x_i^T A x_i = const + lin(q) + sum_l A_ll q_l^2 + sum_{l<l'} (A_ll' + A_l'l) q_l q_l'
// uses the exact range of each square. The looseness (terms maximized
// independently, the cross products) shrinks linearly with Q. For the
// elementwise kinds D depends on q through the linear s_i0 only: the first box
// is exact.
// Lower bound on D (an upper bound on B): witness inputs, each evaluated from
// its tokens in MPFI: per box its centre and the vertex of Q that the signs of
// central differences of D along each coordinate point to, with c_m =
// sign(v(q)) and every other content coordinate 0. The witness's own a_i0 is
// then a point value at or below which B lies.
// Loop (theorems/bounds/box_search.h, shared with worst_case_bound.h): one max-heap of boxes (h, i,
// j, Q) by upper bound, pop the top, stop once it is decided (the relative gap (upper - lower) /
// lower reached, or a claim decided), else bisect a coordinate (even depth: the largest |central
// difference|, odd depth: the widest) and push the children whose bound exceeds the best witness.
// On stopping every live box is below the top:
//   lower <= D(theta) <= upper,  1 - upper <= B(theta) <= 1 - lower  CERTIFIED
// A budget (boxes, seconds) that runs out leaves a valid but wider enclosure.
// NaN or infinite ends count as +inf (never pruned).
//
// Maximum mode (a certified BOS cap: bound_max_bos, check_max_bos). The same
// loop maximizes a_i0 itself,
//   U(theta) = max over h, j, non-trigger rows i >= 1 and the box of a^h_i0,
// with the reduction above mirrored: softmax kinds, a_i0 = 1 / (1 + T) is
// largest where T is smallest, so every d_m takes its minimum over c_m,
//   g_m(q) = x_i^T A (f_m - e_0) - ||v(q)||_1   at c_m = -sign(v(q)),
// and the box bound is the upper end of 1 / (1 + T) with these g_m. The
// elementwise kinds read s_i0 alone, as before. Softpick,
//   a_i0 = r / (r + R),  r = relu(exp(s_i0) - 1),  R = sum_{m=1..i} |exp(s_im) - 1|,
// is nondecreasing in r and nonincreasing in R, so over a box
//   a_i0 <= r_hi / (r_hi + R_lo)   (0 when r_hi = 0; 1 when R_lo = 0 < r_hi),
// with r_hi from the exact range of the linear s_i0, and R_lo the sum of
// min |exp(s) - 1| over each score's range: s_im = base_m(q) + v(q)^T c_m
// ranges over [base_m - ||v||_1, base_m + ||v||_1] (0 when that holds 0),
// s_ii over its quadratic enclosure. Loose (the minima are taken
// independently), exact when s_i0 <= 0 over the box (a_i0 = 0). Witnesses:
// c_m = -sign(v(q)) (softmax kinds); softpick, c_m = -t sign(v(q)) with
// t = base_m / ||v||_1 clamped to [-1, 1] (s_im as near 0 as the box allows).
// On stopping: lower <= U(theta) <= upper, CERTIFIED. Several ranks
// (options.ranks, search/rank_group.h): the first pass's cases (h, i, j),
// in the order above, are the parts; a box's bound and the witnesses it
// offers depend on its case alone, so rank r bounds cases k = r, r + K, ...
// with its witnesses' enclosures recorded, share() hands them to every rank
// exactly (src/exact_parts.h), and every rank takes them in case order as
// one process does: the same heap, witnesses and enclosure, bit for bit.
// The boxes after the first pass are split the same way, by batch
// (box_search.h): a box's bound depends on its box, head and row alone.
// Precision: when the
// rounding width of D at the box's vertex is at least kRoundingShare of the
// gap, the precision is raised by step_bits up to the cap (boxes bounded
// before are bounded again when they reach the top); at the cap, or at a box
// whose coordinates are adjacent doubles, the search stops and says why.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/evidence.h"
#include "src/model.h"
#include "src/scalar_traits.h"
#include "src/task.h"
#include "theorems/bounds/box_search.h"
#include "theorems/bounds/claim.h"

namespace sinkcert::theorems::bounds {

// relative_gap: stop when upper - lower <= relative_gap |lower| (on D).
struct BosBoundOptions : BoxSearchOptions {
  int head = -1;  // -1: every head; else only this head (0-based)
};

struct BosBound : BoxSearchOutcome {
  // lower <= D = 1 - min BOS <= upper, both CERTIFIED
  Mpfr deficit_lower, deficit_upper;
  double relative_gap = 0.0;  // (upper - lower) / |lower|; inf when lower = 0
  // The witness of the lower end (head 0-based, row i, trigger j; content
  // flattened as in src/task.h), and its deficit enclosure. witness_trigger
  // = 0: none had a finite enclosure.
  int witness_head = 0, witness_row = 0, witness_trigger = 0;
  std::vector<double> witness_content;
  Mpfi witness_deficit;
  // An end that is the trivial one (clamp_to_mass_range): the search gave
  // none inside the range every a_i0 lies in (a run that did not finish).
  bool trivial_lower = false, trivial_upper = false;
};

// The deficit 1 - a^h_i0 of one point input X (L x n tokens in MPFI), from
// its tokens by the formulas of the header (no cancellation for softmax).
Mpfi point_bos_deficit(const Head<Mpfi>& head, AttentionKind kind, const Matrix<Mpfi>& X, int i);

// An enclosure of max over c_m (m < i) of the deficit of row i, trigger j,
// with the query content q in the box (lo, hi) of n - 3 coordinates (the
// upper end bounds D_hji over the box; see the header).
Mpfi box_bos_deficit(const Head<Mpfi>& head, AttentionKind kind, int n, int i, int j,
                     const std::vector<double>& lo, const std::vector<double>& hi);

// Throws std::invalid_argument unless the model is single-layer of dimension
// task.n with a trigger position (and options.head, if set, is a head). T = double, Mpfr or
// Rational (enclosed in MPFI at the working precision).
template <class T>
BosBound bound_min_bos(const Model<T>& model, const Task& task, const BosBoundOptions& options);

// The claim "min BOS >= claimed" (claimed in [0, 1]): VERIFIED if
// 1 - upper >= claimed, NOT VERIFIED (with the witness) if the witness's
// certified a_i0 is below claimed, UNDECIDED when the budget runs out first.
// After a branch and bound over the deficit (single-layer or deep): without a
// witness the lower end is -inf (witness_trigger 0), the evidence CERTIFIED at
// out.bits, the seconds, and the relative gap (upper - lower) / |lower|
// (+inf without a witness or at lower = 0).
void finish_bos_bound(BosBound& out, bool have_witness, double seconds);

struct BosClaimCheck {
  Verdict verdict = Verdict::kUndecided;
  Evidence evidence = Evidence::certified(0);
  Claim claimed;  // exact, as written (claim.h)
  // VERIFIED: (1 - upper) - claimed; NOT VERIFIED: claimed - (1 - lower),
  // rounded down; 0 otherwise.
  double margin = 0.0;
  BosBound bound;
};
template <class T>
BosClaimCheck check_min_bos(const Model<T>& model, const Task& task, const Claim& claimed,
                            const BosBoundOptions& options);

// The maximum mode (header): lower <= max BOS mass <= upper, CERTIFIED.
struct MaxBosBound : BoxSearchOutcome {
  Mpfr mass_lower, mass_upper;
  double relative_gap = 0.0;  // (upper - lower) / |lower|; inf when lower = 0
  // The witness of the lower end, as in BosBound (witness_trigger = 0: none).
  int witness_head = 0, witness_row = 0, witness_trigger = 0;
  std::vector<double> witness_content;
  Mpfi witness_mass;                                  // its a_i0 enclosure
  bool trivial_lower = false, trivial_upper = false;  // as in BosBound
};

// The range of a^h_i0 on every input, by attention kind (src/attention.h):
//   softmax, softmax-off-by-one, gated (softmax weights), softpick   [0, 1]
//   sigmoid: sig(s) / max(i, 1)                                      [0, 1]
//   relu, relu-count-all: relu(s) / divisor                          [0, +inf)
// so 0 <= a_i0 always, and a_i0 <= bos_mass_ceiling(kind) (+inf: none).
Mpfr bos_mass_ceiling(AttentionKind kind);

// Intersects a finished search's enclosure with that range, EXACT reasoning
// on a CERTIFIED enclosure (the result is still CERTIFIED): the quantity Q
// is the deficit D = 1 - a_i0 (maximum false) or a_i0 (maximum true), so
//   D in [1 - ceiling, 1],   a_i0 in [0, ceiling];
// an end outside it (an infinite one where the budget ran out before every
// case was bounded, or no witness: lower = -inf) becomes the range's end,
// marked trivial_lower / trivial_upper (an infinite ceiling leaves the
// ends it bounds as they are). Then the relative gap is recomputed, and
// `done` (the search's stop rule) is asked again on the clamped ends: a run
// that did not decide but whose clamped ends answer the question (a gap
// reached, a claim decided) is decided, its stop reason saying so. A claim's
// verdict reads the clamped ends too (min_bos_claim, max_bos_claim).
void clamp_to_mass_range(BosBound& out, bool maximum, AttentionKind kind,
                         const std::function<bool(const Mpfr&, const Mpfr&)>& done);

// "" or "  (trivial end(s): a_i0 >= 0, a_i0 <= 1 on every input, CERTIFIED;
// the bound gave none tighter)", for the ends marked trivial.
std::string trivial_ends_text(const BosBound& bound);
std::string trivial_ends_text(const MaxBosBound& bound);
// A trivial end as printed, exactly: "0" or "1" (throws std::logic_error
// for any other value).
std::string trivial_end_text(const Mpfr& end);
// An end of a BOS enclosure as printed: a trivial one exactly
// (trivial_end_text), else rounded outward to `digits` digits (down for a
// lower end, up for an upper one; an infinite end prints "-inf" / "inf").
std::string bos_end_text(const Mpfr& end, bool trivial, bool lower, int digits);

// a^h_i0 of one point input X in MPFI (every kind; softmax kinds as
// 1 / (1 + sum_m exp(s_im - s_i0)), without overflow).
Mpfi point_bos_mass(const Head<Mpfi>& head, AttentionKind kind, const Matrix<Mpfi>& X, int i);

// An interval whose upper end bounds max over c_m (m < i) of a_i0 of row i,
// trigger j, with the query content q in the box (lo, hi) (max mode above).
Mpfi box_max_bos_mass(const Head<Mpfi>& head, AttentionKind kind, int n, int i, int j,
                      const std::vector<double>& lo, const std::vector<double>& hi);

// The certified maximum BOS mass over the whole box (every kind but gated's
// gate, which does not touch a_i0, is covered; softpick too). Throws as
// bound_min_bos does, softpick aside.
template <class T>
MaxBosBound bound_max_bos(const Model<T>& model, const Task& task, const BosBoundOptions& options);

// The cap "max BOS <= claimed" (claimed in [0, 1]): VERIFIED if upper <=
// claimed, NOT VERIFIED (with the witness) if the witness's certified a_i0
// exceeds it, UNDECIDED when the budget runs out first.
struct MaxBosClaimCheck {
  Verdict verdict = Verdict::kUndecided;
  Evidence evidence = Evidence::certified(0);
  Claim claimed;  // exact, as written (claim.h)
  // VERIFIED: claimed - upper; NOT VERIFIED: lower - claimed; 0 otherwise.
  double margin = 0.0;
  MaxBosBound bound;
};
template <class T>
MaxBosClaimCheck check_max_bos(const Model<T>& model, const Task& task, const Claim& claimed,
                               const BosBoundOptions& options);

// One branch and bound over a BOS quantity, run to a stop rule: with
// maximum false over the deficit 1 - a_i0 (the minimum mode), with maximum
// true over the mass a_i0 itself (its BosBound's deficit fields then hold
// the mass). stop(lower, upper) says when the enclosure answers the question.
using BosStopRule = std::function<bool(const Mpfr& lower, const Mpfr& upper)>;
using BosSearch = std::function<BosBound(const BosStopRule& stop, bool maximum)>;

// The bounds and claims of both modes for any such search (single-layer or
// deep), so that each is decided by one rule:
//   bound     stop when (upper - lower) <= gap |lower|;
//   claim     min BOS >= b  is  D <= 1 - b (1 - b an exact rational),
//             max BOS <= b  is  a_i0 <= b;  stop once decide_at_most decides.
BosBound min_bos_to_gap(const BosSearch& search, double gap);
MaxBosBound max_bos_to_gap(const BosSearch& search, double gap);
BosClaimCheck min_bos_claim(const BosSearch& search, const Claim& claimed);
MaxBosClaimCheck max_bos_claim(const BosSearch& search, const Claim& claimed);

// "max BOS in [lower, upper]  [CERTIFIED] (boxes, stop reason, bits)".
std::string enclosure_line(const MaxBosBound& bound);

// One line: "1 - min BOS in [lower, upper]  [CERTIFIED] (gap, boxes, stop
// reason, bits)", lower rounded down and upper rounded up.
std::string enclosure_line(const BosBound& bound);

// "1 - min BOS in [lower, upper]" / "max BOS in [lower, upper]", each end
// rounded outward (the verdict line's enclosure).
std::string enclosure_text(const BosBound& bound);
std::string enclosure_text(const MaxBosBound& bound);

// What the enclosure means for the task, one line: whether the heads the
// bound covers sink, against the run's sink bar (bound.bars;
// src/verdict_bars.h). Minimum: sinks_verdict, "sinks on every input: min
// BOS >= m >= 0.5 (sink bar), CERTIFIED", or not at the witness, or
// undecided. Maximum: sinks_anywhere_verdict, "does not sink on any input"
// when the certified max BOS stays below the bar, or "sinks at the witness".
std::string task_meaning(const BosBound& bound);
std::string task_meaning(const MaxBosBound& bound);
// The same verdict with its decision.
BarVerdict task_verdict(const BosBound& bound);
BarVerdict task_verdict(const MaxBosBound& bound);

// Reports ending in the verdict line (verdict, margin, precision, evidence)
// and the meaning line (task_meaning). Without a claim the verdict is
// ENCLOSED (the requested gap reached) or NOT ENCLOSED, never VERIFIED.
std::string summary_text(const BosBound& bound, const Task& task, double requested_gap);
std::string summary_text(const BosClaimCheck& check, const Task& task);
std::string summary_text(const MaxBosBound& bound, const Task& task, double requested_gap);
std::string summary_text(const MaxBosClaimCheck& check, const Task& task);

// Which extreme of the non-trigger BOS mass: the minimum (bounded through
// D = 1 - min a_i0; a claim reads "min BOS >= c") or the maximum (U itself;
// a claim reads "max BOS <= c").
enum class BosMode { kMin, kMax };
// "min", "max".
std::string to_string(BosMode mode);

// The JSON forms: "quantity", "verdict" (ENCLOSED / NOT ENCLOSED, or the
// claim's), "evidence", "lo" / "lo_exact", "hi" / "hi_exact" of the
// enclosed quantity (1 - min BOS, or max BOS; put_certified_end), the
// witness ({"head", "row", "trigger", "content"} or null), "meaning", the
// search's fields (outcome_json), the task, and for a claim "claim" and
// "margin".
nlohmann::json to_json(const BosBound& bound, const Task& task, double requested_gap);
nlohmann::json to_json(const BosClaimCheck& check, const Task& task);
nlohmann::json to_json(const MaxBosBound& bound, const Task& task, double requested_gap);
nlohmann::json to_json(const MaxBosClaimCheck& check, const Task& task);

// The witness as an input X (L x n) that eval --input reads; none without
// one.
std::optional<Matrix<double>> witness_input(const BosBound& bound, const Task& task);
std::optional<Matrix<double>> witness_input(const MaxBosBound& bound, const Task& task);

// Either mode through one call: the claim's check when `claimed` is given,
// else the enclosure to options.relative_gap; the verdict, the report
// (summary_text of the mode's bound or check), its JSON form (to_json) and
// the witness input. Without a claim, a model of several heads
// (options.head < 0) also gets each head's enclosure_line, "head H: ...".
// All of it shares one budget of options.max_seconds.
struct BosReport {
  Verdict verdict = Verdict::kUndecided;
  std::string text;
  nlohmann::json json;
  std::optional<Matrix<double>> witness;
};
template <class T>
BosReport bos_report(const Model<T>& model, const Task& task, BosMode mode,
                     const std::optional<Claim>& claimed, const BosBoundOptions& options);

}  // namespace sinkcert::theorems::bounds
