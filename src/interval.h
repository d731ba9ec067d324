// SPDX-License-Identifier: MIT
//
// One interval vocabulary for every scalar type of scalar_traits.h.
//
// A value x of type T denotes an enclosure [l, u] of a real number:
//   Mpfi, DoubleInterval          the interval [l, u] it stores;
//   double, float, Float128, Mpfr, Rational, ceres::Jet
//                                 the degenerate interval [x, x] (a Jet is
//                                 its value part a; its derivative part rides
//                                 along unchanged in the point results).
// For X = [l, u] (|.| the absolute value):
//   lower_of(X)       = l          upper_of(X)     = u
//   mid_of(X)         = (l + u)/2  width_of(X)     = u - l
//   magnitude_of(X)   = max |x| over X = max(|l|, |u|)
//   mignitude_of(X)   = min |x| over X = 0 if l <= 0 <= u, else min(|l|, |u|)
//   contains_zero(X)  = l <= 0 <= u
//   certainly_less(X, Y) = u_X < l_Y   (every x in X is below every y in Y)
//   intersection_of(X, Y) = [max(l_X, l_Y), min(u_X, u_Y)], empty when
//                       that is not an interval (named apart from Boost's
//                       `intersect`, which argument-dependent lookup would
//                       pick for Mpfi and which has no empty result)
//
// Endpoints are returned in Endpoint<T>, a type that holds them exactly: T
// itself for point types, double for a DoubleInterval, and for Mpfi an Mpfr
// carrying the interval's own binary precision (not the current default,
// which may be lower). So
// lower_of, upper_of, magnitude_of and mignitude_of are exact. The derived
// quantities round as follows:
//   mid_of    point types exact (the value itself); Mpfi rounded to nearest
//             at the interval's precision (MPFI's mpfi_mid: a value in X);
//             DoubleInterval l/2 + u/2 rounded to nearest (a value in X);
//   width_of  point types exactly 0; Mpfi rounded up (mpfi_diam_abs) and
//             DoubleInterval rounded up, so it is never understated.
//
// NaN (an Mpfi with a NaN end, or a NaN point) encloses nothing that can be
// trusted, so it is read as the whole real line by every derived quantity
// and predicate, each in its safe direction: width_of and magnitude_of are
// +inf, mignitude_of is 0, contains_zero is true, certainly_less is false,
// and intersection_of(NaN, Y) is Y. lower_of, upper_of and mid_of return
// the stored NaN unchanged, so it is never hidden.
#pragma once

#include <mpfi.h>
#include <mpfr.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "src/scalar_traits.h"

namespace sinkcert {

// The type that holds an endpoint of a T exactly: double for a
// DoubleInterval, Mpfr for an Mpfi, T itself for a point type.
template <class T>
using Endpoint = std::conditional_t<std::is_same_v<T, DoubleInterval>, double,
                                    std::conditional_t<ScalarTraits<T>::kIsInterval, Mpfr, T>>;

namespace interval_detail {

// A fresh Mpfr with the binary precision of x (not the default precision).
inline Mpfr mpfr_like(const Mpfi& x) {
  Mpfr r;
  mpfr_set_prec(r.backend().data(), mpfi_get_prec(x.backend().data()));
  return r;
}

template <class T>
Endpoint<T> plus_infinity() {
  if constexpr (ScalarTraits<T>::kIsInterval || std::is_same_v<T, Mpfr> ||
                std::is_same_v<T, Float128> || std::is_arithmetic_v<T>) {
    return std::numeric_limits<Endpoint<T>>::infinity();
  } else if constexpr (std::is_same_v<T, Rational>) {
    throw std::logic_error("a rational has no infinity (and is never NaN)");
  } else {
    return T(std::numeric_limits<double>::infinity());  // ceres::Jet
  }
}

}  // namespace interval_detail

// The point interval [x, x] of an endpoint, exactly. For Mpfi through
// mpfi_set_fr (point_interval): Boost's own conversion from Mpfr is wrong
// for some magnitudes (src/scalar_traits.h).
inline Mpfi point_of(const Mpfr& x) { return point_interval(x); }
inline DoubleInterval point_of(double x) { return DoubleInterval(x); }

// Whether x is NaN (an interval: either end is).
template <class T>
bool interval_is_nan(const T& x) {
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    return x.is_nan();
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    return mpfi_nan_p(x.backend().data()) != 0;
  } else {
    return is_nan(x);
  }
}

// l, exactly.
template <class T>
Endpoint<T> lower_of(const T& x) {
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    return x.lower();
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    Mpfr r = interval_detail::mpfr_like(x);
    mpfi_get_left(r.backend().data(), x.backend().data());  // same precision: exact
    return r;
  } else {
    return x;
  }
}

// u, exactly.
template <class T>
Endpoint<T> upper_of(const T& x) {
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    return x.upper();
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    Mpfr r = interval_detail::mpfr_like(x);
    mpfi_get_right(r.backend().data(), x.backend().data());  // same precision: exact
    return r;
  } else {
    return x;
  }
}

// (l + u) / 2: exact for point types; for Mpfi rounded to nearest at the
// interval's precision (a value inside X).
template <class T>
Endpoint<T> mid_of(const T& x) {
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    // l/2 + u/2: inside X (halving is exact above the subnormals)
    return 0.5 * x.lower() + 0.5 * x.upper();
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    Mpfr r = interval_detail::mpfr_like(x);
    mpfi_mid(r.backend().data(), x.backend().data());
    return r;
  } else {
    return x;
  }
}

// u - l: exactly 0 for point types; for Mpfi rounded up. +inf for NaN.
template <class T>
Endpoint<T> width_of(const T& x) {
  if (interval_is_nan(x)) return interval_detail::plus_infinity<T>();
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    return directed::add_up(x.upper(), -x.lower());
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    Mpfr r = interval_detail::mpfr_like(x);
    mpfi_diam_abs(r.backend().data(), x.backend().data());  // rounded up
    return r;
  } else {
    return T(0);
  }
}

// max |x| over X, exact; +inf for NaN.
template <class T>
Endpoint<T> magnitude_of(const T& x) {
  if (interval_is_nan(x)) return interval_detail::plus_infinity<T>();
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    return std::fmax(-x.lower(), x.upper());
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    Mpfr r = interval_detail::mpfr_like(x);
    mpfi_mag(r.backend().data(), x.backend().data());  // max(|l|, |u|): exact
    return r;
  } else {
    return abs_of(x);
  }
}

// min |x| over X, exact: 0 when X contains zero; 0 for NaN.
template <class T>
Endpoint<T> mignitude_of(const T& x) {
  if (interval_is_nan(x)) return Endpoint<T>(0);
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    if (x.lower() > 0) return x.lower();
    if (x.upper() < 0) return -x.upper();
    return 0.0;
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    Mpfr r = interval_detail::mpfr_like(x);
    mpfi_mig(r.backend().data(), x.backend().data());  // 0 or min(|l|, |u|): exact
    return r;
  } else {
    return abs_of(x);
  }
}

// l <= 0 <= u; true for NaN (zero cannot be excluded).
template <class T>
bool contains_zero(const T& x) {
  if (interval_is_nan(x)) return true;
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    return x.lower() <= 0 && x.upper() >= 0;
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    return mpfi_has_zero(x.backend().data()) != 0;
  } else {
    return x == T(0);
  }
}

// Every value of a is below every value of b: u_a < l_b (for points a < b).
// False when either is NaN.
template <class T>
bool certainly_less(const T& a, const T& b) {
  if (interval_is_nan(a) || interval_is_nan(b)) return false;
  return upper_of(a) < lower_of(b);
}

// The common part of a and b, or nullopt when they are disjoint (for points:
// a when a == b). A NaN argument is the whole line: the result is the other
// argument. The result of two Mpfi keeps the endpoints exactly (at the larger
// of the two precisions).
template <class T>
std::optional<T> intersection_of(const T& a, const T& b) {
  if (interval_is_nan(a)) return b;
  if (interval_is_nan(b)) return a;
  if constexpr (std::is_same_v<T, DoubleInterval>) {
    const double lo = std::fmax(a.lower(), b.lower()), hi = std::fmin(a.upper(), b.upper());
    if (hi < lo) return std::nullopt;
    return T(lo, hi);
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    const Mpfr la = lower_of(a), lb = lower_of(b), ua = upper_of(a), ub = upper_of(b);
    const Mpfr& lo = la > lb ? la : lb;
    const Mpfr& hi = ua < ub ? ua : ub;
    if (hi < lo) return std::nullopt;
    T out;
    mpfi_set_prec(out.backend().data(),
                  std::max(mpfi_get_prec(a.backend().data()), mpfi_get_prec(b.backend().data())));
    mpfi_interv_fr(out.backend().data(), lo.backend().data(), hi.backend().data());
    return out;
  } else {
    if (a == b) return a;
    return std::nullopt;
  }
}

}  // namespace sinkcert
