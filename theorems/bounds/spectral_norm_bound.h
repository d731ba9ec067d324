// SPDX-License-Identifier: MIT
//
// A certified upper bound on the spectral norm of a matrix of doubles,
//   ||W||_2 = max over ||x||_2 = 1 of ||W x||_2 = sqrt(lambda_max(G)),
//   G = W W^T (or W^T W, whichever is smaller; same nonzero eigenvalues).
// s is Eigen's largest singular value raised by a relative margin; then
//   M = s^2 I - G
// is shown positive definite by the factorization M = L D L^T,
//   D_i  = M_ii - sum_(k<i) L_ik^2 D_k,
//   L_ji = (M_ji - sum_(k<i) L_jk L_ik D_k) / D_i     (j > i),
// in outward-rounded interval arithmetic, G's entries enclosed from W's
// (exact) doubles: the exact factorization's values lie inside the computed
// intervals (inclusion), so when every pivot interval lies above 0 the exact
// pivots are positive, M is positive definite (Sylvester), every eigenvalue
// of G is below s^2, and ||W||_2 < s. W is first scaled by a power of two
// (exact) so that its largest entry is near 1, away from double's exponent
// limits. Tried in DoubleInterval, then in MPFI at 128 bits.
#pragma once

#include <Eigen/Core>

#include "src/scalar_traits.h"

namespace sinkcert::theorems::bounds {

// Whether the symmetric matrix whose lower triangle is `m` is positive
// definite, decided by the L D L^T pivots above: true only when every pivot
// is certainly > 0 (an interval above 0; a rational > 0, which decides it
// exactly). T = DoubleInterval, Mpfi or Rational.
template <class T>
bool certainly_positive_definite(const Matrix<T>& m);

// A double s >= ||W||_2, certified as above; +inf when neither arithmetic
// certifies the margin (never seen: the margin is 2^-20, far above
// double's error in the singular value), 0 for a zero or empty matrix.
double spectral_norm_upper(const Eigen::MatrixXd& w);

}  // namespace sinkcert::theorems::bounds
