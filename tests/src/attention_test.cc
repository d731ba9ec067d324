// SPDX-License-Identifier: MIT
//
// Softpick and gated attention against closed forms on hand-made inputs:
//   softpick  a_k = relu(e^{s_k} - 1) / sum_t |e^{s_t} - 1|, 0/0 := 0; with
//             s = (ln 2, ln 3): u = (1, 2), a = (1/3, 2/3); s = (ln 3,
//             -ln 2): u = (2, -1/2), a = (4/5, 0)
//   gated     o_i = sigma(G x_i) * (M V_i), softmax weights
// and the MPFI row against MPFR at points of random boxes of scores.
#include "src/attention.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "src/forward.h"
#include "src/forward_vjp.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

using testing::near;

// A closed form evaluated in double against the kernel in double: a few
// roundings of O(1) numbers, far below this.
constexpr double kClosedForm = 1e-14;

std::vector<double> softpick(std::vector<double> s) {
  std::vector<double> a(s.size());
  attention_row(AttentionKind::kSoftpick, static_cast<int>(s.size()) - 1, s.data(), a.data());
  return a;
}

TEST_CASE("softpick: closed forms on two tokens, the 0/0 row, large scores") {
  const double ln2 = std::log(2.0), ln3 = std::log(3.0);
  // u = (1, 2): a = (1/3, 2/3)
  std::vector<double> a = softpick({ln2, ln3});
  CHECK(near(a[0], 1.0 / 3.0, kClosedForm));
  CHECK(near(a[1], 2.0 / 3.0, kClosedForm));
  // u = (2, -1/2): the negative score only enlarges the denominator
  a = softpick({ln3, -ln2});
  CHECK(near(a[0], 0.8, kClosedForm));
  CHECK(a[1] == 0.0);
  // every score <= 0: all weights 0 (the sum of |u| is positive)
  a = softpick({-1.0, -2.0, 0.0});
  for (double v : a) CHECK(v == 0.0);
  // every score exactly 0: 0/0 := 0, not NaN
  a = softpick({0.0, 0.0});
  CHECK(a[0] == 0.0);
  CHECK(a[1] == 0.0);
  // one positive score: it takes everything the others do not cancel
  a = softpick({0.0, 5.0});
  CHECK(a[1] == 1.0);
  // scores far beyond exp's range: scaled by the largest, (1/3, 2/3) again
  a = softpick({1000.0, 1000.0 + ln2});
  CHECK(near(a[0], 1.0 / 3.0, 1e-12));
  CHECK(near(a[1], 2.0 / 3.0, 1e-12));
  // no cancellation in the scaled form: a_1 = (e^t - 1) / (e^50 - 1 + e^t - 1)
  // ~ t e^-50 for t = 1e-20 (relu(e^{t - 50} - e^{-50}) would round to 0)
  a = softpick({50.0, 1e-20});
  CHECK(near(a[1] / (1e-20 * std::exp(-50.0)), 1.0, 1e-12));
  // Jets through the kernel: at s = (ln 2, ln 3), u = (1, 2), D = 3,
  // d a_0 / d s_0 = e^{s_0} / D - u_0 e^{s_0} / D^2 = 2/3 - 2/9 = 4/9
  using Jet = ceres::Jet<double, 1>;
  std::vector<Jet> s = {Jet(ln2, 0), Jet(ln3)}, aj(2);
  attention_row(AttentionKind::kSoftpick, 1, s.data(), aj.data());
  CHECK(near(aj[0].v[0], 4.0 / 9.0, kClosedForm));
  // and d a_1 / d s_0 = -u_1 e^{s_0} / D^2 = -4/9
  CHECK(near(aj[1].v[0], -4.0 / 9.0, kClosedForm));
}

TEST_CASE("softpick in exact arithmetic is refused, as softmax is") {
  std::vector<Rational> s = {Rational(1), Rational(2)}, a(2);
  CHECK_THROWS_AS(attention_row(AttentionKind::kSoftpick, 1, s.data(), a.data()),
                  std::domain_error);
}

// A value v lies in the enclosure e (both at the current precision).
bool encloses(const Mpfi& e, const Mpfr& v) {
  return Mpfr(bmp::lower(e)) <= v && v <= Mpfr(bmp::upper(e));
}

TEST_CASE("softpick over intervals: encloses MPFR at points of random boxes, tight at points") {
  // enclosures at 128 bits, point values at 512 bits (their rounding, ~1e-154,
  // is far inside the outward rounding of the enclosures)
  std::mt19937_64 eng(3);
  std::normal_distribution<double> normal(0.0, 2.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int outside = 0, checked = 0, expected_checks = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int count = 1 + trial % 6;
    // boxes [lo, hi] = [c - r, c + r] in double; every fifth straddles 0
    std::vector<double> lo(count), hi(count);
    for (int t = 0; t < count; ++t) {
      const double c = (trial + t) % 5 == 0 ? 0.0 : normal(eng);
      const double r = trial % 3 == 0 ? 0.0 : 0.1 * unit(eng);
      lo[t] = c - r;
      hi[t] = c + r;
    }
    std::vector<Mpfi> enc(count);
    {
      PrecisionScope low(128);
      std::vector<Mpfi> box(count);
      for (int t = 0; t < count; ++t) box[t] = Mpfi(Mpfr(lo[t]), Mpfr(hi[t]));
      attention_row(AttentionKind::kSoftpick, count - 1, box.data(), enc.data());
    }
    PrecisionScope high(512);
    for (int p = 0; p < 10; ++p) {
      // p = 0, 1: the ends of the box; then random points inside
      std::vector<Mpfr> point(count), a(count);
      for (int t = 0; t < count; ++t) {
        const double x = p == 0 ? lo[t] : p == 1 ? hi[t] : lo[t] + (hi[t] - lo[t]) * unit(eng);
        point[t] = Mpfr(std::min(hi[t], std::max(lo[t], x)));
      }
      attention_row(AttentionKind::kSoftpick, count - 1, point.data(), a.data());
      for (int t = 0; t < count; ++t) {
        outside += !encloses(enc[t], a[t]);
        ++checked;
      }
      expected_checks += count;
    }
    // a point box gives a tight enclosure (not merely [0, 1])
    if (trial % 3 == 0) {
      for (int t = 0; t < count; ++t) {
        CHECK(Mpfr(Mpfr(bmp::upper(enc[t])) - Mpfr(bmp::lower(enc[t]))) < Mpfr(1e-30));
      }
    }
  }
  CHECK(checked == expected_checks);
  CHECK(outside == 0);
  // the check can fail: a value moved by 1e-20 leaves a point enclosure
  std::vector<Mpfi> s(2), a(2);
  {
    PrecisionScope low(128);
    s = {Mpfi(0.5), Mpfi(-0.25)};
    attention_row(AttentionKind::kSoftpick, 1, s.data(), a.data());
  }
  PrecisionScope high(512);
  std::vector<Mpfr> sp = {Mpfr(0.5), Mpfr(-0.25)}, ap(2);
  attention_row(AttentionKind::kSoftpick, 1, sp.data(), ap.data());
  CHECK(encloses(a[0], ap[0]));
  CHECK_FALSE(encloses(a[0], Mpfr(ap[0] + Mpfr(1e-20))));
}

// n = 3, two tokens x_0 = e_0, x_1 = e_1; A(1, 0) = ln 3 makes s_10 = ln 3,
// s_11 = 0: a_1 = (3/4, 1/4); M swaps coordinates 0 and 1; G's columns set
// the gates: G e_0 = (ln 4, 0, 0) -> g_0 = (4/5, 1/2, 1/2), G e_1 = (0, ln 3,
// -ln 3) -> g_1 = (1/2, 3/4, 1/4).
//   o_0 = g_0 * M e_0 = (0, 1/2, 0)
//   o_1 = g_1 * M (3/4, 1/4, 0) = (1/2, 3/4, 1/4) * (1/4, 3/4, 0) = (1/8, 9/16, 0)
// (gating before M would give M (g_1 * V_1) = (3/16, 3/8, 0); a gate from G^T
// or from the key token differs as well.)
TEST_CASE("gated attention: the gate multiplies the output of M, computed from the query") {
  Matrix<double> A = Matrix<double>::Zero(3, 3), M = Matrix<double>::Zero(3, 3);
  A(1, 0) = std::log(3.0);
  M(0, 1) = M(1, 0) = M(2, 2) = 1.0;
  Model<double> m = single_head_model(AttentionKind::kGated, A, M);
  m.layers[0][0].G = Matrix<double>::Zero(3, 3);
  m.layers[0][0].G(0, 0) = std::log(4.0);
  m.layers[0][0].G(1, 1) = std::log(3.0);
  m.layers[0][0].G(2, 1) = -std::log(3.0);
  Matrix<double> X = Matrix<double>::Zero(2, 3);
  X(0, 0) = X(1, 1) = 1.0;
  const ForwardResult<double> r = forward(m, X);
  const double expected[2][3] = {{0.0, 0.5, 0.0}, {0.125, 0.5625, 0.0}};
  for (int i = 0; i < 2; ++i) {
    for (int d = 0; d < 3; ++d) CHECK(near(r.output(i, d), expected[i][d], kClosedForm));
  }
  CHECK(near(r.attention[0][0](1, 0), 0.75, kClosedForm));
  // the taped pass agrees
  const ForwardTape<double> tape = forward_tape(m, X);
  for (int d = 0; d < 3; ++d) CHECK(near(tape.output(1, d), expected[1][d], kClosedForm));
  // without the gate matrix, or with the wrong shape, it refuses
  Model<double> bare = m;
  bare.layers[0][0].G = Matrix<double>();
  CHECK_THROWS_AS(forward(bare, X), std::invalid_argument);
  CHECK_THROWS_AS(forward_tape(bare, X), std::invalid_argument);
  // exact arithmetic has no sigmoid
  CHECK_THROWS_AS(forward(m.cast<Rational>(), matrix_cast<Rational>(X)), std::domain_error);
}

}  // namespace
}  // namespace sinkcert
