// SPDX-License-Identifier: MIT
//
// DoubleInterval (src/double_interval.h): every operation encloses the exact
// result. The exact value of a + b, a b, a / b is formed in GMP rationals
// (doubles are dyadic rationals), exp and expm1 in MPFR at 256 bits with
// rounding toward the side being checked. Operands span the subnormals,
// 1e-300 .. 1e300 and the neighbourhood of overflow; for each:
//   RD(a op b) <= exact <= RU(a op b),   RU - RD <= one ulp (tight),
// and the same for intervals at points drawn inside them. The checker is
// fed round-to-nearest ends (the naive interval) and must find an
// operation they do not enclose (0.1 + 0.2 rounds up, for one).
#include "src/double_interval.h"

#include <doctest/doctest.h>
#include <mpfr.h>

#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "src/forward.h"
#include "src/interval.h"
#include "src/linf_error.h"
#include "src/scalar_traits.h"
#include "src/task.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

Rational exact(double x) { return scalar_cast<Rational>(x); }

// Doubles of every scale: random mantissas at exponents -1074 .. 1023 (the
// subnormals included), both signs, and a few special values.
std::vector<double> operands(std::mt19937_64& rng, int count) {
  std::vector<double> out{
      0.1,   0.2,     0.3,      1.0 / 3.0, 1.0,
      -1.0,  DBL_MAX, -DBL_MAX, DBL_MIN,   std::numeric_limits<double>::denorm_min(),
      1e300, 1e-300};
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-1074, 1023), sign(0, 1);
  for (int t = 0; t < count; ++t) {
    const double x = std::ldexp(mantissa(rng), exponent(rng));
    out.push_back(sign(rng) ? -x : x);
  }
  return out;
}

// lo <= q <= hi for the exact rational q (an infinite end holds everything
// on its side).
bool encloses(double lo, double hi, const Rational& q) {
  const bool above_lo = std::isinf(lo) ? lo < 0 : exact(lo) <= q;
  const bool below_hi = std::isinf(hi) ? hi > 0 : q <= exact(hi);
  return above_lo && below_hi;
}

// The checker: over all operand pairs, whether [down(a, b), up(a, b)] holds
// the exact a op b wherever that is finite in double's range.
using Directed = std::function<double(double, double)>;
bool all_enclosed(const std::vector<double>& xs, const Directed& down, const Directed& up,
                  const std::function<bool(const Rational&, const Rational&, Rational&)>& op) {
  for (double a : xs) {
    for (double b : xs) {
      Rational q;
      if (!op(exact(a), exact(b), q)) continue;
      if (!encloses(down(a, b), up(a, b), q)) return false;
    }
  }
  return true;
}

bool add_exact(const Rational& a, const Rational& b, Rational& q) {
  q = a + b;
  return true;
}
bool mul_exact(const Rational& a, const Rational& b, Rational& q) {
  q = a * b;
  return true;
}
bool div_exact(const Rational& a, const Rational& b, Rational& q) {
  if (b == 0) return false;
  q = a / b;
  return true;
}

// One ulp apart at most (or equal): the directed ends are as tight as two
// roundings allow.
bool within_one_ulp(double lo, double hi) {
  return lo == hi || std::nextafter(lo, std::numeric_limits<double>::infinity()) == hi;
}

TEST_CASE("directed sums, products and quotients enclose the exact result") {
  std::mt19937_64 rng(7);
  const std::vector<double> xs = operands(rng, 150);
  using namespace directed;
  CHECK(all_enclosed(xs, add_down, add_up, add_exact));
  CHECK(all_enclosed(xs, mul_down, mul_up, mul_exact));
  CHECK(all_enclosed(xs, div_down, div_up, div_exact));
  // tight: within one ulp where the rounding error is exact
  for (double a : xs) {
    for (double b : xs) {
      const double s = a + b, p = a * b;
      if (std::isfinite(s)) CHECK(within_one_ulp(add_down(a, b), add_up(a, b)));
      // (below 2^-969 the error term may underflow: two ulps)
      if (std::isfinite(p) && std::abs(p) >= directed::kErrorFreeFloor) {
        CHECK(within_one_ulp(mul_down(a, b), mul_up(a, b)));
      }
    }
  }
}

TEST_CASE("the checker finds round-to-nearest ends that do not enclose") {
  std::mt19937_64 rng(7);
  const std::vector<double> xs = operands(rng, 150);
  const Directed nearest_sum = [](double a, double b) { return a + b; };
  const Directed nearest_product = [](double a, double b) { return a * b; };
  // 0.1 + 0.2 rounds above the exact sum of the two doubles
  CHECK_FALSE(encloses(0.1 + 0.2, 0.1 + 0.2, exact(0.1) + exact(0.2)));
  CHECK_FALSE(all_enclosed(xs, nearest_sum, nearest_sum, add_exact));
  CHECK_FALSE(all_enclosed(xs, nearest_product, nearest_product, mul_exact));
}

TEST_CASE("overflow, underflow, zero times infinity") {
  using namespace directed;
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(add_down(DBL_MAX, DBL_MAX) == DBL_MAX);
  CHECK(add_up(DBL_MAX, DBL_MAX) == inf);
  CHECK(mul_down(-DBL_MAX, 2.0) == -inf);
  CHECK(mul_up(-DBL_MAX, 2.0) == -DBL_MAX);
  CHECK(mul_down(0.0, inf) == 0.0);
  // 2^-600 squared underflows to 0 in round to nearest; directed ends
  // bracket the tiny positive product
  CHECK(mul_down(0x1p-600, 0x1p-600) == 0.0);
  CHECK(mul_up(0x1p-600, 0x1p-600) > 0.0);
  const DoubleInterval whole = DoubleInterval(1.0) / DoubleInterval(-1.0, 2.0);
  CHECK(whole.lower() == -inf);
  CHECK(whole.upper() == inf);
  CHECK(DoubleInterval(inf, inf).lower() == inf);
  const DoubleInterval nan = DoubleInterval(-inf, 0.0) + DoubleInterval(inf, inf);
  CHECK(nan.is_nan());
}

// succ and pred, computed from the bit pattern, are std::nextafter toward
// +inf and -inf on every operand, the signed zeros, the infinities, the
// ends of the subnormals and of double's range, and NaN.
TEST_CASE("succ and pred step to std::nextafter's neighbours") {
  using namespace directed;
  const double inf = std::numeric_limits<double>::infinity();
  std::mt19937_64 rng(11);
  std::vector<double> xs = operands(rng, 4000);
  for (double x :
       {0.0, -0.0, inf, -inf, DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN,
        std::numeric_limits<double>::denorm_min(), -std::numeric_limits<double>::denorm_min()}) {
    xs.push_back(x);
  }
  int checked = 0;
  for (double x : xs) {
    for (double y : {x, -x}) {
      const double up = std::nextafter(y, inf), down = std::nextafter(y, -inf);
      // the same double (0 == -0 here; the sign of a 0 does not bound anything)
      CHECK(succ(y) == up);
      CHECK(pred(y) == down);
      ++checked;
    }
  }
  CHECK(checked >= 8000);
  CHECK(std::isnan(succ(std::nan(""))));
  CHECK(std::isnan(pred(std::nan(""))));
}

// exp and expm1: lower end <= f(x) <= upper end, f(x) in MPFR at 256 bits
// rounded toward the side checked, and the ends at most one ulp apart.
TEST_CASE("exp and expm1 enclose the function") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> arg(-745.0, 709.0);
  std::vector<double> xs{0.0, 1.0, -1.0, 1e-20, -1e-20, 709.78, -745.1, 710.0};
  for (int t = 0; t < 400; ++t) xs.push_back(arg(rng));
  mpfr_t x, y;
  mpfr_init2(x, 256);
  mpfr_init2(y, 256);
  for (double a : xs) {
    for (int which = 0; which < 2; ++which) {
      const DoubleInterval r = which == 0 ? exp(DoubleInterval(a)) : expm1(DoubleInterval(a));
      CAPTURE(a);
      CAPTURE(which);
      mpfr_set_d(x, a, MPFR_RNDN);
      (which == 0 ? mpfr_exp : mpfr_expm1)(y, x, MPFR_RNDD);
      CHECK(mpfr_cmp_d(y, r.upper()) <= 0);
      (which == 0 ? mpfr_exp : mpfr_expm1)(y, x, MPFR_RNDU);
      CHECK(mpfr_cmp_d(y, r.lower()) >= 0);
      if (std::isfinite(r.upper()) && std::abs(r.upper()) >= DBL_MIN) {
        CHECK(within_one_ulp(r.lower(), r.upper()));
      }
    }
  }
  mpfr_clear(x);
  mpfr_clear(y);
}

// Intervals: for random [a, b] and [c, d] and points drawn inside them, the
// exact result at the points lies in the interval result.
TEST_CASE("interval operations hold every result of their points") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> end(-4.0, 4.0), t(0.0, 1.0);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    double a = end(rng), b = end(rng), c = end(rng), d = end(rng);
    if (a > b) std::swap(a, b);
    if (c > d) std::swap(c, d);
    const DoubleInterval X(a, b), Y(c, d);
    const DoubleInterval sum = X + Y, diff = X - Y, prod = X * Y, quot = X / Y;
    const DoubleInterval ex = exp(X), ab = abs(X);
    for (int s = 0; s < 8; ++s) {
      const double x = a + (b - a) * t(rng), y = c + (d - c) * t(rng);
      if (!(a <= x && x <= b && c <= y && y <= d)) continue;
      const Rational qx = exact(x), qy = exact(y);
      CHECK(encloses(sum.lower(), sum.upper(), Rational(qx + qy)));
      CHECK(encloses(diff.lower(), diff.upper(), Rational(qx - qy)));
      CHECK(encloses(prod.lower(), prod.upper(), Rational(qx * qy)));
      if (y != 0) CHECK(encloses(quot.lower(), quot.upper(), Rational(qx / qy)));
      CHECK(encloses(ab.lower(), ab.upper(), Rational(x < 0 ? Rational(-qx) : qx)));
      CHECK(ex.lower() <= std::exp(x) * (1 + 1e-15));
      CHECK(std::exp(x) * (1 - 1e-15) <= ex.upper());
      ++checked;
    }
  }
  CHECK(checked > 1000);
}

// The forward pass in DoubleInterval over an input box holds the exact
// model's output at points of the box (evaluated in MPFI at 256 bits, its
// midpoint then well inside double's rounding), and agrees with MPFI's own
// box enclosure to rounding.
TEST_CASE("forward pass over a box: double intervals enclose the points") {
  PrecisionScope scope(256);
  const Task task{6, 5, TriggerRange::kPaper};
  std::mt19937_64 rng(5);
  const Model<double> model = testing::random_model(task.n, AttentionKind::kSoftmax, 1.0, 5);
  const Model<DoubleInterval> fast = model.cast<DoubleInterval>();
  const Model<Mpfi> slow = model.cast<Mpfi>();
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int trigger = 2, vars = (task.L - 1) * task.content_dim();
  std::vector<double> lo(vars), hi(vars);
  for (int m = 0; m < vars; ++m) {
    const double c = u(rng);
    lo[m] = std::max(-1.0, c - 0.125);
    hi[m] = std::min(1.0, c + 0.125);
  }
  std::vector<DoubleInterval> box;
  for (int m = 0; m < vars; ++m) box.emplace_back(lo[m], hi[m]);
  const Matrix<DoubleInterval> X =
      make_input<DoubleInterval>(task, trigger, unflatten_content(task, box));
  const Matrix<DoubleInterval> out = forward(fast, X, false).output;
  for (int s = 0; s < 20; ++s) {
    std::vector<double> point(vars);
    for (int m = 0; m < vars; ++m) point[m] = lo[m] + (hi[m] - lo[m]) * (0.5 + 0.5 * u(rng));
    const Matrix<Mpfi> P =
        make_input<Mpfi>(task, trigger, matrix_cast<Mpfi>(unflatten_content(task, point)));
    const Matrix<Mpfi> at = forward(slow, P, false).output;
    for (int i = 0; i < task.L; ++i) {
      for (int d = 0; d < task.n; ++d) {
        CHECK(out(i, d).lower() <= lower_of(at(i, d)));
        CHECK(upper_of(at(i, d)) <= out(i, d).upper());
      }
    }
  }
}

}  // namespace
}  // namespace sinkcert
