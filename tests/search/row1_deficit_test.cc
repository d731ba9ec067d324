// SPDX-License-Identifier: MIT
#include "search/row1_deficit.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "search/minimax.h"
#include "src/model.h"
#include "src/task.h"
#include "src/weight_file.h"
#include "tests/test_util.h"

namespace sinkcert::search {
namespace {

using testing::random_scores;

// Gauss-Legendre in double: nodes and weights to ~1e-15, so a rule of m
// nodes integrates x^p (p < 2m) to ~1e-14.
constexpr double kRuleTolerance = 1e-13;
// Central differences of the mean deficit with step h: truncation ~h^2
// |D'''| (|D'''| <= 1 here) plus rounding ~1e-16 / h; with h = 1e-5,
// ~1e-10.
constexpr double kDifferenceStep = 1e-5;
constexpr double kDifferenceTolerance = 1e-8;

TEST_CASE("Gauss-Legendre integrates polynomials of degree < 2m exactly") {
  for (int m : {1, 2, 5, 16}) {
    const GaussLegendre g = gauss_legendre(m);
    for (int p = 0; p < 2 * m; ++p) {
      double sum = 0;
      for (int i = 0; i < m; ++i)
        sum += g.w[static_cast<std::size_t>(i)] * std::pow(g.x[static_cast<std::size_t>(i)], p);
      // int_{-1}^{1} x^p = 2 / (p + 1) for even p, 0 for odd p
      const double exact = p % 2 == 0 ? 2.0 / (p + 1) : 0.0;
      CHECK(std::abs(sum - exact) < kRuleTolerance);
    }
  }
  // degree 2m is not exact: the rule is not a tautology
  const GaussLegendre g = gauss_legendre(2);
  double sum = 0;
  for (int i = 0; i < 2; ++i)
    sum += g.w[static_cast<std::size_t>(i)] * std::pow(g.x[static_cast<std::size_t>(i)], 4);
  CHECK(std::abs(sum - 2.0 / 5) > 1e-3);
}

TEST_CASE("a content-independent row-1 logit gives the deficit sigma(s) exactly") {
  // A = s e_{n-1} e_{n-1}^T - 3 e_{n-1} e_0^T: q = s + 3 at every content
  const int n = 5;
  Matrix<double> A = Matrix<double>::Zero(n, n);
  A(n - 1, n - 1) = -0.7;
  A(n - 1, 0) = -3.0;
  A(1, 0) = 5.0;  // row 1 of a trigger query: not read
  const Row1Quadrature rule = row1_quadrature(n - 3);
  CHECK(std::abs(row1_mean_deficit(A, rule) - 1 / (1 + std::exp(-(2.3)))) < kRuleTolerance);
}

TEST_CASE("the mean deficit's derivative matches central differences") {
  const int n = 5;
  const Matrix<double> A = random_scores(n, 0.8, 3);
  const Row1Quadrature rule = row1_quadrature(n - 3);
  Matrix<double> grad;
  row1_mean_deficit(A, rule, &grad);
  bool some_nonzero = false;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      Matrix<double> Ap = A, Am = A;
      Ap(a, b) += kDifferenceStep;
      Am(a, b) -= kDifferenceStep;
      const double fd =
          (row1_mean_deficit(Ap, rule) - row1_mean_deficit(Am, rule)) / (2 * kDifferenceStep);
      CHECK(std::abs(grad(a, b) - fd) < kDifferenceTolerance);
      some_nonzero |= std::abs(fd) > 1e-3;
    }
  }
  CHECK(some_nonzero);
  // rows and columns 1 (the trigger flag) and column 0 of rows < 2 never enter row 1
  CHECK(grad(1, 0) == 0.0);
  CHECK(grad(0, 4) == 0.0);
}

TEST_CASE("the floor's residual is rho (floor - D_Q) when violated, 0 otherwise") {
  const int n = 5;
  const Matrix<double> A = random_scores(n, 0.8, 5);
  const Row1Quadrature rule = row1_quadrature(n - 3);
  Matrix<double> grad;
  const double D = row1_mean_deficit(A, rule, &grad);
  std::vector<double> p(n * n), J(n * n);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) p[static_cast<std::size_t>(a * n + b)] = A(a, b);
  const double* params[1] = {p.data()};
  double* jac[1] = {J.data()};
  double r = -1;
  Row1DeficitFloorCost above(&rule, D + 0.1, 7.0, n);
  above.Evaluate(params, &r, jac);
  CHECK(std::abs(r - 0.7) < 1e-12);
  CHECK(std::abs(J[static_cast<std::size_t>(n * (n - 1) + 2)] + 7.0 * grad(n - 1, 2)) < 1e-15);
  Row1DeficitFloorCost below(&rule, D - 0.1, 7.0, n);
  below.Evaluate(params, &r, jac);
  CHECK(r == 0.0);
  CHECK(J[static_cast<std::size_t>(n * (n - 1) + 2)] == 0.0);
}

TEST_CASE("row1_quadrature refuses more than kRow1QuadratureMaxDim coordinates") {
  CHECK_THROWS_AS(row1_quadrature(kRow1QuadratureMaxDim + 1), std::invalid_argument);
  CHECK(row1_quadrature(2).content.rows() == kRow1QuadratureNodes * kRow1QuadratureNodes);
}

TEST_CASE("the minimax with a row-1 floor returns a model meeting it") {
  const Task task{5, 4, TriggerRange::kPaper};
  // start below the floor: row 1's logit -2 at every content (D ~ 0.12)
  Model<double> init = single_head_model<double>(
      AttentionKind::kSoftmax, Matrix<double>::Zero(5, 5), Matrix<double>::Identity(5, 5) * 0.7);
  init.layers[0][0].A(4, 4) = -2.0;
  const Row1Quadrature rule = row1_quadrature(2);
  const double floor = 0.3;
  REQUIRE(row1_mean_deficit(init.layers[0][0].A, rule) < floor);
  MinimaxOptions o;
  o.surrogate = Surrogate::kLawson;
  o.fit_m_first = false;
  o.max_rounds = 10;
  o.row1_deficit_floor = floor;
  // a violation of 0.1 costs a residual of 1e3: the first step repairs it
  o.initial_penalty = 1e4;
  const MinimaxResult res = minimax(init, task, o);
  REQUIRE(res.feasible);
  CHECK(row1_mean_deficit(res.model.layers[0][0].A, rule) >= floor);
  bool recorded = false;
  for (const MinimaxRecord& r : res.history) recorded |= r.row1_deficit >= floor;
  CHECK(recorded);
  // other kinds are refused
  Model<double> relu = init;
  relu.attention = AttentionKind::kRelu;
  CHECK_THROWS_AS(minimax(relu, task, o), std::invalid_argument);
}

}  // namespace
}  // namespace sinkcert::search
