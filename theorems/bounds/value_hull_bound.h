// SPDX-License-Identifier: MIT
//
// A certified upper bound on one trigger's worst case from where an
// attention output can lie at all, at the cost of a few forward passes.
//
// For the normalizations whose weights are >= 0 and sum to 1 (softmax) or
// to at most 1 (softmax-off-by-one; softpick, whose row is 0 when every
// score is 0; gated softmax, whose gate in [0, 1] scales the sum toward 0),
// a head's output at row i is, coordinate by coordinate,
//   o_i = M sum_(k<=i) a_ik x_k  in  hull{ (M x_k) : k <= i }          (sum a = 1)
//                                in  hull({0} u { (M x_k) : k <= i })  (sum a <= 1).
// Over the whole content box of trigger j, every layer's input is enclosed
// as x^(l)_k = x_k + r^(l)_k, r^(0) = 0, r^(l+1)_k = r^(l)_k + sum_h o^(h,l)_k
// (each head's hull taken over the enclosures of M x^(l)_k), and
//   single layer  f_i - y_i = r^(1)_i - ybar_i
//   residual      f_i - y_i = x^(last)_i - (x_i + ybar_i) = r^(last)_i - ybar_i,
// ybar_i = 0 for i != j and (1/j) sum_(k=1..j) x_k at i = j (the residual
// target's x_i cancels exactly instead of entering twice). So
//   E_j <= max_(i,d) |r_(i,d) - ybar_(i,d)|  over the enclosures.
// Cost: O(layers heads L n^2) interval operations per trigger (on one
// layer, whose values depend on the token's kind alone, O(heads n^2) once
// and O(heads n) per trigger: its rows fall in four groups by the kinds
// they see), against the
// first pass's L^3 n^2: the worst-case driver (worst_case_search.h) caps
// every trigger's boxes with it, so a trigger the first pass does not reach
// before the deadline still gets a finite upper end.
// Other normalizations (relu, relu-count-all, sigmoid: weights not a
// sub-convex combination) and a NaN anywhere give +inf.
#pragma once

#include <vector>

#include "src/model.h"
#include "src/scalar_traits.h"
#include "src/task.h"

namespace sinkcert::theorems::bounds {

// Whether value_hull_bound applies to the normalization (else it is +inf).
bool value_hull_applies(AttentionKind attention);

// The bound above, rounded up, at the current MPFR precision (the model's
// enclosure is that of the caller's precision).
Mpfr value_hull_bound(const Model<Mpfi>& model, const Task& task, int trigger);
// The same for each trigger of the list (one layer: each head's values
// computed once for all of them).
std::vector<Mpfr> value_hull_bounds(const Model<Mpfi>& model, const Task& task,
                                    const std::vector<int>& triggers);

}  // namespace sinkcert::theorems::bounds
