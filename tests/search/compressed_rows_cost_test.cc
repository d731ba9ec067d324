// SPDX-License-Identifier: MIT
//
// The generic compressed block against the rows it compresses: G, g and S
// equal the sums formed from each row's own residuals and Jacobian (taken
// here by Ceres' automatic differentiation, independently of the block),
// with every block free and with one held constant; J'^T J' = G (up to the
// damping), J'^T r' = g and |r'|^2 = S; one thread and two give the same
// bits; a trial point gives (0, ..., 0, sqrt(S)); and the minimax with the
// block takes the steps of the per-row problem (deep and gated models).
#include "search/compressed_rows_cost.h"

#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "search/minimax.h"
#include "search/recipe_kernel.h"
#include "tests/test_util.h"
#include "tests/thread_rank_group.h"

namespace sinkcert::search {
namespace {

// Sums of a few hundred products formed in different orders (rank updates
// in chunks against row-by-row accumulation), and products of a Cholesky
// factor of a Jacobi-scaled matrix: a few hundred ulps of the largest entry.
constexpr double kAgreement = 1e-11;
// The factor is of G + mu diag(G), mu = 1e-12 (normal_equations_cost.h):
// J'^T J' differs from G by that much of the diagonal, and rounding.
constexpr double kDampedAgreement = 1e-10;

constexpr int kResiduals = 3, kBlockA = 4, kBlockB = 3;

// A nonlinear row t: r_k = sin(a . u_tk) * (b . v_tk) + c_tk, with fixed
// random vectors per row (one row per t).
struct RowFunctor {
  std::vector<double> u, v, c;  // kResiduals x kBlockA, kResiduals x kBlockB, kResiduals
  template <class T>
  bool operator()(const T* a, const T* b, T* r) const {
    for (int k = 0; k < kResiduals; ++k) {
      T au(0), bv(0);
      for (int m = 0; m < kBlockA; ++m) au += a[m] * u[k * kBlockA + m];
      for (int m = 0; m < kBlockB; ++m) bv += b[m] * v[k * kBlockB + m];
      using std::sin;
      r[k] = sin(au) * bv + T(c[k]);
    }
    return true;
  }
};

std::vector<RowFunctor> make_rows(int count, std::uint64_t seed) {
  std::mt19937_64 eng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<RowFunctor> rows(count);
  for (RowFunctor& f : rows) {
    f.u.resize(kResiduals * kBlockA);
    f.v.resize(kResiduals * kBlockB);
    f.c.resize(kResiduals);
    for (double& x : f.u) x = normal(eng);
    for (double& x : f.v) x = normal(eng);
    for (double& x : f.c) x = normal(eng);
  }
  return rows;
}

std::unique_ptr<CompressedRowsCost> make_cost(const std::vector<RowFunctor>& rows, int threads,
                                              const RankGroup* ranks = nullptr,
                                              DenseIsa isa = DenseIsa::kBaseline) {
  std::vector<std::unique_ptr<ceres::CostFunction>> costs;
  for (const RowFunctor& f : rows) {
    costs.emplace_back(new ceres::AutoDiffCostFunction<RowFunctor, kResiduals, kBlockA, kBlockB>(
        new RowFunctor(f)));
  }
  return std::make_unique<CompressedRowsCost>(std::move(costs), threads, ranks, isa);
}

// G, g, S from the rows one by one (free_a, free_b: which blocks' columns).
NormalEquations dense_sums(const std::vector<RowFunctor>& rows, const double* const* p, bool free_a,
                           bool free_b) {
  const int width = (free_a ? kBlockA : 0) + (free_b ? kBlockB : 0);
  NormalEquations ne;
  ne.G.setZero(width, width);
  ne.g.setZero(width);
  for (const RowFunctor& f : rows) {
    ceres::AutoDiffCostFunction<RowFunctor, kResiduals, kBlockA, kBlockB> cost(new RowFunctor(f));
    double r[kResiduals], ja[kResiduals * kBlockA], jb[kResiduals * kBlockB];
    double* jac[2] = {ja, jb};
    REQUIRE(cost.Evaluate(p, r, jac));
    Matrix<double> J(kResiduals, width);
    for (int k = 0; k < kResiduals; ++k) {
      int col = 0;
      if (free_a)
        for (int m = 0; m < kBlockA; ++m) J(k, col++) = ja[k * kBlockA + m];
      if (free_b)
        for (int m = 0; m < kBlockB; ++m) J(k, col++) = jb[k * kBlockB + m];
    }
    const Eigen::Map<const Vector<double>> rv(r, kResiduals);
    ne.G += J.transpose() * J;
    ne.g += J.transpose() * rv;
    ne.S += rv.squaredNorm();
  }
  return ne;
}

double relative_difference(const Matrix<double>& a, const Matrix<double>& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

// 300 rows of 3 residuals: 900 rows, more than one chunk of 256 per part.
constexpr int kRows = 300;

TEST_CASE("compressed rows: G, g, S equal the rows' own sums, one block free or both") {
  const std::vector<RowFunctor> rows = make_rows(kRows, 1);
  std::vector<DenseIsa> isas{DenseIsa::kBaseline};
  if (avx2_kernel_available()) isas.push_back(DenseIsa::kAvx2);
  for (const DenseIsa isa : isas) {
    CAPTURE(to_string(isa));
    const auto cost = make_cost(rows, 2, nullptr, isa);
    CHECK(cost->num_residuals() == kBlockA + kBlockB + 1);
    const std::vector<double> a = {0.3, -0.2, 0.5, 0.1}, b = {1.0, -0.4, 0.7};
    const double* p[2] = {a.data(), b.data()};
    for (const auto& free : {std::vector<bool>{true, true}, std::vector<bool>{false, true},
                             std::vector<bool>{true, false}}) {
      NormalEquations got;
      REQUIRE(cost->normal_equations(p, free, &got));
      const NormalEquations want = dense_sums(rows, p, free[0], free[1]);
      REQUIRE(got.G.rows() == want.G.rows());
      CHECK(relative_difference(got.G, want.G) < kAgreement);
      CHECK(relative_difference(got.g, want.g) < kAgreement);
      CHECK(std::abs(got.S - want.S) < kAgreement * want.S);
      // a wrong sum is told apart: one row left out
      const std::vector<RowFunctor> fewer(rows.begin() + 1, rows.end());
      const NormalEquations other = dense_sums(fewer, p, free[0], free[1]);
      CHECK(relative_difference(got.G, other.G) > 1e3 * kAgreement);
    }
  }
}

TEST_CASE("compressed rows: J'^T J' = G, J'^T r' = g, |r'|^2 = S; threads give the same bits") {
  const std::vector<RowFunctor> rows = make_rows(kRows, 2);
  const auto one = make_cost(rows, 1);
  const auto two = make_cost(rows, 2);
  const std::vector<double> a = {-0.1, 0.4, 0.2, -0.6}, b = {0.5, 0.9, -0.3};
  const double* p[2] = {a.data(), b.data()};
  const int m = kBlockA + kBlockB + 1;
  std::vector<double> r1(m), r2(m), ja1(m * kBlockA), jb1(m * kBlockB), ja2(m * kBlockA),
      jb2(m * kBlockB);
  double* j1[2] = {ja1.data(), jb1.data()};
  double* j2[2] = {ja2.data(), jb2.data()};
  REQUIRE(one->Evaluate(p, r1.data(), j1));
  REQUIRE(two->Evaluate(p, r2.data(), j2));
  CHECK(r1 == r2);
  CHECK(ja1 == ja2);
  CHECK(jb1 == jb2);
  Matrix<double> J(m, kBlockA + kBlockB);
  for (int k = 0; k < m; ++k) {
    for (int c = 0; c < kBlockA; ++c) J(k, c) = ja1[k * kBlockA + c];
    for (int c = 0; c < kBlockB; ++c) J(k, kBlockA + c) = jb1[k * kBlockB + c];
  }
  const Eigen::Map<const Vector<double>> r(r1.data(), m);
  const NormalEquations want = dense_sums(rows, p, true, true);
  CHECK(relative_difference(J.transpose() * J, want.G) < kDampedAgreement);
  CHECK(relative_difference(J.transpose() * r, want.g) < kDampedAgreement);
  CHECK(std::abs(r.squaredNorm() - want.S) < kDampedAgreement * want.S);
  // a trial point: only the cost, as (0, ..., 0, sqrt(S))
  std::vector<double> rt(m);
  REQUIRE(two->Evaluate(p, rt.data(), nullptr));
  for (int k = 0; k + 1 < m; ++k) CHECK(rt[k] == 0.0);
  CHECK(std::abs(rt[m - 1] * rt[m - 1] - want.S) < kAgreement * want.S);
}

TEST_CASE("compressed rows over ranks: the same bits for 1 and 2 ranks of 1 and 2 threads") {
  const std::vector<RowFunctor> rows = make_rows(kRows, 3);
  const std::vector<double> a = {0.2, -0.5, 0.3, 0.7}, b = {-0.8, 0.1, 0.6};
  const double* p[2] = {a.data(), b.data()};
  const int m = kBlockA + kBlockB + 1;
  // r', J' of the compressed block (a trial point first: only S is shared)
  const auto evaluate = [&](const CompressedRowsCost& cost, std::vector<double>& out) {
    std::vector<double> r(m), ja(m * kBlockA), jb(m * kBlockB), rt(m);
    double* j[2] = {ja.data(), jb.data()};
    const bool ok = cost.Evaluate(p, rt.data(), nullptr) && cost.Evaluate(p, r.data(), j);
    out = rt;
    out.insert(out.end(), r.begin(), r.end());
    out.insert(out.end(), ja.begin(), ja.end());
    out.insert(out.end(), jb.begin(), jb.end());
    return ok;
  };
  std::vector<double> want;
  REQUIRE(evaluate(*make_cost(rows, 1), want));
  for (int threads : {1, 2}) {
    std::vector<std::vector<double>> got(2);
    bool ok[2] = {false, false};
    test::run_on_ranks(2, [&](const RankGroup& group) {
      ok[group.rank()] = evaluate(*make_cost(rows, threads, &group), got[group.rank()]);
    });
    CHECK(ok[0]);
    CHECK(ok[1]);
    CHECK(got[0] == want);
    CHECK(got[1] == want);
  }
  // a broken exchange (the other rank's parts never arrive) is refused, not
  // summed without them
  struct Deaf : RankGroup {
    int rank() const override { return 0; }
    int size() const override { return 2; }
    void share(std::vector<std::vector<double>>& parts) const override {
      for (std::size_t k = 1; k < parts.size(); k += 2) parts[k].clear();
    }
  } deaf;
  std::vector<double> broken;
  CHECK_FALSE(evaluate(*make_cost(rows, 1, &deaf), broken));
}

// A row over one block of 2: r = a_0.
struct Other {
  template <class T>
  bool operator()(const T* a, T* r) const {
    r[0] = a[0];
    return true;
  }
};

TEST_CASE("compressed rows: rows over different parameter blocks are refused") {
  std::vector<std::unique_ptr<ceres::CostFunction>> costs;
  costs.emplace_back(new ceres::AutoDiffCostFunction<RowFunctor, kResiduals, kBlockA, kBlockB>(
      new RowFunctor(make_rows(1, 3)[0])));
  costs.emplace_back(new ceres::AutoDiffCostFunction<Other, 1, 2>(new Other));
  CHECK_THROWS_AS(CompressedRowsCost(std::move(costs), 1), std::invalid_argument);
  CHECK_THROWS_AS(CompressedRowsCost({}, 1), std::invalid_argument);
}

// The minimax with the compressed block and with per-row blocks: the same
// LM steps up to rounding, so after a few rounds the worst cases agree to
// within kSameSteps relative (the test fails if the block's steps were other
// steps, e.g. a wrong G). Rounding differences grow along the path: on the
// deep model the two paths part at round 3 with the default 8 LM iterations
// per round (measured: 0.749 against 0.676, where the trust radius has grown
// and the near-singular steps amplify rounding), and agree to 6 digits
// through round 6 with 4 iterations, which the deep case uses.
constexpr double kSameSteps = 1e-3;
constexpr int kDeepIterations = 4;

// Against the per-row blocks, or (avx2) against the compressed block on the
// baseline dense kernels.
void same_steps(const Model<double>& init, const Task& task, int rounds, int lm_iterations,
                bool avx2 = false) {
  MinimaxOptions o;
  o.max_rounds = rounds;
  o.target_loss = 0;
  o.deep_threads = 2;
  o.lm_iterations = lm_iterations;
  if (avx2) o.dense_isa = DenseIsa::kAvx2;
  const MinimaxResult compressed = minimax(init, task, o);
  if (avx2) {
    o.dense_isa = DenseIsa::kBaseline;
  } else {
    o.compressed_rows = false;
  }
  const MinimaxResult per_row = minimax(init, task, o);
  REQUIRE(compressed.history.size() == per_row.history.size());
  for (std::size_t k = 0; k < compressed.history.size(); ++k) {
    const double a = compressed.history[k].worst_case, b = per_row.history[k].worst_case;
    CHECK(std::abs(a - b) <= kSameSteps * std::max(a, b));
  }
  MESSAGE("worst case after " << rounds << " rounds: compressed " << compressed.worst.value
                              << ", per row " << per_row.worst.value);
}

TEST_CASE("the deep minimax with the compressed block takes the per-row steps") {
  const Task task{5, 4, TriggerRange::kPaper};
  same_steps(
      testing::random_model(task.n, AttentionKind::kSoftmax, 0.02, 0, 2, 2, ModelKind::kResidual),
      task, 6, kDeepIterations);
}

TEST_CASE("the deep minimax on the AVX2 dense kernels takes the baseline kernels' steps") {
  if (!avx2_kernel_available()) return;
  const Task task{5, 4, TriggerRange::kPaper};
  same_steps(
      testing::random_model(task.n, AttentionKind::kSoftmax, 0.02, 0, 2, 2, ModelKind::kResidual),
      task, 6, kDeepIterations, true);
}

TEST_CASE("the gated minimax with the compressed block takes the per-row steps") {
  const Task task{5, 4, TriggerRange::kPaper};
  same_steps(testing::random_model(task.n, AttentionKind::kGated, 0.02, 0), task, 6,
             MinimaxOptions().lm_iterations);
}

}  // namespace
}  // namespace sinkcert::search
