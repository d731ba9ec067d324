// SPDX-License-Identifier: MIT
//
// Certified worst-case loss of residual multi-layer multi-head models by
// interval branch and bound over the content box:
//
//   E(theta) = max_j sup_{C in [-1,1]^((L-1)(n-3))} e(X(j, C)),
//   e(X) = max_{i,d} |phi_{i,d}(X)|,  phi = f(X) - y(X)   (residual target)
//
// For a residual model f(X) = X + sum_l sum_h o^{l,h}, and y = X + [i = j]
// mean(x_1..x_j), so phi is formed as the sum of the head outputs minus the
// mean term (X - X would not cancel in interval arithmetic).
//
// Upper bound on a box B (trigger j fixed), per term phi = phi_{i,d}, by
// one of three forms (DeepForm):
//  kPlain     step 1 alone (milliseconds at n = L = 16): the first pass
//             bounds every trigger's whole box so, before anything costly;
//  kSymbolic  steps 1 and 1b: the loop's form for softmax kinds when
//             L n > 64 (about a second per box at n = L = 16) or when the
//             box has at most 12 content variables (n = 5 to 7 at L = 4);
//  kCentred   steps 1, 1b and 2 (O(L n) reverse passes per layer and per
//             term: tens of seconds per box at n = L = 16), the loop's form
//             for softmax kinds in between and for the other attention kinds.
//  The first pass bounds every trigger's whole box with kPlain, then asks
//  the driver (node.bits = 0) to bound it again with the loop's form when
//  it reaches the top: every trigger has a finite bound within any budget
//  that lets the plain pass run.
//  1b. Symbolic first-order forms (deep_symbolic_pass.h, symbolic_form.h):
//     one noise symbol per content variable over the whole box, carried
//     through every layer in outward-rounded double arithmetic,
//       phi in c + sum_m g_m eps_m + [-r, r],  eps_m in [-1, 1],
//     products of two varying forms (query x key scores, weight x value)
//     with the quadratic part in r, softmax from score differences,
//     exp and 1/x by tangent plus chord-tangent gap; the range
//     [c - sum |g_m| - r, c + sum |g_m| + r] is intersected with step 1's.
//     Near-solution models are nearly affine in the content over a box, so
//     r is small against the linear part. Witness: the vertex where the
//     worst term's linear part is largest (p_m = hi_m where sigma g_m >= 0,
//     else lo_m), and the centre.
//  1. Plain interval evaluation: the forward pass over the interval input
//     X(B) (src/forward_vjp.h forward_tape over Mpfi), layer by layer. Each
//     intermediate layer output x^(l+1) (the next layer's input) is
//     intersected with its own centred form (below), with the gradient of
//     x^(l+1)_{i,d} from the reverse pass through layers 0..l: later
//     layers then read inputs that shrink with B quadratically, not linearly.
//     Softmax, ReLU and sigmoid kinds: phi is also evaluated in affine
//     arithmetic (first-order Taylor models v in c + sum_m g_m u_m + r,
//     u_m = x_m - c_m), and its range intersected with the plain one:
//       products   (ca + La + ra)(cb + Lb + rb) = ca cb + (ca Lb + cb La)
//                  + [ca rb + cb ra + (La + ra)(Lb + rb)],
//       exp, 1/x   tangent at the centre plus the chord-tangent gap on the
//                  range (convex: [0, max of the gap at the two ends]),
//       relu       the chord relaxation lambda s + [0, max(-lambda l, (1 - lambda) u)],
//       softmax    a_k = 1 / sum_m exp(s_m - s_k), differences first, so
//                  that what all scores of a row share cancels.
//  2. Centred (mean-value) form around a point p of B:
//       phi(B) in phi(p) + sum_m g_m (B_m - p_m),
//     g_m an enclosure of dphi/dx_m over B: the reverse pass (forward_vjp)
//     over the interval tape of step 1, minus the target's derivative. For
//     sup sigma phi (sigma = +-1) two points are used: the centre c of B and
//     Baumann's point for the upper bound, per variable with
//     [gl, gu] = sigma g_m:
//       p_m = hi_m (gl >= 0), lo_m (gu <= 0), (gu hi_m - gl lo_m) / (gu - gl) else,
//     which minimizes the form's term sup sigma g_m (B_m - p_m); a variable
//     along which phi is monotone on B then adds nothing (the form is
//     evaluated on the face where the supremum lies).
//   upper(B) = max_{i,d,sigma} min(plain, centred at c, centred at p).
//   The Baumann form is computed only for terms whose cheaper bound
//   exceeds the certified lower bound known so far (below it they cannot
//   decide anything).
// Lower bound: witnesses evaluated in MPFI on the point input, the lower
// end of the enclosure of e(X): every box offers its centre and the
// Baumann points it evaluated; before branching, the attack's per-trigger
// witnesses (search/attack.h, seed 0, round 0) are offered, so lower is at
// least the attack's certified value (WorstCaseBound::attack_lower). The
// boxes' points alone fall far short on deep models (softmax_4x4_s9 of
// results/benchmarks/pytorch_models/: 3.21e-2 against the attack's
// 6.94e-2), so the attack may take three quarters of the budget here
// (worst_case_search.h, kDeepAttackBudgetShare); beyond the attack's work
// limit (layers heads L^4 n^2 <= 2^28) or its share it is skipped and the
// report's budget line says so.
// The driver (witnesses, precision raises, per-trigger summary, stopping
// rules) is theorems/bounds/worst_case_search.h, shared with the single-layer bound.
// Split rule, symbolic form: the variable with the largest remainder credit
// in the worst term's form (symbolic_form.h: each remainder term credits the
// symbols whose coefficients made it), so only the few directions that
// carry the remainder are split; with at most 12 content variables the
// widest one the worst term reads (each in turn).
// Split rule, centred form: at odd depth the widest variable that enters the worst term
// (rule C alone can stall, as in the single-layer bound); at even depth the
// variable with the largest term sup sigma g_m (B_m - p_m) of the worst
// term's form (what it overestimates by), else the widest entering variable,
// else the widest.
// The loop, budgets, precision raises and the reports are those of the
// single-layer bound (theorems/bounds/box_search.h, theorems/bounds/worst_case_bound.h):
//   lower <= E(theta) <= upper = max over live boxes     CERTIFIED
// Budget: bound_deep_box checks its deadline between the terms of each
// stage (the intermediate layers' centred forms, the affine forms, the
// gradients, the Baumann forms); past it the refinements left are skipped
// and the box keeps the plain (or partly refined) enclosure, valid but
// wider, and says so (DeepBoxBound::cut).
// ReLU attention: its kink is covered by the hull of the one-sided
// derivatives (attention_row_vjp), which is what the mean-value inclusion
// of a Lipschitz function needs (Lebourg's mean-value theorem).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/exact_parts.h"
#include "src/model.h"
#include "src/scalar_traits.h"
#include "src/task.h"
#include "theorems/bounds/deadline.h"
#include "theorems/bounds/progress_lines.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::theorems::bounds {

// Which forms bound_deep_box uses: plain alone (the fallback the tests
// compare against); plain and the symbolic forms (deep_symbolic_pass.h,
// softmax kinds); all of them, centred forms included.
enum class DeepForm { kPlain, kSymbolic, kCentred };

struct DeepBoxBound {
  Mpfr upper;                        // >= e(X) on the box; +inf for a NaN or infinite enclosure
  int position = 0, coordinate = 0;  // the (i, d) attaining upper
  std::vector<double> weight;        // split scores per variable (see the header)
  // The best witness the evaluation met (centre or Baumann point): the lower
  // end of its enclosure of e(X), the width of that enclosure (rounding
  // only), and its content.
  Mpfr witness_lower, witness_rounding;
  std::vector<double> witness;
  bool cut = false;       // the deadline passed: some refinement was skipped
  bool symbolic = false;  // weight holds the symbolic form's remainder credits
};

// What bound_deep_box checks while it works: the deadline (past it, the
// refinements left are skipped) and where to send progress lines from
// inside a long evaluation (none when null).
struct DeepBoxBudget {
  Deadline deadline;
  ProgressLines* progress = nullptr;
};

// prune_below: terms whose cheaper bound is at or below it skip the Baumann
// form (their bound may then be looser, never invalid). The working
// precision is the current PrecisionScope's.
DeepBoxBound bound_deep_box(const Model<Mpfi>& model, const Task& task, const ContentBox& box,
                            DeepForm form = DeepForm::kCentred, const Mpfr& prune_below = Mpfr(-1),
                            const DeepBoxBudget& budget = {});

// A box's bound as a part of a share under several ranks, exactly
// (src/exact_parts.h); read_deep_box_bound throws std::runtime_error when
// the part ends early or a flag is neither 0 nor 1.
void write_deep_box_bound(const DeepBoxBound& b, PartWriter& w);
DeepBoxBound read_deep_box_bound(PartReader& r);

// The MPFI enclosure of e(X) at one input, target by the model's kind.
Mpfi certified_deep_error(const Model<Mpfi>& model, const Task& task, int trigger,
                          const std::vector<double>& content);

// Throws std::invalid_argument unless the model is residual with dimension
// task.n (any number of layers and heads; softmax, ReLU and the other
// attention kinds whose derivative src/forward_vjp.h encloses). T = double,
// Mpfr or Rational, as for bound_worst_case; options.adversary_witnesses
// asks for the attack's witnesses.
template <class T>
WorstCaseBound bound_deep_worst_case(const Model<T>& model, const Task& task,
                                     const WorstCaseOptions& options);
template <class T>
UpperBoundCheck check_deep_upper_bound(const Model<T>& model, const Task& task,
                                       const Claim& claimed, const WorstCaseOptions& options);

// The branch and bound with these box forms (worst_case_search.h) for any
// model whose forward pass and reverse pass src/forward_vjp.h encloses,
// single-layer ones included (worst_case_bound.h sends gated attention
// here), stopping when done(lower, upper). Throws std::invalid_argument
// when the dimensions disagree or the model has no heads.
template <class T>
WorstCaseBound centred_form_search(const Model<T>& model, const Task& task,
                                   const WorstCaseOptions& options,
                                   const std::function<bool(const Mpfr&, const Mpfr&)>& done);

// The reports of worst_case_bound.h, after a line naming the model's shape
// and the method.
template <class T>
std::string deep_summary_text(const Model<T>& model, const WorstCaseBound& bound, const Task& task,
                              double requested_gap);
template <class T>
std::string deep_summary_text(const Model<T>& model, const UpperBoundCheck& check,
                              const Task& task);

}  // namespace sinkcert::theorems::bounds
