// SPDX-License-Identifier: MIT
//
// The second-order expansion across heads (second_order_row.h), through the
// symbolic pass that uses it where it is narrower: pointwise enclosure of
// phi at sampled points and vertices, on models whose heads cancel to first
// order and on random ones; how much narrower it is where the heads cancel;
// and a pass without its second-order term E2 that the samples catch.
#include "theorems/bounds/second_order_row.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "tests/test_util.h"
#include "tests/theorems/bounds/symbolic_check.h"
#include "theorems/bounds/deep_symbolic_pass.h"

namespace sinkcert::theorems::bounds {
namespace {

using testing_symbolic::box_points;
using testing_symbolic::quadratic_value;
using testing_symbolic::random_box;
using testing_symbolic::worst_excess;

// phi in double differs from the exact value by far less than this at n <= 7,
// L <= 5 with entries below 10 (rounding of a few hundred operations on values
// below 100).
constexpr double kDoubleSlack = 1e-11;
// How far outside a broken form some sample must fall.
constexpr double kBrokenExcess = 1e-6;

const auto kNever = [](int, int) { return false; };

// Two heads that attend with scores eps x_i^T B x_k and -(m1 / m2) eps x_i^T B x_k
// (B random over all coordinates) and values m_h times the content
// (m1 = 0.8, m2 = 0.2): sum_h m_h A_h = 0, so the weights' deviations from
// uniform cancel in the summed output to first order; `layers` such layers.
Model<double> cancelling_heads(int n, double eps, std::uint64_t seed, int layers = 1) {
  std::mt19937_64 eng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  constexpr double m1 = 0.8, m2 = 0.2;
  Model<double> m;
  m.kind = ModelKind::kResidual;
  m.attention = AttentionKind::kSoftmax;
  m.n = n;
  Matrix<double> P = Matrix<double>::Zero(n, n);
  for (int c = kFirstContent; c < ordinary_flag(n); ++c) P(c, c) = 1.0;
  for (int l = 0; l < layers; ++l) {
    Matrix<double> B(n, n);
    for (int r = 0; r < n; ++r) {
      for (int e = 0; e < n; ++e) B(r, e) = g(eng);
    }
    m.layers.push_back({Head<double>{eps * B, m1 * P}, Head<double>{-(m1 / m2) * eps * B, m2 * P}});
  }
  return m;
}

// The largest remainder r over the terms (what the expansion narrows: the
// linear parts are the same in every enclosure).
double largest_remainder(const std::vector<SymbolicForm>& phi) {
  double r = 0.0;
  for (const SymbolicForm& f : phi) r = std::max(r, f.r);
  return r;
}

TEST_CASE("second-order forms enclose phi pointwise: cancelling heads and random models") {
  PrecisionScope scope(128);
  const Task task{5, 4, TriggerRange::kPaper};
  std::mt19937_64 eng(31);
  std::vector<Model<double>> models;
  for (const double eps : {1e-4, 1e-2, 0.3, 1.0}) {
    models.push_back(cancelling_heads(task.n, eps, 1));
    models.push_back(cancelling_heads(task.n, eps, 2, 2));
  }
  models.push_back(
      testing::random_model(task.n, AttentionKind::kSoftmax, 0.3, 7, 2, 2, ModelKind::kResidual));
  models.push_back(testing::twin_head_model(task.n, 1e-6, 3));
  for (const Model<double>& m : models) {
    const Model<Mpfi> mi = m.cast<Mpfi>();
    for (const double width : {2.0, 0.5}) {
      for (const int trigger : task.trigger_positions()) {
        const ContentBox box = random_box(task, eng, trigger, width);
        const std::vector<SymbolicForm> phi = deep_symbolic_error(mi, task, box, kNever);
        REQUIRE(phi.size() == static_cast<std::size_t>(task.L * task.n));
        CHECK(worst_excess(m, task, box, phi, 300) <= kDoubleSlack);
      }
    }
  }
}

TEST_CASE("where the heads cancel, the expansion narrows the remainder from order eps to eps^2") {
  PrecisionScope scope(128);
  const Task task{7, 5, TriggerRange::kPaper};
  for (const double eps : {1e-3, 1e-5}) {
    CAPTURE(eps);
    const Model<Mpfi> mi = cancelling_heads(task.n, eps, 4).cast<Mpfi>();
    const ContentBox full = full_content_box(task, 4);
    const double with = largest_remainder(deep_symbolic_error(mi, task, full, kNever));
    const double without = largest_remainder(
        deep_symbolic_error(mi, task, full, kNever, SymbolicVariant::kNoSecondOrder));
    // first order: each head's weight deviations (order eps) times its values
    // (order 1) stay in the remainder; second order: eps^2 and rounding.
    // kRatio = 100 eps: the measured ratios are 34 eps and 28 eps (a pass
    // without the expansion gives 1).
    const double kRatio = 100 * eps;
    CHECK(with < kRatio * without);
  }
}

TEST_CASE("without the second-order term E2 the enclosure breaks") {
  PrecisionScope scope(128);
  const Task task{5, 4, TriggerRange::kPaper};
  std::mt19937_64 eng(37);
  double worst = -INFINITY;
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    for (const double eps : {0.3, 1.0}) {
      const Model<double> m = cancelling_heads(task.n, eps, seed);
      const Model<Mpfi> mi = m.cast<Mpfi>();
      for (const double width : {2.0, 1.0}) {
        const ContentBox box = random_box(task, eng, 3, width);
        const std::vector<SymbolicForm> broken =
            deep_symbolic_error(mi, task, box, kNever, SymbolicVariant::kNoSecondOrderTerm);
        worst = std::max(worst, worst_excess(m, task, box, broken, 300));
      }
    }
  }
  CHECK(worst > kBrokenExcess);
}

// The covariance form's S_rho against sum_core alpha_k (rho(delta_k) - P)^2
// computed directly (long double) on arrangements of the deviations: two
// and three values among equally weighted core keys, with and without an
// outlier key of small weight far from them or of weight 0.8 near them (as
// BOS at a sink; the latter moves the core's own mean by about its spread),
// and random ones, each bounded with and without the keys' own largest rho;
// delta is shifted so that sum_all alpha_k delta_k = 0. The largest ratio over the
// two-point arrangements is where the core's mean sits off the middle of its
// range; the variant that looks only at the middle must fall below some of
// them.
struct RhoCase {
  std::vector<long double> alpha, delta;  // every key; core = the first `core`
  int core = 0;
};

// rho(x) = e^x - 1 - x
long double rho_ld(long double x) { return std::expm1(x) - x; }

// sum_core alpha (rho - P)^2, and the inputs S_rho is computed from
std::pair<long double, CovarianceRhoInputs> rho_case(const RhoCase& c) {
  const std::size_t K = c.alpha.size();
  long double P = 0, A = 0, lo = INFINITY, hi = -INFINITY, out_delta = 0, out_rho = 0, rho_max = 0;
  for (std::size_t k = 0; k < K; ++k) P += c.alpha[k] * rho_ld(c.delta[k]);
  for (std::size_t k = 0; k < K; ++k) {
    if (static_cast<int>(k) < c.core) {
      A += c.alpha[k];
      lo = std::min(lo, c.delta[k]);
      hi = std::max(hi, c.delta[k]);
      rho_max = std::max(rho_max, rho_ld(c.delta[k]));
    } else {
      out_delta += c.alpha[k] * std::fabs(c.delta[k]);
      out_rho += c.alpha[k] * rho_ld(c.delta[k]);
    }
  }
  long double sum = 0;
  for (int k = 0; k < c.core; ++k) {
    const long double r = rho_ld(c.delta[k]) - P;
    sum += c.alpha[k] * r * r;
  }
  // the inputs are upper (lower) bounds: raised (lowered) by kInputRaise
  constexpr long double kInputRaise = 1e-12L;
  CovarianceRhoInputs in;
  in.W = static_cast<double>((hi - lo) * (1 + kInputRaise));
  in.D = static_cast<double>(std::max<long double>(0, hi) * (1 + kInputRaise));
  in.eps = static_cast<double>(out_delta / A * (1 + kInputRaise));
  in.core_alpha_lo = static_cast<double>(A * (1 - kInputRaise));
  in.core_alpha_up = static_cast<double>(A * (1 + kInputRaise));
  in.rho_max = static_cast<double>(rho_max * (1 + kInputRaise));
  in.out_rho = static_cast<double>(out_rho * (1 + kInputRaise));
  return {sum, in};
}

// equal core weights (their sum 1 - outlier), values `values` with counts
// `counts`, and (outlier > 0) one more key of that weight at delta `far`;
// every delta shifted so that sum_all alpha delta = 0
RhoCase arrangement(const std::vector<long double>& values, const std::vector<int>& counts,
                    long double outlier, long double far) {
  RhoCase c;
  for (std::size_t v = 0; v < values.size(); ++v) {
    for (int m = 0; m < counts[v]; ++m) c.delta.push_back(values[v]);
  }
  c.core = static_cast<int>(c.delta.size());
  c.alpha.assign(c.delta.size(), (1 - outlier) / c.core);
  if (outlier > 0) {
    c.alpha.push_back(outlier);
    c.delta.push_back(far);
  }
  long double mean = 0;
  for (std::size_t k = 0; k < c.delta.size(); ++k) mean += c.alpha[k] * c.delta[k];
  for (int k = 0; k < c.core; ++k) c.delta[k] -= mean;
  if (outlier > 0) c.delta.back() -= mean;
  return c;
}

// The variance form against sum_core alpha_k rho(delta_k) (long double) on
// the same arrangements; tau = delta up to the shift, so W is the core's
// spread of delta, D its largest delta (at least 0) and reach_k the
// outlier's largest distance to a core delta. Two core values at +-W/2 with
// equal weights and no outlier reach it as W -> 0 (rho(x) + rho(-x) = x^2 +
// O(x^4)), so a variance form that counts (W/4)(W/2) fails there.
constexpr long double kVarianceReached = 1.02L;  // e^(W/2)(1 + W^2/12) at W = 0.02, and rounding

TEST_CASE("the variance form bounds sum_core alpha rho(delta) and is reached by two values") {
  PrecisionScope scope(128);
  const auto check_case = [](const RhoCase& c) {
    long double truth = 0, lo = INFINITY, hi = -INFINITY, A = 0;
    for (int k = 0; k < c.core; ++k) {
      truth += c.alpha[k] * rho_ld(c.delta[k]);
      lo = std::min(lo, c.delta[k]);
      hi = std::max(hi, c.delta[k]);
      A += c.alpha[k];
    }
    std::vector<VarianceOutlier> out;
    for (std::size_t k = c.core; k < c.alpha.size(); ++k) {
      const long double reach = std::max(std::fabs(c.delta[k] - lo), std::fabs(c.delta[k] - hi));
      out.push_back({static_cast<double>(c.alpha[k]), static_cast<double>(reach * (1 + 1e-12L))});
    }
    const double bound =
        variance_rho_bound(static_cast<double>((hi - lo) * (1 + 1e-12L)),
                           static_cast<double>(std::max<long double>(0, hi) * (1 + 1e-12L)),
                           static_cast<double>(A * (1 + 1e-12L)), out);
    CHECK(truth <= bound);
    return bound / truth;
  };
  for (const long double W : {0.02L, 0.5L, 2.0L}) {
    const long double ratio = check_case(arrangement({-W / 2, W / 2}, {3, 3}, 0, 0));
    CAPTURE(static_cast<double>(W));
    if (W < 0.1L) CHECK(ratio <= kVarianceReached);
    check_case(arrangement({-W / 2, 0, W / 2}, {1, 4, 2}, 0, 0));
    for (const long double far : {-3.0L, 1.0L, 4.0L}) {
      check_case(arrangement({-W / 2, W / 2}, {2, 5}, 0.05L, far));
      check_case(arrangement({0, W}, {6, 1}, 0.2L, far));
    }
  }
}

TEST_CASE("the covariance form bounds sum_core alpha (rho - P)^2 on adversarial arrangements") {
  PrecisionScope scope(128);
  // long double evaluation of the direct sum: relative error far below this
  constexpr double kDirectSlack = 1e-9;
  std::mt19937_64 eng(41);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  std::vector<RhoCase> cases;
  for (const long double W : {1e-5L, 1e-2L, 0.3L, 1.0L, 3.0L}) {
    for (const int K : {4, 10, 15}) {
      for (const long double outlier : {0.0L, 1e-6L}) {
        for (int m = 1; m < K; ++m) {
          cases.push_back(arrangement({0, W}, {K - m, m}, outlier, -3));
          // a heavy key near the core (a sink's weight, as BOS's): the core's
          // own mean of delta (eps) is then of the order of its spread W
          if (outlier == 0) {
            for (const long double far : {-W / 2, 2 * W}) {
              cases.push_back(arrangement({0, W}, {K - m, m}, 0.8L, far));
            }
          }
          for (int l = 1; l + m < K; ++l) {
            cases.push_back(arrangement({0, W / 2, W}, {K - m - l, l, m}, outlier, -3));
          }
        }
      }
      for (int r = 0; r < 20; ++r) {
        RhoCase c;
        c.core = K;
        for (int k = 0; k < K; ++k) {
          c.alpha.push_back(U(eng) + 0.1);
          c.delta.push_back(W * U(eng));
        }
        long double total = 0, mean = 0;
        for (const long double a : c.alpha) total += a;
        for (int k = 0; k < K; ++k) c.alpha[k] /= total;
        for (int k = 0; k < K; ++k) mean += c.alpha[k] * c.delta[k];
        for (long double& d : c.delta) d -= mean;
        cases.push_back(c);
      }
    }
  }
  double worst_sound = 0.0, worst_middle = 0.0;
  for (const RhoCase& c : cases) {
    const auto [direct, in] = rho_case(c);
    const double bound = covariance_rho_bound(in);
    const double middle = covariance_rho_bound(in, true);
    REQUIRE(std::isfinite(bound));
    CHECK(static_cast<double>(direct) <= bound * (1 + kDirectSlack));
    // without the keys' own largest rho, the largest rho is the slices'
    // b^2 e^b / 2 (its exponential matters once W is of order 1)
    CovarianceRhoInputs uncapped = in;
    uncapped.rho_max = std::numeric_limits<double>::infinity();
    CHECK(static_cast<double>(direct) <= covariance_rho_bound(uncapped) * (1 + kDirectSlack));
    // the variance part alone: arrangements without an outlier
    if (bound > 0 && c.core == static_cast<int>(c.alpha.size())) {
      worst_sound = std::max(worst_sound, static_cast<double>(direct) / bound);
    }
    if (middle > 0) worst_middle = std::max(worst_middle, static_cast<double>(direct) / middle);
  }
  MESSAGE("largest direct / S_rho: " << worst_sound << ", against the middle-only variant "
                                     << worst_middle);
  // the bound is not loose by orders of magnitude where it matters (a
  // two-point arrangement comes within a factor 4 of it: measured 1.0, as
  // Bhatia-Davis is attained by two values one of which has rho = 0)
  constexpr double kReachedShare = 0.25;
  CHECK(worst_sound > kReachedShare);
  // the unsound variant is caught: some arrangement exceeds it
  CHECK(worst_middle > 1.0 + kDirectSlack);
}

// c + sum_m g_m e_m of a form at the symbols e, in MPFR (the remainder apart).
Mpfr value_at(const SymbolicForm& f, const std::vector<double>& e) {
  Mpfr v(f.c);
  for (int m = 0; m < static_cast<int>(f.g.size()); ++m) v += Mpfr(f.g[m]) * Mpfr(e[m]);
  return v;
}

// second_order_row for one head (M, queries q, scores sc) at row i of the
// stream y, every coordinate tried (no narrower form to beat).
std::vector<SymbolicForm> one_head_row(const SymbolicArithmetic& sa, int n, int i,
                                       const std::vector<SymbolicForm>& y,
                                       const std::vector<RadiusDouble>& M,
                                       const std::vector<SymbolicForm>& q,
                                       const std::vector<SymbolicForm>& sc) {
  return second_order_row(sa, n, i, y, {SecondOrderHead{&M, &q, &sc}},
                          std::vector<double>(n, std::numeric_limits<double>::infinity()));
}

// second_order_row fed forms directly, where its cubic part is all there is:
// n = 3 coordinates, rows 0..3, row 0 the constant (1, 0, 0), row k >= 1
// (0, e_{k-1}, 0) and the query row 3 also e_3 in coordinate 2; one head
// with scores s_k = beta e_3 e_{k-1} (A_21 = beta) and values W_k = e_{k-1}
// (M_01 = 1). Then the expansion's quadratic part is 0 and its cubic part
// sum_k alpha_k (q . z_k)(w . z_k) = beta e_3 sum_k alpha_k e_{k-1}^2 + ...
// is diagonal: half of it is the linear term e_3 sum_a C_aa / 2 that moves
// into the form, half the split's bound. The form must hold the layer's
// output o_0 = sum_k a_k W_k at every point of the symbols' box, evaluated
// in MPFR from the same symbols.
TEST_CASE("second_order_row holds a diagonal cubic part pointwise, its linear term included") {
  PrecisionScope scope(200);
  constexpr int n = 3, i = 3, V = 4;
  const SymbolicArithmetic sa(V);
  std::vector<SymbolicForm> y(static_cast<std::size_t>((i + 1) * n), sa.constant(0.0));
  y[0] = sa.constant(1.0);
  for (int k = 1; k <= i; ++k) y[k * n + 1] = sa.variable(k - 1, -1.0, 1.0);
  y[i * n + 2] = sa.variable(i, -1.0, 1.0);
  std::mt19937_64 eng(13);
  for (const double beta : {0.05, 0.2}) {
    CAPTURE(beta);
    std::vector<RadiusDouble> A(n * n), M(n * n);
    A[2 * n + 1] = {beta, 0.0};
    M[0 * n + 1] = {1.0, 0.0};
    // q_e = sum_p A_pe y_ip, s_k = sum_e q_e y_ke
    std::vector<SymbolicForm> q(n), sc(i + 1);
    for (int e = 0; e < n; ++e) {
      for (int p = 0; p < n; ++p) {
        if (A[p * n + e].mid != 0) sa.add_scaled(q[e], A[p * n + e], y[i * n + p]);
      }
    }
    for (int k = 0; k <= i; ++k) {
      for (int e = 0; e < n; ++e) sa.add(sc[k], sa.product(q[e], y[k * n + e]));
    }
    const std::vector<SymbolicForm> out = one_head_row(sa, n, i, y, M, q, sc);
    REQUIRE(std::isfinite(out[0].r));
    // value_at reads the form's own linear coefficients: e_3's carries the cubic part's shift
    Mpfr worst(-1);
    for (const std::vector<double>& e : box_points(V, 300, eng)) {
      // the exact output at e
      std::vector<Mpfr> yv(static_cast<std::size_t>((i + 1) * n));
      for (std::size_t t = 0; t < yv.size(); ++t) yv[t] = value_at(y[t], e);
      Mpfr z(0), o(0);
      std::vector<Mpfr> w(i + 1);
      for (int k = 0; k <= i; ++k) {
        Mpfr s(0);
        for (int e2 = 0; e2 < n; ++e2) {
          Mpfr qe(0);
          for (int p = 0; p < n; ++p) qe += Mpfr(A[p * n + e2].mid) * yv[i * n + p];
          s += qe * yv[k * n + e2];
        }
        w[k] = exp(s);
        z += w[k];
      }
      for (int k = 0; k <= i; ++k) o += w[k] / z * yv[k * n + 1];
      const Mpfr excess = abs(o - value_at(out[0], e)) - Mpfr(out[0].r);
      if (excess > worst) worst = excess;
    }
    CHECK(worst <= 0);
    // and not by a wide margin: the remainder is of the cubic part's order
    CHECK(out[0].r < beta);
  }
}

// One head at row i of y with scores s_k = beta y_k1 (q_1 = beta y_i2, A_21
// = beta) and values v_k = y_k2 (M_02 = 1), its second_order_row form for
// o = sum_k e^{s_k} v_k / sum_k e^{s_k} against o in MPFR (exactly enough at
// 200 bits) at `points` points of the box: the largest |o - linear part| - r
// and the largest |o - linear part|, with r.
struct ScoreRowReach {
  Mpfr worst, largest;
  double r = 0.0;
};
ScoreRowReach score_row_reach(const SymbolicArithmetic& sa, int n, int i,
                              const std::vector<SymbolicForm>& y, double beta, int points,
                              std::mt19937_64& eng) {
  std::vector<RadiusDouble> A(n * n), M(n * n);
  A[2 * n + 1] = {beta, 0.0};
  M[0 * n + 2] = {1.0, 0.0};
  std::vector<SymbolicForm> q(n), sc(i + 1);
  sa.add_scaled(q[1], A[2 * n + 1], y[i * n + 2]);
  for (int k = 0; k <= i; ++k) sc[k] = sa.product(q[1], y[k * n + 1]);
  const std::vector<SymbolicForm> out = one_head_row(sa, n, i, y, M, q, sc);
  REQUIRE(std::isfinite(out[0].r));
  ScoreRowReach reach{Mpfr(-1), Mpfr(0), out[0].r};
  for (const std::vector<double>& e : box_points(sa.vars(), points, eng)) {
    Mpfr z(0), o(0);
    for (int k = 0; k <= i; ++k) {
      const Mpfr w = exp(Mpfr(beta) * value_at(y[k * n + 1], e));
      z += w;
      o += w * value_at(y[k * n + 2], e);
    }
    o /= z;
    const Mpfr off = abs(o - value_at(out[0], e));
    if (off - Mpfr(out[0].r) > reach.worst) reach.worst = off - Mpfr(out[0].r);
    if (off > reach.largest) reach.largest = off;
  }
  return reach;
}

TEST_CASE("second_order_row holds E2 pointwise where F is affine (constant values)") {
  // Values that do not vary make F = sum_k alpha_k delta_k V_k affine in the
  // symbols, so the form's remainder is E2's bound (and rounding) alone:
  // y_k = (BOS flag, e_k, v_k), v_k = +-1 by parity (0 at BOS), scores
  // s_k = beta e_k (q_1 = beta y_i2 with y_i2 = 1), output o = sum_k a_k v_k.
  PrecisionScope scope(200);
  constexpr int n = 3, i = 7, V = i;
  const SymbolicArithmetic sa(V);
  std::vector<SymbolicForm> y(static_cast<std::size_t>((i + 1) * n), sa.constant(0.0));
  y[0] = sa.constant(1.0);
  for (int k = 1; k <= i; ++k) {
    y[k * n + 1] = sa.variable(k - 1, -1.0, 1.0);
    y[k * n + 2] = sa.constant(k == i || k % 2 == 0 ? 1.0 : -1.0);
  }
  std::mt19937_64 eng(17);
  for (const double beta : {0.02, 0.1, 0.3, 1.0, 2.0}) {
    CAPTURE(beta);
    const ScoreRowReach r = score_row_reach(sa, n, i, y, beta, 300, eng);
    CHECK(r.worst <= 0);
    const double reach = (r.largest / Mpfr(r.r)).convert_to<double>();
    MESSAGE("beta " << beta << ": largest |o - linear part| / remainder " << reach);
    // not loose by orders of magnitude while the deviations are small
    // (measured 0.37 at beta = 0.02 and 0.31 at 0.1; 0.014 at beta = 2,
    // where rho is far from its quadratic part)
    constexpr double kSmallDeviationReach = 0.25;
    if (beta <= 0.1) CHECK(reach > kSmallDeviationReach);
  }
}

TEST_CASE("second_order_row holds E2 pointwise where one light key's score swings") {
  // Rows: BOS (1, 0, 0) with value 0; key 1 (0, x, -1) with x = e_0 over
  // [lo, lo + 2]; the query row 2 (0, 0, 1) with value 1. Scores s_k =
  // beta y_k1 (q_1 = beta y_22), so BOS and the query hold score 0 and
  // weight near 1/2 each, key 1 a small weight whose score swings by
  // 2 beta. Values are constant, so F is affine and the remainder is E2's
  // bound alone; its largest part is key 1's rho(delta_1) V_1, which the
  // per-key form |rho_k - kappa| sup |V_k| bounds closely.
  PrecisionScope scope(200);
  constexpr int n = 3, i = 2, V = 1;
  const SymbolicArithmetic sa(V);
  std::mt19937_64 eng(19);
  for (const double lo : {-3.0, -2.0}) {
    for (const double beta : {0.5, 1.0, 1.5}) {
      CAPTURE(lo);
      CAPTURE(beta);
      std::vector<SymbolicForm> y(static_cast<std::size_t>((i + 1) * n), sa.constant(0.0));
      y[0] = sa.constant(1.0);
      y[1 * n + 1] = sa.variable(0, lo, lo + 2.0);
      y[1 * n + 2] = sa.constant(-1.0);
      y[2 * n + 2] = sa.constant(1.0);
      const ScoreRowReach r = score_row_reach(sa, n, i, y, beta, 400, eng);
      CHECK(r.worst <= 0);
      // reached closely, so that a part of E2's bound halved breaks the
      // enclosure (measured 0.77 to 0.88 at lo = -3, 0.59 to 0.67 at lo = -2)
      constexpr double kLightKeyReach = 0.55;
      CHECK((r.largest / Mpfr(r.r)).convert_to<double>() > kLightKeyReach);
    }
  }
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
