// SPDX-License-Identifier: MIT
#include "search/least_squares_refiner.h"

#include <doctest/doctest.h>

#include "src/constructions.h"
#include "tests/test_util.h"

namespace sinkcert::search {
namespace {

using Inputs = std::vector<std::pair<int, Matrix<double>>>;

// Per trigger: content all +1, all -1, and the fixed mixed vertex +1, -1, ...
Inputs small_set(const Task& task) {
  Inputs out;
  for (int j : task.trigger_positions()) {
    for (double v : {1.0, -1.0}) {
      out.emplace_back(j, Matrix<double>::Constant(task.L - 1, task.content_dim(), v));
    }
    Matrix<double> C(task.L - 1, task.content_dim());
    for (Eigen::Index t = 0; t < C.size(); ++t) C(t) = t % 2 ? -1.0 : 0.5;
    out.emplace_back(j, C);
  }
  return out;
}

// The sink family at beta with a content-dependent trigger-row score term
// eps * x_i[1] * x_k[2] (the kind of term a double search leaves behind).
Model<double> perturbed_sink(int n, double beta, double eps) {
  Model<double> m = sink_family<double>(n, beta);
  m.layers[0][0].A(kTriggerFlag, kFirstContent) = eps;
  return m;
}

TEST_CASE("the analytic Jacobian matches central differences in 256-bit MPFR") {
  const Task task{5, 4, TriggerRange::kPaper};
  PrecisionScope scope(256);
  const Model<Mpfr> m = testing::random_model(5, AttentionKind::kSoftmax, 0.7, 3).cast<Mpfr>();
  const Inputs inputs = small_set(task);
  Matrix<Mpfr> J;
  const Vector<Mpfr> r = refine_residuals(m, task, inputs, &J);
  REQUIRE(J.rows() == r.size());
  REQUIRE(J.cols() == 50);
  // Central differences with h = 2^-60 have truncation error O(h^2) ~ 1e-36
  // and rounding error 2^-256 / h ~ 1e-59: agreement to kTolerance = 1e-30
  // (relative to max(1, |J|)) separates a right Jacobian from a wrong one.
  constexpr double kTolerance = 1e-30;
  const Mpfr h = bmp::ldexp(Mpfr(1), -60);
  Mpfr worst(0);
  for (int p = 0; p < 50; ++p) {
    Model<Mpfr> plus = m, minus = m;
    Matrix<Mpfr>& P = p < 25 ? plus.layers[0][0].A : plus.layers[0][0].M;
    Matrix<Mpfr>& Q = p < 25 ? minus.layers[0][0].A : minus.layers[0][0].M;
    P((p % 25) / 5, p % 5) += h;
    Q((p % 25) / 5, p % 5) -= h;
    // dr/dtheta_p ~ (r(theta + h e_p) - r(theta - h e_p)) / 2h
    const Vector<Mpfr> diff =
        (refine_residuals(plus, task, inputs) - refine_residuals(minus, task, inputs)) / (2 * h);
    for (Eigen::Index t = 0; t < diff.size(); ++t) {
      const Mpfr err = bmp::abs(diff(t) - J(t, p)) / max_of(Mpfr(1), abs_of(J(t, p)));
      if (err > worst) worst = err;
    }
  }
  CHECK(worst < kTolerance);
}

TEST_CASE("refinement in MPFR removes a content-dependent score term a double cannot") {
  const Task task{5, 4, TriggerRange::kPaper};
  // the fit set: small_set plus, per trigger, four vertices of mixed signs
  Inputs inputs = small_set(task);
  for (int j : task.trigger_positions()) {
    for (int v = 1; v <= 4; ++v) {
      Matrix<double> C(task.L - 1, task.content_dim());
      for (Eigen::Index t = 0; t < C.size(); ++t) C(t) = (t * v + j) % 3 ? 1.0 : -1.0;
      inputs.emplace_back(j, C);
    }
  }
  // beta = 60: the sink leaves (L-1) e^-60 ~ 3e-26; the perturbation puts
  // ~1e-7 into the trigger rows at mixed content
  const Model<double> start = perturbed_sink(5, 60.0, 1e-6);
  PrecisionScope scope(256);
  const RefineResult<Mpfr> r = refine_least_squares(start.cast<Mpfr>(), task, inputs, {20});
  CHECK(r.start_max > Mpfr(1e-8));
  // kRefined: far below what a double model reaches (a double search stalls
  // near 1e-11, search/least_squares_refiner.h, and double rounding alone leaves ~1e-16), far
  // above the sink's own 3e-26 and the 256-bit floor.
  constexpr double kRefined = 1e-20;
  CHECK(r.final_max < Mpfr(kRefined));
  CHECK(r.evaluations <= 20);
  // the result is the model the residuals describe
  CHECK(refine_residuals(r.model, task, inputs).cwiseAbs().maxCoeff() == r.final_max);
  // and it generalizes: every vertex of the content box, fitted or not
  Inputs vertices;
  for (int j : task.trigger_positions()) {
    for (int v = 0; v < 64; ++v) {
      Matrix<double> C(task.L - 1, task.content_dim());
      for (int m = 0; m < 6; ++m) C(m / 2, m % 2) = (v >> m & 1) ? 1.0 : -1.0;
      vertices.emplace_back(j, C);
    }
  }
  CHECK(refine_residuals(r.model, task, vertices).cwiseAbs().maxCoeff() < Mpfr(kRefined));
}

TEST_CASE("refinement in double stalls where MPFR does not") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Inputs inputs = small_set(task);
  const RefineResult<double> r =
      refine_least_squares(perturbed_sink(5, 60.0, 1e-6), task, inputs, {20});
  // Double rounding of outputs near 1 leaves residuals of order 1e-16 at best.
  CHECK(r.final_max > 1e-18);
  CHECK(r.final_max < r.start_max);
}

TEST_CASE("refinement refuses other models and too few residuals") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Inputs inputs = small_set(task);
  Model<double> relu = perturbed_sink(5, 20.0, 0.0);
  relu.attention = AttentionKind::kRelu;
  CHECK_THROWS_WITH_AS(refine_least_squares(relu, task, inputs), doctest::Contains("softmax"),
                       std::invalid_argument);
  const Inputs one(inputs.begin(), inputs.begin() + 2);  // 2 x 4 x 5 = 40 < 50 parameters
  CHECK_THROWS_WITH_AS(refine_least_squares(perturbed_sink(5, 20.0, 0.0), task, one),
                       doctest::Contains("40 residuals for 50 parameters"), std::invalid_argument);
}

}  // namespace
}  // namespace sinkcert::search
