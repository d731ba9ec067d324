// SPDX-License-Identifier: MIT
//
// Scalar backends and the one place where they differ.
//
// Every numeric kernel of sinkcert is a template on its scalar type T and is
// instantiated for
//   double                 NUMERIC(53)
//   float                  NUMERIC(24)       (precision tables only)
//   Float128               NUMERIC(113)      (IEEE quad, libquadmath)
//   ceres::Jet<double, N>  derivatives for the Ceres search
//   Mpfr                   NUMERIC(p), p chosen at run time (MPFR)
//   Mpfi                   CERTIFIED, outward-rounded intervals (MPFI)
//   DoubleInterval         CERTIFIED, outward-rounded intervals of doubles
//                          (src/double_interval.h; the fast first try of
//                          the branch and bound)
//   Rational               EXACT (GMP mpq)
// The kernels call only the functions defined here for anything beyond
// + - * / and comparison: exp, expm1, relu(x) = max(x, 0), abs, max, and the
// interval endpoints (the interval vocabulary itself is src/interval.h).
// For an interval X = [l, u]:
//   relu(X) = [max(l, 0), max(u, 0)],  max(X, Y) = [max(lx, ly), max(ux, uy)],
// which are exact ranges (each is monotone in every argument), whereas the
// generic `a < b ? b : a` would compare "certainly less" and lose the hull.
//
// Boost.Multiprecision 1.74 sets MPFR/MPFI precision in decimal digits d; the
// binary precision it allocates is p(d) = floor(1000 d / 301) + (1 or 2). So a
// request for p bits is met with the smallest d whose p(d) >= p, and every
// report quotes the precision actually used (e.g. 256 requested -> 257 used).
#pragma once

#include <ceres/jet.h>

#include <Eigen/Core>
#include <boost/multiprecision/eigen.hpp>
#include <boost/multiprecision/float128.hpp>
#include <boost/multiprecision/gmp.hpp>
#include <boost/multiprecision/mpfi.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "src/double_interval.h"

// Eigen's NumTraits for MPFR. Boost 1.74's generic specialization lacks
// digits(), min_exponent() and max_exponent(), which Eigen's blueNorm (used
// by its MINPACK Levenberg-Marquardt) needs; this full specialization adds
// them for the current precision and MPFR's exponent range. lowest() is the
// most negative value, as Eigen defines it (Boost's returns the smallest
// positive one); the rest says what Boost's does.
namespace Eigen {
template <>
struct NumTraits<boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<0>,
                                               boost::multiprecision::et_off>> {
  using Real = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<0>,
                                             boost::multiprecision::et_off>;
  using NonInteger = Real;
  using Literal = double;
  using Nested = Real;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    ReadCost = 1,
    AddCost = 4,
    MulCost = 8,
    IsSigned = 1,
    RequireInitialization = 1,
  };
  static Real epsilon() { return std::numeric_limits<Real>::epsilon(); }
  static Real dummy_precision() { return 1000 * epsilon(); }
  static Real highest() { return (std::numeric_limits<Real>::max)(); }
  static Real lowest() { return -(std::numeric_limits<Real>::max)(); }
  static int digits10() { return static_cast<int>(Real::default_precision()); }
  // Bits of the current default precision.
  static int digits() { return static_cast<int>(mpfr_get_prec(epsilon().backend().data())); }
  // Exponents (base 2) MPFR represents; blueNorm's scaling constants are
  // powers of two near the square roots of these, representable in MPFR.
  static int min_exponent() { return static_cast<int>(mpfr_get_emin()); }
  static int max_exponent() { return static_cast<int>(mpfr_get_emax()); }
};
}  // namespace Eigen

namespace sinkcert {

namespace bmp = boost::multiprecision;

// Expression templates are off: kernels use `auto` freely and Eigen sees
// plain value types.
using Mpfr = bmp::number<bmp::mpfr_float_backend<0>, bmp::et_off>;
using Mpfi = bmp::number<bmp::mpfi_float_backend<0>, bmp::et_off>;
using Rational = bmp::number<bmp::gmp_rational, bmp::et_off>;
using Float128 = bmp::float128;

// The interval [x, x] (outward at a lower working precision). Use this, not
// Mpfi(x): Boost 1.74 converts number<mpfr> to number<mpfi> through its
// generic float interconversion, which returns NaN for every |x| in
// [2^61, 2^62) (tests/src/scalar_traits_test.cc); mpfi_set_fr is exact.
inline Mpfi point_interval(const Mpfr& x) {
  Mpfi out;
  mpfi_set_fr(out.backend().data(), x.backend().data());
  return out;
}

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

// Binary precision that Boost allocates for `digits10` decimal digits.
inline int bits_for_digits10(int digits10) {
  // p(d) = floor(1000 d / 301) + (remainder ? 2 : 1), as in
  // boost/multiprecision/detail/digits.hpp.
  const long d = static_cast<long>(digits10) * 1000;
  return static_cast<int>(d / 301 + ((d % 301) ? 2 : 1));
}

// Smallest digits10 whose allocated precision is at least `bits`.
inline int digits10_for_bits(int bits) {
  int d = 1;
  while (bits_for_digits10(d) < bits) ++d;
  return d;
}

// Sets the working precision of Mpfr and Mpfi for its lifetime (RAII) and
// restores the previous one. Values created inside the scope carry the new
// precision.
class PrecisionScope {
 public:
  explicit PrecisionScope(int bits)
      : saved_mpfr_(Mpfr::default_precision()), saved_mpfi_(Mpfi::default_precision()) {
    if (bits < 2) throw std::invalid_argument("precision must be >= 2 bits");
    const int d = digits10_for_bits(bits);
    Mpfr::default_precision(d);
    Mpfi::default_precision(d);
  }
  ~PrecisionScope() {
    Mpfr::default_precision(saved_mpfr_);
    Mpfi::default_precision(saved_mpfi_);
  }
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;
  // Precision in bits that values created now receive.
  static int current_bits() {
    return bits_for_digits10(static_cast<int>(Mpfr::default_precision()));
  }

 private:
  unsigned saved_mpfr_;
  unsigned saved_mpfi_;
};

// ---------------------------------------------------------------------------
// ScalarTraits<T>: static facts about a scalar type.
//   kIsExact     arithmetic is exact (no rounding at all)
//   kIsInterval  values are enclosures [lower, upper]
//   kHasExp      exp is available (softmax and sigmoid need it)
//   name()       human label; bits() precision in bits of a value
// ---------------------------------------------------------------------------
template <class T, class Enable = void>
struct ScalarTraits;

template <>
struct ScalarTraits<double> {
  static constexpr bool kIsExact = false;
  static constexpr bool kIsInterval = false;
  static constexpr bool kHasExp = true;
  static std::string name() { return "double"; }
  static int bits() { return 53; }
};

template <>
struct ScalarTraits<float> {
  static constexpr bool kIsExact = false;
  static constexpr bool kIsInterval = false;
  static constexpr bool kHasExp = true;
  static std::string name() { return "float"; }
  static int bits() { return 24; }
};

template <>
struct ScalarTraits<Float128> {
  static constexpr bool kIsExact = false;
  static constexpr bool kIsInterval = false;
  static constexpr bool kHasExp = true;
  static std::string name() { return "float128"; }
  static int bits() { return 113; }
};

template <int N>
struct ScalarTraits<ceres::Jet<double, N>> {
  static constexpr bool kIsExact = false;
  static constexpr bool kIsInterval = false;
  static constexpr bool kHasExp = true;
  static std::string name() { return "jet<" + std::to_string(N) + ">"; }
  static int bits() { return 53; }
};

template <>
struct ScalarTraits<Mpfr> {
  static constexpr bool kIsExact = false;
  static constexpr bool kIsInterval = false;
  static constexpr bool kHasExp = true;
  static std::string name() { return "mpfr"; }
  static int bits() { return PrecisionScope::current_bits(); }
};

template <>
struct ScalarTraits<Mpfi> {
  static constexpr bool kIsExact = false;
  static constexpr bool kIsInterval = true;
  static constexpr bool kHasExp = true;
  static std::string name() { return "mpfi"; }
  static int bits() { return PrecisionScope::current_bits(); }
};

template <>
struct ScalarTraits<DoubleInterval> {
  static constexpr bool kIsExact = false;
  static constexpr bool kIsInterval = true;
  static constexpr bool kHasExp = true;
  static std::string name() { return "double interval"; }
  static int bits() { return 53; }
};

template <>
struct ScalarTraits<Rational> {
  static constexpr bool kIsExact = true;
  static constexpr bool kIsInterval = false;
  static constexpr bool kHasExp = false;
  static std::string name() { return "rational"; }
  static int bits() { return 0; }  // unbounded
};

// ---------------------------------------------------------------------------
// Elementary functions, one overload set for every scalar.
// ---------------------------------------------------------------------------

// exp(x). Exact scalars have none: exp of a nonzero rational is irrational.
template <class T>
T exp_of(const T& x) {
  if constexpr (!ScalarTraits<T>::kHasExp) {
    (void)x;
    throw std::domain_error(
        "exp is not available in exact rational arithmetic (exp of a nonzero "
        "rational is irrational); evaluate softmax/sigmoid attention in Mpfi "
        "for certified bounds");
  } else {
    using std::exp;
    return exp(x);
  }
}

// expm1(x) = exp(x) - 1 without cancellation near 0 (softpick attention);
// for an interval the outward-rounded range (MPFI's expm1, monotone).
template <class T>
T expm1_of(const T& x) {
  if constexpr (!ScalarTraits<T>::kHasExp) {
    (void)x;
    throw std::domain_error(
        "expm1 is not available in exact rational arithmetic; evaluate softpick "
        "attention in Mpfi for certified bounds");
  } else if constexpr (std::is_same_v<T, Float128>) {
    // Boost 1.74's expm1 for float128 does not compile without expression
    // templates: libquadmath's expm1q directly
    return Float128(expm1q(x.backend().value()));
  } else {
    using std::expm1;
    return expm1(x);
  }
}

// relu(x) = max(x, 0); an interval maps to [max(l, 0), max(u, 0)].
template <class T>
T relu_of(const T& x) {
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    return T(std::fmax(x.lower(), 0.0), std::fmax(x.upper(), 0.0));
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    const Mpfr lo = bmp::lower(x), hi = bmp::upper(x);
    return T(lo > 0 ? lo : Mpfr(0), hi > 0 ? hi : Mpfr(0));
  } else {
    return x > T(0) ? x : T(0);
  }
}

// Whether x is (or, for an interval, has an end that is) NaN. Rationals
// never are.
template <class T>
bool is_nan(const T& x) {
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    return x.is_nan();
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    return bmp::isnan(bmp::lower(x)) || bmp::isnan(bmp::upper(x));
  } else if constexpr (ScalarTraits<T>::kIsExact) {
    (void)x;
    return false;
  } else if constexpr (std::is_arithmetic_v<T>) {
    return std::isnan(x);
  } else if constexpr (std::is_same_v<T, Mpfr> || std::is_same_v<T, Float128>) {
    return bmp::isnan(x);
  } else {
    return std::isnan(x.a);  // ceres::Jet
  }
}

// The sign of x - q, exactly (an MPFR value is a dyadic rational; +-inf
// compare as such): -1, 0 or 1. A NaN x compares as 0: callers deciding a
// strict or non-strict inequality test is_nan first.
inline int exact_compare(const Mpfr& x, const Rational& q) {
  if (bmp::isnan(x)) return 0;
  const int c = mpfr_cmp_q(x.backend().data(), q.backend().data());
  return (c > 0) - (c < 0);
}

// max(a, b), NaN if either is NaN (a NaN is never dropped from a maximum);
// for intervals the exact range [max(la, lb), max(ua, ub)], NaN-valued when
// either end of either argument is NaN.
template <class T>
T max_of(const T& a, const T& b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    return T(std::fmax(a.lower(), b.lower()), std::fmax(a.upper(), b.upper()));
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    const Mpfr la = bmp::lower(a), lb = bmp::lower(b);
    const Mpfr ua = bmp::upper(a), ub = bmp::upper(b);
    return T(la > lb ? la : lb, ua > ub ? ua : ub);
  } else {
    return a < b ? b : a;
  }
}

// |x|; for intervals Boost's abs gives the exact range.
template <class T>
T abs_of(const T& x) {
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    return abs(x);
  } else if constexpr (ScalarTraits<T>::kIsInterval || std::is_same_v<T, Mpfr> ||
                       std::is_same_v<T, Rational> || std::is_same_v<T, Float128>) {
    return bmp::abs(x);
  } else {
    using std::abs;
    return abs(x);
  }
}

// A point value usable for ordering and reporting: the value itself, the
// midpoint of an interval, the real part of a Jet.
template <class T>
double to_double(const T& x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<double>(x);
  } else if constexpr (std::is_same_v<T, DoubleInterval>) {
    return 0.5 * x.lower() + 0.5 * x.upper();
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    return bmp::median(x).template convert_to<double>();
  } else if constexpr (std::is_same_v<T, Mpfr> || std::is_same_v<T, Rational> ||
                       std::is_same_v<T, Float128>) {
    return x.template convert_to<double>();
  } else {
    return x.a;  // ceres::Jet
  }
}

// The matrix product a * b, valid for every scalar type at every size.
// Eigen's blocked GEMM and triangular kernels pad with default-constructed
// scalars; for MPFI those are NaN and poison the result at sizes that are not
// multiples of the register blocks (e.g. 8x6 times 6x6;
// tests/src/scalar_traits_test.cc). So only the built-in arithmetic types use
// Eigen's GEMM; every class type (intervals, MPFR, rationals, Jets) uses the
// coefficient-based product, whose sums start from an actual coefficient.
template <class A, class B>
auto matrix_product(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b) {
  using Scalar = typename A::Scalar;
  if constexpr (std::is_arithmetic_v<Scalar>) {
    return Matrix<Scalar>(a * b);
  } else {
    return Matrix<Scalar>(a.lazyProduct(b));
  }
}

// x converted to U. From Rational (the exact value a file denotes):
//   Rational  exact;   Mpfi  the enclosure of x at the current precision
//   (mpfi_set_q rounds outward);   Mpfr  x rounded to nearest at the current
//   precision;   double / float / Float128 / Jet  x rounded to nearest
//   (through MPFR at the target's precision; subnormals may round twice).
// Into Rational: a double or an MPFR value exactly (both are dyadic).
// From any other type: U(x) (a point converted into an interval is exact
// when U is Mpfi and x is a double or an MPFR value of no more bits).
template <class U, class T>
U scalar_cast(const T& x) {
  if constexpr (std::is_same_v<U, DoubleInterval>) {
    // into DoubleInterval: the ends rounded outward to double (exact for a
    // double, an interval of doubles, or an MPFR value of <= 53 bits)
    if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, DoubleInterval>) {
      return U(x);
    } else {
      if constexpr (std::is_same_v<T, Mpfi>) {
        if (mpfi_nan_p(x.backend().data())) return DoubleInterval::nan();
      }
      mpfr_t lo, hi;
      mpfr_init2(lo, 53);
      mpfr_init2(hi, 53);
      if constexpr (std::is_same_v<T, Rational>) {
        mpfr_set_q(lo, x.backend().data(), MPFR_RNDD);
        mpfr_set_q(hi, x.backend().data(), MPFR_RNDU);
      } else if constexpr (std::is_same_v<T, Mpfi>) {
        mpfi_get_left(lo, x.backend().data());   // rounded down to 53 bits
        mpfi_get_right(hi, x.backend().data());  // rounded up
      } else {
        static_assert(std::is_same_v<T, Mpfr>, "no conversion into DoubleInterval");
        mpfr_set(lo, x.backend().data(), MPFR_RNDD);
        mpfr_set(hi, x.backend().data(), MPFR_RNDU);
      }
      const U out(mpfr_get_d(lo, MPFR_RNDD), mpfr_get_d(hi, MPFR_RNDU));
      mpfr_clear(lo);
      mpfr_clear(hi);
      return out;
    }
  } else if constexpr (std::is_same_v<T, Rational> && !std::is_same_v<U, Rational>) {
    if constexpr (std::is_same_v<U, Mpfi>) {
      U out;
      mpfi_set_q(out.backend().data(), x.backend().data());
      return out;
    } else if constexpr (std::is_same_v<U, Mpfr>) {
      U out;
      mpfr_set_q(out.backend().data(), x.backend().data(), MPFR_RNDN);
      return out;
    } else {
      // double, float, Float128, Jet: round once to the target's precision.
      constexpr int kBits = std::is_same_v<U, float> ? 24 : std::is_same_v<U, Float128> ? 113 : 53;
      mpfr_t r;
      mpfr_init2(r, kBits);
      mpfr_set_q(r, x.backend().data(), MPFR_RNDN);
      U out;
      if constexpr (std::is_same_v<U, Float128>) {
        // r = d0 + d1 + d2 exactly (three doubles hold 159 >= 113 bits); the
        // Float128 sum of the three is r itself.
        out = 0;
        for (int part = 0; part < 3; ++part) {
          const double d = mpfr_get_d(r, MPFR_RNDN);
          out += Float128(d);
          mpfr_sub_d(r, r, d, MPFR_RNDN);
        }
      } else if constexpr (std::is_same_v<U, float>) {
        out = mpfr_get_flt(r, MPFR_RNDN);
      } else {
        out = U(mpfr_get_d(r, MPFR_RNDN));
      }
      mpfr_clear(r);
      return out;
    }
  } else if constexpr (std::is_same_v<U, Rational> && std::is_same_v<T, Mpfr>) {
    U out;  // an MPFR value is a dyadic rational: exact
    mpfr_get_q(out.backend().data(), x.backend().data());
    return out;
  } else {
    return U(x);  // double -> Rational is exact (mpq_set_d)
  }
}

// A matrix converted entry by entry with scalar_cast.
template <class U, class Derived>
Matrix<U> matrix_cast(const Eigen::MatrixBase<Derived>& m) {
  using T = typename Derived::Scalar;
  return m.unaryExpr([](const T& x) { return scalar_cast<U>(x); });
}

}  // namespace sinkcert
