// SPDX-License-Identifier: MIT
#include "src/certified_eval.h"

#include <doctest/doctest.h>

#include "src/constructions.h"
#include "src/forward.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

// The sink family's worst BOS deficit on n = L = 16 with the trigger at 1:
// row L-1 = 15 puts 15 / (e^beta + 15) off BOS (constructions.h).
Mpfr sink_deficit(double beta) { return Mpfr(15) / (bmp::exp(Mpfr(beta)) + 15); }

Matrix<double> vertex_input(const Task& task, int j, double value) {
  return make_input<double>(task, j, Matrix<double>::Constant(task.L - 1, task.content_dim(), value));
}

TEST_CASE("certified digits of enclosures") {
  PrecisionScope scope(128);
  CHECK(certified_digits(Mpfi(Mpfr(1), Mpfr("1.0005"))) == 3);
  CHECK(certified_digits(Mpfi(Mpfr("-2e-100"), Mpfr("-1.99e-100"))) == 2);
  CHECK(certified_digits(Mpfi(Mpfr(-1), Mpfr(1))) == 0);
  CHECK(certified_digits(Mpfi(Mpfr(3))) == kExactDigits);
}

TEST_CASE("correct digits: a double that returns 0 has none") {
  PrecisionScope scope(128);
  const Mpfi truth(Mpfr("6.37e-17"), Mpfr("6.38e-17"));
  CHECK(correct_digits(Mpfr(0), truth) == 0);
  CHECK(correct_digits(Mpfr("6.375e-17"), truth) == 2);
  // Never more than the enclosure certifies.
  CHECK(correct_digits(Mpfr("6.375e-17"), Mpfi(Mpfr("6.3e-17"), Mpfr("6.4e-17"))) <= 1);
}

TEST_CASE("adaptive precision raises bits until the BOS deficit is certified") {
  const Task task{16, 16, TriggerRange::kPaper};
  const Model<double> model = sink_family<double>(16, 40.0);
  AdaptiveOptions options;
  options.digits = 10;
  const CertifiedEvaluation e = certify_forward(model, vertex_input(task, 1, 1.0), 1, options);
  REQUIRE(e.reached);
  // 1 - a_i0 ~ 6.4e-17 is computed as 1 minus a number near 1, so 10
  // relative digits need about 57 + 34 bits: 64 bits cannot do it.
  CHECK(e.bits > 64);
  CHECK(e.bits <= 192);
  CHECK(e.digits >= 10);
  const Mpfi& worst = e.max_bos_deficit[0][0];
  CHECK(bits_for_digits10(static_cast<int>(bmp::lower(worst).precision())) >= e.bits);
  PrecisionScope high(1024);
  const Mpfr truth = sink_deficit(40.0);
  CHECK(Mpfr(bmp::lower(worst)) <= truth);
  CHECK(Mpfr(bmp::upper(worst)) >= truth);
  // The loss at this input is attained in row 15, coordinate n-1 or content.
  CHECK(e.error_position == 15);
  CHECK(Mpfr(bmp::lower(e.linf_error)) <= truth);
  CHECK(Mpfr(bmp::upper(e.linf_error)) >= truth);
}

TEST_CASE("adaptive precision reports failure below the needed precision") {
  const Task task{16, 16, TriggerRange::kPaper};
  const Model<double> model = sink_family<double>(16, 80.0);
  AdaptiveOptions options;
  options.digits = 10;
  options.max_bits = 128;  // 1 - a ~ 2.7e-34 needs about 112 + 34 bits
  const CertifiedEvaluation e = certify_forward(model, vertex_input(task, 1, 1.0), 1, options);
  CHECK_FALSE(e.reached);
  CHECK(e.bits == 128);
  CHECK(e.digits < 10);
}

TEST_CASE("bad adaptive options are refused") {
  AdaptiveOptions options;
  options.max_bits = 32;
  CHECK_THROWS_AS(certify_adaptively([] { return std::vector<Mpfi>{}; }, options),
                  std::invalid_argument);
}

}  // namespace
}  // namespace sinkcert

namespace sinkcert {
namespace {

// Regression: Eigen's blocked GEMM returned NaN entries for MPFI at shapes
// that are not multiples of its register blocks (L = 8, n = 6 here); the
// forward pass uses coefficient-based products for intervals.
TEST_CASE("certified evaluation at L = 8, n = 6 has no NaN and encloses MPFR") {
  const Task task{6, 8, TriggerRange::kPaper};
  const Model<double> m = testing::random_model(6, AttentionKind::kSoftmax, 1.0, 3);
  TaskSampler sampler(task, 9);
  const Sample s = sampler.next();
  AdaptiveOptions options;
  options.digits = 15;
  const CertifiedEvaluation e = certify_forward(m, s.X, s.trigger, options);
  REQUIRE(e.reached);
  PrecisionScope high(1024);
  const auto r = forward(m.cast<Mpfr>(), testing::cast_matrix<Mpfr>(s.X));
  for (int i = 0; i < task.L; ++i) {
    for (int d = 0; d < task.n; ++d) {
      CHECK(Mpfr(bmp::lower(e.output(i, d))) <= r.output(i, d));
      CHECK(Mpfr(bmp::upper(e.output(i, d))) >= r.output(i, d));
    }
  }
}

}  // namespace
}  // namespace sinkcert
