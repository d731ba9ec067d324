// SPDX-License-Identifier: MIT
#include "theorems/bounds/spectral_norm_bound.h"

#include <doctest/doctest.h>

#include <Eigen/SVD>
#include <cmath>
#include <random>

namespace sinkcert::theorems::bounds {
namespace {

// The bound's excess over the singular value: the margin 2^-20 (source)
// and the rounding of s, with room to spare.
constexpr double kExcess = 0x1p-19;

// s^2 I - W W^T in T, exactly from W's doubles and s.
template <class T>
Matrix<T> shifted_gram(const Eigen::MatrixXd& w, double s) {
  const int k = static_cast<int>(w.rows());
  Matrix<T> m(k, k);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) {
      T g(0);
      for (int l = 0; l < w.cols(); ++l) g += T(w(i, l)) * T(w(j, l));
      m(i, j) = (i == j ? T(s) * T(s) : T(0)) - g;
    }
  return m;
}

Eigen::MatrixXd random_matrix(int rows, int cols, double scale, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  Eigen::MatrixXd w(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) w(i, j) = normal(rng);
  return w;
}

TEST_CASE("positive definiteness: decided exactly in rationals, certified in intervals") {
  Matrix<Rational> pd(2, 2), indefinite(2, 2), singular(2, 2);
  pd << Rational(2), Rational(1), Rational(1), Rational(2);          // eigenvalues 1, 3
  indefinite << Rational(1), Rational(2), Rational(2), Rational(1);  // eigenvalues -1, 3
  singular << Rational(1), Rational(1), Rational(1), Rational(1);    // eigenvalues 0, 2
  CHECK(certainly_positive_definite(pd));
  CHECK_FALSE(certainly_positive_definite(indefinite));
  CHECK_FALSE(certainly_positive_definite(singular));
  const PrecisionScope bits(128);
  CHECK(certainly_positive_definite(Matrix<Mpfi>(pd.cast<Mpfi>())));
  CHECK_FALSE(certainly_positive_definite(Matrix<Mpfi>(indefinite.cast<Mpfi>())));
  CHECK_FALSE(certainly_positive_definite(Matrix<Mpfi>(singular.cast<Mpfi>())));
  Matrix<DoubleInterval> di(2, 2), dn(2, 2);
  di << 2.0, 1.0, 1.0, 2.0;
  dn << 1.0, 2.0, 2.0, 1.0;
  CHECK(certainly_positive_definite(di));
  CHECK_FALSE(certainly_positive_definite(dn));
}

TEST_CASE("the spectral norm bound: closed forms, above the singular value by the margin only") {
  // diagonal: the largest |entry|
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(3, 4);
  d(0, 0) = 0.5;
  d(1, 1) = -2.0;
  d(2, 3) = 1.5;
  const double sd = spectral_norm_upper(d);
  CHECK(sd >= 2.0);
  CHECK(sd <= 2.0 * (1 + kExcess));
  // rank one u v^T: ||u||_2 ||v||_2 = 3 * 5 (u = (1, 2, 2), v = (3, 4))
  Eigen::MatrixXd r(3, 2);
  r << 3, 4, 6, 8, 6, 8;
  CHECK(spectral_norm_upper(r) >= 15.0);
  CHECK(spectral_norm_upper(r) <= 15.0 * (1 + kExcess));
  CHECK(spectral_norm_upper(Eigen::MatrixXd::Zero(2, 3)) == 0.0);
  CHECK(spectral_norm_upper(Eigen::MatrixXd(0, 0)) == 0.0);
  // random shapes (wide, tall, square) and scales near double's limits
  for (const double scale : {1e-200, 1e-3, 1.0, 1e200}) {
    for (const auto& [rows, cols] : {std::pair{5, 29}, std::pair{29, 5}, std::pair{61, 61}}) {
      CAPTURE(scale);
      CAPTURE(rows);
      const Eigen::MatrixXd w = random_matrix(rows, cols, scale, 7u + rows);
      const double sigma = Eigen::JacobiSVD<Eigen::MatrixXd>(w).singularValues()(0);
      const double s = spectral_norm_upper(w);
      CHECK(s >= sigma);
      CHECK(s <= sigma * (1 + kExcess));
    }
  }
}

TEST_CASE("a value below the spectral norm is never certified") {
  // s^2 I - W W^T with s just under ||W||_2 has a negative eigenvalue: the
  // rational factorization finds a pivot <= 0, and so must the intervals
  const Eigen::MatrixXd w = random_matrix(6, 9, 0.3, 3u);
  const double sigma = Eigen::JacobiSVD<Eigen::MatrixXd>(w).singularValues()(0);
  const double below = sigma * (1 - 1e-9);
  CHECK_FALSE(certainly_positive_definite(shifted_gram<Rational>(w, below)));
  CHECK_FALSE(certainly_positive_definite(shifted_gram<DoubleInterval>(w, below)));
  const PrecisionScope bits(128);
  CHECK_FALSE(certainly_positive_definite(shifted_gram<Mpfi>(w, below)));
  // and just above it, exactly in rationals, it is positive definite
  CHECK(certainly_positive_definite(shifted_gram<Rational>(w, sigma * (1 + 1e-9))));
  // a matrix with a non-finite entry gets no finite bound
  Eigen::MatrixXd bad = w;
  bad(2, 3) = std::numeric_limits<double>::infinity();
  CHECK(std::isinf(spectral_norm_upper(bad)));
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
