// SPDX-License-Identifier: MIT
#include "src/evaluation.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <optional>

#include "src/constructions.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

using testing::cast_matrix;

TEST_CASE("round-trip digits: 17 for double, 9 for float, 36 for quad") {
  CHECK(decimal_digits_for_bits(53) == 17);
  CHECK(decimal_digits_for_bits(24) == 9);
  CHECK(decimal_digits_for_bits(113) == 36);
  CHECK(format_decimal(0.1, 17) == "0.10000000000000001");
  CHECK(std::stod(format_decimal(1.0 / 3.0, 17)) == 1.0 / 3.0);
  PrecisionScope scope(200);
  const Mpfr third = Mpfr(1) / 3;
  const int digits = decimal_digits_for_bits(PrecisionScope::current_bits());
  const std::string text = format_decimal(third, digits);
  CHECK(Mpfr(text) == third);
  CHECK(Mpfr(format_decimal(third, 17)) != third);  // 17 digits are not enough here
}

TEST_CASE("evaluate: exact zero error for the ReLU construction, located error otherwise") {
  const Task task{6, 8, TriggerRange::kPaper};
  TaskSampler sampler(task, 4);
  const Sample s = sampler.next();
  const Evaluation<Rational> e =
      evaluate(relu_construction<Rational>(6), cast_matrix<Rational>(s.X), s.trigger);
  CHECK(e.error.value == 0);
  CHECK(e.result.attention.size() == 1);
  // M = 1.001 I: the only nonzero output is at the trigger row, off by
  // 0.001 * mean; the largest coordinate there is the flag sum.
  Model<Rational> bent = relu_construction<Rational>(6);
  bent.layers[0][0].M *= Rational(1001, 1000);
  const Evaluation<Rational> b = evaluate(bent, cast_matrix<Rational>(s.X), s.trigger);
  CHECK(b.error.value > 0);
  CHECK(b.error.position == s.trigger);
  const nlohmann::json j = to_json(evaluate(relu_construction<double>(6), s.X, s.trigger), 17);
  CHECK(j["linf_error"]["value"].is_number());
  CHECK(j["output"].size() == 8);
  CHECK(j["attention"][0][0].size() == 8);
  CHECK(j["trigger"] == s.trigger);
  PrecisionScope scope(100);
  const nlohmann::json jm =
      to_json(evaluate(relu_construction<Mpfr>(6), cast_matrix<Mpfr>(s.X), s.trigger), 32);
  CHECK(jm["output"][0][0].is_string());
}

TEST_CASE("non-finite values are printed and written as NaN, Infinity, -Infinity") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(format_decimal(nan, 17) == "NaN");
  CHECK(format_decimal(-nan, 17) == "NaN");  // printf would write "-nan"
  CHECK(format_decimal(inf, 17) == "Infinity");
  CHECK(format_decimal(-inf, 17) == "-Infinity");
  CHECK(json_number(nan, 17) == "NaN");  // nlohmann would write null
  CHECK(json_number(-inf, 17) == "-Infinity");
  CHECK(json_number(0.5, 17) == 0.5);
  PrecisionScope scope(100);
  CHECK(format_decimal(Mpfr(nan), 31) == "NaN");
  CHECK(json_number(Mpfr(inf), 31) == "Infinity");
  CHECK(non_finite_name(Mpfi(Mpfr(0), Mpfr(inf))) == "Infinity");
  CHECK(non_finite_name(Mpfr(1e300) * Mpfr(1e300)).empty());  // MPFR's exponent range
  CHECK(non_finite_name(Rational(1, 3)).empty());
}

TEST_CASE("a forward pass that overflows: NaN located, reported, written as \"NaN\"") {
  // A[1][0] = A[2][0] = 1e308: the trigger token (x[1] = 1) with content
  // x[2] = 1 scores 2e308 = inf on BOS in double, and softmax's s - max is
  // inf - inf = NaN: row 3 (the trigger) is NaN, rows 1 and 2 are finite.
  const int n = 4;
  Matrix<double> A = Matrix<double>::Zero(n, n);
  A(1, 0) = 1e308;
  A(2, 0) = 1e308;
  const Model<double> m =
      single_head_model<double>(AttentionKind::kSoftmax, A, Matrix<double>::Identity(n, n));
  Matrix<double> X(4, n);
  X << 1, 0, 0, 0,   //
      0, 0, 0.5, 1,  //
      0, 0, 1, 1,    //
      0, 1, 1, 0;
  const Evaluation<double> e = evaluate(m, X, 3);
  CHECK(std::isnan(e.error.value));
  CHECK(e.error.position == 3);
  CHECK(e.error.coordinate == 0);
  const std::optional<NonFiniteValue> bad = find_non_finite(e);
  REQUIRE(bad.has_value());
  CHECK(bad->where == "output");
  CHECK(bad->site == NonFiniteValue::Site::kOutput);
  CHECK(bad->location() == "the output at position 3, coordinate 0");
  CHECK(bad->row == 3);
  CHECK(bad->col == 0);
  CHECK(bad->value == "NaN");
  const nlohmann::json j = to_json(e, 17);
  CHECK(j["linf_error"]["value"] == "NaN");
  CHECK(j["output"][3][0] == "NaN");
  CHECK(j["output"][1][0].is_number());
  CHECK(j.dump().find("null") == std::string::npos);
  // In 256-bit MPFR, 2e308 is an ordinary number: every value is finite.
  PrecisionScope scope(256);
  const Evaluation<Mpfr> em = evaluate(m.cast<Mpfr>(), cast_matrix<Mpfr>(X), 3);
  CHECK_FALSE(find_non_finite(em).has_value());
  CHECK(em.error.value == 1);
  // Finite models report nothing.
  CHECK_FALSE(find_non_finite(evaluate(relu_construction<double>(n), X, 3)).has_value());
  // A non-finite attention entry is found even where the output is finite.
  Evaluation<double> only_attention = evaluate(relu_construction<double>(n), X, 3);
  only_attention.result.attention[0][0](2, 1) = -std::numeric_limits<double>::infinity();
  const std::optional<NonFiniteValue> in_attention = find_non_finite(only_attention);
  REQUIRE(in_attention.has_value());
  CHECK(in_attention->where == "attention layer 0 head 0");
  CHECK(in_attention->site == NonFiniteValue::Site::kAttention);
  CHECK(in_attention->location() == "the attention layer 0 head 0 at row 2, column 1");
  CHECK(in_attention->row == 2);
  CHECK(in_attention->col == 1);
  CHECK(in_attention->value == "-Infinity");
}

}  // namespace
}  // namespace sinkcert
