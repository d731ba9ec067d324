// SPDX-License-Identifier: MIT
#include "search/minimax.h"

#include <ceres/jet.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "search/attack.h"
#include "src/forward.h"
#include "src/limits.h"
#include "src/parameter_layout.h"
#include "tests/test_util.h"

namespace sinkcert::search {
namespace {

using testing::for_each_content_vertex;
using testing::random_model;

// With the content rows of M held at zero, every content coordinate of the
// output is 0, while the target at the trigger row is the mean of the
// content, which is 1 at content all +1: E >= 1 for every model of the class.
// The search's lower bound on the worst case must not fall below it (up to
// rounding of a mean of ones, a few ulps).
constexpr double kFloorSlack = 1e-12;

// The largest error over every vertex of the content box and every trigger
// position, by enumeration: 2^((L-1)(n-3)) inputs per trigger (64 at
// n = 5, L = 4), independent of the adversary.
double enumerated_vertex_worst(const Model<double>& m, const Task& task) {
  double worst = 0;
  for_each_content_vertex(task, [&](int j, const Matrix<double>& C) {
    worst = std::max(worst, score_error(m, task, j, C).value);
  });
  return worst;
}

// The reported worst case is the adversary's, on the returned model: it must
// reach the enumerated vertex worst of that model (the initial active set
// holds 3 of its 192 vertex inputs), up to the rounding of a few ulps.
constexpr double kVertexSlack = 1e-12;

TEST_CASE("the minimax cannot beat the floor of a class that cannot solve the task") {
  const Task task{5, 4, TriggerRange::kPaper};
  Model<double> init = random_model(task.n, AttentionKind::kSoftmax, 0.02, 3);
  MinimaxOptions o;
  for (int d = kFirstContent; d < ordinary_flag(task.n); ++d) {
    for (int e = 0; e < task.n; ++e) {
      init.layers[0][0].M(d, e) = 0;
      o.frozen_m.push_back(d * task.n + e);
    }
  }
  o.max_rounds = 6;
  // no initial inputs: the inputs that attain the floor (content of one sign
  // up to the trigger) reach the active set and the report only through the
  // adversary
  o.initial_per_trigger = 0;
  for (Surrogate s : {Surrogate::kLeastSquares, Surrogate::kLawson}) {
    o.surrogate = s;
    const MinimaxResult r = minimax(init, task, o);
    CHECK(r.evidence.label() == "SEARCH(lower bound)");
    CHECK(r.worst.value >= 1.0 - kFloorSlack);
    const double vertex_worst = enumerated_vertex_worst(r.model, task);
    CHECK(r.worst.value >= vertex_worst - kVertexSlack);
    for (int d = kFirstContent; d < ordinary_flag(task.n); ++d) {
      CHECK(r.model.layers[0][0].M.row(d).cwiseAbs().maxCoeff() == 0.0);
    }
    MESSAGE(to_string(s) << ": worst case " << r.worst.value << " (enumerated vertex worst "
                         << vertex_worst << ") after " << r.history.size() << " rounds");
  }
}

// The unrestricted class can: from the paper's init (normal, std 0.02) the
// exchange method drives the worst case (search) below kReachable, and the
// BOS mass at non-trigger positions to 1, reproducibly.
constexpr double kReachable = 1e-6;
constexpr double kSinkMass = 1 - 1e-5;

TEST_CASE("the minimax reaches a small worst case with a sink, deterministically") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> init = random_model(task.n, AttentionKind::kSoftmax, 0.02, 0);
  const ProbeSet probes = make_probe_set(task, 200);
  MinimaxOptions o;
  o.target_loss = kReachable;
  o.max_rounds = 40;
  o.probes = &probes;
  const MinimaxResult a = minimax(init, task, o);
  const MinimaxResult b = minimax(init, task, o);
  CHECK(a.worst.value <= kReachable);
  // the small value is the model's, not a weak adversary's
  CHECK(a.worst.value >= enumerated_vertex_worst(a.model, task) - kVertexSlack);
  CHECK(a.converged);
  CHECK(mean_probe_bos(a.model, probes) >= kSinkMass);
  CHECK(a.worst.value == b.worst.value);
  CHECK(a.model.layers[0][0].A == b.model.layers[0][0].A);
  // the reported worst case is the certified one (adversary.h). It agrees
  // with the double value up to double's rounding of O(1) outputs, far below
  // this absolute slack; an unfilled record (0 or NaN) would not.
  constexpr double kRoundingAgreement = 1e-13;
  CHECK(a.worst.certified <= kReachable);
  for (const MinimaxRecord& rec : a.history) {
    CHECK(rec.worst_case > 0);
    CHECK(std::abs(rec.worst_case - rec.worst_case_double) <= kRoundingAgreement);
  }
  MESSAGE("worst case " << a.worst.value << " in " << a.history.size() << " rounds, " << a.seconds
                        << " s");
}

// Theorem 1 at small scale: holding the mean BOS mass at or below 0.9 keeps
// the worst case bounded away from zero (kFrontierFloor is far below the
// measured ~0.1 and far above the unconstrained 1e-6).
constexpr double kFrontierFloor = 1e-3;
// Penalty form: the ceiling holds up to this violation at the end.
constexpr double kCeilingSlack = 1e-3;

TEST_CASE("with the BOS mass capped, the worst case stays away from zero") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> init = random_model(task.n, AttentionKind::kSoftmax, 0.02, 0);
  const ProbeSet probes = make_probe_set(task, 200);
  MinimaxOptions o;
  o.surrogate = Surrogate::kLawson;
  o.bos_ceiling = 0.9;
  o.probes = &probes;
  o.max_rounds = 30;
  const MinimaxResult r = minimax(init, task, o);
  const double bos = mean_probe_bos(r.model, probes);
  CHECK(bos <= 0.9 + kCeilingSlack);
  CHECK(r.worst.value >= kFrontierFloor);
  MESSAGE("capped: worst case " << r.worst.value << ", mean BOS " << bos);
}

// The deep Jacobian (general reverse pass per residual) against forward-mode
// Jets of forward(): the same derivative of the same double function in a
// different order, O(layers heads L n) rounded terms of size O(1) per entry,
// far below this.
constexpr double kJetAgreement = 1e-11;

// d f(X)_{i,d} / d theta_p for every d and p by forward-mode Jets, one
// direction per pass (theta in the order of src/parameter_layout.h).
Matrix<double> jet_row_jacobian(const Model<double>& model, const Matrix<double>& X, int i) {
  using Jet = ceres::Jet<double, 1>;
  const int n = model.n;
  const Vector<double> theta = pack_theta(model);
  Matrix<double> J(n, theta.size());
  const Matrix<Jet> XJ = X.unaryExpr([](double x) { return Jet(x); });
  for (Eigen::Index p = 0; p < theta.size(); ++p) {
    Vector<Jet> tj = theta.unaryExpr([](double x) { return Jet(x); });
    tj(p).v(0) = 1.0;
    Model<Jet> mj = model.cast<Jet>();
    unpack_theta(tj, mj);
    const Matrix<Jet> F = forward(mj, XJ, false).output;
    for (int d = 0; d < n; ++d) J(d, p) = F(i, d).v(0);
  }
  return J;
}

TEST_CASE("the deep Jacobian matches Jets for every head's (A, M), and tells a wrong layout") {
  const Task task{5, 4, TriggerRange::kPaper};
  std::mt19937_64 eng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Matrix<double> C(task.L - 1, task.content_dim());
  for (int t = 0; t < C.size(); ++t) C.data()[t] = u(eng);
  for (auto [layers, heads] : {std::pair{2, 2}, std::pair{1, 2}, std::pair{4, 1}}) {
    // std 0.5: attention far from uniform, so the A-blocks are not tiny
    const Model<double> m =
        random_model(task.n, AttentionKind::kSoftmax, 0.5, 11, layers, heads, ModelKind::kResidual);
    for (int j : {1, 3}) {
      const Matrix<double> X = make_input<double>(task, j, C);
      const Matrix<double> Y = make_target(X, j, TargetKind::kResidual);
      for (int i = 0; i < task.L; ++i) {
        const RowJacobian r = row_residual_jacobian(m, task, j, C, i);
        const Matrix<double> expected = jet_row_jacobian(m, X, i);
        const Matrix<double> F = forward(m, X, false).output;
        // forward() forms dense products, the tape sums row by row: they
        // round differently, by a few ulps of O(1) values
        for (int d = 0; d < task.n; ++d)
          CHECK(std::abs(r.residuals(d) - (F(i, d) - Y(i, d))) <= kJetAgreement);
        REQUIRE(r.jacobian.cols() == expected.cols());
        CHECK((r.jacobian - expected).cwiseAbs().maxCoeff() <= kJetAgreement);
        // the Jacobian is not trivially zero, and a layout with two heads'
        // blocks exchanged is told apart
        CHECK(expected.cwiseAbs().maxCoeff() > 1e-3);
        if (layers * heads > 1 && i == task.L - 1) {
          const int block = 2 * task.n * task.n;
          Matrix<double> swapped = r.jacobian;
          swapped.leftCols(block).swap(swapped.middleCols(block, block));
          CHECK((swapped - expected).cwiseAbs().maxCoeff() > kJetAgreement);
        }
      }
    }
  }
}

// Residual models with several layers and heads: from the paper's init
// (normal std 0.02) the worst case (search, lower bound) falls by orders of
// magnitude; kDeepDrop is the factor asked for, well short of what is
// measured (printed).
constexpr double kDeepDrop = 1e-3;
// The adversary's L-BFGS ascent (on c = sin(u)) stops short of a vertex
// maximum by a relative amount set by its gradient tolerance (3e-7 measured
// here); a weak adversary (missing the maximum by percents) fails this.
constexpr double kAscentSlack = 1e-5;
// The minimax's inner adversary (gradient ascent only) on the deep model it
// returns finds at least this share of the enumerated vertex worst
// (measured 93.8 % on the compressed block's path: a local maximum; the
// attack's vertex search closes such gaps, checked with kAscentSlack).
constexpr double kDeepAdversaryShare = 0.9;

// Single-layer gated attention: the Jacobian of (A, M, G) against Jets of
// forward() (entry by entry of the three matrices), and the minimax's descent
// with the gate as a parameter block.
TEST_CASE("gated attention: the (A, M, G) Jacobian matches Jets") {
  using Jet = ceres::Jet<double, 1>;
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m = random_model(task.n, AttentionKind::kGated, 0.5, 13);
  std::mt19937_64 eng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Matrix<double> C(task.L - 1, task.content_dim());
  for (int t = 0; t < C.size(); ++t) C.data()[t] = u(eng);
  const int n = task.n, n2 = n * n;
  for (int j : {1, 3}) {
    const Matrix<double> X = make_input<double>(task, j, C);
    const Matrix<double> Y = make_target(X, j, TargetKind::kPlain);
    const Matrix<double> F = forward(m, X, false).output;
    const Matrix<Jet> XJ = X.unaryExpr([](double x) { return Jet(x); });
    for (int i = 0; i < task.L; ++i) {
      const RowJacobian r = row_residual_jacobian(m, task, j, C, i);
      REQUIRE(r.jacobian.cols() == 3 * n2);
      Matrix<double> expected(n, 3 * n2);
      for (int b = 0; b < 3; ++b) {
        for (int e = 0; e < n2; ++e) {
          Model<Jet> mj = m.cast<Jet>();
          Head<Jet>& h = mj.layers[0][0];
          Matrix<Jet>& B = b == 0 ? h.A : b == 1 ? h.M : h.G;
          B(e / n, e % n).v(0) = 1.0;
          const Matrix<Jet> FJ = forward(mj, XJ, false).output;
          for (int d = 0; d < n; ++d) expected(d, b * n2 + e) = FJ(i, d).v(0);
        }
      }
      for (int d = 0; d < n; ++d)
        CHECK(std::abs(r.residuals(d) - (F(i, d) - Y(i, d))) <= kJetAgreement);
      CHECK((r.jacobian - expected).cwiseAbs().maxCoeff() <= kJetAgreement);
      // the gate block is not trivially zero
      CHECK(expected.rightCols(n2).cwiseAbs().maxCoeff() > 1e-3);
    }
  }
}

// From the paper's init the gated minimax lowers the worst case (search) by
// at least this factor in kGatedRounds rounds (measured: see the MESSAGE),
// moving the gate.
constexpr double kGatedDrop = 100;
constexpr int kGatedRounds = 30;
// The minimax's adversary on the gated model finds at least this share of the
// enumerated vertex worst (measured 99.5 %: it is a lower bound, not always
// the vertex maximum here; the attack of the final certifications closes such
// gaps).
constexpr double kGatedAdversaryShare = 0.9;

TEST_CASE("gated attention: the minimax descends, the gate a parameter block") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> init = random_model(task.n, AttentionKind::kGated, 0.02, 0);
  MinimaxOptions o;
  o.max_rounds = kGatedRounds;
  o.target_loss = 1e-8;
  const double start = maximize_error(init, task, o.adversary).best.value;
  const MinimaxResult r = minimax(init, task, o);
  CHECK(r.worst.value * kGatedDrop <= start);
  const double vertex_worst = enumerated_vertex_worst(r.model, task);
  CHECK(r.worst.value >= kGatedAdversaryShare * vertex_worst);
  REQUIRE(r.model.layers[0][0].G.rows() == task.n);
  CHECK(r.model.layers[0][0].G != init.layers[0][0].G);
  MESSAGE("gated: worst case " << start << " -> " << r.worst.value << " in " << r.history.size()
                               << " rounds");
}

TEST_CASE("the deep minimax drives a 2 x 2 residual model's worst case down") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> init =
      random_model(task.n, AttentionKind::kSoftmax, 0.02, 0, 2, 2, ModelKind::kResidual);
  const ProbeSet probes = make_probe_set(task, 100);
  MinimaxOptions o;
  o.target_loss = 1e-6;
  o.max_rounds = 25;
  o.probes = &probes;
  const double start = maximize_error(init, task, o.adversary).best.value;
  const MinimaxResult r = minimax(init, task, o);
  CHECK(r.evidence.label() == "SEARCH(lower bound)");
  CHECK(r.model.kind == ModelKind::kResidual);
  CHECK(r.model.num_layers() == 2);
  CHECK(r.model.num_heads() == 2);
  CHECK(start >= 0.5);
  CHECK(r.worst.value <= kDeepDrop * start);
  // the small value is the model's, not a weak adversary's: the minimax's
  // own adversary finds at least kDeepAdversaryShare of the vertex maximum,
  // and the attack of the final certifications ends within a relative
  // kAscentSlack of it
  const double vertex_worst = enumerated_vertex_worst(r.model, task);
  CHECK(r.worst.value >= kDeepAdversaryShare * vertex_worst);
  const AttackResult a = attack(r.model, r.model.cast<Rational>(), task, AttackOptions{});
  CHECK(a.best.value >= vertex_worst * (1 - kAscentSlack));
  MESSAGE("relative gap to the enumerated vertex worst: minimax "
          << (vertex_worst - r.worst.value) / vertex_worst << ", attack "
          << (vertex_worst - a.best.value) / vertex_worst);
  for (const MinimaxRecord& rec : r.history) CHECK(rec.mean_bos >= 0);
  MESSAGE("2 x 2: worst case " << start << " -> " << r.worst.value << " in " << r.history.size()
                               << " rounds, " << r.seconds << " s, largest head mean BOS "
                               << max_head_mean_probe_bos(r.model, probes));
}

// A warm start (fit_m_first = false): round 1 is a full Levenberg-Marquardt
// round that moves A too; the default round 1 fits M alone and leaves every
// A as it was.
TEST_CASE("round 1 fits M alone unless the init is a warm start") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> init =
      random_model(task.n, AttentionKind::kSoftmax, 0.5, 3, 2, 2, ModelKind::kResidual);
  MinimaxOptions o;
  o.max_rounds = 1;
  o.target_loss = 0;
  const auto a_moved = [&](const Model<double>& m) {
    double most = 0;
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 2; ++h)
        most = std::max(most, (m.layers[l][h].A - init.layers[l][h].A).cwiseAbs().maxCoeff());
    return most;
  };
  // the model after round 1, kept or not
  Model<double> after;
  const auto keep = [&](const MinimaxRecord&, const Model<double>& m) { after = m; };
  const MinimaxResult fresh = minimax(init, task, o, keep);
  REQUIRE(fresh.history.size() == 1);
  CHECK(fresh.history[0].event == "M-only");
  CHECK(a_moved(after) == 0);
  o.fit_m_first = false;
  const MinimaxResult warm = minimax(init, task, o, keep);
  REQUIRE(warm.history.size() == 1);
  CHECK(warm.history[0].event != "M-only");
  CHECK(a_moved(after) > 0);
}

// Deep BOS ceilings at n = 5, L = 4, 2 x 2 from the paper's init. The
// unconstrained search sinks some head (sigma near 1, printed above); with
// every head capped at kDeepCeiling the returned model meets the cap up to
// kCeilingSlack (penalty form) on every head and position.
constexpr double kDeepCeiling = 0.6;
// With one head capped, some other head's largest per-position mean reaches
// this (a sink elsewhere, as Theorem 2 allows).
constexpr double kOtherHeadSinks = 0.9;

MinimaxOptions deep_ceiling_options(const ProbeSet& probes) {
  MinimaxOptions o;
  o.surrogate = Surrogate::kLawson;
  o.bos_ceiling = kDeepCeiling;
  o.probes = &probes;
  o.max_rounds = 25;
  return o;
}

TEST_CASE("a BOS ceiling on every head of a deep model is met at the end") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> init =
      random_model(task.n, AttentionKind::kSoftmax, 0.02, 0, 2, 2, ModelKind::kResidual);
  const ProbeSet probes = make_probe_set(task, 100);
  const MinimaxResult r = minimax(init, task, deep_ceiling_options(probes));
  CHECK(r.feasible);
  const double sigma = max_position_mean_probe_bos(r.model, probes);
  CHECK(sigma <= kDeepCeiling + kCeilingSlack);
  for (const MinimaxRecord& rec : r.history) CHECK(rec.ceiling_bos >= 0);
  MESSAGE("every head capped at " << kDeepCeiling << ": worst case " << r.worst.value << ", sigma "
                                  << sigma << ", " << r.history.size() << " rounds, " << r.seconds
                                  << " s");
}

TEST_CASE("a ceiling on one head of a deep model leaves the other heads free") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> init =
      random_model(task.n, AttentionKind::kSoftmax, 0.02, 0, 2, 2, ModelKind::kResidual);
  const ProbeSet probes = make_probe_set(task, 100);
  MinimaxOptions o = deep_ceiling_options(probes);
  for (auto capped : {std::pair{0, 0}, std::pair{1, 1}}) {
    o.bos_ceiling_head = capped;
    const MinimaxResult r = minimax(init, task, o);
    const double own = max_position_mean_probe_bos(r.model, probes, capped);
    const double sigma = max_position_mean_probe_bos(r.model, probes);
    MESSAGE("head (" << capped.first << ", " << capped.second << ") capped: worst case "
                     << r.worst.value << ", its max b " << own << ", sigma " << sigma << ", "
                     << r.seconds << " s");
    CHECK(r.feasible);
    CHECK(own <= kDeepCeiling + kCeilingSlack);
    // another head sinks (measured sigma > 0.999): the cap is not applied to
    // every head
    CHECK(sigma >= kOtherHeadSinks);
  }
}

TEST_CASE("the deep minimax refuses what it does not cover") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> deep =
      random_model(task.n, AttentionKind::kSoftmax, 0.02, 0, 2, 2, ModelKind::kResidual);
  const ProbeSet probes = make_probe_set(task, 10);
  MinimaxOptions o;
  o.frozen_m = {0};
  CHECK_THROWS_AS(minimax(deep, task, o), std::invalid_argument);
  o.frozen_m.clear();
  o.bos_ceiling = 0.5;
  o.probes = &probes;
  o.bos_ceiling_head = std::pair{2, 0};  // no layer 2
  CHECK_THROWS_AS(minimax(deep, task, o), std::invalid_argument);
  o.bos_ceiling_head = std::pair{1, -1};
  CHECK_THROWS_AS(minimax(deep, task, o), std::invalid_argument);
  Model<double> ragged = deep;
  ragged.layers[1].pop_back();
  CHECK_THROWS_AS(minimax(ragged, task, MinimaxOptions{}), std::invalid_argument);
}

TEST_CASE("one single-head search's memory: P x P matrices, P = 2 n^2, and the active set") {
  const double n = 32, P = 2 * n * n;
  const Task short_task{32, 32, TriggerRange::kPaper}, long_task{32, 64, TriggerRange::kPaper};
  const double short_bytes = single_head_minimax_bytes(short_task, 10);
  const double long_bytes = single_head_minimax_bytes(long_task, 10);
  // the matrices do not grow with L: the two sizes differ by the active set
  // alone, 10 (L - 1) inputs of X, Y and weights, L n doubles each
  CHECK(long_bytes - short_bytes ==
        doctest::Approx(8.0 * 3 * 10 * (63.0 * 64 - 31.0 * 32) * n).epsilon(1e-12));
  // 6.5 P x P matrices of doubles dominate (the peak RSS measured at
  // n = L = 32 on one thread, whole program included: 244 MB)
  CHECK(short_bytes >= 8 * 6.5 * P * P);
  CHECK(short_bytes <= 8 * 7.5 * P * P);
  // far below the dense Jacobian of the rows, 8 x 10 (L - 1) L n x P bytes
  // (4.3 GB at n = 32, L = 64): nine searches at once fit the budget there
  CHECK(long_bytes < 8.0 * 10 * 63 * 64 * n * P / 10);
  CHECK(9 * long_bytes <= static_cast<double>(kMemoryBudgetBytes));
}

}  // namespace
}  // namespace sinkcert::search
