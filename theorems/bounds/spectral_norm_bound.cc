// SPDX-License-Identifier: MIT
//
// The certified spectral norm of spectral_norm_bound.h: Eigen's singular
// value raised by a margin, then s^2 I - W W^T factored as L D L^T in
// interval arithmetic, every pivot above 0.
#include "theorems/bounds/spectral_norm_bound.h"

#include <Eigen/SVD>
#include <cmath>
#include <limits>
#include <vector>

#include "src/interval.h"

namespace sinkcert::theorems::bounds {

namespace {

// Relative margin of s over Eigen's singular value: the smallest eigenvalue
// of s^2 I - G is then about 2^-19 s^2, while double's error in the
// singular value (JacobiSVD, relative a few units of 2^-53 times the
// dimension) and the factorization's interval widths (about n 2^-53 s^2 in
// DoubleInterval at these sizes) are below 2^-40 s^2; so the check
// succeeds, and the bound is looser than ||W||_2 by 2^-20 relative only.
constexpr double kMargin = 0x1p-20;

// s >= ||W||_2 when s^2 I - W W^T (or W^T W) factors with positive pivots
// in T's interval arithmetic.
template <class T>
bool certifies(const Eigen::MatrixXd& w, double s) {
  const bool rows = w.rows() <= w.cols();
  const int k = static_cast<int>(rows ? w.rows() : w.cols());
  const int len = static_cast<int>(rows ? w.cols() : w.rows());
  const auto entry = [&](int i, int l) { return rows ? w(i, l) : w(l, i); };
  Matrix<T> m(k, k);
  const T s2 = T(s) * T(s);
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j <= i; ++j) {
      // G_ij = sum_l W_il W_jl
      T g(0);
      for (int l = 0; l < len; ++l) g += T(entry(i, l)) * T(entry(j, l));
      // M = s^2 I - G
      m(i, j) = i == j ? T(s2 - g) : T(-g);
    }
  }
  return certainly_positive_definite(m);
}

}  // namespace

template <class T>
bool certainly_positive_definite(const Matrix<T>& m) {
  const int k = static_cast<int>(m.rows());
  Matrix<T> l = Matrix<T>::Constant(k, k, T(0));
  std::vector<T> d(k, T(0));
  for (int i = 0; i < k; ++i) {
    // D_i = M_ii - sum_(k<i) L_ik^2 D_k
    T di = m(i, i);
    for (int c = 0; c < i; ++c) di -= l(i, c) * l(i, c) * d[c];
    if (!certainly_less(T(0), di)) return false;
    d[i] = di;
    for (int j = i + 1; j < k; ++j) {
      // L_ji = (M_ji - sum_(k<i) L_jk L_ik D_k) / D_i
      T v = m(j, i);
      for (int c = 0; c < i; ++c) v -= l(j, c) * l(i, c) * d[c];
      l(j, i) = v / di;
    }
  }
  return true;
}

double spectral_norm_upper(const Eigen::MatrixXd& w) {
  if (w.size() == 0) return 0;
  const double big = w.cwiseAbs().maxCoeff();
  if (big == 0) return 0;
  if (!std::isfinite(big)) return std::numeric_limits<double>::infinity();
  // W scaled by 2^-e (exact), its largest entry in [1/2, 1)
  int e = 0;
  std::frexp(big, &e);
  const Eigen::MatrixXd ws = w * std::ldexp(1.0, -e);
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(ws);
  const double s = svd.singularValues()(0) * (1 + kMargin);
  bool ok = certifies<DoubleInterval>(ws, s);
  if (!ok) {
    const PrecisionScope bits(128);
    ok = certifies<Mpfi>(ws, s);
  }
  if (ok) {
    // ||W||_2 = 2^e ||W'||_2 < 2^e s (exact unless it overflows to inf)
    return std::ldexp(s, e);
  }
  return std::numeric_limits<double>::infinity();
}

template bool certainly_positive_definite(const Matrix<DoubleInterval>&);
template bool certainly_positive_definite(const Matrix<Mpfi>&);
template bool certainly_positive_definite(const Matrix<Rational>&);

}  // namespace sinkcert::theorems::bounds
