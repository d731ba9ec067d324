// SPDX-License-Identifier: MIT
//
// The row-1 frontier (docs/methods.md, "The row-1 frontier"): certified ends
// of eps*_1(delta), the smallest worst-case loss of a single-layer,
// single-head softmax model on T(n, L) (paper trigger convention, L >= 3)
// whose mean row-1 BOS mass under uniform content is at most 1 - delta.
//
// Lower curve. k = n - 3, a = L - 2, f(o) = o / (1 + o), f(inf) = 1:
//   K    = 2 eps (L-1) / (L-2)                    (flag lemma; 2 = kFlagConstant)
//   o_F  = K / ((1 - K) (L-2))                    (inf when K >= 1)
//   t0   = 2 eps (L-1) / (L-2)                    (pair lemma)
//   b    = (2L-3) eps / (L-2)
//   t1   = t0 + eps / (a o_F)                     (t0 when o_F = inf)
//   G(eps) = f(o_F) min(t1, 1)^k
//            + [t1 < 1] (k eps / a) ( sum_{m=0}^{k-2} b^m (1 - t1^(k-1-m)) / (k-1-m)
//                                     + b^(k-1) ln((1 - b) / (t1 - b)) )
//   G(eps) = f(o_F) when k = 0.
// Every model with E <= eps has row-1 deficit D <= G(eps), so if the upper
// end of an outward-rounded enclosure of G(eps0) is below delta then
//   eps*_1(delta) >= eps0          CERTIFIED ("every model")
// (a model with D >= delta and E <= eps0 would give delta <= G(eps0)).
// Branches in MPFI: K < 1 and t1 < 1 are decided by certified comparisons;
// undecided K (K's enclosure holds 1) gives G in [0, 1] (G is a mean of
// deficits), undecided t1 the hull of both branches (G is continuous in t1
// at 1, and each branch encloses G when it is the true one).
// Unmutated, t1 >= 1 happens only with K >= 1 (t1 >= 1 with K < 1 means
// eps >= K); the flag-constant mutant (1 for 2) reaches it.
//
// Upper curve. For delta in (0, 1), s = ln(delta / (1 - delta)), beta > 0:
//   A = s e_{n-1} e_{n-1}^T - beta e_{n-1} e_1^T - beta e_1 e_0^T,
//   M = lambda (I - e_0 e_0^T),  lambda = 1 / (1 + alpha'),
//   alpha' = w / (1 + w),  w = (L-2) e^s + e^-beta,
// whose loss tends to U(delta) = (L-2) delta / (1 + (2L-5) delta) as
// beta -> inf. The model written here has exact decimal entries: s' = s
// rounded UP to kDecimalPlaces places (so its deficit D' >= delta), lambda
// rounded to nearest. Row 1's deficit does not depend on the content:
//   D' = e^s' / (1 + e^s') = 1 / (1 + e^-s')      (enclosed in MPFI)
// and its attention reads flags only, so bound_worst_case's first pass (one
// box per trigger) is the exact range of the error up to rounding. Hence
//   eps*_1(D') <= E(model) <= E_upper          CERTIFIED ("this model")
// and, when D' >= delta is certified, eps*_1(delta) <= E_upper as well
// (eps*_1 is nondecreasing: a model with D >= D' has D >= delta).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/interval.h"
#include "src/scalar_traits.h"
#include "src/weight_file.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::theorems::studies {

// The flag lemma's constant: |r'| + (1 - alpha)|u| <= 2 eps.
constexpr int kFlagConstant = 2;
// Decimal places of the upper model's s' and lambda: s' is within 1e-15 of
// s, so D' - delta <= 1e-15 / 4 and E moves by as little (|dU/ds| <= 1).
constexpr int kDecimalPlaces = 15;
// beta of the upper model: e^-40 ~ 4e-18 is the trigger row's BOS mass
// and the ordinary row's trigger-key weight, both far below 1e-6 of U.
constexpr double kUpperModelBeta = 40.0;
// Bisection steps for eps0 on [0, 1]: eps0 within 2^-50 ~ 9e-16 of the
// largest dyadic eps0 that the enclosure certifies.
constexpr int kRow1BisectionSteps = 50;
// MPFI precision of G's enclosure (its width is ~1e-36, far below the
// bisection's resolution).
constexpr int kRow1Bits = 128;

// The derivation's constants; the defaults are the theorem's. A test-only
// mutant changes one (flag = 1 drops u from the flag lemma) to show the
// checks can fail.
struct Row1Constants {
  int flag = kFlagConstant;
};

namespace row1_detail {

enum class Decision { kYes, kNo, kUndecided };

// Whether x < y: for points the comparison, for intervals certified
// (kUndecided when the enclosures overlap).
template <class T>
Decision decide_less(const T& x, const T& y) {
  if constexpr (ScalarTraits<T>::kIsInterval) {
    if (certainly_less(x, y)) return Decision::kYes;
    if (!(upper_of(y) > lower_of(x))) return Decision::kNo;  // l_x >= u_y: x >= y
    return Decision::kUndecided;
  } else {
    return x < y ? Decision::kYes : Decision::kNo;
  }
}

// x^m for an integer m >= 0 by repeated products (x >= 0 here, so each
// interval product is the exact range up to outward rounding).
template <class T>
T power(const T& x, int m) {
  T r(1);
  for (int i = 0; i < m; ++i) r *= x;
  return r;
}

// The hull of two enclosures (for points: the second, never reached).
template <class T>
T hull_of(const T& x, const T& y) {
  if constexpr (ScalarTraits<T>::kIsInterval) {
    const Mpfr lx = lower_of(x), ly = lower_of(y), ux = upper_of(x), uy = upper_of(y);
    return T(lx < ly ? lx : ly, ux > uy ? ux : uy);
  } else {
    return y;
  }
}

// The upper (upper = true) or lower end of x as a point of T (x itself
// for point types).
template <class T>
T end_point(const T& x, bool upper) {
  if constexpr (ScalarTraits<T>::kIsInterval) {
    const Mpfr e = upper ? Mpfr(upper_of(x)) : Mpfr(lower_of(x));
    return T(e, e);
  } else {
    (void)upper;
    return x;
  }
}

}  // namespace row1_detail

// G(eps) for eps > 0 (see the top of this file), in T = double, Mpfr
// (NUMERIC) or Mpfi (CERTIFIED enclosure). Throws std::invalid_argument
// unless n >= 3, L >= 3 and eps is certainly > 0.
template <class T>
T row1_G(const T& eps, int n, int L, const Row1Constants& c = {}) {
  using row1_detail::Decision;
  if (n < 3 || L < 3) throw std::invalid_argument("row1_G needs n >= 3 and L >= 3");
  if (row1_detail::decide_less(T(0), eps) != Decision::kYes) {
    throw std::invalid_argument("row1_G needs eps > 0");
  }
  const int k = n - 3;
  const T one(1);
  // a = L - 2
  const T a(L - 2);
  // K = flag eps (L-1) / (L-2)
  const T K = T(c.flag) * eps * T(L - 1) / a;
  // t0 = 2 eps (L-1) / (L-2)
  const T t0 = T(2) * eps * T(L - 1) / a;
  // b = (2L-3) eps / (L-2)
  const T b = T(2 * L - 3) * eps / a;
  const Decision k_below_one = row1_detail::decide_less(K, one);
  if (k_below_one == Decision::kUndecided) {
    // G is a mean of deficits: G in [0, 1] (the safe upper end)
    if constexpr (ScalarTraits<T>::kIsInterval) return T(Mpfr(0), Mpfr(1));
  }
  T fF = one, t1 = t0;  // K >= 1: o_F = inf, f(o_F) = 1, t1 = t0
  if (k_below_one == Decision::kYes) {
    // o_F = K / ((1 - K) (L-2))
    const T oF = K / ((one - K) * a);
    // f(o_F) = o_F / (1 + o_F)
    fF = oF / (one + oF);
    // t1 = t0 + eps / (a o_F)
    t1 = t0 + eps / (a * oF);
  }
  if (k == 0) return fF;
  const Decision t1_below_one = row1_detail::decide_less(t1, one);
  // t1 >= 1: phi = f(o_F) on all of [0, 1], G = f(o_F)
  if (t1_below_one == Decision::kNo) return fF;
  // S = sum_{m=0}^{k-2} b^m (1 - t1^(k-1-m)) / (k-1-m) + b^(k-1) ln((1 - b) / (t1 - b))
  T S(0);
  for (int m = 0; m <= k - 2; ++m) {
    S += row1_detail::power(b, m) * (one - row1_detail::power(t1, k - 1 - m)) / T(k - 1 - m);
  }
  using std::log;
  S += row1_detail::power(b, k - 1) * log((one - b) / (t1 - b));
  // G = f(o_F) t1^k + (k eps / a) S
  const T G = fF * row1_detail::power(t1, k) + T(k) * eps / a * S;
  if (t1_below_one == Decision::kYes) return G;
  return row1_detail::hull_of(fF, G);  // t1 vs 1 undecided: both branches
}

// f(o_F), the flag lemma's bound on the row-1 deficit at every content
// ((F) with the odds scaling), for eps > 0:
//   K = 2 eps (L-1) / (L-2),  f(o_F) = K / ((1 - K) (L-2) + K)  (K < 1),
// 1 when K >= 1, [0, 1] when the comparison K < 1 is undecided.
template <class T>
T row1_flag_deficit(const T& eps, int L) {
  using row1_detail::Decision;
  const T one(1), a(L - 2);
  const T K = T(kFlagConstant) * eps * T(L - 1) / a;
  switch (row1_detail::decide_less(K, one)) {
    case Decision::kYes:
      // f(o_F) = K / ((1 - K) (L-2) + K)
      return K / ((one - K) * a + K);
    case Decision::kNo:
      return one;
    default:
      return row1_detail::hull_of(T(0), one);
  }
}

// The integration step checked without the closed form: phi is
// nonincreasing in t and P(T <= t) = t^k, so with t_m = m / N
//   sum_m phi(t_{m+1}) (t_{m+1}^k - t_m^k) <= G(eps) <= sum_m phi(t_m) (t_{m+1}^k - t_m^k),
//   phi(t) = f(min(o_F, o_C(t))),  o_C(t) = eps / ((L-2) t - 2 (L-1) eps) (inf for t <= t0).
// Returned as one interval [lower sum, upper sum] (each phi enclosed; a
// branch the comparisons cannot decide gives phi in [0, 1]). In Mpfi the
// ends are CERTIFIED, so a closed form outside them is wrong.
template <class T>
T row1_G_riemann(const T& eps, int n, int L, int N) {
  using row1_detail::Decision;
  const int k = n - 3;
  const T zero(0), one(1), a(L - 2);
  // K = 2 eps (L-1) / (L-2) = t0
  const T K = T(kFlagConstant) * eps * T(L - 1) / a;
  const T fF = row1_flag_deficit(eps, L);
  // phi(t) = min(f(o_F), f(o_C(t))), f(o_C) = eps / ((L-2) t - (2L-3) eps) for t > t0
  const auto phi = [&](const T& t) {
    const Decision above = row1_detail::decide_less(K, t);
    if (above == Decision::kNo) return fF;
    if (above == Decision::kUndecided) return row1_detail::hull_of(zero, one);
    const T fC = eps / (a * t - T(2 * L - 3) * eps);
    return row1_detail::decide_less(fC, fF) == Decision::kYes   ? fC
           : row1_detail::decide_less(fF, fC) == Decision::kYes ? fF
                                                                : row1_detail::hull_of(fC, fF);
  };
  T low(0), high(0);
  for (int m = 0; m < N; ++m) {
    const T left = T(m) / T(N), right = T(m + 1) / T(N);
    // P(t_m < T <= t_{m+1}) = t_{m+1}^k - t_m^k
    const T mass = row1_detail::power(right, k) - row1_detail::power(left, k);
    low += row1_detail::end_point(phi(right), false) * mass;
    high += row1_detail::end_point(phi(left), true) * mass;
  }
  return row1_detail::hull_of(low, high);
}

// What the row-1 frontier gives one model from a certified upper end eps of
// its worst-case loss E, when the model is single-layer, single-head softmax
// on a task of the paper convention with L >= 3 (docs/methods.md, the
// row-1 frontier). At every content, the flag lemma (F) at j = L - 1 with
// the odds scaling of Lemma 2:
//   1 - a_10 <= f(o_F) = K / ((1 - K) (L-2) + K),  K = 2 eps (L-1) / (L-2)
// (no bound, 1, when K >= 1); over uniform content, the theorem:
//   E_c[1 - a_10] <= G(eps).
// Both are CERTIFIED (MPFI at kRow1Bits, upper ends): a theorem applied to
// this model's certified E.
struct Row1Consequence {
  bool applies = false;
  std::string reason;  // why not, when it does not apply
  Mpfr eps;            // the certified upper end of E it was applied to
  Mpfr uniform_upper;  // 1 - a_10 <= this at every content
  Mpfr mean_upper;     // the mean of 1 - a_10 over uniform content <= this
};
Row1Consequence row1_consequence(ModelKind kind, AttentionKind attention, int layers, int heads,
                                 const Task& task, const Mpfr& eps);
// One line: "row 1 [CERTIFIED; ...]: 1 - a_10 <= ... at every content,
// mean over uniform content <= ..." or "row 1: NOT APPLICABLE (reason)".
std::string row1_consequence_text(const Row1Consequence& c);
// {"applies", "reason"} or {"applies", "eps", "uniform_upper",
// "mean_upper", "evidence"} (upper ends rounded up to double).
nlohmann::json to_json(const Row1Consequence& c);

// The certified lower end at delta: the largest dyadic eps0 found by
// bisection on [0, 1] with upper(G(eps0)) < delta (G in MPFI at kRow1Bits).
struct Row1Lower {
  Rational delta;
  double eps0 = 0.0;  // CERTIFIED: eps*_1(delta) >= eps0 (every model)
  Mpfr G_upper;       // upper end of the enclosure of G(eps0), < delta
  int bits = 0;       // MPFI precision used
};
// Throws std::invalid_argument unless 0 < delta < 1.
Row1Lower row1_certified_lower(const Rational& delta, int n, int L, const Row1Constants& c = {});

// U(delta) = (L-2) delta / (1 + (2L-5) delta), EXACT.
Rational row1_U(const Rational& delta, int L);

// The upper family's model at (n, L, delta) with exact decimal entries, and
// the decimals s', lambda it uses (see the top of this file). The file
// carries the task (L, paper) and provenance metadata.
struct Row1UpperModel {
  int n = 0, L = 0;
  Rational delta;
  Rational s, lambda;  // the exact decimals written
  double beta = kUpperModelBeta;
  WeightFile file;
};
Row1UpperModel row1_upper_model(int n, int L, const Rational& delta, double beta = kUpperModelBeta);

// The model's certified quantities.
struct Row1UpperCertificate {
  Mpfi D;                         // the model's row-1 deficit D' (content-independent)
  bool D_at_least_delta = false;  // lower(D') >= delta, certified
  bounds::WorstCaseBound bound;   // lower <= E(model) <= upper, CERTIFIED
};
Row1UpperCertificate certify_row1_upper_model(const Row1UpperModel& model);

// One row of the table: g (CERTIFIED, every model), the model's E_upper
// (CERTIFIED, this model) and U exact.
struct Row1FrontierRow {
  int n = 0, L = 0;
  Rational delta;
  Row1Lower lower;
  Row1UpperModel model;
  Row1UpperCertificate upper;
  Rational U;        // U(delta), EXACT
  Mpfr ratio_upper;  // E_upper / eps0 rounded up (an upper end of U_cert / g_cert)
  std::string file;  // the model file's name
};
// The table's rows for each (n, L) of `sizes` and each delta (decimal text).
std::vector<Row1FrontierRow> row1_frontier_rows(const std::vector<std::pair<int, int>>& sizes,
                                                const std::vector<std::string>& deltas);

}  // namespace sinkcert::theorems::studies
