// SPDX-License-Identifier: MIT
#include "src/batch_forward.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/forward.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

using testing::random_model;

// Batched vs forward<double>, relative-or-absolute (scale max(1, |a|, |b|)).
// Both are double evaluations of the same sums in other orders (blocked
// GEMMs, FMA in the AVX2 kernel, Eigen's vectorized exp, within a few ulps of
// std::exp). The scores s_ik = x_i^T A x_k are sums of n^2 = 256 terms of
// size <= 1.5 (|x| <= 1, A of std 0.5), so their rounding error is at most
// about 2 n eps sum |terms| ~ 1e-12 in the worst case and ~1e-14 typically; a
// softmax weight moves by a_ik times that, an output by sum |M| a |x| times
// it. Measured worst differences are 3e-15 (see the MESSAGE lines); 1e-12 is
// the worst-case rounding bound and still 1000x below the 1e-9 change of one
// weight that the last test must catch.
constexpr double kTolerance = 1e-12;

// Sequences per batch: more than one chunk for both shapes (the kernel takes
// 256 / L sequences per chunk), and not a whole number of chunks.
constexpr int kBatch = 150;

std::vector<Matrix<double>> sample_inputs(int n, int L, int count, std::uint64_t seed) {
  TaskSampler sampler(Task{n, L, TriggerRange::kPaper}, seed);
  std::vector<Matrix<double>> inputs;
  for (int s = 0; s < count; ++s) inputs.push_back(sampler.next().X);
  return inputs;
}

// max over outputs and BOS masses of |batch - forward| / max(1, |batch|, |forward|);
// infinity on a NaN.
double worst_difference(const BatchForwardResult& batch, const Model<double>& model,
                        const std::vector<Matrix<double>>& inputs) {
  double worst = 0.0;
  auto update = [&](double a, double b) {
    if (std::isnan(a) || std::isnan(b)) worst = INFINITY;
    worst = std::max(worst, std::abs(a - b) / std::max({1.0, std::abs(a), std::abs(b)}));
  };
  for (size_t b = 0; b < inputs.size(); ++b) {
    const ForwardResult<double> ref = forward(model, inputs[b], true);
    const Matrix<double> out = batch.output_of(static_cast<int>(b));
    for (Eigen::Index i = 0; i < out.size(); ++i) update(out(i), ref.output(i));
    if (batch.bos_mass.size() == 0) continue;
    const Matrix<double> bos = batch.bos_mass_of(static_cast<int>(b));
    for (int h = 0; h < model.num_heads(); ++h) {
      for (int i = 0; i < batch.L; ++i) update(bos(i, h), ref.attention[0][h](i, 0));
    }
  }
  return worst;
}

bool identical(const BatchForwardResult& a, const BatchForwardResult& b) {
  return a.output.rows() == b.output.rows() && a.bos_mass.rows() == b.bos_mass.rows() &&
         (a.output.array() == b.output.array()).all() &&
         (a.bos_mass.array() == b.bos_mass.array()).all();
}

TEST_CASE("batched pass agrees with forward<double>, outputs and BOS masses") {
  struct Shape {
    int n, L, heads;
  };
  for (const Shape s : {Shape{5, 4, 1}, Shape{5, 4, 2}, Shape{16, 16, 1}, Shape{16, 16, 2}}) {
    CAPTURE(s.n);
    CAPTURE(s.L);
    CAPTURE(s.heads);
    const Model<double> model = random_model(s.n, AttentionKind::kSoftmax, 0.5, 11, 1, s.heads);
    const auto inputs = sample_inputs(s.n, s.L, kBatch, 7);
    BatchForwardOptions options;
    options.keep_bos_mass = true;
    for (bool baseline : {false, true}) {
      CAPTURE(baseline);
      options.force_baseline = baseline;
      const BatchForwardResult r = BatchForward(model, options).run(inputs);
      REQUIRE(r.batch_size() == kBatch);
      REQUIRE(r.bos_mass.rows() == kBatch * s.L);
      REQUIRE(r.bos_mass.cols() == s.heads);
      const double worst = worst_difference(r, model, inputs);
      MESSAGE("n = " << s.n << ", L = " << s.L << ", heads = " << s.heads
                     << std::string(r.used_avx2 ? ", AVX2" : ", baseline") << ": worst difference "
                     << worst);
      CHECK(worst <= kTolerance);
    }
  }
}

TEST_CASE("threads = 1 and threads = 2 give bit-identical results") {
  const Model<double> model = random_model(16, AttentionKind::kSoftmax, 0.5, 12, 1, 2);
  const auto inputs = sample_inputs(16, 16, kBatch, 8);
  BatchForwardOptions options;
  options.keep_bos_mass = true;
  for (bool baseline : {false, true}) {
    CAPTURE(baseline);
    options.force_baseline = baseline;
    options.threads = 1;
    const BatchForwardResult one = BatchForward(model, options).run(inputs);
    options.threads = 2;
    const BatchForwardResult two = BatchForward(model, options).run(inputs);
    options.threads = 3;
    const BatchForwardResult three = BatchForward(model, options).run(inputs);
    CHECK(one.threads_used == 1);
    CHECK(two.threads_used == 2);
    CHECK(three.threads_used == 3);
    CHECK(identical(one, two));
    CHECK(identical(one, three));
  }
}

TEST_CASE("the AVX2 and the baseline kernels both run and agree") {
  const Model<double> model = random_model(16, AttentionKind::kSoftmax, 0.5, 13, 1, 2);
  const auto inputs = sample_inputs(16, 16, kBatch, 9);
  BatchForwardOptions options;
  options.keep_bos_mass = true;
  options.force_baseline = true;
  const BatchForwardResult baseline = BatchForward(model, options).run(inputs);
  options.force_baseline = false;
  const BatchForwardResult best = BatchForward(model, options).run(inputs);
  CHECK_FALSE(baseline.used_avx2);
  CHECK(best.used_avx2 == BatchForward::avx2_available());
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // this machine class (x86-64, GCC/Clang) builds the AVX2 kernel; say so
  // when the CPU cannot run it, since only the baseline is then exercised
  if (!BatchForward::avx2_available())
    WARN_MESSAGE(false, "CPU lacks AVX2/FMA: AVX2 kernel not run");
#endif
  double worst = 0.0;
  for (Eigen::Index i = 0; i < baseline.output.size(); ++i) {
    CHECK(testing::near(best.output(i), baseline.output(i), kTolerance));
    worst = std::max(worst, std::abs(best.output(i) - baseline.output(i)));
  }
  for (Eigen::Index i = 0; i < baseline.bos_mass.size(); ++i) {
    CHECK(testing::near(best.bos_mass(i), baseline.bos_mass(i), kTolerance));
  }
  MESSAGE("AVX2 vs baseline: worst absolute output difference " << worst);
}

TEST_CASE("only single-layer softmax models are accepted") {
  auto refusal = [](const Model<double>& m) -> std::string {
    try {
      BatchForward forward_batch(m);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  const std::string relu = refusal(random_model(5, AttentionKind::kRelu, 0.5, 1));
  CHECK(relu.find("softmax") != std::string::npos);
  CHECK(relu.find("relu") != std::string::npos);
  const std::string residual =
      refusal(random_model(5, AttentionKind::kSoftmax, 0.5, 1, 2, 1, ModelKind::kResidual));
  CHECK(residual.find("single-layer") != std::string::npos);
  CHECK(residual.find("residual") != std::string::npos);
  CHECK(refusal(random_model(5, AttentionKind::kSigmoid, 0.5, 1)) != "");
  CHECK(refusal(random_model(5, AttentionKind::kSoftmax, 0.5, 1, 2, 1)) != "");
  CHECK(refusal(random_model(5, AttentionKind::kSoftmax, 0.5, 1)) == "");
}

TEST_CASE("inputs of the wrong shape are refused; an empty batch is empty") {
  const BatchForward batch(random_model(5, AttentionKind::kSoftmax, 0.5, 1));
  auto inputs = sample_inputs(5, 4, 3, 1);
  inputs.push_back(Matrix<double>::Zero(5, 5));
  CHECK_THROWS_AS(batch.run(inputs), std::invalid_argument);
  CHECK_THROWS_AS(batch.run({Matrix<double>::Zero(4, 6)}), std::invalid_argument);
  CHECK_THROWS_AS(batch.run_stacked(Matrix<double>::Zero(10, 5), 4), std::invalid_argument);
  const BatchForwardResult empty = batch.run({});
  CHECK(empty.batch_size() == 0);
  CHECK(empty.output.rows() == 0);
}

TEST_CASE("the comparison catches a wrong model: another seed, or one weight off by 1e-9") {
  const Model<double> model = random_model(16, AttentionKind::kSoftmax, 0.5, 14, 1, 2);
  const auto inputs = sample_inputs(16, 16, 20, 10);
  BatchForwardOptions options;
  options.keep_bos_mass = true;
  const BatchForwardResult r = BatchForward(model, options).run(inputs);
  CHECK(worst_difference(r, model, inputs) <= kTolerance);
  const Model<double> other = random_model(16, AttentionKind::kSoftmax, 0.5, 15, 1, 2);
  CHECK(worst_difference(r, other, inputs) > kTolerance);
  Model<double> nudged = model;
  nudged.layers[0][1].M(3, 4) += 1e-9;
  const double nudge = worst_difference(r, nudged, inputs);
  MESSAGE("M_2(3, 4) + 1e-9: worst difference " << nudge);
  CHECK(nudge > kTolerance);
}

}  // namespace
}  // namespace sinkcert
