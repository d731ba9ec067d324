// SPDX-License-Identifier: MIT
//
// The l_inf surrogate of the minimax: Lawson's iteratively reweighted least
// squares.
//
// To minimize max_k |r_k(theta)| the solver minimizes instead
//   F_w(theta) = sum_k w_k r_k(theta)^2
// and between solves updates the weights (Lawson 1961):
//   w_k <- w_k |r_k| / max_m (w_m |r_m|)
// For linear r the weighted least-squares solutions converge to the minimax
// (Chebyshev) solution and max_k |r_k| to its value; the weights of the
// residuals not on the extremal set decay geometrically. Why Lawson rather
// than a p-norm continuation or an epigraph form: it keeps the objective a
// sum of squares, so every solve stays a Gauss-Newton / Levenberg-Marquardt
// problem (the loss must fall geometrically per iteration,
// which first-order methods on a smoothed max cannot do); residuals enter
// and leave the extremal set without a penalty parameter to tune; and new
// adversarial residuals are simply appended with weight kNewWeight, the
// largest weight, so the adversary's witnesses always count at once.
// Normalizing by the largest w|r| (not by the sum, as in Lawson's paper)
// changes only the scale of F_w, never its minimizer, and keeps the weights
// in (0, 1] however many residuals there are.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace sinkcert::search {

// Weight a residual receives when it enters the active set.
constexpr double kNewWeight = 1.0;
// Weights are kept at or above this floor so that a residual dropped from
// the extremal set can return to it if the solution moves (1e-12 keeps
// sqrt(w) = 1e-6 far above double's underflow while making the residual
// irrelevant to F_w).
constexpr double kMinLawsonWeight = 1e-12;

// One Lawson step on weights w given the residuals r (same length). Returns
// max_k |r_k|.
inline double lawson_update(std::vector<double>& w, const std::vector<double>& r) {
  double max_r = 0, max_wr = 0;
  for (std::size_t k = 0; k < r.size(); ++k) {
    max_r = std::max(max_r, std::abs(r[k]));
    max_wr = std::max(max_wr, w[k] * std::abs(r[k]));
  }
  if (max_wr <= 0) return max_r;
  for (std::size_t k = 0; k < r.size(); ++k) {
    // w_k <- w_k |r_k| / max_m (w_m |r_m|)
    w[k] = std::max(kMinLawsonWeight, w[k] * std::abs(r[k]) / max_wr);
  }
  return max_r;
}

}  // namespace sinkcert::search
