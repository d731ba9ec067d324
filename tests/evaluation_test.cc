// SPDX-License-Identifier: MIT
#include "src/evaluation.h"

#include <doctest/doctest.h>

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

}  // namespace
}  // namespace sinkcert
