// SPDX-License-Identifier: MIT
#include "theorems/bounds/symbolic_form.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "src/scalar_traits.h"

namespace sinkcert::theorems::bounds {
namespace {

// The pointwise property every form must have: for every eps in [-1, 1]^V,
//   |value(eps) - (c + sum_m g_m eps_m)| <= r,
// checked at dense samples (vertices included) against the value computed in
// long double (its own error, below 1e-15 here, is far inside kSlack).
constexpr double kSlack = 1e-13;
// How far outside a broken form's remainder some sample must fall.
constexpr double kBrokenExcess = 1e-6;

long double linear_part(const SymbolicForm& f, const std::vector<double>& eps) {
  long double v = f.c;
  for (std::size_t m = 0; m < f.g.size(); ++m) v += static_cast<long double>(f.g[m]) * eps[m];
  return v;
}

// The largest |value - linear part| - r over the samples (<= 0: sound).
template <class Value>
double worst_excess(const SymbolicForm& f, int vars, const Value& value, int samples) {
  std::mt19937_64 eng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double worst = -INFINITY;
  for (int s = 0; s < samples; ++s) {
    std::vector<double> eps(vars);
    for (double& e : eps) e = s % 3 == 0 ? (u(eng) < 0 ? -1.0 : 1.0) : u(eng);
    const long double gap = std::fabs(static_cast<double>(value(eps) - linear_part(f, eps)));
    worst = std::max(worst, static_cast<double>(gap) - f.r);
  }
  return worst;
}

// x = 0.3 + 0.9 eps_0, y = -0.2 + 0.7 eps_1, z = 0.1 + 0.5 eps_2 (the variables
// over [lo, hi] = centre -+ radius; radii exact in binary up to rounding).
struct Three {
  SymbolicForm x, y, z;
};
Three three(const SymbolicArithmetic& sa) {
  return {sa.variable(0, 0.3 - 0.9, 0.3 + 0.9), sa.variable(1, -0.2 - 0.7, -0.2 + 0.7),
          sa.variable(2, 0.1 - 0.5, 0.1 + 0.5)};
}
long double xv(const std::vector<double>& e, const Three& t) {
  return t.x.c + static_cast<long double>(t.x.g[0]) * e[0];
}
long double yv(const std::vector<double>& e, const Three& t) {
  return t.y.c + static_cast<long double>(t.y.g[1]) * e[1];
}
long double zv(const std::vector<double>& e, const Three& t) {
  return t.z.c + static_cast<long double>(t.z.g[2]) * e[2];
}

TEST_CASE("products, exp and reciprocals enclose their functions pointwise") {
  PrecisionScope scope(128);
  const SymbolicArithmetic sa(3);
  const Three t = three(sa);
  // x y
  const SymbolicForm xy = sa.product(t.x, t.y);
  CHECK(worst_excess(
            xy, 3, [&](const auto& e) { return xv(e, t) * yv(e, t); }, 4000) <= kSlack);
  // exp(3 (x y - z)) (convex, wide range)
  SymbolicForm s = sa.difference(xy, t.z);
  SymbolicForm s3;
  sa.add_scaled(s3, {3.0, 0.0}, s);
  const SymbolicForm ex = sa.exp(s3);
  const auto exv = [&](const auto& e) { return std::exp(3 * (xv(e, t) * yv(e, t) - zv(e, t))); };
  CHECK(worst_excess(ex, 3, exv, 4000) <= kSlack);
  // a softmax weight 1 / (1 + exp(...) + exp(x)), denominator >= 1
  SymbolicForm den = sa.constant(1.0);
  sa.add(den, ex);
  sa.add(den, sa.exp(t.x));
  const SymbolicForm w = sa.reciprocal_at_least(den, 1.0);
  const auto wv = [&](const auto& e) { return 1 / (1 + exv(e) + std::exp(xv(e, t))); };
  CHECK(worst_excess(w, 3, wv, 4000) <= kSlack);
  // the weight times z, and a constant known to within 1e-3
  SymbolicForm wz;
  sa.add_scaled(wz, {0.5, 1e-3}, sa.product(w, t.z));
  // worst case of the uncertain constant: 0.5 -+ 1e-3
  const auto wzv = [&](const auto& e) { return (0.5L + 1e-3L) * wv(e) * zv(e, t); };
  CHECK(worst_excess(wz, 3, wzv, 4000) <= kSlack);
  // the range holds every sampled value
  const SymbolicRange r = symbolic_range(w);
  CHECK(r.lo <= 1 / (1 + std::exp(3 * (0.3 * -0.2 - 0.1)) + std::exp(0.3)));
  CHECK(r.hi >= 1 / (1 + std::exp(3 * (0.3 * -0.2 - 0.1)) + std::exp(0.3)));
}

TEST_CASE(
    "where the tangent form is wider than the plain range, exp and 1/x keep a min-range form") {
  PrecisionScope scope(128);
  const SymbolicArithmetic sa(1);
  // Plain widths and the tangent forms' (slope at the centre plus the gap):
  // exp on [-1, 1]: e - 1/e = 2.35 against 2 + (e - 2) = 2.72;
  // 1/x on [1, 10]: 0.9 against 9 / 5.5^2 + 0.67 = 0.97.
  // The slopes and ranges below are exact up to a few roundings of doubles
  // and MPFI ends (relative 2^-52 each).
  constexpr double kFewRoundings = 1e-12;
  const SymbolicForm x = sa.variable(0, -1.0, 1.0);
  const SymbolicForm ex = sa.exp(x);
  const auto xv = [&](const auto& e) { return linear_part(x, e); };
  CHECK(worst_excess(
            ex, 1, [&](const auto& e) { return std::exp(xv(e)); }, 4000) <= kSlack);
  // the min-range slope e^-1 (rounded down), and the plain range
  REQUIRE(ex.g.size() == 1);
  CHECK(ex.g[0] == doctest::Approx(std::exp(-1.0)).epsilon(kFewRoundings));
  const SymbolicRange re = symbolic_range(ex);
  CHECK(re.hi - re.lo <= (std::exp(1.0) - std::exp(-1.0)) * (1 + kFewRoundings));
  const SymbolicForm y = sa.variable(0, 1.0, 10.0);
  const SymbolicForm inv = sa.reciprocal_at_least(y, 1.0);
  CHECK(worst_excess(
            inv, 1, [&](const auto& e) { return 1 / linear_part(y, e); }, 4000) <= kSlack);
  // slope -1/10^2
  REQUIRE(inv.g.size() == 1);
  CHECK(inv.g[0] == doctest::Approx(-0.01 * y.g[0]).epsilon(kFewRoundings));
  const SymbolicRange ri = symbolic_range(inv);
  CHECK(ri.hi - ri.lo <= 0.9 * (1 + kFewRoundings));
  // What the kept slope is for: exp(x) - exp(1.01 x) varies by at most 0.05
  // over the box; as two plain ranges their difference spans 4.7, the
  // min-range forms' linear parts cancel and leave their bands (3.3).
  SymbolicForm x101;
  sa.add_scaled(x101, {1.01, 0.0}, x);
  const SymbolicForm d = sa.difference(ex, sa.exp(x101));
  CHECK(worst_excess(
            d, 1, [&](const auto& e) { return std::exp(xv(e)) - std::exp(1.01L * xv(e)); }, 4000) <=
        kSlack);
  const SymbolicRange rd = symbolic_range(d);
  CHECK(rd.hi - rd.lo < 0.75 * (2 * (std::exp(1.0) - std::exp(-1.0))));
}

// q . y with q = A^T y (forms that share their symbols, as a query row's
// score against its own key): y_e = c_e + sum_m G_em eps_m + rho_e(eps) with
// |rho_e| <= r_e (here r_e cos(3 eps_1 + e), one function within it), and
// the value sum_e (sum_p A_pe y_p) y_e in long double.
struct SharedDot {
  std::vector<SymbolicForm> q, y;
  std::vector<double> c, r;
  std::vector<std::vector<double>> G, A;
};
SharedDot shared_dot(const SymbolicArithmetic& sa, int n, std::mt19937_64& eng, double remainder,
                     bool antisymmetric) {
  std::normal_distribution<double> g(0.0, 1.0);
  const int V = sa.vars();
  SharedDot d;
  d.c.resize(n);
  d.r.assign(n, remainder);
  d.G.assign(n, std::vector<double>(V));
  d.A.assign(n, std::vector<double>(n));
  for (int e = 0; e < n; ++e) {
    d.c[e] = g(eng);
    for (double& x : d.G[e]) x = 0.5 * g(eng);
    for (int p = 0; p < n; ++p) d.A[e][p] = g(eng);
  }
  if (antisymmetric) {
    for (int e = 0; e < n; ++e) {
      for (int p = 0; p < e; ++p) d.A[e][p] = -d.A[p][e];
      d.A[e][e] = 0.0;
    }
  }
  for (int e = 0; e < n; ++e) {
    SymbolicForm f = sa.constant(d.c[e]);
    for (int m = 0; m < V; ++m) {
      SymbolicForm v{0.0, std::vector<double>(V, 0.0), 0.0, 0.0, {}};
      v.g[m] = d.G[e][m];
      v.norm = std::fabs(d.G[e][m]);
      sa.add(f, v);
    }
    f.r += remainder;
    d.y.push_back(f);
  }
  for (int e = 0; e < n; ++e) {
    SymbolicForm qe;
    for (int p = 0; p < n; ++p) sa.add_scaled(qe, {d.A[p][e], 0.0}, d.y[p]);
    d.q.push_back(qe);
  }
  return d;
}
long double shared_value(const SharedDot& d, const std::vector<double>& eps) {
  const int n = static_cast<int>(d.c.size());
  std::vector<long double> y(n);
  for (int e = 0; e < n; ++e) {
    y[e] = d.c[e] + d.r[e] * std::cos(3.0 * eps[1] + e);
    for (std::size_t m = 0; m < eps.size(); ++m)
      y[e] += static_cast<long double>(d.G[e][m]) * eps[m];
  }
  long double s = 0;
  for (int e = 0; e < n; ++e) {
    long double qe = 0;
    for (int p = 0; p < n; ++p) qe += d.A[p][e] * y[p];
    s += qe * y[e];
  }
  return s;
}

TEST_CASE("a dot product of forms that share symbols encloses q . y pointwise, narrower") {
  PrecisionScope scope(128);
  std::mt19937_64 eng(11);
  constexpr int kVars = 6, kN = 4;
  const SymbolicArithmetic sa(kVars);
  for (int trial = 0; trial < 20; ++trial) {
    const bool antisymmetric = trial % 2 == 1;
    const SharedDot d = shared_dot(sa, kN, eng, trial < 10 ? 0.0 : 0.05, antisymmetric);
    const SymbolicForm dot = sa.dot(d.q, d.y);
    const auto value = [&](const std::vector<double>& e) { return shared_value(d, e); };
    CHECK(worst_excess(dot, kVars, value, 3000) <= kSlack);
    // the products one by one
    SymbolicForm products;
    for (int e = 0; e < kN; ++e) sa.add(products, sa.product(d.q[e], d.y[e]));
    CHECK(worst_excess(products, kVars, value, 300) <= kSlack);
    CHECK(dot.norm + dot.r <= products.norm + products.r);
    if (antisymmetric && trial < 10) {
      // y^T A y = 0 for antisymmetric A: only roundings are left, where the
      // products keep sum_e norm_q_e norm_y_e (of order 10 here)
      constexpr double kCancelled = 1e-12;
      CHECK(dot.r <= kCancelled);
      CHECK(products.r >= 1.0);
    }
  }
  // one symbol, q = y = eps: eps^2 in [0, 1], the form 1/2 +- 1/2 (the
  // products: 0 +- 1)
  const SymbolicArithmetic one(1);
  const SymbolicForm e0 = one.variable(0, -1.0, 1.0);
  const SymbolicForm square = one.dot({e0}, {e0});
  // (the variable's radius is 1 raised by one ulp, and the bounds by their
  // rounding terms: far below 1e-12 relative)
  constexpr double kRoundingRaise = 1e-12;
  CHECK(square.c == doctest::Approx(0.5).epsilon(kRoundingRaise));
  CHECK(square.r == doctest::Approx(0.5).epsilon(kRoundingRaise));
  CHECK(one.product(e0, e0).r == doctest::Approx(1.0).epsilon(kRoundingRaise));
}

TEST_CASE("a product without its quadratic remainder fails the pointwise test") {
  PrecisionScope scope(128);
  const SymbolicArithmetic broken(3, /*drop_product_remainder=*/true);
  const Three t = three(broken);
  const SymbolicForm xy = broken.product(t.x, t.y);
  CHECK(worst_excess(
            xy, 3, [&](const auto& e) { return xv(e, t) * yv(e, t); }, 4000) > kBrokenExcess);
}

TEST_CASE("rounding: sums of many tiny and large terms stay enclosed") {
  PrecisionScope scope(128);
  // (1 + 2^-40 eps_0) / 3 summed 1000 times: every rounding (1/3 is not a
  // double) is absorbed by r
  const SymbolicArithmetic sa(1);
  SymbolicForm v;
  sa.add_scaled(v, radius_double(Mpfi(1) / Mpfi(3)), sa.variable(0, 1 - 0x1p-40, 1 + 0x1p-40));
  SymbolicForm sum;
  for (int k = 0; k < 1000; ++k) sa.add(sum, v);
  for (double e : {-1.0, 0.0, 1.0}) {
    const long double exact = 1000 * (1 + 0x1p-40L * e) / 3;
    CHECK(std::fabs(static_cast<double>(
              exact - (sum.c + static_cast<long double>(sum.g[0]) * e))) <= sum.r);
  }
  CHECK(sum.r < 1e-10);
}

// A form's norm is summed in round to nearest in four running sums and
// raised by the a priori bound 4 (N + 2) u (symbolic_form.cc, finish). It
// must be at least the exact sum of |g_m| (GMP rationals): on sums where
// every small term is rounded away (1 in each running sum, then 2^-53 terms,
// ties to even) and on random magnitudes from the subnormals to 2^60.
TEST_CASE("a form's norm is at least the exact sum of its coefficients' magnitudes") {
  const auto norm_of = [](const std::vector<double>& g) {
    const SymbolicArithmetic sa(static_cast<int>(g.size()));
    SymbolicForm b;
    b.g = g;
    SymbolicForm f;
    sa.add(f, b);  // f.g = g exactly, then its norm
    return f.norm;
  };
  const auto exact_sum = [](const std::vector<double>& g) {
    Rational s = 0;
    for (double v : g) s += scalar_cast<Rational>(std::fabs(v));
    return s;
  };
  std::vector<double> ties{1.0, -1.0, 1.0, -1.0};
  for (int k = 0; k < 1000; ++k) ties.push_back(k % 2 ? 0x1p-53 : -0x1p-53);
  const double tie_norm = norm_of(ties);
  CHECK(scalar_cast<Rational>(tie_norm) >= exact_sum(ties));
  CHECK(tie_norm <= 4.0 * (1 + 1e-12));
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> exponent(-1074, 60), size(0, 40);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  int checked = 0;
  for (int t = 0; t < 300; ++t) {
    std::vector<double> g(static_cast<std::size_t>(size(rng)) * (t % 3 == 0 ? 25 : 1));
    for (double& v : g) v = std::ldexp(mantissa(rng), exponent(rng)) * (rng() % 2 ? 1 : -1);
    const double norm = norm_of(g);
    const Rational exact = exact_sum(g);
    CHECK(scalar_cast<Rational>(norm) >= exact);
    // and tight: the raise, the sum's own roundings (at most 1.5 (N + 2) u)
    // and the product's, within 8 (N + 3) u, and two subnormal steps
    CHECK(scalar_cast<Rational>(norm) <=
          exact * scalar_cast<Rational>(1 + (g.size() + 3.0) * 0x1p-50) + Rational(0x1p-1073));
    ++checked;
  }
  CHECK(checked == 300);
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
