// SPDX-License-Identifier: MIT
#include "search/worst_case_bound.h"

#include <doctest/doctest.h>

#include <random>

#include "src/constructions.h"
#include "src/forward.h"
#include "src/linf_error.h"
#include "tests/test_util.h"

namespace sinkcert::search {
namespace {

// The sink family's worst case on T(n, L): a non-trigger row L-1 holds
// (L-1) / (e^beta + L-1) off BOS and, at content +1, that error (constructions.h).
Mpfr sink_worst_case(int L, double beta) {
  return Mpfr(L - 1) / (bmp::exp(Mpfr(beta)) + (L - 1));
}

// Largest e(X) seen in double over random contents and vertices: a lower
// bound on E that any certified upper bound must clear.
double sampled_worst(const Model<double>& m, const Task& task, int samples, std::uint64_t seed) {
  std::mt19937_64 eng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double worst = 0.0;
  for (int s = 0; s < samples; ++s) {
    for (int j : task.trigger_positions()) {
      Matrix<double> C(task.L - 1, task.content_dim());
      for (int r = 0; r < C.rows(); ++r) {
        for (int c = 0; c < C.cols(); ++c) C(r, c) = s % 2 ? u(eng) : (u(eng) > 0 ? 1.0 : -1.0);
      }
      const Matrix<double> X = make_input<double>(task, j, C);
      const auto out = forward(m, X, false).output;
      worst = std::max(worst, linf_error(out, make_target(X, j, TargetKind::kPlain)).value);
    }
  }
  return worst;
}

TEST_CASE("sink family, beta = 10, n = 5, L = 4: certified within 1%") {
  const Task task{5, 4, TriggerRange::kPaper};
  WorstCaseOptions options;
  options.relative_gap = 0.01;
  const WorstCaseBound b = bound_worst_case(sink_family<double>(5, 10.0), task, options);
  CHECK(b.verdict == Verdict::kVerified);
  CHECK(b.relative_gap <= 0.01);
  // scores read flags only: one box per trigger suffices
  CHECK(b.boxes == 3);
  PrecisionScope high(1024);
  const Mpfr truth = sink_worst_case(4, 10.0);
  CHECK(b.lower <= truth);
  CHECK(b.upper >= truth);
  CHECK(b.evidence.label() == "CERTIFIED");
}

TEST_CASE("a claimed bound below the known worst case is refused with a witness") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m = sink_family<double>(5, 10.0);
  const double truth = sink_worst_case(4, 10.0).convert_to<double>();
  WorstCaseOptions options;
  const UpperBoundCheck low = check_upper_bound(m, task, 0.99 * truth, options);
  CHECK(low.verdict == Verdict::kNotVerified);
  CHECK(low.margin > 0.0);
  REQUIRE(low.bound.witness_content.size() == 6u);
  // the witness really exceeds the claim (re-evaluated independently)
  PrecisionScope scope(128);
  const Mpfr witness_error = certified_error_lower(m.cast<Mpfi>(), task, low.bound.witness_trigger,
                                                   low.bound.witness_content);
  CHECK(witness_error > Mpfr(0.99 * truth));
  const UpperBoundCheck high = check_upper_bound(m, task, 1.01 * truth, options);
  CHECK(high.verdict == Verdict::kVerified);
}

TEST_CASE("content-dependent scores (A of std 0.2): gap within 10% and the bound is sound") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m = testing::random_model(5, AttentionKind::kSoftmax, 0.2, 21);
  WorstCaseOptions options;
  options.relative_gap = 0.10;
  options.max_seconds = 5.0;
  const WorstCaseBound b = bound_worst_case(m, task, options);
  INFO("boxes " << b.boxes << " seconds " << b.seconds << " gap " << b.relative_gap);
  CHECK(b.verdict == Verdict::kVerified);
  CHECK(b.relative_gap <= 0.10);
  CHECK(b.boxes > 3);
  const double sampled = sampled_worst(m, task, 400, 5);
  // double rounding of the sampled value: far below this slack
  constexpr double kDoubleSlack = 1e-12;
  CHECK(b.upper.convert_to<double>() >= sampled - kDoubleSlack);
}

TEST_CASE("a score shift shared by every key of a row costs the bound nothing") {
  // The sink family plus 0.5 x_i[2] (x_k[0] + x_k[1] + x_k[n-1]): every token
  // has exactly one flag, so all scores of row i move by 0.5 c_i and the
  // softmax, hence E, is the sink family's. Per-score interval ranges would
  // widen each score by +-0.5 (the bound ~ e^2 times E in the first box); the
  // score-difference enclosure cancels the shift, so one box per trigger
  // certifies E to 1 %.
  const Task task{5, 4, TriggerRange::kPaper};
  Model<double> m = sink_family<double>(5, 10.0);
  for (int q : {kBosFlag, kTriggerFlag, ordinary_flag(5)}) m.layers[0][0].A(kFirstContent, q) = 0.5;
  WorstCaseOptions options;
  options.relative_gap = 0.01;
  options.adversary_witnesses = false;
  const WorstCaseBound b = bound_worst_case(m, task, options);
  CHECK(b.verdict == Verdict::kVerified);
  CHECK(b.boxes == 3);
  PrecisionScope high(1024);
  const Mpfr truth = sink_worst_case(4, 10.0);
  CHECK(b.lower <= truth);
  CHECK(b.upper >= truth);
}

TEST_CASE("an MPFR model beyond double: the sink family at beta = 60 is bounded at its own value") {
  // (L-1) e^-60 ~ 2.6e-26: in double the model is the same, but its loss is
  // below double's resolution of outputs near 1; in MPFR the bound holds it.
  const Task task{5, 4, TriggerRange::kPaper};
  PrecisionScope scope(256);
  const Model<Mpfr> m = sink_family<Mpfr>(5, Mpfr(60));
  WorstCaseOptions options;
  options.bits = 256;
  options.relative_gap = 0.01;
  options.adversary_witnesses = false;
  const WorstCaseBound b = bound_worst_case(m, task, options);
  CHECK(b.verdict == Verdict::kVerified);
  PrecisionScope high(1024);
  const Mpfr truth = sink_worst_case(4, 60.0);
  CHECK(b.lower <= truth);
  CHECK(b.upper >= truth);
  CHECK(b.upper <= truth * Mpfr(1.01));
}

TEST_CASE("multi-layer models are refused") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m = testing::random_model(5, AttentionKind::kSoftmax, 0.5, 1, 2, 1,
                                                ModelKind::kResidual);
  CHECK_THROWS_AS(bound_worst_case(m, task, WorstCaseOptions{}), std::invalid_argument);
}

}  // namespace
}  // namespace sinkcert::search
