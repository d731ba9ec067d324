// SPDX-License-Identifier: MIT
#include "src/scalar_traits.h"

#include <doctest/doctest.h>

#include <cmath>

namespace sinkcert {
namespace {

TEST_CASE("precision requests map to at least the requested bits") {
  for (int bits : {24, 53, 64, 113, 128, 256, 1024, 4096}) {
    PrecisionScope scope(bits);
    CHECK(PrecisionScope::current_bits() >= bits);
    // The smallest decimal setting that reaches `bits`: one fewer falls short.
    CHECK(bits_for_digits10(digits10_for_bits(bits) - 1) < bits);
    CHECK(Mpfr(1).precision() == Mpfr::default_precision());
  }
}

TEST_CASE("precision scope restores the previous precision") {
  const unsigned before = Mpfr::default_precision();
  {
    PrecisionScope scope(1024);
    CHECK(Mpfr::default_precision() != before);
  }
  CHECK(Mpfr::default_precision() == before);
}

TEST_CASE("relu and max over intervals are exact hulls") {
  PrecisionScope scope(128);
  const Mpfi straddle(Mpfr(-2), Mpfr(3));
  const Mpfi r = relu_of(straddle);
  CHECK(bmp::lower(r) == 0);
  CHECK(bmp::upper(r) == 3);
  const Mpfi a(Mpfr(-1), Mpfr(5)), b(Mpfr(2), Mpfr(4));
  const Mpfi m = max_of(a, b);
  CHECK(bmp::lower(m) == 2);
  CHECK(bmp::upper(m) == 5);
  // Adversarial magnitudes: tiny and huge endpoints keep their order.
  const Mpfi tiny(Mpfr("1e-100"), Mpfr("1e100"));
  CHECK(bmp::lower(relu_of(tiny)) == Mpfr("1e-100"));
}

TEST_CASE_TEMPLATE("relu and abs agree with the definition on points", T, double, float, Float128,
                   Mpfr, Rational) {
  CHECK(relu_of(T(-3)) == T(0));
  CHECK(relu_of(T(2)) == T(2));
  CHECK(abs_of(T(-7)) == T(7));
  CHECK(max_of(T(1), T(4)) == T(4));
}

TEST_CASE("exp of a rational is refused at run time") {
  CHECK_THROWS_AS(exp_of(Rational(1)), std::domain_error);
  CHECK(ScalarTraits<Rational>::kIsExact);
  CHECK_FALSE(ScalarTraits<Rational>::kHasExp);
}

TEST_CASE("interval exp encloses the high-precision value") {
  Mpfr reference;
  {
    PrecisionScope high(1024);
    reference = bmp::exp(Mpfr(-40));
  }
  PrecisionScope low(64);
  const Mpfi e = exp_of(Mpfi(-40));
  PrecisionScope high(1024);
  CHECK(Mpfr(bmp::lower(e)) <= reference);
  CHECK(Mpfr(bmp::upper(e)) >= reference);
}

TEST_CASE("an MPFR value converted to a narrower MPFI is enclosed, not rounded") {
  // P5 certifies models whose entries are 513-bit MPFR numbers starting at
  // 64-bit MPFI: the conversion must enclose the exact entry.
  Mpfr x;
  {
    PrecisionScope wide(513);
    x = Mpfr(1) + bmp::ldexp(Mpfr(1), -500);
  }
  PrecisionScope narrow(64);
  const Mpfi y(x);
  CHECK(bmp::lower(y) < bmp::upper(y));
  PrecisionScope check(1024);
  CHECK(Mpfr(bmp::lower(y)) < x);
  CHECK(x < Mpfr(bmp::upper(y)));
}

TEST_CASE("Eigen's NumTraits for MPFR follow the current precision") {
  PrecisionScope scope(256);
  using Traits = Eigen::NumTraits<Mpfr>;
  CHECK(Traits::digits() == PrecisionScope::current_bits());
  CHECK(Traits::lowest() < 0);
  CHECK(Traits::min_exponent() < -1000000);
  CHECK(Traits::max_exponent() > 1000000);
  // blueNorm (Eigen's scaled 2-norm, used by its Levenberg-Marquardt) agrees
  // with the plain norm for magnitudes far outside double's range;
  // kTolerance = 1e-70 is a few hundred ulps at 257 bits.
  constexpr double kTolerance = 1e-70;
  Vector<Mpfr> v(3);
  v << Mpfr("3e-400"), Mpfr("4e-400"), Mpfr("1e-500");
  const Mpfr blue = v.blueNorm();
  const Mpfr plain = bmp::sqrt(v.squaredNorm());
  CHECK(bmp::abs(blue - plain) / plain < Mpfr(kTolerance));
  CHECK(bmp::abs(blue / Mpfr("5e-400") - 1) < Mpfr(1e-50));
}

TEST_CASE("point_interval is exact where Boost's Mpfr-to-Mpfi conversion fails") {
  PrecisionScope scope(128);
  for (int e = -1070; e < 1020; ++e) {
    for (const double f : {1.0, 1.5, -1.25}) {
      const double x = std::ldexp(f, e);
      CAPTURE(x);
      const Mpfi p = point_interval(Mpfr(x));
      CHECK(bmp::lower(p) == Mpfr(x));
      CHECK(bmp::upper(p) == Mpfr(x));
    }
  }
  // the reason it exists: Boost 1.74's conversion gives NaN at 3e18 (in
  // [2^61, 2^62)); if a later Boost fixes it, this documents the change
  CHECK(bmp::isnan(bmp::lower(Mpfi(Mpfr(3e18)))));
}

}  // namespace
}  // namespace sinkcert
