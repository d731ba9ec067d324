// SPDX-License-Identifier: MIT
#include "theorems/bounds/symbolic_form.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/interval.h"
#include "theorems/bounds/quadratic_form.h"

namespace sinkcert::theorems::bounds {

namespace {

// Per coefficient: (2u + u^2)(|a_m| + |alpha b_m|) <= kRound (...), u = 2^-53.
constexpr double kRound = 0x1p-51;
// 2 eta = 2^-1074: the absolute part of two roundings that underflow.
constexpr double kTwoEta = 0x1p-1074;
constexpr double kInf = std::numeric_limits<double>::infinity();
// dot's quadratic form: at most 2^24 entry updates (n V_s^2); at the cap
// (n = 16, V_s = 1024) one dot took about 25 ms on the shared 2-core machine
constexpr double kDotWork = 0x1p24;

// One step below a computed result (next_up's twin, symbolic_form.h).
double down(double x) { return directed::pred(x); }

// kRound magnitude + 2 (vars + 1) eta, rounded up: the rounding errors of
// one operation over the centre and every coefficient.
double rounding(double magnitude, int vars) {
  return add_up(mul_up(kRound, magnitude), mul_up(2.0 * (vars + 1), kTwoEta));
}

bool is_exact_zero(const SymbolicForm& a) { return a.c == 0 && a.g.empty() && a.r == 0; }

// The form of an interval [lo, hi] (MPFI): its midpoint and radius.
SymbolicForm constant_of(const Mpfi& x) {
  const RadiusDouble d = radius_double(x);
  return SymbolicForm{d.mid, {}, d.rad, 0.0, {}};
}

}  // namespace

double upper_double(const Mpfi& x) {
  if (interval_is_nan(x)) return kInf;
  return next_up(to_double(Mpfr(bmp::upper(x))));
}

double lower_double(const Mpfi& x) {
  if (interval_is_nan(x)) return -kInf;
  return down(to_double(Mpfr(bmp::lower(x))));
}

SymbolicRange symbolic_range(const SymbolicForm& a) {
  // [c - (norm + r), c + (norm + r)], outward
  const double w = add_up(a.norm, a.r);
  const double lo = down(a.c - w), hi = next_up(a.c + w);
  if (std::isnan(lo) || std::isnan(hi)) return {-kInf, kInf};
  return {lo, hi};
}

RadiusDouble radius_double(const Mpfi& x) {
  if (interval_is_nan(x)) return {std::nan(""), kInf};
  const double mid = to_double(Mpfr(bmp::median(x)));
  // rad >= max(mid - lower, upper - mid)
  return {mid, upper_double(abs_of(x - point_interval(Mpfr(mid))))};
}

void SymbolicArithmetic::finish(SymbolicForm& a) const {
  // norm >= sum_m |g_m|: summed in round to nearest in four running sums
  // (independent additions, so not one serial chain of V steps), then raised
  // by the a priori bound of a sum of N nonnegative terms in any order where
  // each passes through at most h <= N + 2 additions (Higham, Accuracy and
  // Stability, 4.2): |fl - sum| <= gamma_h sum, gamma_h = h u / (1 - h u), so
  // sum <= fl / (1 - gamma_h) <= fl (1 + 4 h u) while h u <= 1/3 (a sum whose
  // result is subnormal is exact, so this holds there too).
  const std::size_t N = a.g.size();
  const double* g = a.g.data();
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  std::size_t m = 0;
  for (; m + 4 <= N; m += 4) {
    s0 += std::fabs(g[m]);
    s1 += std::fabs(g[m + 1]);
    s2 += std::fabs(g[m + 2]);
    s3 += std::fabs(g[m + 3]);
  }
  for (; m < N; ++m) s0 += std::fabs(g[m]);
  const double s = (s0 + s1) + (s2 + s3);
  // 1 + 4 (N + 2) u, exact (4 u = 2^-51)
  const double raise = 1.0 + (static_cast<double>(N) + 2.0) * kRound;
  a.norm = s == 0 ? 0.0 : mul_up(s, raise);
}

SymbolicForm SymbolicArithmetic::variable(int m, double lo, double hi) const {
  const double centre = 0.5 * (lo + hi);
  const double radius = std::max(next_up(hi - centre), next_up(centre - lo));
  SymbolicForm a{centre, std::vector<double>(vars_, 0.0), 0.0, radius, {}};
  a.g[m] = radius;
  return a;
}

void SymbolicArithmetic::remainder_to_symbol(SymbolicForm& a, int m) const {
  if (a.r == 0) return;
  if (a.g.empty()) a.g.assign(vars_, 0.0);
  a.g[m] = a.r;  // the symbol is fresh: g_m was 0
  a.r = 0.0;
  finish(a);
}

void SymbolicArithmetic::add_scaled(SymbolicForm& a, const RadiusDouble& alpha,
                                    const SymbolicForm& b) const {
  if (is_exact_zero(b) || (alpha.mid == 0 && alpha.rad == 0)) return;
  const double k = std::fabs(alpha.mid);
  // rounding: kRound (norm_a + |c_a| + |alpha| (norm_b + |c_b|)) + 2 (V + 1) eta
  const double magnitude =
      add_up(add_up(a.norm, std::fabs(a.c)), mul_up(k, add_up(b.norm, std::fabs(b.c))));
  // the constant's own uncertainty: alpha_rad |b| <= alpha_rad (|c_b| + norm_b + r_b)
  const double uncertain =
      alpha.rad > 0 ? mul_up(alpha.rad, add_up(add_up(std::fabs(b.c), b.norm), b.r)) : 0.0;
  // r = r_a + |alpha| r_b + rounding + uncertainty
  a.r = add_up(add_up(a.r, mul_up(k, b.r)), add_up(rounding(magnitude, vars_), uncertain));
  a.c += alpha.mid * b.c;
  if (!b.g.empty()) {
    if (a.g.empty()) a.g.assign(vars_, 0.0);
    for (int m = 0; m < vars_; ++m) a.g[m] += alpha.mid * b.g[m];
  }
  if (!b.share.empty()) {
    if (a.share.empty()) a.share.assign(vars_, 0.0);
    for (int m = 0; m < vars_; ++m) a.share[m] += k * b.share[m];
  }
  finish(a);
}

SymbolicForm SymbolicArithmetic::difference(const SymbolicForm& a, const SymbolicForm& b) const {
  SymbolicForm out = a;
  add_scaled(out, {-1.0, 0.0}, b);
  return out;
}

SymbolicForm SymbolicArithmetic::product(const SymbolicForm& a, const SymbolicForm& b) const {
  return product_with(a, b, true);
}

SymbolicForm SymbolicArithmetic::product_with(const SymbolicForm& a, const SymbolicForm& b,
                                              bool quadratic) const {
  if (is_exact_zero(a) || is_exact_zero(b)) return SymbolicForm{};
  SymbolicForm out;
  // a b = ca cb + (ca g_b + cb g_a) eps + [ca rb + cb ra + (La + ra)(Lb + rb)]
  out.c = a.c * b.c;
  if (!a.g.empty() || !b.g.empty()) {
    out.g.assign(vars_, 0.0);
    for (int m = 0; m < vars_; ++m) {
      const double am = a.g.empty() ? 0.0 : a.g[m], bm = b.g.empty() ? 0.0 : b.g[m];
      out.g[m] = a.c * bm + b.c * am;
    }
  }
  const double ca = std::fabs(a.c), cb = std::fabs(b.c);
  // rounding: kRound (|ca| (norm_b + |cb|) + |cb| norm_a) + 2 (V + 1) eta
  const double magnitude = add_up(mul_up(ca, add_up(b.norm, cb)), mul_up(cb, a.norm));
  const double wa = add_up(a.norm, a.r), wb = add_up(b.norm, b.r);
  // |ca| rb + |cb| ra + (norm_a + ra)(norm_b + rb); without the quadratic
  // part norm_a norm_b: |ca| rb + |cb| ra + norm_a rb + ra (norm_b + rb)
  double bracket = add_up(mul_up(ca, b.r), mul_up(cb, a.r));
  if (!quadratic) {
    bracket = add_up(bracket, add_up(mul_up(a.norm, b.r), mul_up(a.r, wb)));
  } else if (!drop_) {
    bracket = add_up(bracket, mul_up(wa, wb));
  }
  out.r = add_up(bracket, rounding(magnitude, vars_));
  if (!a.g.empty() || !b.g.empty() || !a.share.empty() || !b.share.empty()) {
    // credit: |a_m| wb + |b_m| wa + |cb| share_a + |ca| share_b (heuristic)
    out.share.assign(vars_, 0.0);
    for (int m = 0; m < vars_; ++m) {
      double s = 0.0;
      if (!a.g.empty()) s += std::fabs(a.g[m]) * wb;
      if (!b.g.empty()) s += std::fabs(b.g[m]) * wa;
      if (!a.share.empty()) s += (cb + wb) * a.share[m];
      if (!b.share.empty()) s += (ca + wa) * b.share[m];
      out.share[m] = s;
    }
  }
  finish(out);
  return out;
}

SymbolicForm SymbolicArithmetic::dot(const std::vector<SymbolicForm>& a,
                                     const std::vector<SymbolicForm>& b) const {
  SymbolicForm out;
  const std::size_t n = std::min(a.size(), b.size());
  // per term, everything but La_e Lb_e; the products' own bound of the
  // quadratic parts, crude = sum_e norm_a_e norm_b_e
  double crude = 0.0;
  for (std::size_t e = 0; e < n; ++e) {
    add(out, product_with(a[e], b[e], false));
    crude = add_up(crude, mul_up(a[e].norm, b[e].norm));
  }
  if (drop_ || crude == 0) return out;
  // S over the symbols either side reads, while n V_s^2 stays within
  // kDotWork (beyond it the crude bound alone)
  std::vector<int> support;
  for (int m = 0; m < vars_; ++m) {
    bool read = false;
    for (std::size_t e = 0; e < n && !read; ++e) {
      read = (!a[e].g.empty() && a[e].g[m] != 0) || (!b[e].g.empty() && b[e].g[m] != 0);
    }
    if (read) support.push_back(m);
  }
  const int Vs = static_cast<int>(support.size());
  if (static_cast<double>(n) * Vs * Vs > kDotWork) {
    out.r = add_up(out.r, crude);
    return out;
  }
  // S_uv = sum_e la_e,u lb_e,v: n rounded products and n - 1 additions an
  // entry, within 2 n u sum_e |la_e,u| |lb_e,v|; over all entries
  // 2 n u sum_e norm_a_e norm_b_e = 2 n u crude
  std::vector<double> S(static_cast<std::size_t>(Vs) * Vs, 0.0);
  for (std::size_t e = 0; e < n; ++e) {
    if (a[e].g.empty() || b[e].g.empty()) continue;
    for (int u = 0; u < Vs; ++u) {
      const double x = a[e].g[support[u]];
      if (x == 0) continue;
      double* row = &S[static_cast<std::size_t>(u) * Vs];
      for (int v = 0; v < Vs; ++v) row[v] += x * b[e].g[support[v]];
    }
  }
  const DiagonalSplit split = diagonal_split(S, Vs);
  const double entries = mul_up(mul_up(2.0 * static_cast<double>(n + 1), kUnitRoundoff), crude);
  // eps^T S eps in shift +- (bound + shift_error + entries)
  const double joint = add_up(add_up(split.bound, split.shift_error), entries);
  if (!(joint < crude)) {
    out.r = add_up(out.r, crude);
    return out;
  }
  // c + shift rounds by at most u |c + shift| <= 2u (|c| + |shift|)
  const double moved = add_up(std::fabs(out.c), std::fabs(split.shift));
  out.c += split.shift;
  out.r = add_up(add_up(out.r, joint), mul_up(moved, 2.0 * kUnitRoundoff));
  return out;
}

SymbolicForm SymbolicArithmetic::convex(const SymbolicForm& a, Convex f, double lo,
                                        double hi) const {
  const auto fx = [f](const Mpfi& x) { return f == Convex::kExp ? exp_of(x) : Mpfi(1) / x; };
  // the range's ends and f there, each enclosed once
  const Mpfi x_lo = point_interval(Mpfr(lo)), x_hi = point_interval(Mpfr(hi));
  const Ends e{x_lo, x_hi, fx(x_lo), fx(x_hi)};
  // the plain range [f(lo), f(hi)] (exp increasing, 1/x decreasing on x > 0)
  const Mpfi plain = f == Convex::kExp ? Mpfi(bmp::lower(e.f_lo), bmp::upper(e.f_hi))
                                       : Mpfi(bmp::lower(e.f_hi), bmp::upper(e.f_lo));
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    return std::isfinite(upper_double(plain)) ? constant_of(plain)
                                              : SymbolicForm{0.0, {}, kInf, 0.0, {}};
  }
  // expansion point p = clamp(ca, lo, hi), slope lambda = fl(f'(p)); exp' = exp
  const double p = std::clamp(a.c, lo, hi);
  const Mpfi P = point_interval(Mpfr(p)), fp = fx(P);
  const Mpfi dfp = f == Convex::kExp ? fp : Mpfi(-1) / (P * P);
  const double lambda = to_double(Mpfr(bmp::median(dfp)));
  const Mpfi L = point_interval(Mpfr(lambda));
  // h(x) = f(x) - f(p) - lambda (x - p): max h = max(h(lo), h(hi)) (convex),
  // min h >= -|f'(p) - lambda| max(p - lo, hi - p) (tangent at p)
  const Mpfi hl = e.f_lo - fp - L * (e.x_lo - P), hh = e.f_hi - fp - L * (e.x_hi - P);
  const Mpfr hmax = bmp::upper(hl) > bmp::upper(hh) ? bmp::upper(hl) : bmp::upper(hh);
  const Mpfi reach = max_of(P - e.x_lo, e.x_hi - P);
  const Mpfr hmin = bmp::lower(-(abs_of(dfp - L) * reach));
  // J = f(p) + lambda (ca - p) + [hmin, hmax]: the new centre and its radius
  SymbolicForm out =
      slope_image(a, lambda, fp + L * (point_interval(Mpfr(a.c)) - P) + Mpfi(hmin, hmax));
  const double k = std::fabs(lambda);
  // the gap hmax - hmin credited in proportion to |a_m| + share_m (heuristic)
  if (!a.g.empty() || !a.share.empty()) {
    const double gap = to_double(Mpfr(hmax - hmin));
    double total = 0.0;
    for (int m = 0; m < vars_; ++m) {
      total += (a.g.empty() ? 0.0 : std::fabs(a.g[m])) + (a.share.empty() ? 0.0 : a.share[m]);
    }
    out.share.assign(vars_, 0.0);
    for (int m = 0; m < vars_; ++m) {
      const double own =
          (a.g.empty() ? 0.0 : std::fabs(a.g[m])) + (a.share.empty() ? 0.0 : a.share[m]);
      out.share[m] = k * (a.share.empty() ? 0.0 : a.share[m]) + (total > 0 ? gap * own / total : 0);
    }
  }
  // the min-range form when the plain range is narrower: its range is the
  // plain one (up to rounding) and it keeps part of the slope
  const SymbolicRange form = symbolic_range(out);
  const double plain_width = upper_double(plain) - lower_double(plain);
  if (!(form.hi - form.lo <= plain_width)) {
    SymbolicForm m = min_range(a, f, e, plain);
    m.share = std::move(out.share);
    return m;
  }
  return out;
}

SymbolicForm SymbolicArithmetic::slope_image(const SymbolicForm& a, double lambda,
                                             const Mpfi& J) const {
  const RadiusDouble centre = radius_double(J);
  SymbolicForm out;
  out.c = centre.mid;
  const double k = std::fabs(lambda);
  if (!a.g.empty()) {
    out.g.resize(vars_);
    for (int m = 0; m < vars_; ++m) out.g[m] = lambda * a.g[m];
  }
  // r = |lambda| ra + radius(J) + rounding (kRound |lambda| norm_a + ...)
  out.r = add_up(add_up(mul_up(k, a.r), centre.rad), rounding(mul_up(k, a.norm), vars_));
  finish(out);
  return out;
}

SymbolicForm SymbolicArithmetic::min_range(const SymbolicForm& a, Convex f, const Ends& e,
                                           const Mpfi& plain) const {
  // exp: mu = e^lo rounded down, so h(x) = e^x - mu x rises on [lo, hi];
  // 1/x: mu = -1/hi^2 rounded toward 0, so h(x) = 1/x - mu x falls on [lo, hi]
  const double mu =
      f == Convex::kExp ? lower_double(e.f_lo) : -lower_double(Mpfi(1) / (e.x_hi * e.x_hi));
  const SymbolicForm constant = constant_of(plain);
  if (!std::isfinite(mu) || mu == 0) return constant;
  const Mpfi M = point_interval(Mpfr(mu));
  // h(x) between h(lo) and h(hi) (h monotone)
  const Mpfi hl = e.f_lo - M * e.x_lo, hh = e.f_hi - M * e.x_hi;
  const Mpfi band = f == Convex::kExp ? Mpfi(bmp::lower(hl), bmp::upper(hh))
                                      : Mpfi(bmp::lower(hh), bmp::upper(hl));
  // f(a) = mu ca + mu (La + ra) + h(a): J = mu ca + band
  const SymbolicForm out = slope_image(a, mu, M * point_interval(Mpfr(a.c)) + band);
  return std::isfinite(out.r) ? out : constant;
}

SymbolicForm SymbolicArithmetic::exp(const SymbolicForm& a) const {
  const SymbolicRange x = symbolic_range(a);
  return convex(a, Convex::kExp, x.lo, x.hi);
}

SymbolicForm SymbolicArithmetic::reciprocal_at_least(const SymbolicForm& a, double floor) const {
  // the true values lie in [max(lo, floor), hi]
  const SymbolicRange x = symbolic_range(a);
  const double lo = std::max(x.lo, floor);
  const double hi = std::max(x.hi, lo);
  return convex(a, Convex::kReciprocal, lo, hi);
}

}  // namespace sinkcert::theorems::bounds
