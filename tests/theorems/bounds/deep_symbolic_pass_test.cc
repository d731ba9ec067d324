// SPDX-License-Identifier: MIT
#include "theorems/bounds/deep_symbolic_pass.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "src/forward.h"
#include "tests/test_util.h"
#include "tests/theorems/bounds/symbolic_check.h"
#include "theorems/bounds/deep_worst_case_bound.h"

namespace sinkcert::theorems::bounds {
namespace {

const Task kTask{5, 4, TriggerRange::kPaper};

// phi = f(X) - y(X) computed in double differs from the exact value by far
// less than this at n = 5, L = 4 with entries of size <= 3 (rounding of
// about 100 operations on values below 100).
constexpr double kDoubleSlack = 1e-11;
// How far outside a broken form some sample must fall.
constexpr double kBrokenExcess = 1e-4;

Model<double> model(double std, std::uint64_t seed, AttentionKind kind = AttentionKind::kSoftmax,
                    int layers = 2) {
  return testing::random_model(5, kind, std, seed, layers, 2, ModelKind::kResidual);
}

const auto kNever = [](int, int) { return false; };

ContentBox random_box(std::mt19937_64& eng, int trigger, double width) {
  return testing_symbolic::random_box(kTask, eng, trigger, width);
}

double worst_excess(const Model<double>& m, const ContentBox& box,
                    const std::vector<SymbolicForm>& phi, int samples) {
  return testing_symbolic::worst_excess(m, kTask, box, phi, samples);
}

TEST_CASE("the forms of phi enclose phi pointwise over boxes, softmax and off-by-one") {
  PrecisionScope scope(128);
  std::mt19937_64 eng(9);
  for (const Model<double>& m :
       {model(0.05, 1), model(0.3, 3), model(1.0, 4), model(1.0, 4, AttentionKind::kSoftmax, 1),
        model(0.5, 5, AttentionKind::kSoftmaxOffByOne)}) {
    const Model<Mpfi> mi = m.cast<Mpfi>();
    for (double width : {2.0, 0.5, 0.125}) {
      for (int trigger : kTask.trigger_positions()) {
        const ContentBox box = random_box(eng, trigger, width);
        const std::vector<SymbolicForm> phi = deep_symbolic_error(mi, kTask, box, kNever);
        REQUIRE(phi.size() == static_cast<std::size_t>(kTask.L * kTask.n));
        CHECK(worst_excess(m, box, phi, 300) <= kDoubleSlack);
      }
    }
  }
}

TEST_CASE("dropping the products' quadratic remainder breaks the enclosure") {
  // on boxes narrow enough that the attention forms keep their symbols (on
  // the whole box they fall back to the plain range, which hides the
  // missing term), some sample lies outside a broken form
  PrecisionScope scope(128);
  std::mt19937_64 eng(17);
  double worst = -INFINITY;
  // one layer: no fresh symbols, whose coefficients the check counts as slack
  for (const Model<double>& m : {model(0.3, 3, AttentionKind::kSoftmax, 1),
                                 model(1.0, 4, AttentionKind::kSoftmax, 1), model(1.0, 4)}) {
    const Model<Mpfi> mi = m.cast<Mpfi>();
    for (double width : {2.0, 0.5, 0.125}) {
      const ContentBox box = random_box(eng, 3, width);
      const std::vector<SymbolicForm> broken =
          deep_symbolic_error(mi, kTask, box, kNever, SymbolicVariant::kNoProductRemainder);
      worst = std::max(worst, worst_excess(m, box, broken, 300));
    }
  }
  CHECK(worst > kBrokenExcess);
}

Model<double> twin_model(double noise, std::uint64_t seed) {
  return testing::twin_head_model(kTask.n, noise, seed);
}

using testing_symbolic::content_at;
using testing_symbolic::form_sup;

TEST_CASE("fused heads: the forms enclose phi, and beat the per-head forms on twin heads") {
  PrecisionScope scope(128);
  std::mt19937_64 eng(21);
  for (const double noise : {0.0, 1e-6, 1e-3, 0.05}) {
    for (const std::uint64_t seed : {1u, 2u}) {
      CAPTURE(noise);
      CAPTURE(seed);
      const Model<double> m = twin_model(noise, seed);
      const Model<Mpfi> mi = m.cast<Mpfi>();
      for (const double width : {2.0, 0.5}) {
        const ContentBox box = random_box(eng, 3, width);
        const std::vector<SymbolicForm> phi = deep_symbolic_error(mi, kTask, box, kNever);
        CHECK(worst_excess(m, box, phi, 300) <= kDoubleSlack);
        const std::vector<SymbolicForm> separate =
            deep_symbolic_error(mi, kTask, box, kNever, SymbolicVariant::kNoFusion);
        CHECK(worst_excess(m, box, separate, 100) <= kDoubleSlack);
        CHECK(form_sup(phi) <= form_sup(separate));
      }
    }
  }
  // near twins on the whole box: the per-head forms carry each head's
  // remainder (order 1), the fused ones only the weight-difference term
  // (measured: about 30 times narrower at noise 1e-6; kFused = 1/4 fails a
  // pass that never fuses)
  constexpr double kFused = 0.25;
  const Model<Mpfi> twin = twin_model(1e-6, 1).cast<Mpfi>();
  const ContentBox full = full_content_box(kTask, 3);
  CHECK(form_sup(deep_symbolic_error(twin, kTask, full, kNever)) <
        kFused *
            form_sup(deep_symbolic_error(twin, kTask, full, kNever, SymbolicVariant::kNoFusion)));
}

TEST_CASE("fused heads without the weight-difference term: the enclosure breaks") {
  PrecisionScope scope(128);
  std::mt19937_64 eng(23);
  double worst = -INFINITY;
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    const Model<double> m = twin_model(0.05, seed);
    const Model<Mpfi> mi = m.cast<Mpfi>();
    for (const double width : {2.0, 0.5}) {
      const ContentBox box = random_box(eng, 3, width);
      const std::vector<SymbolicForm> broken =
          deep_symbolic_error(mi, kTask, box, kNever, SymbolicVariant::kNoFusionDifference);
      worst = std::max(worst, worst_excess(m, box, broken, 300));
    }
  }
  CHECK(worst > kBrokenExcess);
}

// |sum_k (b_k - a_k) W_k| for b = softmax(s + delta), a = softmax(s), in
// long double (exact to far below the tolerances these tests use).
double weight_difference(const std::vector<double>& s, const std::vector<double>& delta,
                         const std::vector<double>& W, std::vector<double>* a_out = nullptr) {
  const std::size_t K = s.size();
  long double za = 0, zb = 0;
  for (std::size_t k = 0; k < K; ++k) {
    za += std::exp(static_cast<long double>(s[k]));
    zb += std::exp(static_cast<long double>(s[k] + delta[k]));
  }
  long double sum = 0;
  if (a_out) a_out->assign(K, 0.0);
  for (std::size_t k = 0; k < K; ++k) {
    const long double a = std::exp(static_cast<long double>(s[k])) / za;
    const long double b = std::exp(static_cast<long double>(s[k] + delta[k])) / zb;
    sum += (b - a) * W[k];
    if (a_out) (*a_out)[k] = static_cast<double>(a);
  }
  return static_cast<double>(std::fabs(sum));
}

std::vector<SymbolicRange> points(const std::vector<double>& W) {
  std::vector<SymbolicRange> r;
  for (double v : W) r.push_back({v, v});
  return r;
}

TEST_CASE("the fused heads' weight-difference bound holds on random rows") {
  PrecisionScope scope(128);
  std::mt19937_64 eng(31);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int t = 0; t < 2000; ++t) {
    const int K = 2 + static_cast<int>(u(eng) * 8);
    const double w = 4.0 * u(eng) * u(eng);
    std::vector<double> s(K), delta(K), W(K);
    const double base = 3.0 * (u(eng) - 0.5);
    for (int k = 0; k < K; ++k) {
      s[k] = 6.0 * (u(eng) - 0.5);
      delta[k] = base + w * u(eng);  // spread at most w
      W[k] = 4.0 * (u(eng) - 0.5);
    }
    std::vector<double> a;
    const double truth = weight_difference(s, delta, W, &a);
    // the values' ranges around the points, the weights' upper ends above them
    std::vector<SymbolicRange> values(K);
    std::vector<double> a_sup(K);
    for (int k = 0; k < K; ++k) {
      const double r = u(eng) < 0.5 ? 0.0 : 0.3 * u(eng);
      values[k] = {W[k] - r, W[k] + r};
      a_sup[k] = std::min(1.0, a[k] * (1.0 + 0.2 * u(eng)));
    }
    CAPTURE(t);
    CHECK(truth <= fused_difference_bound(w, values, a_sup));
  }
}

// The relative distance by which the bound may exceed the arrangement that
// reaches it: rounding of a few MPFI operations and of the long double sum.
constexpr double kReached = 1e-12;

TEST_CASE("the weight-difference bound is reached: tanh(w/4) by two groups at +-w/2") {
  // groups of sizes G+ and G-, delta = +-w/2, values hi and lo, reference
  // mass 1 / (1 + e^(w/2)) on the upper group: |sum (b - a) W| = tanh(w/4) (hi - lo)
  PrecisionScope scope(128);
  for (const double w : {0.01, 0.5, 2.0, 6.0}) {
    for (const int up : {1, 3}) {
      const int down = 2;
      const double mass = 1.0 / (1.0 + std::exp(w / 2));
      std::vector<double> s, delta, W;
      for (int k = 0; k < up + down; ++k) {
        const bool upper = k < up;
        s.push_back(std::log(upper ? mass / up : (1 - mass) / down));
        delta.push_back(upper ? w / 2 : -w / 2);
        W.push_back(upper ? 1.5 : -0.5);
      }
      const double truth = weight_difference(s, delta, W);
      CAPTURE(w);
      CHECK(truth == doctest::Approx(std::tanh(w / 4) * 2.0).epsilon(kReached));
      // a_sup = 1: the ratio bound out of the way
      const double bound = fused_difference_bound(w, points(W), std::vector<double>(W.size(), 1.0));
      CHECK(truth <= bound);
      CHECK(bound <= truth * (1 + kReached));
    }
  }
}

TEST_CASE("the weight-difference bound: (e^w - 1) with small weights on wide values") {
  // BOS (value 0, weight 1 - 2 eps), key A (value +1, weight eps, delta = w),
  // key B (value -1, weight eps, delta = 0): the sum is eps (e^w - 1) / Z,
  // Z = 1 + eps (e^w - 1), and the ratio form (e^w - 1) 2 eps is within 2 Z
  // of it, below the total-variation form; a growth of e^(w/2) - 1 would not hold it
  PrecisionScope scope(128);
  for (const double w : {0.5, 2.0}) {
    for (const double eps : {1e-3, 1e-2}) {
      const std::vector<double> s{std::log(1 - 2 * eps), std::log(eps), std::log(eps)};
      const std::vector<double> delta{0.0, w, 0.0}, W{0.0, 1.0, -1.0};
      const double truth = weight_difference(s, delta, W);
      const double Z = 1 + eps * std::expm1(w);
      CAPTURE(w);
      CAPTURE(eps);
      CHECK(truth == doctest::Approx(eps * std::expm1(w) / Z).epsilon(kReached));
      const double bound = fused_difference_bound(w, points(W), {1 - 2 * eps, eps, eps});
      CHECK(truth <= bound);
      CHECK(bound <= 2 * Z * truth * (1 + kReached));
    }
  }
}

// How far above the exact value an upper end rounded up to a double may lie
// here (a few ulps of numbers below 1).
constexpr double kRoundedUp = 1e-15;

TEST_CASE("the weights' upper ends: BOS's from the others' lower ends") {
  // a_0's own range [0.2, 0.9] and a_1 in [0.05, 0.8]: a_0 = 0.9, a_1 = 0.1
  // is a row of the box, so sup a_0 >= 0.9; a_1 >= 0.6 gives a_0 <= 0.4
  const std::vector<double> up = weight_upper_ends({{0.2, 0.9}, {0.05, 0.8}});
  CHECK(up[0] >= 0.9);
  CHECK(up[0] <= 0.9 + kRoundedUp);
  CHECK(up[1] >= 0.8);
  const std::vector<double> tight = weight_upper_ends({{0.0, 1.0}, {0.6, 0.7}, {0.0, 0.3}});
  CHECK(tight[0] >= 0.4);
  CHECK(tight[0] <= 0.4 + kRoundedUp);
}

// A sink whose margin spans many orders of magnitude: one residual layer,
// one head, n = 5, L = 4; the non-trigger query's score on BOS is
//   s_0 = 50 + 11.5 (c_2 + c_3)  in [27, 73]   (A_{4,0} = 50, A_{2,0} = A_{3,0} = 11.5),
// every other score 0, and M copies content coordinate 2. At a non-trigger
// row phi = o = sum_{k>=1} a_k c_{k,2}, |phi| <= 3 e^-27 < 1e-11.
constexpr double kWideSinkPhi = 1e-9;  // well above 3 e^-27, far below the values (1)

TEST_CASE("a sink whose margin spans e^27 to e^73: the weights' floor keeps a_k tiny") {
  PrecisionScope scope(128);
  Model<double> m;
  m.kind = ModelKind::kResidual;
  m.attention = AttentionKind::kSoftmax;
  m.n = 5;
  Matrix<double> A = Matrix<double>::Zero(5, 5), M = Matrix<double>::Zero(5, 5);
  A(4, 0) = 50;
  A(2, 0) = A(3, 0) = 11.5;
  M(2, 2) = 1;
  m.layers.assign(1, std::vector<Head<double>>{Head<double>{A, M}});
  const Model<Mpfi> mi = m.cast<Mpfi>();
  for (int trigger = 1; trigger < kTask.L; ++trigger) {
    const ContentBox full = full_content_box(kTask, trigger);
    const std::vector<SymbolicForm> phi = deep_symbolic_error(mi, kTask, full, kNever);
    CHECK(worst_excess(m, full, phi, 200) <= kDoubleSlack);
    for (int i = 1; i < kTask.L; ++i) {
      if (i == trigger) continue;
      for (int d = 0; d < kTask.n; ++d) {
        const SymbolicRange r = symbolic_range(phi[i * kTask.n + d]);
        CHECK(std::max(std::fabs(r.lo), std::fabs(r.hi)) <= kWideSinkPhi);
      }
    }
  }
}

TEST_CASE("the symbolic box bound lies above e(X) at samples and below the plain one") {
  PrecisionScope scope(128);
  std::mt19937_64 eng(13);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const Model<double>& m : {model(0.05, 1), model(0.3, 3)}) {
    const Model<Mpfi> mi = m.cast<Mpfi>();
    for (double width : {2.0, 0.25}) {
      const ContentBox box = random_box(eng, 3, width);
      const DeepBoxBound sym = bound_deep_box(mi, kTask, box, DeepForm::kSymbolic);
      const DeepBoxBound plain = bound_deep_box(mi, kTask, box, DeepForm::kPlain);
      CHECK(sym.upper <= plain.upper);
      CHECK(sym.witness_lower <= sym.upper);
      for (int s = 0; s < 64; ++s) {
        std::vector<double> eps(box.lo.size());
        for (double& e : eps) e = s % 2 == 0 ? (u(eng) < 0 ? -1.0 : 1.0) : u(eng);
        const std::vector<double> x = content_at(box, eps);
        CHECK(bmp::lower(certified_deep_error(mi, kTask, box.trigger, x)) <= sym.upper);
      }
    }
  }
  // near-affine (small entries): the whole-box symbolic bound is tighter
  // (1.38 against 1.91; the true maximum is above 1.25)
  const Model<Mpfi> small = model(0.05, 1).cast<Mpfi>();
  const ContentBox full = full_content_box(kTask, 3);
  CHECK(bound_deep_box(small, kTask, full, DeepForm::kSymbolic).upper <
        bound_deep_box(small, kTask, full, DeepForm::kPlain).upper * 0.8);
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
