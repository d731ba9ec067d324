// SPDX-License-Identifier: MIT
#include "src/bos_statistics.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "src/constructions.h"
#include "src/forward.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

using testing::near;

// Sums of at most 15 terms of size <= 1 in a different order than the
// reference: a few ulps; 1e-14 leaves a wide margin.
constexpr double kSumOrder = 1e-14;
// The sink family at beta = 30: 1 - BOS mass and error are (L-1) e^-beta up
// to the factor i/(L-1) (i = 14 or 15) and e^beta/(e^beta + i); the claim
// is checked within a 10% band.
constexpr double kSinkBand = 0.10;
// The ReLU construction's error in double: the trigger row is an average of
// at most 15 tokens of size <= 1, rounded twice (sum, then times 1/j).
constexpr double kReluRoundoff = 1e-15;

TEST_CASE("type-7 quantiles match numpy's default on hand values") {
  const std::vector<double> v = {1, 2, 3, 4};
  CHECK(quantile_sorted(v, 0.0) == 1);
  CHECK(quantile_sorted(v, 1.0) == 4);
  CHECK(quantile_sorted(v, 0.5) == 2.5);
  // numpy.quantile([1, 2, 3, 4], 0.1) = 1.3
  CHECK(near(quantile_sorted(v, 0.1), 1.3, kSumOrder));
  CHECK(near(quantile_sorted(v, 0.99), 3.97, kSumOrder));
  CHECK(quantile_sorted({7.0}, 0.3) == 7.0);
  CHECK_THROWS_AS(quantile_sorted({}, 0.5), std::invalid_argument);
  const BosSummary s = summarize({4, 1, 3, 2});
  CHECK(s.count == 4);
  CHECK(s.min == 1);
  CHECK(s.mean == 2.5);
  CHECK(s.quantiles[3] == 2.5);
  CHECK(summarize({}).count == 0);
}

TEST_CASE("probe sets are reproducible and respect the trigger convention") {
  const Task task{5, 6, TriggerRange::kReferenceCode};
  const ProbeSet a = make_probe_set(task, 200, 17), b = make_probe_set(task, 200, 17);
  REQUIRE(a.samples.size() == 200);
  bool saw_last = false;
  for (std::size_t s = 0; s < a.samples.size(); ++s) {
    CHECK(a.samples[s].trigger == b.samples[s].trigger);
    CHECK(a.samples[s].X == b.samples[s].X);
    CHECK(a.samples[s].trigger >= 2);
    CHECK(a.samples[s].trigger <= 5);
    saw_last = saw_last || a.samples[s].trigger == 5;
  }
  CHECK(saw_last);
  const ProbeSet fixed = make_probe_set(Task{16, 16, TriggerRange::kPaper}, 20, kDefaultProbeSeed,
                                        kPaperFigureTrigger);
  for (const Sample& s : fixed.samples) CHECK(s.trigger == 7);
  CHECK_THROWS_AS(make_probe_set(task, 0), std::invalid_argument);
  CHECK_THROWS_AS(make_probe_set(task, 5, 1, 6), std::invalid_argument);
  CHECK_THROWS_AS(make_probe_set(task, 5, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(make_probe_set(Task{5, 2, TriggerRange::kReferenceCode}, 5),
                  std::invalid_argument);
}

TEST_CASE("uniform attention: statistics computed by hand") {
  // n = 3 (flags only, no content), L = 16, A = 0, M = 0, softmax, trigger 7.
  // Every score is 0, so a_i0 = 1/(i+1) exactly; the output is 0, and the
  // only nonzero target is y_7 = mean(x_1..x_7) = (0, 1/7, 6/7), so the
  // error of every probe is 6/7 at position 7, coordinate 2.
  const Task task{3, 16, TriggerRange::kPaper};
  const Model<double> m = single_head_model<double>(
      AttentionKind::kSoftmax, Matrix<double>::Zero(3, 3), Matrix<double>::Zero(3, 3));
  const BosStatistics st = bos_statistics(m, make_probe_set(task, 50, 1, 7));
  REQUIRE(st.heads.size() == 1);
  REQUIRE(st.heads[0].size() == 1);
  const HeadBosStatistics& h = st.heads[0][0];
  REQUIRE(h.per_position.size() == 16);
  CHECK(h.per_position[0].count == 0);
  CHECK(h.per_position[7].count == 0);
  double mean = 0;
  for (int i = 1; i < 16; ++i) {
    if (i == 7) continue;
    const BosSummary& p = h.per_position[i];
    CHECK(p.count == 50);
    CHECK(p.min == 1.0 / (i + 1));
    CHECK(p.mean == doctest::Approx(1.0 / (i + 1)).epsilon(kSumOrder));
    for (double q : p.quantiles) CHECK(q == 1.0 / (i + 1));
    mean += 1.0 / (i + 1) / 14;
  }
  CHECK(h.overall.count == 50 * 14);
  CHECK(h.overall.min == 1.0 / 16);
  CHECK(h.overall.quantiles.back() == 0.5);
  CHECK(near(h.overall.mean, mean, kSumOrder));
  CHECK(near(st.error_max, 6.0 / 7.0, kSumOrder));
  CHECK(near(st.error_mean, 6.0 / 7.0, kSumOrder));
  CHECK(st.error_max_trigger == 7);
  CHECK(st.error_max_position == 7);
  CHECK(st.error_max_coordinate == 2);
  CHECK(st.evidence.label() == "NUMERIC(53)");
}

TEST_CASE("sink family at beta = 30: min BOS mass 1 - 15 e^-30, error ~ 15 e^-30") {
  const Task task{16, 16, TriggerRange::kPaper};
  const BosStatistics st = bos_statistics(sink_family<double>(16, 30.0), make_probe_set(task));
  const double scale = 15 * std::exp(-30.0);  // (L-1) e^-beta
  const HeadBosStatistics& h = st.heads[0][0];
  CHECK(st.samples == kDefaultProbeCount);
  CHECK(std::abs((1 - h.overall.min) - scale) <= kSinkBand * scale);
  CHECK(std::abs(st.error_max - scale) <= kSinkBand * scale);
  CHECK(st.error_mean <= st.error_max);
  for (int i = 1; i < 16; ++i) {
    // 1 - a_i0 = i / (e^30 + i) at every probe where i is not the trigger
    const double expected = i / (std::exp(30.0) + i);
    CHECK(h.per_position[i].count > 0);
    CHECK(std::abs((1 - h.per_position[i].min) - expected) <= kSinkBand * expected);
    CHECK(std::abs((1 - h.per_position[i].quantiles.back()) - expected) <= kSinkBand * expected);
  }
  long total = 0;
  for (int i = 1; i < 16; ++i) total += h.per_position[i].count;
  CHECK(total == h.overall.count);
  CHECK(total == kDefaultProbeCount * 14);  // one trigger among positions 1..15
}

TEST_CASE("ReLU construction: BOS mass exactly 0, error at roundoff") {
  const Task task{16, 16, TriggerRange::kPaper};
  const BosStatistics st =
      bos_statistics(relu_construction<double>(16), make_probe_set(task, 300, 5));
  const HeadBosStatistics& h = st.heads[0][0];
  CHECK(h.overall.count == 300 * 14);
  CHECK(h.overall.min == 0.0);
  CHECK(h.overall.quantiles.back() == 0.0);
  CHECK(h.overall.mean == 0.0);
  CHECK(st.error_max <= kReluRoundoff);
}

TEST_CASE("multi-layer statistics are kept per layer and head") {
  const Task task{5, 7, TriggerRange::kPaper};
  const Model<double> m =
      testing::random_model(5, AttentionKind::kSoftmax, 1.0, 8, 2, 3, ModelKind::kResidual);
  const ProbeSet probes = make_probe_set(task, 40, 2);
  const BosStatistics st = bos_statistics(m, probes);
  REQUIRE(st.heads.size() == 2);
  REQUIRE(st.heads[1].size() == 3);
  // Recompute layer 1, head 2 directly: min and max over all non-trigger i.
  double lo = 2, hi = -1, err = 0;
  for (const Sample& s : probes.samples) {
    const auto r = forward(m, s.X);
    for (int i = 1; i < task.L; ++i) {
      if (i == s.trigger) continue;
      lo = std::min(lo, r.attention[1][2](i, 0));
      hi = std::max(hi, r.attention[1][2](i, 0));
    }
    const Matrix<double> y = make_target(s.X, s.trigger, TargetKind::kResidual);
    err = std::max(err, (r.output - y).cwiseAbs().maxCoeff());
  }
  const HeadBosStatistics& h = st.heads[1][2];
  CHECK(h.layer == 1);
  CHECK(h.head == 2);
  CHECK(h.overall.min == lo);
  CHECK(h.overall.quantiles.back() == hi);
  CHECK(st.error_max == err);
  CHECK(st.heads[0][2].overall.min != lo);  // a different head sees other masses
  const nlohmann::json j = to_json(st);
  CHECK(j["bos_mass"]["heads"].size() == 6);
  CHECK(j["bos_mass"]["heads"][5]["overall"]["min"] == lo);
  CHECK(j["bos_mass"]["heads"][5]["overall"]["quantiles"]["1"] == hi);
  CHECK(j["bos_mass"]["heads"][5]["per_position"].size() == task.L - 1);
  CHECK(j["evidence"] == "NUMERIC(53)");
  CHECK(j["sampled_error"]["bound"].get<std::string>().find("lower bound") != std::string::npos);
  CHECK(j["probe_set"]["seed"] == 2);
  CHECK(j["probe_set"]["fixed_trigger"].is_null());
  CHECK_THROWS_AS(bos_statistics(testing::random_model(6, AttentionKind::kSoftmax, 1.0, 1), probes),
                  std::invalid_argument);
}

TEST_CASE("a NaN value makes min, mean and every quantile NaN") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // NaN first, in the middle and last: sorting must not move it away
  for (const std::vector<double>& v :
       {std::vector<double>{nan, 0.5, 1.0}, std::vector<double>{0.5, nan, 1.0},
        std::vector<double>{0.5, 1.0, nan}}) {
    const BosSummary s = summarize(v);
    CHECK(s.count == 3);
    CHECK(std::isnan(s.min));
    CHECK(std::isnan(s.mean));
    for (double q : s.quantiles) CHECK(std::isnan(q));
    const nlohmann::json j = to_json(s);
    CHECK(j["min"] == "NaN");
    CHECK(j["mean"] == "NaN");
    CHECK(j["quantiles"]["0.5"] == "NaN");
  }
  // infinities are ordinary values: the ends of the order, no inf - inf
  const double inf = std::numeric_limits<double>::infinity();
  const BosSummary s = summarize({inf, 1.0, inf, -inf});
  CHECK(s.min == -inf);
  CHECK(s.quantiles.back() == inf);
  CHECK(s.quantiles[5] == inf);  // q0.99 between two infinities
  CHECK(to_json(s)["min"] == "-Infinity");
  CHECK(to_json(s)["quantiles"]["1"] == "Infinity");
}

TEST_CASE("a probe whose forward pass overflows is NaN in the max, the mean and the BOS mass") {
  // Scores x_i^T A x_k with A[2][0] = A[3][0] = 1e308: an ordinary token
  // (flag x[3] = 1) with content x[2] > 0.8 scores more than 1.8e308 = inf
  // on BOS; softmax's s - max is inf - inf = NaN, so that row's attention
  // and output are NaN. Other rows stay finite.
  const int n = 4;
  Matrix<double> A = Matrix<double>::Zero(n, n);
  A(2, 0) = 1e308;
  A(3, 0) = 1e308;
  const Model<double> m =
      single_head_model<double>(AttentionKind::kSoftmax, A, Matrix<double>::Identity(n, n));
  const ProbeSet probes = make_probe_set(Task{n, 4, TriggerRange::kPaper}, 200, 3, 1);
  int first_nan = -1;
  for (std::size_t s = 0; s < probes.samples.size() && first_nan < 0; ++s) {
    const ForwardResult<double> r = forward(m, probes.samples[s].X);
    if (r.output.array().isNaN().any()) first_nan = static_cast<int>(s);
  }
  REQUIRE(first_nan > 0);  // some probes before it are finite
  const BosStatistics st = bos_statistics(m, probes);
  CHECK(std::isnan(st.error_max));
  CHECK(std::isnan(st.error_mean));
  CHECK(st.error_max_sample == first_nan);
  const HeadBosStatistics& h = st.heads[0][0];
  CHECK(std::isnan(h.overall.min));
  CHECK(std::isnan(h.overall.mean));
  for (double q : h.overall.quantiles) CHECK(std::isnan(q));
  const nlohmann::json j = to_json(st);
  CHECK(j["sampled_error"]["max"] == "NaN");
  CHECK(j["sampled_error"]["mean"] == "NaN");
  CHECK(j["bos_mass"]["heads"][0]["overall"]["min"] == "NaN");
  CHECK(j.dump().find("null") == std::string::npos);
}

}  // namespace
}  // namespace sinkcert
