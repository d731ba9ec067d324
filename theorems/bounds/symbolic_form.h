// SPDX-License-Identifier: MIT
//
// First-order symbolic forms (affine arithmetic, zonotopes as in DeepT) with
// ONE noise symbol per content variable over a whole box, in double
// arithmetic whose every rounding error is bounded and added to the
// remainder (outward rounding without changing the rounding mode):
//
//   v in c + sum_m g_m eps_m + [-r, r],   eps_m in [-1, 1],
//
// c and g_m doubles, r >= 0 a double that absorbs the nonlinear remainder
// and every rounding error; norm >= sum_m |g_m| (summed upward). The range
// is [c - norm - r, c + norm + r] (rounded outward).
//
// Rounding model (IEEE double, round to nearest, unit roundoff u = 2^-53):
// a computed result fl(z) of one operation satisfies
//   |fl(z) - z| <= u |z| + eta,   eta = 2^-1075 (subnormal results),
// so the step to the next double away from fl(z) (std::nextafter) lies
// beyond z: up(x) and down(x) below are such steps and bound the exact
// value of one operation from above and below. A coefficient computed as
// fl(fl(alpha b_m) + a_m) differs from alpha b_m + a_m by at most
//   (2u + u^2)(|a_m| + |alpha b_m|) + 2 eta <= kRound (|a_m| + |alpha| |b_m|) + 2 eta,
// kRound = 2^-51; summed over the coefficients and the centre this is
//   kRound (norm_a + |c_a| + |alpha| (norm_b + |c_b|)) + 2 (V + 1) eta,
// which each operation adds to r (computed with up()). A constant alpha
// known only to within alpha_rad (a model entry enclosed in MPFI) adds
// alpha_rad |range of b| to r.
//
// Operations and their remainders (A = ca + La + ra, B = cb + Lb + rb,
// La = sum_m a_m eps_m, |La| <= norm_a):
//   a + alpha b   exact in the symbols; r = ra + |alpha| rb (+ rounding)
//   a b           = ca cb + ca Lb + cb La + [ca rb + cb ra + (La + ra)(Lb + rb)],
//                 the bracket bounded by |ca| rb + |cb| ra + (norm_a + ra)(norm_b + rb)
//   a . b         = sum_e a_e b_e: the products' brackets without their
//                 quadratic parts La_e Lb_e, whose sum is one quadratic form
//                 eps^T S eps, S = sum_e la_e lb_e^T (la_e the coefficients
//                 of a_e), bounded by its diagonal split (quadratic_form.h)
//                 where that is narrower than sum_e norm_a_e norm_b_e: where
//                 a and b share symbols (a query row's score against its own
//                 key, y^T A y with q = A^T y), the antisymmetric part of S
//                 cancels in S_mk + S_km and the diagonal's mean
//                 sum_m S_mm / 2 moves into the centre
//   f(a)          f convex on the interval [l, u] that holds a (exp; 1/x
//                 with l > 0), expanded at p = clamp(ca, l, u) with the
//                 slope lambda = fl(f'(p)):
//                   f(a) = f(p) + lambda (ca - p) + lambda (La + ra) + h(a),
//                   h(x) = f(x) - f(p) - lambda (x - p),
//                 h convex, so on [l, u]
//                   max h = max(h(l), h(u)),
//                   h(x) >= h(p) + h'(p)(x - p) >= -|f'(p) - lambda| max(p - l, u - p)
//                 (the tangent at p; h(p) = 0). The scalar parts f(p),
//                 f'(p), h(l), h(u) are enclosed in MPFI. When the plain
//                 range [f(l), f(u)] (f monotone) is narrower than the
//                 form's, the min-range form takes its place: the slope
//                 mu of f at the end where |f'| is least (exp: e^l; 1/x:
//                 -1/u^2), rounded toward 0, so h(x) = f(x) - mu x is
//                 monotone on [l, u] and
//                   f(a) = mu ca + mu (La + ra) + h(a),  h(a) between h(l), h(u),
//                 whose range is the plain one (up to rounding) while it
//                 keeps the part mu La of the dependence on the symbols.
// Fresh symbols (DeepT): a remainder r turned into r eps_m for a new symbol
// m is still a valid enclosure (eps_m ranges over [-1, 1] and no other form
// uses m yet), and every form computed from it afterwards keeps the
// dependence, so a later difference cancels it (x + o - o).
// Every share of a remainder is also credited to the symbols it came from
// (share_m, a heuristic for the split rule only, never part of a bound):
// a product credits |a_m| (norm_b + rb) + |b_m| (norm_a + ra) + the
// factors' own shares, a convex function its gap in proportion to
// |a_m| + share_m.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "src/double_interval.h"
#include "src/scalar_traits.h"

namespace sinkcert::theorems::bounds {

// u = 2^-53, the unit roundoff of double (the rounding model above)
inline constexpr double kUnitRoundoff = 0x1p-53;
// the absolute (subnormal) part of a bound's roundings, generously: 2^-1000
inline constexpr double kTiny = 0x1p-1000;

// One step away from a computed double result: beyond the exact value of the
// operation (|fl(z) - z| is at most half the gap to the next double), so
// these bound a sum or product of nonnegative doubles from above.
inline double next_up(double x) { return directed::succ(x); }
inline double add_up(double a, double b) { return next_up(a + b); }
inline double mul_up(double a, double b) { return next_up(a * b); }  // a, b >= 0

struct SymbolicForm {
  double c = 0.0;
  std::vector<double> g;      // empty: no symbol (a constant up to r)
  double r = 0.0;             // >= 0
  double norm = 0.0;          // >= sum_m |g_m|
  std::vector<double> share;  // the split rule's remainder credit per symbol (empty: none)
};

// The range [c - norm - r, c + norm + r], rounded outward; NaN parts give
// the whole line [-inf, +inf].
struct SymbolicRange {
  double lo, hi;
};
SymbolicRange symbolic_range(const SymbolicForm& a);

// An MPFI value's upper end as a double at or above it (+inf for NaN).
double upper_double(const Mpfi& x);
// Its lower end as a double at or below it (-inf for NaN).
double lower_double(const Mpfi& x);
// The same for a DoubleInterval, whose ends are doubles already.
inline double upper_double(const DoubleInterval& x) {
  return x.is_nan() ? std::numeric_limits<double>::infinity() : x.upper();
}
inline double lower_double(const DoubleInterval& x) {
  return x.is_nan() ? -std::numeric_limits<double>::infinity() : x.lower();
}

// A double with its radius: the enclosure [mid - rad, mid + rad] of an MPFI
// value (a model entry, 1/j).
struct RadiusDouble {
  double mid = 0.0, rad = 0.0;
};
RadiusDouble radius_double(const Mpfi& x);

// The operations of the header over `vars` symbols. drop_product_remainder
// leaves out the bracket of the product (an UNSOUND relaxation that only
// the tests use, to show that they catch a missing remainder term).
class SymbolicArithmetic {
 public:
  explicit SymbolicArithmetic(int vars, bool drop_product_remainder = false)
      : vars_(vars), drop_(drop_product_remainder) {}
  int vars() const { return vars_; }
  SymbolicForm constant(double c) const { return SymbolicForm{c, {}, 0.0, 0.0, {}}; }
  // centre + radius eps_m over [lo, hi]: centre = fl((lo + hi) / 2),
  // radius = max(up(hi - centre), up(centre - lo)), so the form covers [lo, hi]
  SymbolicForm variable(int m, double lo, double hi) const;
  // The remainder r of a as a fresh symbol m (unused so far): c + L + r eps_m,
  // so that every later use of a shares it and differences cancel it.
  void remainder_to_symbol(SymbolicForm& a, int m) const;
  // a += alpha b, alpha in [alpha.mid - alpha.rad, alpha.mid + alpha.rad]
  void add_scaled(SymbolicForm& a, const RadiusDouble& alpha, const SymbolicForm& b) const;
  void add(SymbolicForm& a, const SymbolicForm& b) const { add_scaled(a, {1.0, 0.0}, b); }
  SymbolicForm difference(const SymbolicForm& a, const SymbolicForm& b) const;
  SymbolicForm product(const SymbolicForm& a, const SymbolicForm& b) const;
  // sum_e a_e b_e (a and b of one size; header)
  SymbolicForm dot(const std::vector<SymbolicForm>& a, const std::vector<SymbolicForm>& b) const;
  SymbolicForm exp(const SymbolicForm& a) const;
  // 1 / a for a whose true values are known to be >= floor > 0 (a softmax
  // denominator: floor 1); the form's own range is clipped there.
  SymbolicForm reciprocal_at_least(const SymbolicForm& a, double floor) const;

 private:
  enum class Convex { kExp, kReciprocal };
  SymbolicForm convex(const SymbolicForm& a, Convex f, double lo, double hi) const;
  // the ends lo, hi of f's argument and f there
  struct Ends {
    Mpfi x_lo, x_hi, f_lo, f_hi;
  };
  SymbolicForm min_range(const SymbolicForm& a, Convex f, const Ends& e, const Mpfi& plain) const;
  // lambda (La + ra) + J, J holding lambda ca plus the band of h
  SymbolicForm slope_image(const SymbolicForm& a, double lambda, const Mpfi& J) const;
  void finish(SymbolicForm& a) const;  // norm from g
  // a b with the bracket's quadratic part (norm_a norm_b) or without it
  SymbolicForm product_with(const SymbolicForm& a, const SymbolicForm& b, bool quadratic) const;
  int vars_;
  bool drop_;
};

}  // namespace sinkcert::theorems::bounds
