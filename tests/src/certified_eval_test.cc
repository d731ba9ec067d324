// SPDX-License-Identifier: MIT
#include "src/certified_eval.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "src/constructions.h"
#include "src/forward.h"
#include "src/table_writer.h"
#include "src/task.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

// The sink family's worst BOS deficit on n = L = 16 with the trigger at 1:
// row L-1 = 15 puts 15 / (e^beta + 15) off BOS (constructions.h).
Mpfr sink_deficit(double beta) { return Mpfr(15) / (bmp::exp(Mpfr(beta)) + 15); }

Matrix<double> vertex_input(const Task& task, int j, double value) {
  return make_input<double>(task, j,
                            Matrix<double>::Constant(task.L - 1, task.content_dim(), value));
}

TEST_CASE("certified digits of enclosures") {
  PrecisionScope scope(128);
  CHECK(certified_digits(Mpfi(Mpfr(1), Mpfr("1.0005"))) == 3);
  CHECK(certified_digits(Mpfi(Mpfr("-2e-100"), Mpfr("-1.99e-100"))) == 2);
  CHECK(certified_digits(Mpfi(Mpfr(-1), Mpfr(1))) == 0);
  CHECK(certified_digits(point_interval(Mpfr(3))) == kExactDigits);
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
  // relative digits need about 57 + 34 bits: 64 bits cannot do it. (A
  // request for 192 bits is met with 194, scalar_traits.h.)
  CHECK(e.bits > 65);
  CHECK(e.bits <= bits_for_digits10(digits10_for_bits(192)));
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

TEST_CASE("adaptive precision reports the bits used, not the bits requested") {
  AdaptiveOptions options;
  options.digits = 5;
  int precision_seen = 0;
  const AdaptiveResult r = certify_adaptively(
      [&] {
        precision_seen = PrecisionScope::current_bits();
        return std::vector<Mpfi>{Mpfi(1) / Mpfi(3)};
      },
      options);
  REQUIRE(r.reached);
  // 64 bits requested: Boost allocates 65 (19 decimal digits)
  CHECK(precision_seen == bits_for_digits10(digits10_for_bits(64)));
  CHECK(r.bits == precision_seen);
  const Mpfr lower_end = bmp::lower(r.values[0]);
  const int value_bits = static_cast<int>(mpfr_get_prec(lower_end.backend().data()));
  CHECK(value_bits == r.bits);
}

// The sink family at beta = 1000 on n = 6, L = 4, trigger 1, content +1 in
// coordinate 2 and 1/2 elsewhere: the unique largest term is row 3 (the last
// non-trigger row), coordinate 2, of size 3 / (e^1000 + 3) ~ 2e-434, far
// below double's range; coordinates 3, 4 hold half of it, coordinate 5 (the
// ordinary flag) two thirds, and the trigger row about e^-1000.
TEST_CASE("the location of an error below 1e-308 is chosen in MPFR, not through double") {
  const Task task{6, 4, TriggerRange::kPaper};
  const Model<double> model = sink_family<double>(6, 1000.0);
  Matrix<double> C = Matrix<double>::Constant(task.L - 1, task.content_dim(), 0.5);
  C.col(0).setConstant(1.0);
  AdaptiveOptions options;
  options.digits = 3;
  options.max_bits = 4096;
  const CertifiedEvaluation e = certify_forward(model, make_input<double>(task, 1, C), 1, options);
  REQUIRE(e.reached);
  CHECK(e.error_position == 3);
  CHECK(e.error_coordinate == 2);
  PrecisionScope high(4096);
  const Mpfr truth = Mpfr(3) / (bmp::exp(Mpfr(1000)) + 3);
  CHECK(Mpfr(bmp::upper(e.linf_error)) < Mpfr("1e-400"));
  CHECK(Mpfr(bmp::lower(e.linf_error)) <= truth);
  CHECK(Mpfr(bmp::upper(e.linf_error)) >= truth);
}

// An exact rational model and input (1/3 is not a double): each entry is
// enclosed at the working precision, and the enclosures hold the value
// computed from the exact entries in 4096-bit MPFR.
TEST_CASE("certify_forward on an exact rational model and input") {
  const Task task{5, 4, TriggerRange::kPaper};
  Model<Rational> model = sink_family<Rational>(5, Rational(10));
  model.layers[0][0].M(2, 3) = Rational(1, 3);
  Matrix<Rational> C = Matrix<Rational>::Constant(task.L - 1, task.content_dim(), Rational(1, 3));
  C(2, 1) = Rational(-1, 7);
  const Matrix<Rational> X = make_input<Rational>(task, 2, C);
  AdaptiveOptions options;
  options.digits = 20;
  const CertifiedEvaluation e = certify_forward(model, X, 2, options);
  REQUIRE(e.reached);
  PrecisionScope high(4096);
  const auto r = forward(model.cast<Mpfr>(), matrix_cast<Mpfr>(X));
  for (int i = 0; i < task.L; ++i) {
    for (int d = 0; d < task.n; ++d) {
      CHECK(Mpfr(bmp::lower(e.output(i, d))) <= r.output(i, d));
      CHECK(Mpfr(bmp::upper(e.output(i, d))) >= r.output(i, d));
    }
  }
  // the double rounding of the model is a different model: its output at
  // row 3, coordinate 2 (which reads M(2, 3) = 1/3) lies outside the
  // enclosure of the exact one
  const auto rd = forward(model.cast<double>().cast<Mpfr>(), matrix_cast<Mpfr>(X));
  CHECK_FALSE((Mpfr(bmp::lower(e.output(3, 2))) <= rd.output(3, 2) &&
               Mpfr(bmp::upper(e.output(3, 2))) >= rd.output(3, 2)));
}

// The significant digits of the lower end of a printed enclosure
// "[d.ddde-17, ...]": the mantissa's digits before the exponent.
int lower_end_digits(const std::string& interval) {
  int digits = 0;
  for (std::size_t k = 1; k < interval.size() && interval[k] != 'e' && interval[k] != ','; ++k) {
    if (interval[k] >= '0' && interval[k] <= '9') ++digits;
  }
  return digits;
}

// The sink family at n = 6, L = 4, trigger 2, every content coordinate 1:
// the BOS deficits are 3 / (e^beta + 3) at the ordinary rows.
CertifiedEvaluation small_sink_evaluation(double beta, int digits, int max_bits) {
  const Task task{6, 4, TriggerRange::kPaper};
  AdaptiveOptions options;
  options.digits = digits;
  options.max_bits = max_bits;
  return certify_forward(sink_family<double>(6, beta), vertex_input(task, 2, 1.0), 2, options);
}

TEST_CASE("to_json reports the certified evaluation with two guard digits") {
  const CertifiedEvaluation e = small_sink_evaluation(40.0, 5, 4096);
  REQUIRE(e.reached);
  const nlohmann::json j = to_json(e);
  CHECK(j["evidence"] == "CERTIFIED");
  CHECK(j["digits_requested"] == 5);
  CHECK(j["digits_certified"] == e.digits);
  CHECK(j["reached"] == true);
  CHECK(j["precision_bits"] == e.bits);
  CHECK(j["error_position"] == e.error_position);
  CHECK(j["error_coordinate"] == e.error_coordinate);
  // 5 requested + 2 guard digits, each end rounded outward
  CHECK(shown_digits(e) == 7);
  CHECK(j["linf_error"] == format_interval(e.linf_error, 7));
  CHECK(lower_end_digits(j["linf_error"].get<std::string>()) == 7);
  REQUIRE(j["bos_deficit"].size() == 1);  // one layer, one head
  const nlohmann::json& head = j["bos_deficit"][0];
  CHECK(head["layer"] == 0);
  CHECK(head["head"] == 0);
  REQUIRE(head["one_minus_bos"].size() == 4);  // every position i = 0..L-1
  for (int i = 0; i < 4; ++i) {
    CHECK(head["one_minus_bos"][i] == format_interval(e.bos_deficit[0][0][i], 7));
  }
  CHECK(head["max_over_non_trigger"] == format_interval(e.max_bos_deficit[0][0], 7));
  // a request beyond the cap prints kMaxShownDigits, not digits + 2
  CertifiedEvaluation many = e;
  many.options.digits = 100;
  CHECK(shown_digits(many) == kMaxShownDigits);
  CHECK(lower_end_digits(to_json(many)["linf_error"].get<std::string>()) == kMaxShownDigits);
}

TEST_CASE("summary_text: precision needed, e(X), every non-BOS position, the trigger marked") {
  const CertifiedEvaluation e = small_sink_evaluation(40.0, 5, 4096);
  REQUIRE(e.reached);
  const std::string text = summary_text(e);
  CHECK(evidence_label(e) == "CERTIFIED");
  CHECK(text.find("precision: mpfi, adaptive from 64 bits (+64): " + std::to_string(e.bits) +
                  " bits needed for 5 digits; " + std::to_string(e.digits) + " certified\n") == 0);
  CHECK(text.find("cap reached") == std::string::npos);
  CHECK(text.find("l_inf error e(X) in " + format_interval(e.linf_error, 7) +
                  " [CERTIFIED] at position " + std::to_string(e.error_position) + ", coordinate " +
                  std::to_string(e.error_coordinate) + "\n") != std::string::npos);
  CHECK(text.find("layer 0 head 0: 1 - a_i0 [CERTIFIED]\n") != std::string::npos);
  // positions 1..L-1, the trigger (2) marked and no other
  CHECK(text.find("  position 1: ") != std::string::npos);
  CHECK(text.find("  position 2 (trigger): ") != std::string::npos);
  CHECK(text.find("  position 3: ") != std::string::npos);
  CHECK(text.find("  position 0") == std::string::npos);
  CHECK(text.find("(trigger)") == text.rfind("(trigger)"));
  CHECK(text.find("  max over non-trigger positions (1 - min BOS mass): " +
                  format_interval(e.max_bos_deficit[0][0], 7) + "\n") != std::string::npos);
  // 2 header lines, then per head a title, L - 1 positions and the max
  std::istringstream lines(text);
  int count = 0;
  for (std::string line; std::getline(lines, line);) ++count;
  CHECK(count == 2 + 1 + 3 + 1);
}

TEST_CASE("a cap reached before the digits is reported as such in text and JSON") {
  // 1 - a_i0 = 3 / (e^80 + 3) ~ 5e-35 needs about 115 + 17 bits for 5
  // digits: the 128-bit cap cannot give them.
  const CertifiedEvaluation e = small_sink_evaluation(80.0, 5, 128);
  REQUIRE_FALSE(e.reached);
  CHECK(evidence_label(e) == "CERTIFIED (fewer digits than requested)");
  const std::string text = summary_text(e);
  CHECK(text.find(" certified (cap reached: UNDECIDED)\n") != std::string::npos);
  CHECK(text.find("[CERTIFIED (fewer digits than requested)] at position") != std::string::npos);
  const nlohmann::json j = to_json(e);
  CHECK(j["reached"] == false);
  CHECK(j["precision_bits"] == 128);
  CHECK(j["digits_certified"].get<int>() < 5);
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
// Also softpick and gated (a residual gated model: the gate reads each
// layer's input): the certified pass reaches 15 digits and encloses MPFR in
// the outputs and the BOS deficits 1 - a_i0.
TEST_CASE("certified evaluation at L = 8, n = 6 has no NaN and encloses MPFR") {
  const Task task{6, 8, TriggerRange::kPaper};
  for (AttentionKind kind :
       {AttentionKind::kSoftmax, AttentionKind::kSoftpick, AttentionKind::kGated}) {
    CAPTURE(to_string(kind));
    const Model<double> m = kind == AttentionKind::kGated
                                ? testing::random_model(6, kind, 1.0, 3, 2, 2, ModelKind::kResidual)
                                : testing::random_model(6, kind, 1.0, 3);
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
      const Mpfr deficit = Mpfr(1) - r.attention[0][0](i, 0);
      CHECK(Mpfr(bmp::lower(e.bos_deficit[0][0][i])) <= deficit);
      CHECK(Mpfr(bmp::upper(e.bos_deficit[0][0][i])) >= deficit);
    }
  }
}

}  // namespace
}  // namespace sinkcert
