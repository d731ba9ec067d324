// SPDX-License-Identifier: MIT
//
// Properties of the interval vocabulary (src/interval.h), written once and
// run for all eight scalar types. Samples span the magnitudes 10^-100 ..
// 10^100 with a mantissa 8/7 that no binary type holds exactly, of both
// signs, zero and +-1, and (for Mpfi) intervals that straddle zero asymmetrically.
// For each sample X = [l, u] and pair (X, Y):
//   l <= mid <= u,  width >= 0 (= 0 for points, >= u - l exactly for Mpfi),
//   magnitude = max(|l|, |u|),  mignitude = min(|l|, |u|) or 0,
//   mignitude <= magnitude,  contains_zero(X) <=> mignitude(X) = 0,
//   certainly_less(X, Y) => u_X < l_Y (and never both ways),
//   intersection_of(X, Y) holds every common point among the ends and midpoints
//   and lies in both; it is empty only when X and Y are disjoint.
#include "src/interval.h"

#include <doctest/doctest.h>
#include <mpfr.h>

#include <string>
#include <vector>

namespace sinkcert {
namespace {

using Jet2 = ceres::Jet<double, 2>;

// Decades sampled: 10^-100 .. 10^100, except float, whose normal range is
// 1.2e-38 .. 3.4e38: beyond it the samples would be 0 or inf and the test
// would no longer sample the decade it names; 10^-37 .. 10^37 keeps every
// sample (and 8/7 of it) a normal float.
template <class T>
constexpr int kDecades = 100;
template <>
constexpr int kDecades<float> = 37;

// Step between sampled decades (every third decade: 67 of them, so the pair
// loop below stays well under a second for Mpfi).
constexpr int kDecadeStep = 3;

Rational power_of_ten(int e) {
  Rational r(1);
  for (int i = 0; i < (e < 0 ? -e : e); ++i) r *= 10;
  return e < 0 ? Rational(1 / r) : r;
}

template <class T>
T interval(const T& lo, const T& hi) {
  return T(lower_of(lo), upper_of(hi));
}

// The samples of one type: points of both signs at every sampled decade and
// zero; for Mpfi also positive, negative and zero-straddling intervals.
template <class T>
std::vector<T> samples() {
  std::vector<T> out{T(0), T(1), T(-1)};
  for (int e = -kDecades<T>; e <= kDecades<T>; e += kDecadeStep) {
    const Rational m = Rational(8, 7) * power_of_ten(e);
    const T p = scalar_cast<T>(m), n = scalar_cast<T>(Rational(-m));
    out.push_back(p);
    out.push_back(n);
    if constexpr (ScalarTraits<T>::kIsInterval) {
      const T small = scalar_cast<T>(Rational(m / 1000)), big = scalar_cast<T>(Rational(m * 1000));
      out.push_back(interval(n, big));            // straddles zero, mostly positive
      out.push_back(interval(T(-big), p));        // straddles zero, mostly negative
      out.push_back(interval(small, p));          // positive
      out.push_back(interval(T(-p), T(-small)));  // negative
      out.push_back(interval(T(0), p));           // touches zero
    }
  }
  return out;
}

template <class T>
bool holds(const T& x, const Endpoint<T>& p) {
  return lower_of(x) <= p && p <= upper_of(x);
}

TEST_CASE_TEMPLATE("interval vocabulary: properties of one enclosure", T, double, float, Float128,
                   Jet2, Mpfr, Mpfi, DoubleInterval, Rational) {
  PrecisionScope scope(128);
  const std::vector<T> xs = samples<T>();
  REQUIRE(xs.size() > 50);  // float's 25 decades of both signs, the others' more
  for (const T& x : xs) {
    const Endpoint<T> l = lower_of(x), u = upper_of(x), mid = mid_of(x);
    CAPTURE(to_double(l));
    CAPTURE(to_double(u));
    CHECK(l <= mid);
    CHECK(mid <= u);
    const Endpoint<T> w = width_of(x);
    CHECK(w >= Endpoint<T>(0));
    if constexpr (ScalarTraits<T>::kIsInterval) {
      // rounded up: never below the exact difference
      CHECK(scalar_cast<Rational>(w) >= scalar_cast<Rational>(u) - scalar_cast<Rational>(l));
    } else {
      CHECK(w == Endpoint<T>(0));
      CHECK(l == x);  // a point is its own enclosure
    }
    const Endpoint<T> al = abs_of(l), au = abs_of(u);
    const Endpoint<T> mag = magnitude_of(x), mig = mignitude_of(x);
    CHECK(mag == (al > au ? al : au));
    CHECK(mig <= mag);
    const bool straddles = l <= Endpoint<T>(0) && Endpoint<T>(0) <= u;
    CHECK(contains_zero(x) == straddles);
    CHECK(contains_zero(x) == (mig == Endpoint<T>(0)));
    CHECK(mig == (straddles ? Endpoint<T>(0) : (al < au ? al : au)));
    CHECK_FALSE(certainly_less(x, x));
  }
}

TEST_CASE_TEMPLATE("interval vocabulary: properties of pairs", T, double, float, Float128, Jet2,
                   Mpfr, Mpfi, DoubleInterval, Rational) {
  PrecisionScope scope(128);
  const std::vector<T> xs = samples<T>();
  int intersecting = 0, ordered = 0;
  for (const T& a : xs) {
    for (const T& b : xs) {
      if (certainly_less(a, b)) {
        ++ordered;
        CHECK(upper_of(a) < lower_of(b));
        CHECK_FALSE(certainly_less(b, a));
      } else if (!certainly_less(b, a)) {
        // neither below the other: they share a point (the larger lower end)
        const Endpoint<T> la = lower_of(a), lb = lower_of(b);
        const Endpoint<T> p = la > lb ? la : lb;
        CHECK((holds(a, p) && holds(b, p)));
      }
      const std::optional<T> c = intersection_of(a, b);
      const bool disjoint = upper_of(a) < lower_of(b) || upper_of(b) < lower_of(a);
      CHECK(c.has_value() == !disjoint);
      if (!c) continue;
      ++intersecting;
      for (const Endpoint<T>& p :
           {lower_of(a), upper_of(a), mid_of(a), lower_of(b), upper_of(b), mid_of(b)}) {
        if (holds(a, p) && holds(b, p)) CHECK(holds(*c, p));
      }
      CHECK((holds(a, lower_of(*c)) && holds(a, upper_of(*c))));
      CHECK((holds(b, lower_of(*c)) && holds(b, upper_of(*c))));
    }
  }
  // both outcomes were exercised
  CHECK(intersecting > 0);
  CHECK(ordered > 0);
}

TEST_CASE_TEMPLATE("interval vocabulary: NaN is read as the whole line", T, double, float, Float128,
                   Jet2, Mpfr, Mpfi) {
  PrecisionScope scope(128);
  const T nan = [] {
    if constexpr (ScalarTraits<T>::kIsInterval) {
      return T(std::numeric_limits<Mpfr>::quiet_NaN(), Mpfr(1));
    } else if constexpr (std::is_same_v<T, Jet2>) {
      return T(std::numeric_limits<double>::quiet_NaN());
    } else {
      return std::numeric_limits<T>::quiet_NaN();
    }
  }();
  const T one = T(1);
  REQUIRE(interval_is_nan(nan));
  CHECK(is_nan(width_of(nan)) == false);
  const Endpoint<T> infinity = interval_detail::plus_infinity<T>();
  CHECK(width_of(nan) == infinity);
  CHECK(magnitude_of(nan) == infinity);
  CHECK(mignitude_of(nan) == Endpoint<T>(0));
  CHECK(contains_zero(nan));
  CHECK_FALSE(certainly_less(nan, one));
  CHECK_FALSE(certainly_less(one, nan));
  REQUIRE(intersection_of(nan, one).has_value());
  CHECK(*intersection_of(nan, one) == one);
  CHECK(*intersection_of(one, nan) == one);
  CHECK(is_nan(lower_of(nan)));  // never hidden
}

TEST_CASE("interval vocabulary: hand-checked cases") {
  PrecisionScope scope(128);
  const Mpfi a(Mpfr(1), Mpfr(2)), b(Mpfr(2), Mpfr(3)), c(Mpfr("2.5"), Mpfr(3));
  CHECK_FALSE(certainly_less(a, b));  // touching at 2
  CHECK(certainly_less(a, c));
  CHECK(lower_of(*intersection_of(a, b)) == 2);
  CHECK(upper_of(*intersection_of(a, b)) == 2);
  CHECK_FALSE(intersection_of(a, c).has_value());
  const Mpfi straddle(Mpfr(-3), Mpfr(2));
  CHECK(magnitude_of(straddle) == 3);
  CHECK(mignitude_of(straddle) == 0);
  CHECK(mignitude_of(Mpfi(Mpfr(-5), Mpfr(-4))) == 4);
  CHECK(mid_of(straddle) == Mpfr("-0.5"));
  CHECK(width_of(straddle) == 5);
  CHECK_FALSE(contains_zero(Rational(1, 3)));
  CHECK(contains_zero(Rational(0)));
  CHECK(certainly_less(Rational(1, 3), Rational(1, 2)));
  CHECK_FALSE(intersection_of(Rational(1, 3), Rational(1, 2)).has_value());
}

// Endpoints are returned exactly, in a type that holds them.
TEST_CASE("interval vocabulary: endpoints are exact beyond double") {
  // 1 + 2^-100 is not a double (53 bits): rounding through double gives 1.
  Mpfr x;
  mpfr_set_prec(x.backend().data(), 200);
  mpfr_set_ui_2exp(x.backend().data(), 1, -100, MPFR_RNDN);
  mpfr_add_ui(x.backend().data(), x.backend().data(), 1, MPFR_RNDN);
  REQUIRE(x != 1);
  CHECK(lower_of(x) == x);
  CHECK(upper_of(x) == x);
  CHECK(mpfr_get_prec(lower_of(x).backend().data()) == 200);

  Float128 q = Float128(1) + bmp::ldexp(Float128(1), -100);
  REQUIRE(q != 1);
  CHECK(lower_of(q) == q);
  CHECK(upper_of(q) == q);

  CHECK(lower_of(Rational(1, 3)) == Rational(1, 3));

  // An Mpfi made at 256 bits keeps its ends when the current precision is
  // lower: [1 + 2^-200, 1 + 2^-199].
  Mpfi wide;
  Mpfr lo, hi;
  {
    PrecisionScope high(256);
    lo = Mpfr(1) + bmp::ldexp(Mpfr(1), -200);
    hi = Mpfr(1) + bmp::ldexp(Mpfr(1), -199);
    wide = Mpfi(lo, hi);
  }
  PrecisionScope low(53);
  CHECK(lower_of(wide) == lo);
  CHECK(upper_of(wide) == hi);
  CHECK(lower_of(wide) != upper_of(wide));
  CHECK(width_of(wide) == bmp::ldexp(Mpfr(1), -200));
  CHECK(mignitude_of(wide) == lo);
  CHECK(magnitude_of(wide) == hi);
  CHECK(mpfr_get_prec(mid_of(wide).backend().data()) >= 256);
}

}  // namespace
}  // namespace sinkcert
