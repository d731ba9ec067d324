// SPDX-License-Identifier: MIT
#include "search/row1_deficit.h"

#include <cmath>
#include <stdexcept>

namespace sinkcert::search {

GaussLegendre gauss_legendre(int nodes) {
  if (nodes < 1) throw std::invalid_argument("gauss_legendre needs at least one node");
  GaussLegendre g;
  g.x.resize(static_cast<std::size_t>(nodes));
  g.w.resize(static_cast<std::size_t>(nodes));
  const double pi = std::acos(-1.0);
  for (int i = 0; i < nodes; ++i) {
    // Newton on P_n from the Chebyshev guess cos(pi (i + 3/4) / (n + 1/2))
    double x = std::cos(pi * (i + 0.75) / (nodes + 0.5)), dp = 1;
    for (int it = 0; it < 100; ++it) {
      // P_0 = 1, P_1 = x, (m+1) P_{m+1} = (2m+1) x P_m - m P_{m-1}
      double p0 = 1, p1 = x;
      for (int m = 1; m < nodes; ++m) {
        const double p2 = ((2 * m + 1) * x * p1 - m * p0) / (m + 1);
        p0 = p1;
        p1 = p2;
      }
      if (nodes == 1) p0 = 1, p1 = x;
      // P_n' = n (x P_n - P_{n-1}) / (x^2 - 1)
      dp = nodes * (x * p1 - p0) / (x * x - 1);
      const double step = p1 / dp;
      x -= step;
      if (std::abs(step) < 1e-16) break;
    }
    g.x[static_cast<std::size_t>(i)] = x;
    // w = 2 / ((1 - x^2) P_n'(x)^2)
    g.w[static_cast<std::size_t>(i)] = 2 / ((1 - x * x) * dp * dp);
  }
  return g;
}

Row1Quadrature row1_quadrature(int k, int nodes) {
  if (k < 0 || k > kRow1QuadratureMaxDim) {
    throw std::invalid_argument("row1_quadrature: tensor rules cover 0 to " +
                                std::to_string(kRow1QuadratureMaxDim) +
                                " content coordinates, got " + std::to_string(k));
  }
  const GaussLegendre g = gauss_legendre(nodes);
  long count = 1;
  for (int d = 0; d < k; ++d) count *= nodes;
  Row1Quadrature r;
  r.k = k;
  r.content.resize(count, k);
  r.weight.resize(static_cast<std::size_t>(count));
  for (long j = 0; j < count; ++j) {
    // node j's index along axis d: digit d of j in base `nodes`
    long rest = j;
    double w = 1;
    for (int d = 0; d < k; ++d) {
      const auto idx = static_cast<std::size_t>(rest % nodes);
      rest /= nodes;
      r.content(j, d) = g.x[idx];
      // the uniform mean: each axis' weights / 2
      w *= g.w[idx] / 2;
    }
    r.weight[static_cast<std::size_t>(j)] = w;
  }
  return r;
}

double row1_mean_deficit(const Matrix<double>& A, const Row1Quadrature& rule,
                         Matrix<double>* grad) {
  const int n = static_cast<int>(A.rows());
  if (A.cols() != n || n != rule.k + 3) {
    throw std::invalid_argument("row1_mean_deficit: A must be n x n with n = k + 3");
  }
  if (grad) *grad = Matrix<double>::Zero(n, n);
  Vector<double> x = Vector<double>::Zero(n), xm = x;
  std::vector<double> c(static_cast<std::size_t>(rule.k));
  double mean = 0;
  for (Eigen::Index j = 0; j < rule.content.rows(); ++j) {
    for (int d = 0; d < rule.k; ++d) c[static_cast<std::size_t>(d)] = rule.content(j, d);
    const double q = row1_logit(A, c);
    // sigma(q) = 1 / (1 + e^-q)
    const double s = 1 / (1 + std::exp(-q));
    const double w = rule.weight[static_cast<std::size_t>(j)];
    mean += w * s;
    if (!grad) continue;
    // x = x^o(c), xm = x - e_0 (x_0 = 0, so xm_0 = -1)
    x.setZero();
    x(n - 1) = 1;
    for (int d = 0; d < rule.k; ++d) x(2 + d) = c[static_cast<std::size_t>(d)];
    xm = x;
    xm(0) -= 1;
    // dD_Q/dA += w sigma (1 - sigma) x (x - e_0)^T
    grad->noalias() += (w * s * (1 - s)) * x * xm.transpose();
  }
  return mean;
}

Row1DeficitFloorCost::Row1DeficitFloorCost(const Row1Quadrature* rule, double floor, double rho,
                                           int n)
    : rule_(rule), floor_(floor), rho_(rho), n_(n) {
  set_num_residuals(1);
  mutable_parameter_block_sizes()->push_back(n * n);
}

bool Row1DeficitFloorCost::Evaluate(double const* const* p, double* r, double** J) const {
  const int n = n_;
  Matrix<double> A(n, n);
  // row-major block (src/parameter_layout.h)
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) A(a, b) = p[0][a * n + b];
  const bool jacobian = J && J[0];
  Matrix<double> grad;
  const double mean = row1_mean_deficit(A, *rule_, jacobian ? &grad : nullptr);
  const bool active = mean < floor_;
  // r = rho max(0, floor - D_Q)
  r[0] = active ? rho_ * (floor_ - mean) : 0.0;
  if (jacobian) {
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) J[0][a * n + b] = active ? -rho_ * grad(a, b) : 0.0;
  }
  return true;
}

}  // namespace sinkcert::search
