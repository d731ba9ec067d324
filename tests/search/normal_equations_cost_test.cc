// SPDX-License-Identifier: MIT
//
// The compressed least-squares block against the dense one: G = J^T J,
// g = J^T r and S = r^T r from the structured sums equal those formed from
// the row Jacobians (row_residual_jacobian, itself tested against Jets in
// minimax_test), and the compressed residuals r' and Jacobian J' reproduce
// them: J'^T J' = G, J'^T r' = g, |r'|^2 = S, with full and with deficient
// rank, and with one parameter block held constant.
#include "search/normal_equations_cost.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "search/minimax.h"
#include "src/forward.h"
#include "tests/test_util.h"

namespace sinkcert::search {
namespace {

using testing::random_model;

// Relative agreement of sums of O(T n) products formed in different orders
// (GEMM blocks against row-by-row accumulation), and of the products of a
// pivoted Cholesky factor: a few hundred ulps of the largest entry.
constexpr double kAgreement = 1e-11;

struct Problem {
  Model<double> model;
  std::vector<Matrix<double>> X, Y;
  std::vector<std::vector<double>> w;  // per (input, row): n weights
  std::vector<std::pair<int, Matrix<double>>> content;
  std::vector<ResidualRow> rows;
  std::vector<double> A, M;
};

// `inputs` random vertex inputs of the task, Lawson-like weights in [0.5, 5].
Problem make_problem(const Task& task, AttentionKind kind, int inputs, std::uint64_t seed) {
  Problem pr;
  pr.model = random_model(task.n, kind, 0.5, seed);
  std::mt19937_64 eng(seed + 1);
  std::uniform_real_distribution<double> weight(0.5, 5.0);
  for (int s = 0; s < inputs; ++s) {
    const int j = 1 + static_cast<int>(eng() % (task.L - 1));
    Matrix<double> C(task.L - 1, task.content_dim());
    for (int k = 0; k < C.rows(); ++k)
      for (int c = 0; c < C.cols(); ++c) C(k, c) = (eng() >> 63) ? 1.0 : -1.0;
    pr.content.emplace_back(j, C);
    pr.X.push_back(make_input<double>(task, j, C));
    pr.Y.push_back(make_target(pr.X.back(), j, TargetKind::kPlain));
  }
  for (int s = 0; s < inputs; ++s)
    for (int i = 0; i < task.L; ++i) {
      std::vector<double> w(task.n);
      for (double& v : w) v = weight(eng);
      pr.w.push_back(w);
    }
  for (int s = 0; s < inputs; ++s)
    for (int i = 0; i < task.L; ++i)
      pr.rows.push_back({&pr.X[s], &pr.Y[s], i, pr.w[s * task.L + i].data()});
  pr.A.resize(task.n * task.n);
  pr.M.resize(task.n * task.n);
  pack_row_major(pr.model.layers[0][0].A, pr.A.data());
  pack_row_major(pr.model.layers[0][0].M, pr.M.data());
  return pr;
}

// The dense J (rows (input, i, d), columns A then M) and r, weighted.
void dense(const Problem& pr, const Task& task, Matrix<double>* J, Vector<double>* r) {
  const int n = task.n, rows = static_cast<int>(pr.rows.size()) * n;
  J->resize(rows, 2 * n * n);
  r->resize(rows);
  int at = 0;
  for (std::size_t s = 0; s < pr.content.size(); ++s) {
    for (int i = 0; i < task.L; ++i) {
      const RowJacobian rj =
          row_residual_jacobian(pr.model, task, pr.content[s].first, pr.content[s].second, i);
      for (int d = 0; d < n; ++d, ++at) {
        const double sw = std::sqrt(pr.w[s * task.L + i][d]);
        (*r)(at) = sw * rj.residuals(d);
        J->row(at) = sw * rj.jacobian.row(d);
      }
    }
  }
}

double max_rel(const Matrix<double>& a, const Matrix<double>& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1e-300, b.cwiseAbs().maxCoeff());
}

// Evaluates the cost with Jacobians for the blocks in `free` and returns
// (J'^T J', J'^T r', |r'|^2) over those blocks.
NormalEquations compressed(const Problem& pr, const Task& task, AttentionKind kind, bool with_a,
                           bool with_m) {
  const int n = task.n, n2 = n * n, rows = 2 * n2 + 1;
  NormalEquationsCost cost(pr.rows, kind, n);
  const double* params[2] = {pr.A.data(), pr.M.data()};
  std::vector<double> r(rows), ja(rows * n2), jm(rows * n2);
  double* jac[2] = {with_a ? ja.data() : nullptr, with_m ? jm.data() : nullptr};
  REQUIRE(cost.Evaluate(params, r.data(), jac));
  Matrix<double> Jp(rows, (with_a ? n2 : 0) + (with_m ? n2 : 0));
  for (int k = 0; k < rows; ++k) {
    int c = 0;
    if (with_a)
      for (int e = 0; e < n2; ++e) Jp(k, c++) = ja[k * n2 + e];
    if (with_m)
      for (int e = 0; e < n2; ++e) Jp(k, c++) = jm[k * n2 + e];
  }
  const Eigen::Map<const Vector<double>> rp(r.data(), rows);
  return {Jp.transpose() * Jp, Jp.transpose() * rp, rp.squaredNorm()};
}

TEST_CASE("normal equations: structured sums equal the dense J^T J, J^T r, r^T r") {
  const Task task{5, 6, TriggerRange::kPaper};
  for (AttentionKind kind : {AttentionKind::kSoftmax, AttentionKind::kSigmoid}) {
    CAPTURE(to_string(kind));
    // 12 inputs x 6 rows x 5 = 360 residual rows > 2 n^2 = 50: full rank
    const Problem pr = make_problem(task, kind, 12, 7);
    Matrix<double> J;
    Vector<double> r;
    dense(pr, task, &J, &r);
    const NormalEquations ne =
        normal_equations(kind, pr.A.data(), pr.M.data(), task.n, pr.rows, true, true);
    CHECK(max_rel(ne.G, J.transpose() * J) <= kAgreement);
    CHECK(max_rel(ne.g, J.transpose() * r) <= kAgreement);
    CHECK(testing::near(ne.S, r.squaredNorm(), kAgreement));
    // M alone: the M-M block and g_M
    const int n2 = task.n * task.n;
    const NormalEquations nm =
        normal_equations(kind, pr.A.data(), pr.M.data(), task.n, pr.rows, false, true);
    CHECK(max_rel(nm.G, (J.transpose() * J).bottomRightCorner(n2, n2)) <= kAgreement);
    CHECK(max_rel(nm.g, (J.transpose() * r).tail(n2)) <= kAgreement);
  }
}

TEST_CASE("normal equations cost: J'^T J' = G, J'^T r' = g, |r'|^2 = S") {
  const Task task{5, 6, TriggerRange::kPaper};
  const AttentionKind kind = AttentionKind::kSoftmax;
  const int n2 = task.n * task.n;
  // 12 inputs: full rank; 1 input: 30 rows < 50 parameters, rank deficient
  for (int inputs : {12, 1}) {
    CAPTURE(inputs);
    const Problem pr = make_problem(task, kind, inputs, 11);
    Matrix<double> J;
    Vector<double> r;
    dense(pr, task, &J, &r);
    const Matrix<double> G = J.transpose() * J;
    const Vector<double> g = J.transpose() * r;
    const NormalEquations c = compressed(pr, task, kind, true, true);
    CHECK(max_rel(c.G, G) <= kAgreement);
    CHECK(max_rel(c.g, g) <= kAgreement);
    CHECK(testing::near(c.S, r.squaredNorm(), kAgreement));
    // A held constant (Ceres asks for M's Jacobian only)
    const NormalEquations cm = compressed(pr, task, kind, false, true);
    CHECK(max_rel(cm.G, G.bottomRightCorner(n2, n2)) <= kAgreement);
    CHECK(max_rel(cm.g, g.tail(n2)) <= kAgreement);
    CHECK(testing::near(cm.S, r.squaredNorm(), kAgreement));
    // a wrong factor is told apart: the same check against G with one entry
    // of its A-M block changed fails
    Matrix<double> wrong = G;
    wrong(0, n2) += 1e-3 * G.cwiseAbs().maxCoeff();
    wrong(n2, 0) = wrong(0, n2);
    CHECK(max_rel(c.G, wrong) > kAgreement);
  }
  // a trial point (no Jacobian): r' = (0, ..., 0, sqrt(S))
  const Problem pr = make_problem(task, kind, 3, 5);
  Matrix<double> J;
  Vector<double> r;
  dense(pr, task, &J, &r);
  NormalEquationsCost cost(pr.rows, kind, task.n);
  const double* params[2] = {pr.A.data(), pr.M.data()};
  std::vector<double> rp(2 * n2 + 1);
  REQUIRE(cost.Evaluate(params, rp.data(), nullptr));
  for (int k = 0; k < 2 * n2; ++k) CHECK(rp[k] == 0.0);
  CHECK(testing::near(rp[2 * n2] * rp[2 * n2], r.squaredNorm(), kAgreement));
}

}  // namespace
}  // namespace sinkcert::search
