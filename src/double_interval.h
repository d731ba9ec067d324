// SPDX-License-Identifier: MIT
//
// DoubleInterval: an interval [lo, hi] of doubles with outward rounding, the
// fast scalar of the certified branch and bound (CERTIFIED like Mpfi, at a
// fixed 53-bit precision and double's exponent range).
//
// Containment. Every operation returns an interval that contains
//   { x op y : x in X, y in Y }
// (for exp and expm1 the image of X). The ends are computed in the default
// rounding mode (round to nearest, never changed: no compiler flag or
// fesetround is involved) and then moved outward when the rounded value may
// lie on the wrong side of the exact one:
//   sum      s = RN(a + b); e = (a + b) - s exactly (TwoSum, Knuth);
//            RD(a + b) = s if e >= 0, else pred(s); RU likewise.
//   product  p = RN(a b);   e = a b - p = fma(a, b, -p) exactly when
//            |p| >= 2^-969 (no underflow in the error term);
//            below that, pred(p) <= a b <= succ(p) (|a b - p| <= ulp/2),
//            clipped at 0 on the side the operands' signs exclude.
//   quotient q = RN(a / b); r = a - q b = fma(-q, b, a) exactly when
//            |q| and |a| >= 2^-969 (no underflow); sign(a/b - q) =
//            sign(r) sign(b); below that, pred and succ as for products.
//   overflow RN gives +-inf: an RD of +inf from finite operands is the
//            largest double (and RU of -inf the most negative one); an
//            infinite operand end is kept (it is a bound, not a value), and
//            0 times an infinite end is 0.
//   exp, expm1  MPFR's correctly rounded functions at 53 bits with rounding
//            toward -inf for the lower end and toward +inf for the upper
//            end (both functions increase), then converted to double in the
//            same direction (exact: 53 bits fit).
// pred and succ are the next double toward -inf and +inf (std::nextafter's
// values, computed from the bit pattern: the patterns of the doubles of one
// sign are ordered as their magnitudes). The error-free
// transformations hold in round-to-nearest binary64 (IEEE 754), which is
// every platform Debian's compilers target by default (x87 extended
// precision excluded: amd64 uses SSE2, and the build refuses
// FLT_EVAL_METHOD != 0).
// Division by an interval that contains 0 gives [-inf, +inf], as MPFI does
// for a divisor with 0 inside. A NaN end (from inf - inf) makes the whole
// interval NaN, which src/interval.h reads as the whole real line.
// Cost: a sum is a few flops, a product four products with their errors;
// an exp is two MPFR calls at 53 bits (about 1 us), against MPFI's
// allocation of every temporary at 128 bits.
#pragma once

#include <mpfr.h>

#include <Eigen/Core>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "DoubleInterval needs double arithmetic rounded to binary64 (FLT_EVAL_METHOD == 0)"
#endif

namespace sinkcert {

namespace directed {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
// Below this magnitude a product's or quotient's rounding error may itself
// underflow (2^-969 = 2^(-1022 + 53)), so its sign is not read from fma.
inline constexpr double kErrorFreeFloor = 0x1p-969;

// succ(x) = std::nextafter(x, +inf) for every x: the pattern moves one step
// away from 0 for x > 0 and toward 0 for x < 0 (-inf steps to the most
// negative double, the largest double to +inf); 0 of either sign steps to
// the least subnormal; NaN and +inf stay. Inlined, unlike glibc's call.
inline double succ(double x) {
  if (!(x < kInf)) return x;
  if (x == 0) return std::numeric_limits<double>::denorm_min();
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits = x > 0 ? bits + 1 : bits - 1;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}
// pred(x) = std::nextafter(x, -inf) = -succ(-x)
inline double pred(double x) { return -succ(-x); }

// RN(exact) = r overflowed to +-inf from finite operands: the directed ends.
inline double overflow_down(double r) { return r > 0 ? std::numeric_limits<double>::max() : r; }
inline double overflow_up(double r) { return r < 0 ? -std::numeric_limits<double>::max() : r; }

// a + b rounded toward -inf (down) and +inf (up).
inline double add_down(double a, double b) {
  const double s = a + b;
  if (!std::isfinite(s)) return std::isinf(a) || std::isinf(b) ? s : overflow_down(s);
  // e = (a + b) - s exactly (TwoSum)
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return e < 0 ? pred(s) : s;
}
inline double add_up(double a, double b) {
  const double s = a + b;
  if (!std::isfinite(s)) return std::isinf(a) || std::isinf(b) ? s : overflow_up(s);
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return e > 0 ? succ(s) : s;
}

// a b rounded down and up; 0 times an infinite end is 0.
inline double mul_down(double a, double b) {
  if (a == 0 || b == 0) return 0;
  const double p = a * b;
  if (!std::isfinite(p)) return std::isinf(a) || std::isinf(b) ? p : overflow_down(p);
  // (below the floor the exact product keeps the operands' sign)
  if (std::abs(p) < kErrorFreeFloor) return (a > 0) == (b > 0) ? std::fmax(pred(p), 0.0) : pred(p);
  // e = a b - p exactly
  return std::fma(a, b, -p) < 0 ? pred(p) : p;
}
inline double mul_up(double a, double b) {
  if (a == 0 || b == 0) return 0;
  const double p = a * b;
  if (!std::isfinite(p)) return std::isinf(a) || std::isinf(b) ? p : overflow_up(p);
  if (std::abs(p) < kErrorFreeFloor) return (a > 0) != (b > 0) ? std::fmin(succ(p), 0.0) : succ(p);
  return std::fma(a, b, -p) > 0 ? succ(p) : p;
}

// a / b (b != 0) rounded down and up.
inline double div_down(double a, double b) {
  const double q = a / b;
  if (!std::isfinite(q)) return std::isinf(a) || std::isinf(b) ? q : overflow_down(q);
  if (std::isinf(b) || a == 0) return q;  // exact: 0 or a finite / inf = 0
  if (std::abs(q) < kErrorFreeFloor || std::abs(a) < kErrorFreeFloor) {
    return (a > 0) == (b > 0) ? std::fmax(pred(q), 0.0) : pred(q);
  }
  // a / b - q = r / b, r = a - q b exactly
  const double r = std::fma(-q, b, a);
  return (r < 0) != (b < 0) && r != 0 ? pred(q) : q;
}
inline double div_up(double a, double b) {
  const double q = a / b;
  if (!std::isfinite(q)) return std::isinf(a) || std::isinf(b) ? q : overflow_up(q);
  if (std::isinf(b) || a == 0) return q;
  if (std::abs(q) < kErrorFreeFloor || std::abs(a) < kErrorFreeFloor) {
    return (a > 0) != (b > 0) ? std::fmin(succ(q), 0.0) : succ(q);
  }
  const double r = std::fma(-q, b, a);
  return (r > 0) == (b > 0) && r != 0 ? succ(q) : q;
}

// MPFR at 53 bits, one pair of numbers per thread.
struct Mpfr53 {
  mpfr_t x, y;
  Mpfr53() {
    mpfr_init2(x, 53);
    mpfr_init2(y, 53);
  }
  ~Mpfr53() {
    mpfr_clear(x);
    mpfr_clear(y);
  }
  Mpfr53(const Mpfr53&) = delete;
  Mpfr53& operator=(const Mpfr53&) = delete;
};
inline Mpfr53& mpfr53() {
  thread_local Mpfr53 scratch;
  return scratch;
}

// f(a) rounded in direction rnd, f one of MPFR's correctly rounded
// functions (mpfr_exp, mpfr_expm1).
template <int (*F)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t)>
inline double mpfr_directed(double a, mpfr_rnd_t rnd) {
  if (std::isnan(a)) return a;
  Mpfr53& s = mpfr53();
  mpfr_set_d(s.x, a, MPFR_RNDN);  // exact: a has 53 bits
  F(s.y, s.x, rnd);
  return mpfr_get_d(s.y, rnd);  // exact unless outside double's range, then directed
}

}  // namespace directed

class DoubleInterval {
 public:
  DoubleInterval() = default;
  // The point [x, x] (exact). Implicit, as Boost's number types are, so that
  // literals and Eigen's Scalar(0) convert.
  DoubleInterval(double x) : lo_(x), hi_(x) {}  // NOLINT(runtime/explicit)
  DoubleInterval(int x) : lo_(x), hi_(x) {}     // NOLINT(runtime/explicit)
  DoubleInterval(double lo, double hi) : lo_(lo), hi_(hi) {}

  double lower() const { return lo_; }
  double upper() const { return hi_; }
  bool is_nan() const { return std::isnan(lo_) || std::isnan(hi_); }

  DoubleInterval operator-() const { return {-hi_, -lo_}; }

  // [a, b] + [c, d] = [RD(a + c), RU(b + d)]
  friend DoubleInterval operator+(const DoubleInterval& x, const DoubleInterval& y) {
    return {directed::add_down(x.lo_, y.lo_), directed::add_up(x.hi_, y.hi_)};
  }
  // [a, b] - [c, d] = [RD(a - d), RU(b - c)]
  friend DoubleInterval operator-(const DoubleInterval& x, const DoubleInterval& y) {
    return {directed::add_down(x.lo_, -y.hi_), directed::add_up(x.hi_, -y.lo_)};
  }
  // [a, b] [c, d] = [min RD(products of ends), max RU(products of ends)]
  friend DoubleInterval operator*(const DoubleInterval& x, const DoubleInterval& y) {
    using directed::mul_down;
    using directed::mul_up;
    if (x.lo_ >= 0 && y.lo_ >= 0) return {mul_down(x.lo_, y.lo_), mul_up(x.hi_, y.hi_)};
    const double lo = std::fmin(std::fmin(mul_down(x.lo_, y.lo_), mul_down(x.lo_, y.hi_)),
                                std::fmin(mul_down(x.hi_, y.lo_), mul_down(x.hi_, y.hi_)));
    const double hi = std::fmax(std::fmax(mul_up(x.lo_, y.lo_), mul_up(x.lo_, y.hi_)),
                                std::fmax(mul_up(x.hi_, y.lo_), mul_up(x.hi_, y.hi_)));
    if (x.is_nan() || y.is_nan()) return nan();
    return {lo, hi};
  }
  // [a, b] / [c, d] with 0 outside [c, d]: the ends' quotients, directed;
  // [-inf, +inf] when [c, d] holds 0.
  friend DoubleInterval operator/(const DoubleInterval& x, const DoubleInterval& y) {
    using directed::div_down;
    using directed::div_up;
    if (x.is_nan() || y.is_nan()) return nan();
    if (y.lo_ <= 0 && y.hi_ >= 0) return {-directed::kInf, directed::kInf};
    const double lo = std::fmin(std::fmin(div_down(x.lo_, y.lo_), div_down(x.lo_, y.hi_)),
                                std::fmin(div_down(x.hi_, y.lo_), div_down(x.hi_, y.hi_)));
    const double hi = std::fmax(std::fmax(div_up(x.lo_, y.lo_), div_up(x.lo_, y.hi_)),
                                std::fmax(div_up(x.hi_, y.lo_), div_up(x.hi_, y.hi_)));
    return {lo, hi};
  }
  DoubleInterval& operator+=(const DoubleInterval& y) { return *this = *this + y; }
  DoubleInterval& operator-=(const DoubleInterval& y) { return *this = *this - y; }
  DoubleInterval& operator*=(const DoubleInterval& y) { return *this = *this * y; }
  DoubleInterval& operator/=(const DoubleInterval& y) { return *this = *this / y; }

  static DoubleInterval nan() {
    const double q = std::numeric_limits<double>::quiet_NaN();
    return {q, q};
  }

 private:
  double lo_ = 0, hi_ = 0;
};

// exp X = [RD exp(lo), RU exp(hi)]
inline DoubleInterval exp(const DoubleInterval& x) {
  if (x.is_nan()) return DoubleInterval::nan();
  return {directed::mpfr_directed<mpfr_exp>(x.lower(), MPFR_RNDD),
          directed::mpfr_directed<mpfr_exp>(x.upper(), MPFR_RNDU)};
}

// expm1 X = [RD expm1(lo), RU expm1(hi)]
inline DoubleInterval expm1(const DoubleInterval& x) {
  if (x.is_nan()) return DoubleInterval::nan();
  return {directed::mpfr_directed<mpfr_expm1>(x.lower(), MPFR_RNDD),
          directed::mpfr_directed<mpfr_expm1>(x.upper(), MPFR_RNDU)};
}

// |X| = X if lo >= 0; -X if hi <= 0; else [0, max(-lo, hi)] (exact).
inline DoubleInterval abs(const DoubleInterval& x) {
  if (x.is_nan()) return x;
  if (x.lower() >= 0) return x;
  if (x.upper() <= 0) return -x;
  return {0.0, std::fmax(-x.lower(), x.upper())};
}

}  // namespace sinkcert

namespace Eigen {
template <>
struct NumTraits<sinkcert::DoubleInterval> : GenericNumTraits<double> {
  using Real = sinkcert::DoubleInterval;
  using NonInteger = sinkcert::DoubleInterval;
  using Literal = double;
  using Nested = sinkcert::DoubleInterval;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 0,
    ReadCost = 2,
    AddCost = 8,
    MulCost = 24,
  };
  static Real epsilon() { return Real(std::numeric_limits<double>::epsilon()); }
  static Real dummy_precision() { return Real(1e-12); }
  static Real highest() { return Real(std::numeric_limits<double>::max()); }
  static Real lowest() { return Real(-std::numeric_limits<double>::max()); }
  static int digits10() { return 15; }
};
}  // namespace Eigen
