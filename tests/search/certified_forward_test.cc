// SPDX-License-Identifier: MIT
#include "search/certified_forward.h"

#include <doctest/doctest.h>

#include <random>

#include "tests/test_util.h"

namespace sinkcert::search {
namespace {

using testing::random_model;

// Both passes enclose the same f(X) at 128 bits: their enclosures overlap,
// contain the double pass, and are nearly as narrow as each other (the
// linear-time softmax only regroups the exact-range formula's sums).
constexpr int kBits = 128;
// Relative width allowed: far above 128-bit rounding (about 1e-38) times
// the few dozen operations per entry, far below any double ulp (1e-16).
constexpr double kRelativeWidth = 1e-30;

TEST_CASE("certified_forward encloses the forward pass of every attention kind") {
  const Task task{7, 9, TriggerRange::kPaper};
  for (AttentionKind kind :
       {AttentionKind::kSoftmax, AttentionKind::kSoftmaxOffByOne, AttentionKind::kGated,
        AttentionKind::kRelu, AttentionKind::kSigmoid, AttentionKind::kSoftpick}) {
    for (ModelKind mk : {ModelKind::kSingleLayer, ModelKind::kResidual}) {
      CAPTURE(to_string(kind));
      CAPTURE(to_string(mk));
      const int layers = mk == ModelKind::kResidual ? 2 : 1;
      const Model<double> m = random_model(task.n, kind, 1.5, 5, layers, 2, mk);
      std::mt19937_64 eng(9);
      Matrix<double> C(task.L - 1, task.content_dim());
      for (int t = 0; t < C.size(); ++t) C.data()[t] = (eng() & 1) ? 1.0 : -0.5;
      const Matrix<double> Xd = make_input<double>(task, 4, C);
      const auto want = forward(m, Xd, true);
      PrecisionScope scope(kBits);
      const Model<Mpfi> mi = m.cast<Mpfi>();
      const Matrix<Mpfi> X = matrix_cast<Mpfi>(Xd);
      const auto a = certified_forward(mi, X, true);
      const auto b = forward(mi, X, true);
      for (int i = 0; i < task.L; ++i) {
        for (int d = 0; d < task.n; ++d) {
          const Mpfi& x = a.output(i, d);
          const Mpfi& y = b.output(i, d);
          CHECK(bmp::lower(x) <= bmp::upper(y));
          CHECK(bmp::lower(y) <= bmp::upper(x));
          const double width = static_cast<double>(bmp::upper(x) - bmp::lower(x));
          const double scale = std::max(1.0, std::abs(want.output(i, d)));
          CHECK(width <= kRelativeWidth * scale);
          // the double pass lies within rounding of the enclosure
          CHECK(static_cast<double>(bmp::lower(x)) <= want.output(i, d) + 1e-12 * scale);
          CHECK(static_cast<double>(bmp::upper(x)) >= want.output(i, d) - 1e-12 * scale);
        }
        for (int k = 0; k <= i; ++k) {
          const Mpfi& x = a.attention[0][0](i, k);
          const Mpfi& y = b.attention[0][0](i, k);
          CHECK(bmp::lower(x) <= bmp::upper(y));
          CHECK(bmp::lower(y) <= bmp::upper(x));
        }
      }
    }
  }
}

TEST_CASE("softmax_enclosure: one logit, and a row dominated by one term") {
  PrecisionScope scope(kBits);
  Mpfi s1[1] = {Mpfi(3)};
  Mpfi a1[1];
  softmax_enclosure(s1, 1, false, a1);
  CHECK(bmp::lower(a1[0]) == 1);
  CHECK(bmp::upper(a1[0]) == 1);
  // off-by-one with one logit 0: a = 1 / 2
  Mpfi s0[1] = {Mpfi(0)};
  softmax_enclosure(s0, 1, true, a1);
  CHECK(bmp::lower(a1[0]) <= Mpfr(0.5));
  CHECK(bmp::upper(a1[0]) >= Mpfr(0.5));
  CHECK(static_cast<double>(bmp::upper(a1[0]) - bmp::lower(a1[0])) < kRelativeWidth);
  // s = (0, -60, 60): a_2 = 1 / (1 + e^-60 + e^-120), the others tiny but positive
  Mpfi s[3] = {Mpfi(0), Mpfi(-60), Mpfi(60)};
  Mpfi a[3];
  softmax_enclosure(s, 3, false, a);
  CHECK(bmp::lower(a[1]) > 0);
  CHECK(static_cast<double>(bmp::upper(a[1])) < 1e-50);
  CHECK(bmp::lower(a[2]) > Mpfr(1) - Mpfr(1e-25));
  CHECK(bmp::upper(a[2]) <= 1);
}

}  // namespace
}  // namespace sinkcert::search
