// SPDX-License-Identifier: MIT
//
// The forward pass of a residual softmax model over a content box in
// symbolic first-order forms (symbolic_form.h), one noise symbol per content
// variable of the box,
//
//   x_{k, 2+c} = centre_m + h_m eps_m   (m = content_variable(k, c), h_m the half-width),
//
// the flags exact constants; per layer and head, at query row i:
//   q_e  = sum_p A_pe x_ip                  (exact in the symbols)
//   s_k  = sum_e q_e x_ke                   (products: the query and the key both vary;
//          the row's own key, s_i = x_i^T A x_i, as one quadratic form:
//          SymbolicArithmetic::dot)
//   a_k  = 1 / (1 + sum_{m != k} exp(s_m - s_k))   (softmax; differences first,
//          so that what all scores of the row share cancels in s_m - s_k;
//          the denominator is >= 1 + sum_{m != k} exp(lo(s_m - s_k)), lo the
//          lower end of the difference's range, which clips its range)
//          off-by-one softmax: the denominator also has exp(-s_k)
//   W_k  = M x_k   (the values: exact in the symbols)
//   o    = W_0 + sum_{k>=1} a_k (W_k - W_0)   (softmax: sum_k a_k = 1, so a
//          value all keys share costs no remainder), or, whichever form
//          is narrower, around the weights' centres abar_k and the middle
//          c of the values' hull, eta = 1 - sum_k abar_k:
//          o = sum_k abar_k W_k + eta c + sum_k (a_k - abar_k)(W_k - c)
//          off-by-one: o = sum_k a_k W_k
//   x   += sum_h o  (residual),   phi += sum_h o,
// Heads of one layer whose attention nearly agrees (the path models' layer
// 0: two heads with the same weights up to score differences of 1e-10 and
// nearly opposite M, so that their outputs, each of order 0.3 and far from
// affine in the content, cancel to 1e-11) are also fused: with a = a^r the
// first head's weights and delta_k = s^h_k - s^r_k = x_i^T (A_h - A_r) x_k,
//   sum_h o^h = sum_k a_k (sum_h M_h x_k) + sum_{h != r} sum_k (a^h_k - a_k) M_h x_k,
//   r_k = a^h_k / a_k = exp(delta_k) / sum_m a_m exp(delta_m),
//   |sum_k (a^h_k - a_k) W^h_{k,d}| <= min(tanh(w / 4) (hi_d - lo_d),
//                                          (e^w - 1) sum_k sup a_k sup |W^h_{k,d} - c_d|)
// (fused_difference_bound) for w >= |delta_m - delta_k| over the box (the
// range of that difference's form), [lo_d, hi_d] the values' hull and c_d
// its middle. The second: r_k in [e^-w, e^w] and sum_k (a^h_k - a_k) c_d = 0
// (both rows sum to 1), narrow where the keys of wide values have small
// weights, as at a sink; sup a_0 <= 1 - sum_{k>=1} inf a_k. The first, at
// every point: with c_d the middle, |W - c_d| <= (hi_d - lo_d) / 2, so the sum
// is at most (hi_d - lo_d) TV, TV = sum_k a_k (r_k - 1)^+ (= half of
// sum_k a_k |r_k - 1|, as sum_k a_k (r_k - 1) = 0). The r_k lie in some
// [l, u] with u <= l e^w, l <= 1 <= u, and sum_k a_k r_k = 1; (r - 1)^+ is
// convex, so below its chord on [l, u], and
//   TV <= (u - 1)(1 - l) / (u - l),
// which grows with u (its derivative is ((1 - l) / (u - l))^2), so u = l e^w;
// with l = e^-x it is (e^(w-x) - 1)(e^x - 1) / (e^w - 1), largest at x = w/2:
//   TV <= (e^(w/2) - 1)^2 / (e^w - 1) = tanh(w / 4),
// reached by two groups of keys at delta = +-w/2 with reference mass
// 1 / (1 + e^(w/2)) on the upper one. tanh(w / 4) <= w / 4, against the
// (e^w - 1) / 2 >= w / 2 of the ratio bound with max_k |W - c_d|, which it
// replaced. A third enclosure expands
// every head's weights to second order around the softmax of its scores'
// centres and sums the heads' first-order terms coefficient by coefficient
// (second_order_row.h): heads whose weight deviations differ but whose
// effects on the output cancel (the path models' layer-1 trigger row) then
// cost only the second-order term. Per term (i, d) the narrowest of the
// per-head, fused and second-order forms is kept (each encloses it).
// phi starting from the mean term -[i = j] (1/j) sum_{k=1..j} x_k (the
// residual's x_i is left out of both sides, so it cannot fail to cancel).
// Each layer's output delta but the last has its remainder turned into a
// fresh symbol before it enters both the stream and phi (symbolic_form.h):
// a later layer that cancels it (o^(l+1) = -o^(l) + ..., as the path
// models' layer 1 does to layer 0's output) cancels the remainder too.
// Symbols: V = (L-1)(n-3) content ones, then (layers - 1) L n fresh ones.
// Every form encloses the quantity it names for every content in the box,
// so the range of phi_{i,d}'s form encloses phi_{i,d} over the box:
//   sup sigma phi_{i,d} <= sigma c + norm + r.
// Cost: O(layers heads L^2 n V) (twice that with fusion) double operations (V = (L-1)(n-3)
// symbols), about a second at n = L = 16 with 2 x 2 heads, against the
// O(L n) reverse passes of the centred forms.
#pragma once

#include <functional>
#include <vector>

#include "src/model.h"
#include "src/task.h"
#include "theorems/bounds/symbolic_form.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::theorems::bounds {

// Whether deep_symbolic_error handles the model's attention kind.
bool symbolic_pass_supported(AttentionKind kind);

// Upper ends of a softmax row's weights a_0..a_K from their ranges:
// min(1, hi_k) for k >= 1, and for BOS also 1 - sum_{k>=1} max(0, lo_k)
// (the weights sum to 1), rounded up.
std::vector<double> weight_upper_ends(const std::vector<SymbolicRange>& weights);

// The fused heads' weight-difference term (header): an upper bound on
// |sum_k (a^h_k - a_k) W_k| for softmax rows a^h, a whose scores differ by
// delta with |delta_m - delta_k| <= w, W_k in values[k] and a_k <=
// a_sup[k]: min(tanh(w / 4) (hi - lo), (e^w - 1) sum_k a_sup[k] sup|W_k - c|),
// [lo, hi] the values' hull and c its middle, rounded up; +inf for a NaN or
// a size mismatch.
double fused_difference_bound(double w, const std::vector<SymbolicRange>& values,
                              const std::vector<double>& a_sup);

// Which pass deep_symbolic_error runs: the sound one; the sound one
// without head fusion or without the second-order expansion (the tests
// compare); or, tests only, a deliberately UNSOUND one that drops the
// products' quadratic remainder (SymbolicArithmetic), the fused heads'
// weight-difference term or the expansion's second-order term E2
// (second_order_row.h), to show that the tests catch a missing term.
enum class SymbolicVariant {
  kSound,
  kNoFusion,
  kNoSecondOrder,
  kNoProductRemainder,
  kNoFusionDifference,
  kNoSecondOrderTerm
};

// phi_{i,d} over the box as forms (L x n, row-major); empty when
// stop() (checked per head row) says the deadline passed.
std::vector<SymbolicForm> deep_symbolic_error(const Model<Mpfi>& model, const Task& task,
                                              const ContentBox& box,
                                              const std::function<bool(int, int)>& stop,
                                              SymbolicVariant variant = SymbolicVariant::kSound);

// The stream x^(layers) over rows 0..rows-1 (rows x n, row-major), trigger
// at row `trigger` (none when trigger >= rows), content variable
// (k - 1)(n - 3) + c of row k in [lo, hi]; empty when stop() says the
// deadline passed. For the deep BOS bound, which reads layer l's input.
std::vector<SymbolicForm> deep_symbolic_stream(const Model<Mpfi>& model, int rows, int trigger,
                                               const std::vector<double>& lo,
                                               const std::vector<double>& hi, int layers,
                                               const std::function<bool(int, int)>& stop);

}  // namespace sinkcert::theorems::bounds
