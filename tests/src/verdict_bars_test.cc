// SPDX-License-Identifier: MIT
#include "src/verdict_bars.h"

#include <doctest/doctest.h>

#include <limits>
#include <stdexcept>

#include "src/json_reader.h"

namespace sinkcert {
namespace {

bool starts(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST_CASE("the defaults are 5e-3 and 0.5, kept as written") {
  const VerdictBars bars;
  CHECK(bars.tolerance == Rational(5, 1000));
  CHECK(bars.sink_bar == Rational(1, 2));
  CHECK(bars.tolerance_words() == "5e-3 (tolerance)");
  CHECK(bars.sink_bar_words() == "0.5 (sink bar)");
}

TEST_CASE("bars are exact decimals in range; anything else names the bar") {
  // exact: above 1/10, below the double nearest 0.1
  CHECK(parse_tolerance("0.1000000000000000001") > Rational(1, 10));
  CHECK(parse_tolerance("0.1000000000000000001") < Rational(0.1));
  CHECK(parse_sink_bar("1") == 1);
  // the command line's notation, as for a claim (json_reader.h, parse_user_decimal)
  CHECK(parse_sink_bar(".5") == Rational(1, 2));
  CHECK(parse_sink_bar("+0.5") == Rational(1, 2));
  CHECK(parse_tolerance("5.e-3") == Rational(1, 200));
  CHECK(parse_tolerance("005e-3") == Rational(1, 200));
  for (const char* bad : {"", ".", "abc", "-1e-3", "nan", "inf", "0x1p-3", "1e-3 ", "1..2"}) {
    CHECK_THROWS_AS(parse_tolerance(bad), std::invalid_argument);
  }
  for (const char* bad : {"0", "-0.5", "1.0000001", "half"}) {
    CHECK_THROWS_AS(parse_sink_bar(bad), std::invalid_argument);
  }
  CHECK_THROWS_WITH_AS(VerdictBars("x", "0.5"),
                       doctest::Contains("tolerance: expected a decimal number >= 0"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(VerdictBars("5e-3", "2"),
                       doctest::Contains("sink bar: expected a decimal number in (0, 1]"),
                       std::invalid_argument);
}

TEST_CASE("solves: each side of the tolerance, and between") {
  const VerdictBars bars("2e-4", "0.5");
  BarVerdict v = solves_verdict(Mpfr(1.36e-4), Mpfr(1.37e-4), "CERTIFIED", bars);
  CHECK(v.decision == Decision::kYes);
  CHECK(v.text == "solves the task: E <= 1.370e-04 <= 2e-4 (tolerance), CERTIFIED");
  v = solves_verdict(Mpfr(1.36e-4), Mpfr(1.37e-4), "CERTIFIED", VerdictBars("1e-4", "0.5"));
  CHECK(v.decision == Decision::kNo);
  // the double 1.36e-4 is a little below 1.36e-4: its lower end rounds down
  CHECK(v.text == "does not solve the task: E >= 1.359e-04 > 1e-4 (tolerance), CERTIFIED");
  v = solves_verdict(Mpfr(1e-4), Mpfr(3e-4), "CERTIFIED", bars);
  CHECK(v.decision == Decision::kUndecided);
  CHECK(starts(v.text,
               "undecided whether it solves the task: E in [1.000e-04, 3.000e-04], which "
               "contains 2e-4 (tolerance), CERTIFIED"));
  // no finite upper end: never "solves"
  v = solves_verdict(Mpfr(0), Mpfr(std::numeric_limits<double>::infinity()), "CERTIFIED", bars);
  CHECK(v.decision == Decision::kUndecided);
  CHECK(v.text.find("inf]") != std::string::npos);
  // exact
  v = solves_verdict(Rational(0), VerdictBars());
  CHECK(v.text == "solves the task: E = 0 <= 5e-3 (tolerance), EXACT");
  CHECK(solves_verdict(Rational(1, 100), VerdictBars()).decision == Decision::kNo);
}

TEST_CASE("the tolerance is compared exactly, not as a double") {
  // 0.1 as a double is 0.1000000000000000055511...: above the bar
  // 0.1000000000000000001 written exactly, below the double nearest it
  const Mpfr point(0.1);
  const VerdictBars bars("0.1000000000000000001", "0.5");
  const BarVerdict v = solves_verdict(point, point, "CERTIFIED", bars);
  CHECK(v.decision == Decision::kNo);
  // the printed lower end keeps the digits that show it above the bar
  CHECK(internal::parse_decimal(v.text.substr(
            v.text.find(">= ") + 3, v.text.find(" > ") - v.text.find(">= ") - 3)) > bars.tolerance);
  CHECK(solves_verdict(point, point, "CERTIFIED", VerdictBars("0.1000000000000000056", "0.5"))
            .decision == Decision::kYes);
}

TEST_CASE("sinks: each side of the sink bar, and between") {
  const std::string at = "head 0, row 3, trigger 2";
  BarVerdict v = sinks_verdict(Mpfr(0.99986), Mpfr(0.99987), at, VerdictBars("5e-3", "0.9998"));
  CHECK(v.decision == Decision::kYes);
  CHECK(v.text == "sinks on every input: min BOS >= 9.998e-01 >= 0.9998 (sink bar), CERTIFIED");
  v = sinks_verdict(Mpfr(0.99986), Mpfr(0.99987), at, VerdictBars("5e-3", "0.9999"));
  CHECK(v.decision == Decision::kNo);
  // 9.999e-01 would not be below the bar: eight digits
  CHECK(v.text ==
        "does not sink on every input: BOS mass <= 9.9987001e-01 < 0.9999 (sink bar) at the "
        "witness (head 0, row 3, trigger 2), CERTIFIED");
  // a bar written with more digits: 9.999e-01 would not be below 0.99988, so
  // the upper end is printed with the digits that show it
  v = sinks_verdict(Mpfr(0.99986), Mpfr(0.99987), at, VerdictBars("5e-3", "0.99988"));
  CHECK(v.decision == Decision::kNo);
  const auto from = v.text.find("<= ") + 3;
  CHECK(internal::parse_decimal(v.text.substr(from, v.text.find(" < ") - from)) <
        Rational(99988, 100000));
  v = sinks_verdict(Mpfr(0.99986), Mpfr(0.99989), at, VerdictBars("5e-3", "0.99988"));
  CHECK(v.decision == Decision::kUndecided);
  v = sinks_anywhere_verdict(Mpfr(0.2), Mpfr(0.3), at, VerdictBars());
  CHECK(v.decision == Decision::kNo);
  CHECK(starts(v.text, "does not sink on any input: max BOS <= 3.000e-01 < 0.5 (sink bar)"));
  v = sinks_anywhere_verdict(Mpfr(0.6), Mpfr(0.7), at, VerdictBars());
  CHECK(v.decision == Decision::kYes);
  CHECK(starts(v.text, "sinks at the witness (head 0, row 3, trigger 2): BOS mass >= 5.999e-01"));
}

TEST_CASE("the probe-set verdict says it rests on the mean, NUMERIC(53)") {
  BarVerdict v = probe_sinks_verdict(0.93, "layer 1 head 0", "several layers", VerdictBars());
  CHECK(v.decision == Decision::kYes);
  CHECK(v.text ==
        "sinks on the probe set: mean BOS 9.300e-01 >= 0.5 (sink bar) in layer 1 head 0, "
        "NUMERIC(53); not certified on every input (several layers)");
  v = probe_sinks_verdict(0.4, "layer 0 head 0", "x", VerdictBars());
  CHECK(v.decision == Decision::kNo);
  CHECK(starts(v.text, "does not sink on the probe set: mean BOS <= 4.001e-01 < 0.5 (sink bar)"));
  CHECK(probe_sinks_verdict(std::numeric_limits<double>::quiet_NaN(), "", "x", VerdictBars())
            .decision == Decision::kUndecided);
}

}  // namespace
}  // namespace sinkcert
