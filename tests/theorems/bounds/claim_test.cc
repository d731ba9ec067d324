// SPDX-License-Identifier: MIT
#include "theorems/bounds/claim.h"

#include <doctest/doctest.h>

#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace sinkcert::theorems::bounds {
namespace {

TEST_CASE("a claim is the exact decimal as written") {
  const Claim c = Claim::parse("0.1");
  CHECK(c.value == Rational(1, 10));
  CHECK(c.text == "0.1");
  std::ostringstream s;
  s << c;
  CHECK(s.str() == "0.1");
  // the double 0.1 is above 1/10: a claim is not it
  CHECK(Rational(0.1) > c.value);
  CHECK(Claim::parse("0.1000000000000000001").value ==
        Rational("1000000000000000001/10000000000000000000"));
  CHECK(Claim::parse("1e-3").value == Rational(1, 1000));
  CHECK(Claim::parse("2.5E+2").value == Rational(250));
  // the command line's decimal forms, kept as written
  CHECK(Claim::parse(".5").value == Rational(1, 2));
  CHECK(Claim::parse(".5").text == ".5");
  CHECK(Claim::parse("1.").value == Rational(1));
  CHECK(Claim::parse("+007").value == Rational(7));
  CHECK(Claim::parse("-0.25").value == Rational(-1, 4));
  for (const char* bad : {"", "nan", "inf", "0x1p-3", "1e", ".", "1,5", " 1", "e5", "--1", "+.",
                          "-", ".5.", "1..5"}) {
    INFO(std::string(bad));
    CHECK_THROWS_AS(Claim::parse(bad), std::invalid_argument);
  }
}

TEST_CASE("a claim from a double is the shortest decimal that reads back as it") {
  CHECK(Claim(0.1).text == "0.1");
  CHECK(Claim(0.1).value == Rational(1, 10));
  CHECK(Claim(1e-6).text == "1e-6");
  CHECK(Claim(1e-6).value == Rational(1, 1000000));
  CHECK(Claim(5.0).text == "5");
  CHECK(Claim(0.0).value == 0);
  CHECK(Claim(1.0 / 3).approx() == 1.0 / 3);
  CHECK(Claim(1e300).approx() == 1e300);
  CHECK_THROWS_AS(Claim(std::numeric_limits<double>::infinity()), std::invalid_argument);
  CHECK_THROWS_AS(Claim(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

TEST_CASE("MPFR ends are compared with a claim exactly") {
  PrecisionScope scope(128);
  const Rational tenth(1, 10);
  // 0.1 rounded up and down at 128 bits: within 2^-131 of 1/10, on each side
  Mpfr up, down;
  mpfr_set_q(up.backend().data(), tenth.backend().data(), MPFR_RNDU);
  mpfr_set_q(down.backend().data(), tenth.backend().data(), MPFR_RNDD);
  CHECK(above(up, tenth));
  CHECK_FALSE(at_most(up, tenth));
  CHECK(at_most(down, tenth));
  CHECK_FALSE(above(down, tenth));
  CHECK(difference(up, tenth) > 0);
  CHECK(difference(tenth, down) > 0);
  CHECK(difference(up, tenth) < 1e-38);
  // the double 0.1 is above the claim 0.1
  CHECK(above(Mpfr(0.1), Claim::parse("0.1").value));
  CHECK(difference(Mpfr(0.375), Rational(1, 8)) == 0.25);
  const Mpfr inf = std::numeric_limits<Mpfr>::infinity();
  CHECK(above(inf, tenth));
  CHECK_FALSE(at_most(inf, tenth));
  CHECK(at_most(Mpfr(-inf), tenth));
  const Mpfr nan = std::numeric_limits<Mpfr>::quiet_NaN();
  CHECK_FALSE(at_most(nan, tenth));
  CHECK_FALSE(above(nan, tenth));
  CHECK_THROWS_AS(difference(nan, tenth), std::invalid_argument);
  CHECK_THROWS_AS(difference(tenth, inf), std::invalid_argument);
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
