// SPDX-License-Identifier: MIT
//
// Certified minimum and maximum BOS mass of one head of a residual
// multi-layer multi-head model, over the whole content box, by interval
// branch and bound (the deep twin of bos_bound.h):
//
//   B^{l,h} = min over trigger positions j of the convention, non-trigger
//             rows i >= 1 (i != j) and content C in the box of a^{l,h}_i0(X(j, C))
//   U^{l,h} = max over the same of a^{l,h}_i0
//
// a^{l,h}_i0 reads layer l's input x = x^(l) (x^(0) = X, x^(l+1) = x^(l) +
// sum_h o^{l,h}) at rows 0..i only (causal attention), so
//  - every trigger j > i gives row i the same value (one of them, the first,
//    is kept), and a box is over the content of positions 1..i only;
//  - the forward pass runs on the first i + 1 rows, through layers 0..l.
// Softmax kinds, from score differences so that what the row's scores share
// cancels (q_i = A^T x_i):
//   d_m = q_i . (x_m - x_0),  T = sum_{m=1..i} exp(d_m)  [+ exp(-q_i . x_0), off-by-one]
//   a_i0 = 1 / (1 + T),  1 - a_i0 = 1 / (1 + 1 / T)
// (no cancellation in 1 - a_i0; x_0^(l) is a constant, the BOS row sees only
// itself). Elementwise kinds (relu, relu-count-all, sigmoid): a_i0 =
// phi(q_i . x_0) / divisor (src/attention.h). Softpick is not covered.
//
// Maximized quantity Q: the deficit D = 1 - a_i0 (minimum mode; B = 1 - max D)
// or a_i0 itself (maximum mode). Upper bound of Q over a box Bx, the smaller of
//  1. plain: the interval forward pass over Bx (src/forward_vjp.h
//     forward_tape over Mpfi, rows 0..i, layers 0..l), then Q from the
//     differences above on the enclosures of x^(l); each intermediate
//     input x^(l'), 0 < l' <= l, is intersected with its own centred form
//       x^(l')_{k,d}(Bx) in x^(l')_{k,d}(c) + sum_v dx^(l')_{k,d}/dx_v(Bx) (Bx_v - c_v)
//     (the derivative from the reverse pass through layers 0..l'-1 over the
//     interval tape so far; one pass per (k, d), rows k <= i), so that
//     layer l reads inputs that shrink quadratically with the box; for
//     softmax kinds, instead, layer l's input is intersected with the range
//     of its symbolic first-order form (deep_symbolic_pass.h,
//     deep_symbolic_stream), which fuses heads whose outputs cancel (each
//     far from affine, their sum nearly constant) and costs one forward
//     pass; the boxes of the first pass, the whole box of positions 1..i
//     per (i, j), share one pass per trigger (a row's forms read only the
//     rows up to it);
//  2. centred (mean-value) form around the box's centre c:
//       Q(Bx) in Q(c) + sum_v g_v (Bx_v - c_v),
//     g_v an enclosure of dQ/dx_v over Bx: the reverse pass (forward_vjp) over
//     the interval tape of step 1 with the cotangent -1 (D) or +1 (a_i0) on
//     a^{l,h}_i0 (a softmax row's weights are those of the differences; the
//     reverse pass reads the tape's).
// The centred form shrinks quadratically with the box where the plain form
// shrinks linearly; Q(c) is evaluated in MPFI on the point.
// Lower bound: witnesses, each the lower end of Q evaluated in MPFI on a
// point input (the whole forward pass, then the differences): per box its
// centre and the vertex the signs of the gradient's midpoints point to.
// Loop (theorems/bounds/box_search.h): one max-heap of boxes (i, j, Bx) by
// upper bound for the head (l, h); bisect (even depth: the variable of the
// largest |g_v| (hi_v - lo_v), the term by which the centred form
// overestimates; odd depth: the widest); on stopping
//   lower <= max Q <= upper   CERTIFIED
// (minimum mode: 1 - upper <= B^{l,h} <= 1 - lower). Budgets, precision raises
// (by step_bits while rounding at the centre is at least kRoundingShare of
// the gap) and stopping reasons are those of bos_bound.h; the deadline is
// checked between batches. The first pass over the cases (i, j), the loop,
// and their split by ranks (the same enclosure, bit for bit, on any number
// of ranks and threads) are bos_box_search.h's, shared with bos_bound.h.
// Unfinished runs: every a_i0 lies in [0, 1] (softmax kinds, gated, sigmoid;
// [0, +inf) for relu and relu-count-all, bos_bound.h bos_mass_ceiling), so an
// end the search left outside that range (+inf where the budget ran out
// before every case was bounded, -inf without a witness) is clamped to it
// (clamp_to_mass_range): printed as that number, marked trivial in the
// text and in the JSON ("lo_trivial", "hi_trivial"), CERTIFIED, and read by
// the verdicts (ENCLOSED, a claim's, the sink meaning) as it is printed.
// The results reuse bos_bound.h's types (BosBound, MaxBosBound; witness_head
// is the head h of layer l), so their enclosure lines, JSON forms and
// witness inputs apply unchanged.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/model.h"
#include "src/scalar_traits.h"
#include "src/task.h"
#include "theorems/bounds/bos_bound.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::theorems::bounds {

// options.head (bos_bound.h) selects the head of `layer`; -1 is refused by
// the single-head functions below (deep_bos_report runs every head).
struct DeepBosOptions : BosBoundOptions {
  int layer = -1;  // -1: every layer (deep_bos_report only)
  // Intersect the layers' outputs below `layer` with their centred forms
  // (header; skipped where the symbolic forms are used, which are first
  // order too and far cheaper); false: the plain interval pass alone (tests
  // compare).
  bool centred_layer_inputs = true;
  // Intersect layer l's input with its symbolic forms' range (header, softmax
  // kinds); false: without them (tests compare).
  bool symbolic_layer_inputs = true;
  // Testing only: bound the model with this layer's head outputs dropped
  // (M^h = 0), as a deliberately broken bound; -1: none.
  int drop_layer_for_testing = -1;
};

// a^{l,h}_i0 (mass) and 1 - a^{l,h}_i0 (deficit, without cancellation) at a
// point input X (L x n, or its first rows; MPFI), through layers 0..l.
Mpfi deep_point_bos_mass(const Model<Mpfi>& model, int layer, int head, const Matrix<Mpfi>& X,
                         int i);
Mpfi deep_point_bos_deficit(const Model<Mpfi>& model, int layer, int head, const Matrix<Mpfi>& X,
                            int i);

// One box's ends, the bound the branch and bound takes per box (header,
// steps 1 and 2): for row i of the input X(box.trigger, C), C in the box of
// the content of positions 1..i (i * (n - 3) values, position-major), of
// Q = 1 - a^{layer,head}_i0 (deficit) or a^{layer,head}_i0:
//   plain     >= Q over the box, from layer_input
//   centred   >= Q over the box, Q(c) + sum_v g_v (B_v - c_v) (+inf without
//                content, i = 0)
//   layer_input  the enclosure of x^(layer), rows 0..i, over the box that
//                plain reads (the interval pass, intersected with the layers'
//                centred or symbolic forms as options says)
// and the witnesses' points: the centre c (Q there: at_centre) and the
// vertex the gradient's midpoints point to (empty without content).
// Each end is +inf where its enclosure is NaN.
struct DeepBosBoxEnds {
  Mpfr plain, centred;
  Mpfi at_centre;
  Matrix<Mpfi> layer_input;
  std::vector<double> centre, vertex;
  std::vector<double> slope;  // |g_v| (hi_v - lo_v), the split scores
  Mpfr upper() const { return centred < plain ? centred : plain; }
};

// The ends above for the model's head (layer, head) at the current MPFI
// precision; of the options only symbolic_layer_inputs and
// centred_layer_inputs are read (budgets and drop_layer_for_testing belong
// to the search). Throws std::invalid_argument as bound_deep_min_bos does, and
// unless 1 <= i and the box has i * (n - 3) coordinates with lo <= hi.
DeepBosBoxEnds deep_bos_box_ends(const Model<Mpfi>& model, int layer, int head, int i,
                                 const ContentBox& box, bool deficit,
                                 const DeepBosOptions& options);

// Throws std::invalid_argument unless the model is residual of dimension
// task.n, softmax, softmax-off-by-one, gated, relu, relu-count-all or
// sigmoid, with a trigger position, and (options.layer, options.head) is one
// of its heads. T = double, Mpfr or Rational (enclosed in MPFI at the working
// precision).
template <class T>
BosBound bound_deep_min_bos(const Model<T>& model, const Task& task, const DeepBosOptions& options);
// The per-head BOS cap: lower <= max a^{l,h}_i0 <= upper, CERTIFIED.
template <class T>
MaxBosBound bound_deep_max_bos(const Model<T>& model, const Task& task,
                               const DeepBosOptions& options);

// The claims "min BOS >= claimed" and "max BOS <= claimed" for the head
// (options.layer, options.head), as check_min_bos / check_max_bos:
// VERIFIED, NOT VERIFIED with the witness, UNDECIDED when the budget runs out.
template <class T>
BosClaimCheck check_deep_min_bos(const Model<T>& model, const Task& task, const Claim& claimed,
                                 const DeepBosOptions& options);
template <class T>
MaxBosClaimCheck check_deep_max_bos(const Model<T>& model, const Task& task, const Claim& claimed,
                                    const DeepBosOptions& options);

// verify bos on a residual model. With a claim: that head's check
// (options.layer and options.head both required). Without: every (layer,
// head) (or the one given) enclosed to options.relative_gap, one line each,
//   "layer l, head h: min BOS in [lo, hi]  [CERTIFIED] ...",
// sharing one budget equally; the verdict ENCLOSED when every head's
// enclosure reached the gap, else NOT ENCLOSED (each line still certified).
// JSON: {"heads": [{"layer", "head", "min" (to_json of the bound), "max"}],
// "verdict", ...}; the witness of the first head whose enclosure did not
// reach the gap (else of the last head), or of the claim.
template <class T>
BosReport deep_bos_report(const Model<T>& model, const Task& task, BosMode mode,
                          const std::optional<Claim>& claimed, const DeepBosOptions& options);

// "min BOS in [1 - D_hi, 1 - D_lo]" and "max BOS in [lo, hi]", rounded
// outward (table cells; "-inf" / "inf" only for an infinite end, which the
// deep bound clamps to a_i0's range where it has one).
std::string min_bos_text(const BosBound& bound, int digits = 6);
std::string max_bos_text(const MaxBosBound& bound, int digits = 6);

}  // namespace sinkcert::theorems::bounds
