// SPDX-License-Identifier: MIT
//
// Bounds on a quadratic form over the box e in [-1, 1]^V, for the parts of
// the symbolic forms (symbolic_form.h) that are products of two forms: the
// second-order expansion's quadratic and cubic coefficients
// (second_order_row.h), and a dot product of two forms that share symbols
// (SymbolicArithmetic::dot, a query row's score against its own key).
// The split at the diagonal,
//   e^T X e = sum_a X_aa / 2 + sum_a (X_aa / 2)(2 e_a^2 - 1) + sum_{a<b} (X_ab + X_ba) e_a e_b,
// bounds the last two sums by the absolute values of their coefficients
// (2 e_a^2 - 1 and e_a e_b lie in [-1, 1]), after X_ab and X_ba have met:
// where two forms share symbols, their products' antisymmetric parts cancel
// there, which a bound per product (norm_a norm_b) counts in full.
#pragma once

#include <vector>

namespace sinkcert::theorems::bounds {

// A quadratic form over the box e in [-1, 1]^V, split at its diagonal:
//   e^T X e = shift + rest,   shift = sum_a X_aa / 2,
//   rest = sum_a (X_aa / 2)(2 e_a^2 - 1) + sum_{a<b} (X_ab + X_ba) e_a e_b,
//   |rest| <= sum_a |X_aa| / 2 + sum_{a<b} |X_ab + X_ba| = bound
// (2 e_a^2 - 1 and e_a e_b lie in [-1, 1]). bound is raised for its own
// rounding (a naive sum of N nonnegative doubles is within (N - 1) u of its
// value, each |X_ab + X_ba| within u: (V^2 + 2) 2u); shift is the computed
// sum, within shift_error of sum_a X_aa / 2 (a naive sum of V halves:
// (V + 1) u sum_a |X_aa| / 2, raised).
struct DiagonalSplit {
  double bound = 0.0, shift = 0.0, shift_error = 0.0;
};
// X row-major V x V.
DiagonalSplit diagonal_split(const std::vector<double>& X, int V);

// The quadratic and cubic parts at once, per vertex of the vertex symbols:
// with lambda_m = e_m for the symbols m of Cs (C_m, V x V each),
//   e^T Qd e + sum_m e_m e^T C_m e = e^T B(lambda) e,  B(lambda) = Qd + sum_m lambda_m C_m,
// whose diagonal split's shift is affine in lambda (sum_a Qd_aa / 2 + sum_m
// lambda_m sum_a C_m,aa / 2: the caller moves it into the form) and whose
// bound is a sum of absolute values of affine functions of lambda, convex,
// so at most its largest value at a vertex of [-1, 1]^M. The vertices are
// visited in Gray-code order, B updated by +-2 C_m; each entry then holds
// the exact entry up to at most 2^M + M + 1 roundings of sums of magnitude
// at most S_ab = |Qd_ab| + sum_m |C_m,ab| (first order; raised), and the
// bound is 1-Lipschitz in sum_ab |B_ab| changes, so it is raised by
// 2 (2^M + M + 2) u sum_ab S_ab. Qd and each C_m are row-major V x V.
// So for every e in [-1, 1]^V (e_m the symbol of C_m, as the caller maps them)
//   |e^T Qd e + sum_m e_m e^T C_m e - sum_a Qd_aa / 2 - sum_m e_m sum_a C_m,aa / 2|
//     <= the returned value.
double vertex_split_bound(const std::vector<double>& Qd, const std::vector<std::vector<double>>& Cs,
                          int V);

}  // namespace sinkcert::theorems::bounds
