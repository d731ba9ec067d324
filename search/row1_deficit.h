// SPDX-License-Identifier: MIT
//
// Row 1's mean BOS deficit under uniform content (docs/methods.md, "The
// row-1 frontier"), as the minimax's constraint. Row 1 reads BOS and x_1
// only; with x_1 = x^o(c) = e_{n-1} + sum_d c_d e_{2+d} (an ordinary token,
// c in [-1, 1]^k, k = n - 3) its scores are s_10 = x^T A e_0 and
// s_11 = x^T A x, so
//   alpha(c) = 1 - a_10 = sigma(q(c)),  q(c) = x^T A x - x^T A e_0,
//   sigma(q) = 1 / (1 + e^-q),
// and the mean deficit is D(A) = E_c alpha(c) = 2^-k int_{[-1,1]^k} alpha.
//
// Quadrature (NUMERIC): tensor Gauss-Legendre with kRow1QuadratureNodes
// nodes per axis (k <= kRow1QuadratureMaxDim), weights normalized to sum 1:
//   D_Q(A) = sum_j w_j sigma(q(c_j)).
// Its derivative, written once beside it: dq/dA_ab = x_a x_b - x_a [b = 0],
// sigma' = sigma (1 - sigma), so
//   dD_Q/dA = sum_j w_j sigma_j (1 - sigma_j) x_j (x_j - e_0)^T.
// alpha is analytic in c (q is a quadratic), so the rule converges
// geometrically; its error is measured against the CERTIFIED enclosure of
// the study (theorems/studies/row1_below_family.h), never assumed.
//
// Constraint (the minimax's penalty residual, search/minimax.h):
//   r = rho * max(0, floor - D_Q(A)),  dr/dA = -rho dD_Q/dA where active.
#pragma once

#include <ceres/ceres.h>

#include <vector>

#include "src/scalar_traits.h"

namespace sinkcert::search {

// Gauss-Legendre nodes per content axis: with |q| and its c-derivatives of
// order 1 (the models searched), the 16-point rule's error is below 1e-12,
// far below the study's margin (row1_below_family.h).
constexpr int kRow1QuadratureNodes = 16;
// Tensor rules only up to this many content coordinates (16^3 nodes).
constexpr int kRow1QuadratureMaxDim = 3;

// The Gauss-Legendre rule of `nodes` points on [-1, 1], weights summing to
// 2 (Newton on P_nodes, in double: nodes and weights to ~1e-15).
struct GaussLegendre {
  std::vector<double> x, w;
};
GaussLegendre gauss_legendre(int nodes);

// The tensor rule on [-1, 1]^k with weights normalized to sum 1 (the
// uniform mean); content(j, d) is node j's coordinate d.
struct Row1Quadrature {
  int k = 0;
  Matrix<double> content;
  std::vector<double> weight;
};
// Throws std::invalid_argument unless 0 <= k <= kRow1QuadratureMaxDim.
Row1Quadrature row1_quadrature(int k, int nodes = kRow1QuadratureNodes);

// x^o(c) = e_{n-1} + sum_d c_d e_{2+d} and q(c) = x^T A x - x^T A e_0.
template <class T>
T row1_logit(const Matrix<T>& A, const std::vector<T>& c) {
  const int n = static_cast<int>(A.rows());
  // x_0 = x_1 = 0: only a, b >= 2 enter; x_{n-1} = 1, x_{2+d} = c_d
  const auto x = [&](int a) { return a == n - 1 ? T(1) : c[static_cast<std::size_t>(a - 2)]; };
  // q = sum_{a>=2} x_a (sum_{b>=2} A_ab x_b - A_a0)
  T q(0);
  for (int a = 2; a < n; ++a) {
    T row(0);
    for (int b = 2; b < n; ++b) row += A(a, b) * x(b);
    q += x(a) * (row - A(a, 0));
  }
  return q;
}

// D_Q(A) and, when grad is given, dD_Q/dA (n x n; see the top of the file).
// Throws std::invalid_argument unless A is n x n with n = rule.k + 3.
double row1_mean_deficit(const Matrix<double>& A, const Row1Quadrature& rule,
                         Matrix<double>* grad = nullptr);

// The penalty residual rho * max(0, floor - D_Q(A)) on the parameter block
// A (row-major n x n), its Jacobian -rho dD_Q/dA where active, 0 elsewhere.
class Row1DeficitFloorCost : public ceres::CostFunction {
 public:
  Row1DeficitFloorCost(const Row1Quadrature* rule, double floor, double rho, int n);
  bool Evaluate(double const* const* p, double* r, double** J) const override;

 private:
  const Row1Quadrature* rule_;
  double floor_, rho_;
  int n_;
};

}  // namespace sinkcert::search
