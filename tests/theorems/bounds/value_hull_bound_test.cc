// SPDX-License-Identifier: MIT
#include "theorems/bounds/value_hull_bound.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>

#include "src/forward.h"
#include "src/linf_error.h"
#include "tests/test_util.h"

namespace sinkcert::theorems::bounds {
namespace {

// e(X) in double sits within a few hundred ulps of the exact value at these
// sizes (n = 5, L = 4, entries of order 1 to 3); the bound is compared with
// that much room.
constexpr double kDoubleEvalRoom = 1e-12;

double point_error(const Model<double>& m, const Task& task, int j, const Matrix<double>& C) {
  const Matrix<double> X = make_input(task, j, C);
  const Matrix<double> out = forward(m, X, false).output;
  return linf_error(out, make_target(X, j, target_kind_of(m.kind))).value;
}

double hull(const Model<double>& m, const Task& task, int j) {
  const PrecisionScope bits(128);
  return value_hull_bound(m.cast<Mpfi>(), task, j).convert_to<double>();
}

// The largest e(X) of trigger j over the box's vertices and `random` random
// points: a lower bound on E_j.
double sampled_worst(const Model<double>& m, const Task& task, int j, int random) {
  double worst = 0;
  testing::for_each_content_vertex(task, [&](int jj, const Matrix<double>& C) {
    if (jj == j) worst = std::max(worst, point_error(m, task, j, C));
  });
  std::mt19937_64 rng(static_cast<std::uint64_t>(j));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int s = 0; s < random; ++s) {
    Matrix<double> C(task.L - 1, task.content_dim());
    for (int t = 0; t < C.size(); ++t) C.data()[t] = u(rng);
    worst = std::max(worst, point_error(m, task, j, C));
  }
  return worst;
}

TEST_CASE("the values' hull bound is above e(X) on single-layer and residual models") {
  const Task task{5, 4, TriggerRange::kPaper};
  int checked = 0;
  for (const AttentionKind kind : {AttentionKind::kSoftmax, AttentionKind::kSoftmaxOffByOne,
                                   AttentionKind::kSoftpick, AttentionKind::kGated}) {
    for (const double std : {0.8, 3.0}) {  // spread and concentrated attention
      for (const auto& [layers, heads, model_kind] :
           {std::tuple{1, 1, ModelKind::kSingleLayer}, std::tuple{1, 2, ModelKind::kSingleLayer},
            std::tuple{2, 2, ModelKind::kResidual}, std::tuple{3, 1, ModelKind::kResidual}}) {
        const Model<double> m = testing::random_model(5, kind, std, 11, layers, heads, model_kind);
        for (int j : task.trigger_positions()) {
          CAPTURE(to_string(kind));
          CAPTURE(std);
          CAPTURE(layers);
          CAPTURE(heads);
          CAPTURE(j);
          const double bound = hull(m, task, j), seen = sampled_worst(m, task, j, 64);
          CHECK(std::isfinite(bound));
          CHECK(bound >= seen * (1 - kDoubleEvalRoom));
          ++checked;
        }
      }
    }
  }
  CHECK(checked == 4 * 2 * 4 * 3);
}

// A = 0 (uniform weights), M = I: the trigger row's content coordinate lies
// in the hull [-1, 1] of its keys' contents and the target's mean in
// [-1, 1], so the bound is exactly 2, on one layer and on a residual layer
// (whose target's x_j cancels).
TEST_CASE("the values' hull bound in closed form: uniform weights, identity values") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Matrix<double> A = Matrix<double>::Zero(5, 5), M = Matrix<double>::Identity(5, 5);
  Model<double> m = single_head_model(AttentionKind::kSoftmax, A, M);
  for (int j : task.trigger_positions()) CHECK(hull(m, task, j) == 2.0);
  m.kind = ModelKind::kResidual;
  for (int j : task.trigger_positions()) CHECK(hull(m, task, j) == 2.0);
}

// n = 3 (flags only, no content, so no coordinate's target spans [-1, 1]):
// every token's value on the trigger and ordinary flags is 1/4 and every
// score -30. Softmax weights sum to 1: every row's output there is 1/4,
// and at trigger j = 2 the target is 1/2 on both flags of its row, 0
// elsewhere: E_2 = 1/4, which the hull gives exactly. Off-by-one weights
// sum to 3 e^-30 / (1 + 3 e^-30): the trigger row's output is near 0 and
// e(X) near 1/2, which only a hull that holds 0 covers (without it the
// bound would be 1/4).
TEST_CASE("the values' hull bound: 0 in the hull for weights that sum to less than 1") {
  const Task task{3, 4, TriggerRange::kPaper};
  const int n = 3, j = 2;
  Matrix<double> A = Matrix<double>::Constant(n, n, -30), M = Matrix<double>::Zero(n, n);
  for (int a = 0; a < n; ++a) M(kTriggerFlag, a) = M(ordinary_flag(n), a) = 0.25;
  const Matrix<double> C(task.L - 1, 0);
  const Model<double> soft = single_head_model(AttentionKind::kSoftmax, A, M);
  CHECK(hull(soft, task, j) == 0.25);
  CHECK(point_error(soft, task, j, C) == doctest::Approx(0.25).epsilon(1e-15));
  const Model<double> off = single_head_model(AttentionKind::kSoftmaxOffByOne, A, M);
  const double e = point_error(off, task, j, C);
  CHECK(e > 0.5 - 1e-12);
  CHECK(hull(off, task, j) == 0.5);
  CHECK(hull(off, task, j) >= e);
}

// Values only on the ordinary flag: 2.9 for BOS, 3 for ordinary and trigger
// tokens; A = 0 (uniform weights). At the last trigger j = 3 of L = 4 the
// rows 1..2 see BOS and ordinary tokens only (target 0): row 2's output is
// (2.9 + 3 + 3) / 3, its error above every other row's bound (row 0: 2.9;
// row j: |[2.9, 3] - 2/3|; the content: 1). The hull gives 3 there, on one
// layer and residual alike.
TEST_CASE("the values' hull bound: the rows before the trigger") {
  const Task task{5, 4, TriggerRange::kPaper};
  const int n = 5, j = 3;
  const Matrix<double> A = Matrix<double>::Zero(n, n);
  Matrix<double> M = Matrix<double>::Zero(n, n);
  M(ordinary_flag(n), kBosFlag) = 2.9;
  M(ordinary_flag(n), kTriggerFlag) = M(ordinary_flag(n), ordinary_flag(n)) = 3;
  const Matrix<double> C = Matrix<double>::Zero(task.L - 1, task.content_dim());
  Model<double> m = single_head_model(AttentionKind::kSoftmax, A, M);
  const double e = point_error(m, task, j, C);
  CHECK(e == doctest::Approx(8.9 / 3).epsilon(1e-15));
  CHECK(hull(m, task, j) == 3.0);
  m.kind = ModelKind::kResidual;
  CHECK(hull(m, task, j) == 3.0);
}

TEST_CASE("the values' hull bound: +inf where it does not apply or a value is NaN") {
  const Task task{5, 4, TriggerRange::kPaper};
  for (const AttentionKind kind :
       {AttentionKind::kRelu, AttentionKind::kReluCountAll, AttentionKind::kSigmoid}) {
    CHECK_FALSE(value_hull_applies(kind));
    CHECK(std::isinf(hull(testing::random_model(5, kind, 0.8, 1), task, 2)));
  }
  PrecisionScope bits(128);
  Model<Mpfr> m = testing::random_model(5, AttentionKind::kSoftmax, 0.8, 1).cast<Mpfr>();
  m.layers[0][0].M(2, 2) = std::numeric_limits<Mpfr>::quiet_NaN();
  CHECK(bmp::isinf(value_hull_bound(m.cast<Mpfi>(), task, 2)));
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
