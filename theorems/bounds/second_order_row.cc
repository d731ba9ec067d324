// SPDX-License-Identifier: MIT
#include "theorems/bounds/second_order_row.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "src/double_interval.h"
#include "src/interval.h"

namespace sinkcert::theorems::bounds {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The vertex spreads: only where the score forms already bound the spread
// below this (the expansion is for weights near their reference; larger
// spreads leave E2 wide either way), and at most this many steps of
// O(1) work (2^26: about 0.05 s).
constexpr double kVertexSpreadBelow = 0.1;
// The share of a key's coefficient mass left out of the per-vertex norms
// (bounded once instead): 1e-4 keeps the key's own content and fresh
// symbols on the path models, about 30 of 464.
constexpr double kSpreadDropShare = 1e-4;
constexpr double kVertexWork = 0x1p26;

// The cubic part's symbols that go with the quadratic part through
// vertex_split_bound (2^10 vertices at most), while 2^(M + 1) V^2 entry updates
// (the vertices' and their bounds' work per coordinate) stay within
// kCubicVertexWork = 2^24: six symbols at V = 451 on the n = 16 path models,
// where the budgeted runs bound as many boxes as without the joint bound
// (results/benchmarks/cubic_split_benchmark.txt); 2^29 (ten symbols) made
// one trigger row take longer than a 20 s run.
constexpr int kCubicVertexSymbols = 10;
constexpr double kCubicVertexWork = 0x1p24;

double coef(const SymbolicForm& f, int m) { return f.g.empty() ? 0.0 : f.g[m]; }

// The width norm + r of a form (what the choice between enclosures compares).
double width(const SymbolicForm& a) { return a.norm + a.r; }
// |c| + norm: sup |c + g . e| over the box
double linear_sup(const SymbolicForm& f) { return add_up(std::fabs(f.c), f.norm); }
// |c| + norm + r
double form_sup(const SymbolicForm& f) { return add_up(linear_sup(f), f.r); }

// rho(x) = e^x - 1 - x at a point, enclosed
Mpfi rho_of(double x) {
  const Mpfi X = point_interval(Mpfr(x));
  return exp_of(X) - Mpfi(1) - X;
}

// The spread of tau_k = s_k - log alpha_k over the keys, with the query's
// symbols S (those it reads most) at the vertices of their box. With ref a
// constant vector (the heaviest key's centre), t_k = q . (y_k - ref) - log alpha_k
// differs from tau_k by q . ref, the same for every key. Split
//   q_e = qv_e(sigma) + rest_e,   qv_e = q0_e + sum_{s in S} Q_es sigma_s,
//   |rest_e| <= rq_e = sum_{m not in S} |Q_em| + r_qe,
//   y_ke - ref_e = d0_ke + G'_ke . e' + restD_ke,   |restD_ke| <= rD_ke = sum_{s in S} |G_ke,s| +
//   r_yke
// (G' the coefficients off S); then for sigma fixed
//   t_k = c_k(sigma) + g_k(sigma) . e' + E_k,   c_k = sum_e qv_e d0_ke - log alpha_k,
//   g_k = sum_e qv_e G'_ke,   |E_k| <= sum_e |qv_e| rD_ke + rq_e (|d0_ke| + |G'_ke|_1 + rD_ke),
// so hi_k(sigma) = c_k + |g_k|_1 + E_k and lo_k = c_k - |g_k|_1 - E_k bound t_k.
// Both max_k hi_k and max_k (-lo_k) are convex in sigma (an affine function's
// absolute value summed, maximized), so the largest spread over the box,
//   W = max_sigma (max_core hi_k - min_core lo_k),
// and each key's reach max(hi_k - min_core lo, max_core hi - lo_k) are taken at
// the vertices: 2^|S| of them, visited in Gray-code order (one coordinate of
// sigma changes per step, c_k and g_k updated by 2 sigma_s times their
// sigma_s parts). Rounding: every value is a sum of at most
// 2^|S| + n + V + 8 rounded terms bounded by
//   mass_k = sum_e (|q0_e| + sum_s |Q_es|)(|d0_ke| + |G'_ke|_1),
// so each end is moved out by that many 2u times mass_k.
struct VertexSpread {
  double W = std::numeric_limits<double>::infinity();
  std::vector<double> reach;
};
VertexSpread vertex_spread(int n, int K, int V, const std::vector<SymbolicForm>& y,
                           const std::vector<SymbolicForm>& q, const std::vector<Mpfi>& log_alpha,
                           const std::vector<char>& core, int reference,
                           const std::vector<int>& S) {
  const int NS = static_cast<int>(S.size());
  VertexSpread out;
  out.reach.assign(K, std::numeric_limits<double>::infinity());
  std::vector<char> in_S(V, 0);
  for (int m : S) in_S[m] = 1;
  // the query's parts: q0_e, Q_es, rq_e
  std::vector<double> q0(n), rq(n), QS(static_cast<std::size_t>(n) * NS, 0.0), qabs(n);
  for (int e = 0; e < n; ++e) {
    q0[e] = q[e].c;
    double rest = q[e].r, on_S = 0.0;
    for (int m = 0; m < V && !q[e].g.empty(); ++m) {
      if (!in_S[m]) rest = add_up(rest, std::fabs(q[e].g[m]));
    }
    for (int t = 0; t < NS; ++t) {
      QS[e * NS + t] = coef(q[e], S[t]);
      on_S = add_up(on_S, std::fabs(QS[e * NS + t]));
    }
    rq[e] = rest;
    qabs[e] = add_up(std::fabs(q0[e]), on_S);
  }
  const double gamma = (std::ldexp(1.0, NS) + n + V + 8.0) * 2.0 * kUnitRoundoff;
  // per key: c0, g0 (V), cs (NS), Gs (NS x V), the sigma-free part of E, rD, allowance
  std::vector<double> c(K), fixed(K), allowance(K);
  std::vector<std::vector<double>> g(K, std::vector<double>(V, 0.0)),
      cs(K, std::vector<double>(NS));
  std::vector<std::vector<double>> Gs(K,
                                      std::vector<double>(static_cast<std::size_t>(NS) * V, 0.0));
  std::vector<std::vector<double>> rD(K, std::vector<double>(n));
  std::vector<std::vector<int>> kept(K);
  for (int k = 0; k < K; ++k) {
    const RadiusDouble la = radius_double(log_alpha[k]);
    double c0 = -la.mid, fix = la.rad, mass = 0.0;
    for (int e = 0; e < n; ++e) {
      const SymbolicForm& f = y[k * n + e];
      const double ref = y[reference * n + e].c;
      const double d0 = f.c - ref;
      // rD: the symbols of S, the form's remainder, the rounding of d0
      double r = add_up(f.r, mul_up(2.0 * kUnitRoundoff, add_up(std::fabs(f.c), std::fabs(ref))));
      double gnorm = 0.0;
      for (int m = 0; m < V && !f.g.empty(); ++m) {
        if (in_S[m]) {
          r = add_up(r, std::fabs(f.g[m]));
          continue;
        }
        const double v = f.g[m];
        if (v == 0) continue;
        gnorm = add_up(gnorm, std::fabs(v));
        g[k][m] += q0[e] * v;
        for (int t = 0; t < NS; ++t)
          Gs[k][static_cast<std::size_t>(t) * V + m] += QS[e * NS + t] * v;
      }
      rD[k][e] = r;
      c0 += q0[e] * d0;
      for (int t = 0; t < NS; ++t) cs[k][t] += QS[e * NS + t] * d0;
      fix = add_up(fix, mul_up(rq[e], add_up(add_up(std::fabs(d0), gnorm), r)));
      mass = add_up(mass, mul_up(qabs[e], add_up(std::fabs(d0), gnorm)));
    }
    // Keep the symbols that carry all but kSpreadDropShare of the bound on
    // |g_k(sigma)|_1: B_a = |g0_a| + sum_t |Gs_ta| >= |g_ka(sigma)| at every
    // sigma, so the others cost at most their sum of B_a, added to E_k.
    std::vector<double> B(V);
    double total = 0.0;
    for (int m = 0; m < V; ++m) {
      double b = std::fabs(g[k][m]);
      for (int t = 0; t < NS; ++t) b += std::fabs(Gs[k][static_cast<std::size_t>(t) * V + m]);
      B[m] = b;
      total += b;
    }
    std::vector<int> order(V);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return B[a] < B[b]; });
    double dropped = 0.0;
    std::size_t first_kept = 0;
    while (first_kept < order.size() &&
           dropped + B[order[first_kept]] <= kSpreadDropShare * total) {
      dropped += B[order[first_kept++]];
    }
    // dropped's own rounding: at most V terms, raised by (V + 1) u
    fix = add_up(fix, mul_up(dropped, 1.0 + (V + 1.0) * kUnitRoundoff));
    std::vector<int>& keep = kept[k];
    keep.assign(order.begin() + static_cast<std::ptrdiff_t>(first_kept), order.end());
    const int KV = static_cast<int>(keep.size());
    std::vector<double> gk(KV), Gk(static_cast<std::size_t>(NS) * KV);
    for (int j = 0; j < KV; ++j) {
      gk[j] = g[k][keep[j]];
      for (int t = 0; t < NS; ++t) {
        Gk[static_cast<std::size_t>(t) * KV + j] = Gs[k][static_cast<std::size_t>(t) * V + keep[j]];
      }
    }
    g[k] = std::move(gk);
    Gs[k] = std::move(Gk);
    // start at sigma = (-1, ..., -1)
    for (int t = 0; t < NS; ++t) {
      c0 -= cs[k][t];
      for (int j = 0; j < KV; ++j) g[k][j] -= Gs[k][static_cast<std::size_t>(t) * KV + j];
    }
    c[k] = c0;
    fixed[k] = fix;
    allowance[k] = mul_up(gamma, mass);
  }
  std::vector<double> qv(n), sigma(NS, -1.0);
  for (int e = 0; e < n; ++e) {
    qv[e] = q0[e];
    for (int t = 0; t < NS; ++t) qv[e] -= QS[e * NS + t];
  }
  std::vector<double> hi(K), lo(K);
  double W = 0.0;
  std::vector<double> reach(K, 0.0);
  const long vertices = 1L << NS;
  for (long step = 0; step < vertices; ++step) {
    if (step > 0) {
      // flip the lowest set bit's coordinate (Gray code)
      int t = 0;
      while (((step >> t) & 1L) == 0) ++t;
      sigma[t] = -sigma[t];
      const double twice = 2.0 * sigma[t];
      for (int e = 0; e < n; ++e) qv[e] += twice * QS[e * NS + t];
      for (int k = 0; k < K; ++k) {
        c[k] += twice * cs[k][t];
        const int KV = static_cast<int>(g[k].size());
        const double* G = Gs[k].data() + static_cast<std::size_t>(t) * KV;
        for (int j = 0; j < KV; ++j) g[k][j] += twice * G[j];
      }
    }
    double core_hi = -kInf, core_lo = kInf;
    for (int k = 0; k < K; ++k) {
      double norm = 0.0, E = fixed[k];
      for (const double v : g[k]) norm += std::fabs(v);
      for (int e = 0; e < n; ++e) E += std::fabs(qv[e]) * rD[k][e];
      const double width = (norm + E) * (1.0 + gamma) + allowance[k];
      hi[k] = next_up(c[k] + width);
      lo[k] = -next_up(-c[k] + width);
      if (core[k]) {
        core_hi = std::max(core_hi, hi[k]);
        core_lo = std::min(core_lo, lo[k]);
      }
    }
    if (!(core_hi >= core_lo)) return out;  // NaN: W and every reach stay +inf
    W = std::max(W, next_up(core_hi - core_lo));
    for (int k = 0; k < K; ++k) {
      reach[k] = std::max(reach[k], std::max(next_up(hi[k] - core_lo), next_up(core_hi - lo[k])));
    }
  }
  out.W = W;
  out.reach = reach;
  return out;
}

// What one head contributes: reference weights, centred stream, values, and
// the second-order term's bound per output coordinate.
struct HeadExpansion {
  std::vector<RadiusDouble> alpha;     // enclosures of the exact alpha_k
  std::vector<double> alpha_up;        // their upper ends
  std::vector<SymbolicForm> z;         // z_{k,e}, (i + 1) x n
  std::vector<SymbolicForm> V;         // V_{k,d} = sum_e M_de z_{k,e}, (i + 1) x n
  std::vector<SymbolicRange> W_range;  // of W_{k,d} = V_{k,d} + What_d, (i + 1) x n
  std::vector<SymbolicForm> affine;    // What_d - sum_k alpha_k log(alpha_k) V_{k,d}, n
  std::vector<double> e2;              // bound on |E2_d|, n
  // what E2's bound is made of (bound_e2), per key: the ranges of delta and
  // rho(delta), the core, each key's reach, and W
  std::vector<Mpfi> log_alpha;
  std::vector<double> delta_abs, rho_lo, rho_hi, reach;
  std::vector<char> core;
  double P_rho = 0.0, D = 0.0, W = 0.0, core_alpha = 0.0, core_alpha_lo = 0.0;
  int heaviest = 0;
  bool any_core = false, refined = false, drop = false;
};

// The head's expansion; false when it does not apply (non-finite values).
bool expand_head(const SymbolicArithmetic& sa, int n, int i, const std::vector<SymbolicForm>& y,
                 const SecondOrderHead& head, bool drop_second_order, HeadExpansion& out) {
  const std::vector<SymbolicForm>& s = *head.s;
  const std::vector<RadiusDouble>& M = *head.M;
  const int K = i + 1;
  double cmax = -kInf;
  for (int k = 0; k < K; ++k) {
    if (!std::isfinite(s[k].c)) return false;
    cmax = std::max(cmax, s[k].c);
  }
  // alpha_k = e^{c_k - cmax} / sum_m e^{c_m - cmax} (exact reals, enclosed),
  // log alpha_k = c_k - cmax - log(sum)
  std::vector<Mpfi> ex(K), alpha(K), log_alpha(K);
  Mpfi sum(0);
  for (int k = 0; k < K; ++k) {
    ex[k] = exp_of(point_interval(Mpfr(s[k].c)) - point_interval(Mpfr(cmax)));
    sum += ex[k];
  }
  using std::log;
  const Mpfi log_sum = log(sum);
  Mpfi mean_log(0);  // sum_m alpha_m log alpha_m
  out.alpha.resize(K);
  out.alpha_up.resize(K);
  for (int k = 0; k < K; ++k) {
    alpha[k] = ex[k] / sum;
    log_alpha[k] = point_interval(Mpfr(s[k].c)) - point_interval(Mpfr(cmax)) - log_sum;
    mean_log += alpha[k] * log_alpha[k];
    out.alpha[k] = radius_double(alpha[k]);
    out.alpha_up[k] = upper_double(alpha[k]);
  }
  // ybar_e = sum_k alpha_k y_{k,e}, z_{k,e} = y_{k,e} - ybar_e
  std::vector<SymbolicForm> ybar(n);
  for (int k = 0; k < K; ++k) {
    for (int e = 0; e < n; ++e) sa.add_scaled(ybar[e], out.alpha[k], y[k * n + e]);
  }
  out.z.resize(static_cast<std::size_t>(K) * n);
  for (int k = 0; k < K; ++k) {
    for (int e = 0; e < n; ++e) out.z[k * n + e] = sa.difference(y[k * n + e], ybar[e]);
  }
  // V_{k,d} = sum_e M_de z_{k,e};  What_d = sum_e M_de ybar_e (in affine until the log terms)
  out.V.assign(static_cast<std::size_t>(K) * n, SymbolicForm{});
  out.affine.assign(n, SymbolicForm{});
  for (int d = 0; d < n; ++d) {
    for (int e = 0; e < n; ++e) {
      const RadiusDouble& m = M[d * n + e];
      if (m.mid == 0 && m.rad == 0) continue;
      sa.add_scaled(out.affine[d], m, ybar[e]);
      for (int k = 0; k < K; ++k) sa.add_scaled(out.V[k * n + d], m, out.z[k * n + e]);
    }
  }
  // the ranges of W_{k,d} = V_{k,d} + What_d (O(K n V), against O(K n^2 V)
  // from M y_k), which the covariance form reads
  out.W_range.resize(static_cast<std::size_t>(K) * n);
  for (int k = 0; k < K; ++k) {
    for (int d = 0; d < n; ++d) {
      SymbolicForm w = out.V[k * n + d];
      sa.add(w, out.affine[d]);
      out.W_range[k * n + d] = symbolic_range(w);
    }
  }
  // - sum_k alpha_k log(alpha_k) V_{k,d}
  for (int k = 0; k < K; ++k) {
    const RadiusDouble weight = radius_double(-(alpha[k] * log_alpha[k]));
    for (int d = 0; d < n; ++d) sa.add_scaled(out.affine[d], weight, out.V[k * n + d]);
  }
  // delta_k = s_k - sum_m alpha_m s_m - (log alpha_k - sum_m alpha_m log alpha_m)
  SymbolicForm sbar;
  for (int k = 0; k < K; ++k) sa.add_scaled(sbar, out.alpha[k], s[k]);
  // the state bound_e2 reads, filled in place
  std::vector<double>&delta_abs = out.delta_abs, &rho_lo = out.rho_lo, &rho_hi = out.rho_hi;
  delta_abs.assign(K, 0.0);
  rho_lo.assign(K, 0.0);
  rho_hi.assign(K, 0.0);
  std::vector<double> delta_hi(K);
  Mpfi P(0);  // P <= sum_k alpha_k sup rho(delta_k)
  for (int k = 0; k < K; ++k) {
    SymbolicForm delta = sa.difference(s[k], sbar);
    sa.add_scaled(delta, radius_double(mean_log - log_alpha[k]), sa.constant(1.0));
    const SymbolicRange r = symbolic_range(delta);
    if (!std::isfinite(r.lo) || !std::isfinite(r.hi)) return false;
    delta_abs[k] = std::max(std::fabs(r.lo), std::fabs(r.hi));
    delta_hi[k] = r.hi;
    // rho is convex with its minimum 0 at 0: decreasing below, increasing above
    if (r.lo <= 0 && r.hi >= 0) {
      rho_lo[k] = 0.0;
      rho_hi[k] = std::max(upper_double(rho_of(r.lo)), upper_double(rho_of(r.hi)));
    } else if (r.lo > 0) {
      rho_lo[k] = std::max(0.0, lower_double(rho_of(r.lo)));
      rho_hi[k] = upper_double(rho_of(r.hi));
    } else {
      rho_lo[k] = std::max(0.0, lower_double(rho_of(r.hi)));
      rho_hi[k] = upper_double(rho_of(r.lo));
    }
    if (!std::isfinite(rho_hi[k])) return false;
    P += alpha[k] * point_interval(Mpfr(rho_hi[k]));
  }
  out.P_rho = upper_double(P);
  // The variance form: for the core keys rho(delta) <= delta^2 e^{max(delta, 0)} / 2,
  // and sum_core alpha_k delta_k^2 <= sum_k alpha_k (tau_k - c)^2 for every c (the alpha-mean
  // tau^ minimizes it); with c the middle of the core's tau values at the point,
  //   S2 = (W / 2)^2 sum_core alpha_k + sum_out alpha_k max_{m in core} sup (tau_k - tau_m)^2,
  // W = max_{k, m in core} sup |tau_k - tau_m|, bounds it. Then
  //   P <= e^D S2 / 2 + sum_out alpha_k sup rho(delta_k),
  //   |R| <= (kappa = 0) max_core sup|V_k| e^D S2 / 2 + sum_out alpha_k sup rho(delta_k) sup|V_k|,
  // D the largest upper end of the core's delta ranges (at least 0).
  // The core: keys whose deviation is at most 1 and at most 4 times that of
  // the key of largest weight (a choice; the bound holds for any split).
  std::vector<char>& core = out.core;
  core.assign(K, 0);
  double& D = out.D;
  D = 0.0;
  const int heaviest = out.heaviest = static_cast<int>(
      std::max_element(out.alpha.begin(), out.alpha.end(),
                       [](const RadiusDouble& a, const RadiusDouble& b) { return a.mid < b.mid; }) -
      out.alpha.begin());
  const double core_limit = std::min(1.0, 4.0 * delta_abs[heaviest]);
  for (int k = 0; k < K; ++k) {
    core[k] = delta_abs[k] <= core_limit;
    if (core[k]) D = std::max(D, delta_hi[k]);
  }
  // sup |tau_k - tau_m| = sup |s_k - s_m - (log alpha_k - log alpha_m)|
  std::vector<double>& reach = out.reach;  // max over core m of sup |tau_k - tau_m|
  reach.assign(K, 0.0);
  double &W = out.W, &core_alpha = out.core_alpha;
  W = core_alpha = 0.0;
  bool& any_core = out.any_core;
  any_core = false;
  for (int k = 0; k < K; ++k) {
    for (int m = 0; m < K; ++m) {
      if (!core[m] || m == k || (core[k] && m < k)) continue;
      SymbolicForm t = sa.difference(s[k], s[m]);
      sa.add_scaled(t, radius_double(log_alpha[m] - log_alpha[k]), sa.constant(1.0));
      const SymbolicRange r = symbolic_range(t);
      const double sup = std::max(std::fabs(r.lo), std::fabs(r.hi));
      if (core[k]) W = std::max(W, sup);
      reach[k] = std::max(reach[k], sup);
    }
    if (core[k]) {
      any_core = true;
      core_alpha = add_up(core_alpha, out.alpha_up[k]);
      // a lower end: the sum rounded down
      out.core_alpha_lo = -add_up(-out.core_alpha_lo, -std::max(0.0, lower_double(alpha[k])));
    }
  }
  out.log_alpha = log_alpha;
  out.drop = drop_second_order;
  return true;
}

// covariance_rho_bound (header): every quantity is an upper bound, carried
// as the point at its upper end (phi, M and Pc grow with each argument).
constexpr int kCovarianceSlices = 64;

}  // namespace

double variance_rho_bound(double W, double D, double core_alpha,
                          const std::vector<VarianceOutlier>& outliers) {
  // S2 = (W / 2)^2 A + sum_out alpha_k reach_k^2, rounded up
  double S2 = mul_up(mul_up(0.5 * W, 0.5 * W), core_alpha);
  for (const VarianceOutlier& o : outliers)
    S2 = add_up(S2, mul_up(o.alpha, mul_up(o.reach, o.reach)));
  // e^D S2 / 2
  return upper_double(exp_of(point_interval(Mpfr(D))) * point_interval(Mpfr(S2)) / Mpfi(2));
}

double covariance_rho_bound(const CovarianceRhoInputs& in, bool middle_only) {
  if (!(in.core_alpha_lo > 0) || !std::isfinite(in.W) || !std::isfinite(in.eps)) return kInf;
  // In outward-rounded double intervals (src/double_interval.h): every end
  // below is an upper bound of the exact quantity, as in MPFI at 128 bits,
  // which took most of the expansion's time (64 slices a head and row). A NaN
  // end counts as +inf (upper_double, symbolic_form.h).
  using I = DoubleInterval;
  const I W(in.W), eps(in.eps);
  const I eD = exp(I(in.D));
  const I half(0.5), one(1.0);
  double phi_max = 0.0;
  // e^b for b = (1 - t0) W + eps, t0 = slice / S: e^(W + eps) (e^(-W / S))^slice
  // (two exponentials for all slices)
  const I e_step = exp(-(W / I(static_cast<double>(kCovarianceSlices))));
  I e_b = exp(W + eps);
  for (int slice = 0; slice < kCovarianceSlices; ++slice, e_b = e_b * e_step) {
    const I t0 = I(slice) / I(kCovarianceSlices);
    const I t1 = I(slice + 1) / I(kCovarianceSlices);
    // t0 <= 1/2 <= t1, in integers
    const bool middle = 2 * slice <= kCovarianceSlices && 2 * (slice + 1) >= kCovarianceSlices;
    if (middle_only && !middle) continue;
    // the core's delta in [mu - a, mu + b]: a <= t1 W + eps, b <= (1 - t0) W + eps
    const I a = t1 * W + eps, b = (one - t0) * W + eps;
    // M = min(max(a^2 / 2, b^2 e^b / 2), max_core sup rho)
    const double M_up = std::min(
        std::max(upper_double(half * a * a), upper_double(half * b * b * e_b)), in.rho_max);
    const I M(M_up);
    // max t (1 - t) on [t0, t1]
    const I tt = middle ? I(0.25)
                        : I(std::max(upper_double(t0 * (one - t0)), upper_double(t1 * (one - t1))));
    // Pc = e^D (t (1 - t) W^2 + eps^2) / 2
    const I Pc(upper_double(half * eD * (tt * W * W + eps * eps)));
    // phi(M, p): (M - p) p while p <= M / 2, else M^2 / 4
    const double phi = upper_double(Pc) <= lower_double(half * M) ? upper_double((M - Pc) * Pc)
                                                                  : upper_double(M * M / I(4.0));
    phi_max = std::max(phi_max, phi);
  }
  // |P_c - P| <= Pc_any (1 - A) + sum_out alpha sup rho, Pc_any = e^D (W^2 / 4 + eps^2) / 2
  const I Pc_any = half * eD * (W * W / I(4.0) + eps * eps);
  const I shift = Pc_any * (one - I(in.core_alpha_lo)) + I(in.out_rho);
  // A Var_c(rho) + A (P_c - P)^2
  const I A(in.core_alpha_up);
  return upper_double(A * I(phi_max) + A * shift * shift);
}

namespace {

// The covariance form's inputs from the head's state.
double covariance_rho(const HeadExpansion& out) {
  const int K = static_cast<int>(out.alpha.size());
  if (!out.any_core || !(out.core_alpha_lo > 0)) return kInf;
  CovarianceRhoInputs in;
  in.W = out.W;
  in.D = out.D;
  in.core_alpha_lo = out.core_alpha_lo;
  in.core_alpha_up = out.core_alpha;
  double out_delta = 0.0;
  for (int k = 0; k < K; ++k) {
    if (out.core[k]) {
      in.rho_max = std::max(in.rho_max, out.rho_hi[k]);
    } else {
      out_delta = add_up(out_delta, mul_up(out.alpha_up[k], out.delta_abs[k]));
      in.out_rho = add_up(in.out_rho, mul_up(out.alpha_up[k], out.rho_hi[k]));
    }
  }
  // |mu| <= sum_out alpha sup |delta| / A
  in.eps = upper_double(point_interval(Mpfr(out_delta)) / point_interval(Mpfr(out.core_alpha_lo)));
  return covariance_rho_bound(in);
}

// E2's bound per output coordinate from the head's state (header, and the
// variance and covariance forms above).
void bound_e2(int n, HeadExpansion& out) {
  const int K = static_cast<int>(out.alpha.size());
  out.e2.assign(n, 0.0);
  if (out.drop) return;
  // e^D S2 / 2 (variance_rho_bound), and the outliers' sum_out alpha_k sup rho(delta_k)
  std::vector<VarianceOutlier> outliers_s2;
  double out_rho = 0.0;
  for (int k = 0; k < K; ++k) {
    if (out.core[k]) continue;
    outliers_s2.push_back({out.alpha_up[k], out.reach[k]});
    out_rho = add_up(out_rho, mul_up(out.alpha_up[k], out.rho_hi[k]));
  }
  const double half_S2 = variance_rho_bound(out.W, out.D, out.core_alpha, outliers_s2);
  const bool variance = out.any_core && std::isfinite(half_S2);
  const double P = variance ? std::min(out.P_rho, add_up(half_S2, out_rho)) : out.P_rho;
  // kappa: 0 or the middle of one key's rho range (the least bound of R wins)
  const double S_rho = covariance_rho(out);
  std::vector<double> kappas{0.0};
  for (int k = 0; k < K; ++k) kappas.push_back(0.5 * (out.rho_lo[k] + out.rho_hi[k]));
  for (int d = 0; d < n; ++d) {
    // |F| <= sum_k alpha_k sup|delta_k| sup|V_{k,d}|
    double F = 0.0;
    for (int k = 0; k < K; ++k) {
      F = add_up(F, mul_up(out.alpha_up[k], mul_up(out.delta_abs[k], form_sup(out.V[k * n + d]))));
    }
    // |R| <= sum_k alpha_k max(rho_hi_k - kappa, kappa - rho_lo_k) sup|V_{k,d}|
    double R = kInf;
    for (double kappa : kappas) {
      double t = 0.0;
      for (int k = 0; k < K; ++k) {
        const double spread =
            std::max(next_up(out.rho_hi[k] - kappa), next_up(kappa - out.rho_lo[k]));
        t = add_up(
            t, mul_up(out.alpha_up[k], mul_up(std::max(0.0, spread), form_sup(out.V[k * n + d]))));
      }
      R = std::min(R, t);
    }
    if (variance) {
      double vmax = 0.0, outliers = 0.0;
      for (int k = 0; k < K; ++k) {
        const double v = form_sup(out.V[k * n + d]);
        if (out.core[k]) {
          vmax = std::max(vmax, v);
        } else {
          outliers = add_up(outliers, mul_up(out.alpha_up[k], mul_up(out.rho_hi[k], v)));
        }
      }
      R = std::min(R, add_up(mul_up(vmax, half_S2), outliers));
    }
    // The covariance form: sum_all alpha_k (rho_k - P) = 0, so for any c
    //   R = sum_k alpha_k (rho_k - P)(W_{k,d} - c),
    // and by Cauchy-Schwarz over the core (c the middle of the core's values' hull)
    //   |R| <= sqrt(S_rho) sqrt(sum_core alpha_k sup (W_{k,d} - c)^2)
    //          + sum_out alpha_k max(sup rho_k, P) sup |W_{k,d} - c|.
    if (std::isfinite(S_rho)) {
      double lo = kInf, hi = -kInf;
      for (int k = 0; k < K; ++k) {
        if (!out.core[k]) continue;
        lo = std::min(lo, out.W_range[k * n + d].lo);
        hi = std::max(hi, out.W_range[k * n + d].hi);
      }
      const double c = 0.5 * (lo + hi);
      double SW = 0.0, outliers = 0.0;
      for (int k = 0; k < K; ++k) {
        const SymbolicRange& w = out.W_range[k * n + d];
        const double dev = std::max(next_up(w.hi - c), next_up(c - w.lo));
        if (out.core[k]) {
          SW = add_up(SW, mul_up(out.alpha_up[k], mul_up(dev, dev)));
        } else {
          outliers =
              add_up(outliers, mul_up(out.alpha_up[k], mul_up(std::max(out.rho_hi[k], P), dev)));
        }
      }
      const double cs = upper_double(sqrt(point_interval(Mpfr(S_rho)) * point_interval(Mpfr(SW))));
      if (std::isfinite(cs)) R = std::min(R, add_up(cs, outliers));
    }
    // |E2| <= |R| + P |F|
    out.e2[d] = add_up(R, mul_up(P, F));
  }
}

// The spreads again with the query's symbols at the vertices of their box
// (vertex_spread), kept where narrower, and E2's bound with them: tried
// where the deviations are small (W < kVertexSpreadBelow), with at most
// kVertexWork vertex-key-symbol steps (fewer query symbols on longer rows).
void refine_spread(const SymbolicArithmetic& sa, int n, const std::vector<SymbolicForm>& y,
                   const SecondOrderHead& head, const std::vector<int>& query_symbols,
                   HeadExpansion& out) {
  if (out.refined) return;
  out.refined = true;
  const int K = static_cast<int>(out.alpha.size());
  std::vector<int> S = query_symbols;
  while (!S.empty() &&
         std::ldexp(static_cast<double>(K) * sa.vars(), static_cast<int>(S.size())) > kVertexWork) {
    S.pop_back();
  }
  if (!out.any_core || !(out.W < kVertexSpreadBelow) || S.empty()) return;
  const VertexSpread vs =
      vertex_spread(n, K, sa.vars(), y, *head.q, out.log_alpha, out.core, out.heaviest, S);
  out.W = std::min(out.W, vs.W);
  for (int k = 0; k < K; ++k) out.reach[k] = std::min(out.reach[k], vs.reach[k]);
  bound_e2(n, out);
}

}  // namespace

std::vector<SymbolicForm> second_order_row(const SymbolicArithmetic& sa, int n, int i,
                                           const std::vector<SymbolicForm>& y,
                                           const std::vector<SecondOrderHead>& heads,
                                           const std::vector<double>& skip_at_least,
                                           bool drop_second_order) {
  const int K = i + 1, H = static_cast<int>(heads.size()), V = sa.vars();
  std::vector<SymbolicForm> out(n, SymbolicForm{0.0, {}, kInf, 0.0, {}});
  // symbols the queries read most: |Q|_1 per symbol over heads and coordinates
  std::vector<double> reads(V, 0.0);
  for (int h = 0; h < H; ++h) {
    const std::vector<SymbolicForm>& q = *heads[h].q;
    for (int e = 0; e < n; ++e) {
      for (int m = 0; m < V && !q[e].g.empty(); ++m) reads[m] += std::fabs(q[e].g[m]);
    }
  }
  std::vector<int> major(V);
  std::iota(major.begin(), major.end(), 0);
  std::stable_sort(major.begin(), major.end(), [&](int a, int b) { return reads[a] > reads[b]; });
  major.resize(std::min(V, kMajorSymbols));
  while (!major.empty() && reads[major.back()] == 0) major.pop_back();
  // the vertex spreads' symbols: the major ones read at least 1e-3 times the most
  std::vector<int> vertex_symbols;
  for (int m : major) {
    if (static_cast<int>(vertex_symbols.size()) < kVertexSymbols &&
        reads[m] >= kVertexShare * reads[major.front()]) {
      vertex_symbols.push_back(m);
    }
  }
  std::vector<HeadExpansion> ex(H);
  for (int h = 0; h < H; ++h) {
    if (!expand_head(sa, n, i, y, heads[h], drop_second_order, ex[h])) return out;
    bound_e2(n, ex[h]);
  }
  // per head and key: pi_k, PP_k = Pi_k + phi_k, and the remainder factors
  //   Usup_k >= sup|U~_k| = sum_e (|q0_e| + |Q_e|_1)(|zeta_ke| + |Z_ke|_1),
  //   eU_k >= |U_k - U~_k| = sum_e r_qe (|zeta_ke| + |Z_ke|_1 + r_zke) + r_zke (|q0_e| + |Q_e|_1)
  std::vector<std::vector<double>> pi(H, std::vector<double>(K)), Usup = pi, eU = pi, PPn = pi;
  std::vector<std::vector<std::vector<double>>> PP(H, std::vector<std::vector<double>>(K));
  for (int h = 0; h < H; ++h) {
    const std::vector<SymbolicForm>& q = *heads[h].q;
    for (int k = 0; k < K; ++k) {
      std::vector<double>& pp = PP[h][k];
      pp.assign(V, 0.0);
      double p = 0.0, us = 0.0, eu = 0.0;
      for (int e = 0; e < n; ++e) {
        const SymbolicForm& z = ex[h].z[k * n + e];
        // pi_k = sum_e q0_e zeta_ke; Pi_k = sum_e q0_e Z_ke; phi_k = sum_e zeta_ke Q_e
        p += q[e].c * z.c;
        for (int m = 0; m < V; ++m) pp[m] += q[e].c * coef(z, m) + z.c * coef(q[e], m);
        us = add_up(us, mul_up(linear_sup(q[e]), linear_sup(z)));
        eu = add_up(eu, add_up(mul_up(q[e].r, form_sup(z)), mul_up(z.r, linear_sup(q[e]))));
      }
      pi[h][k] = p;
      Usup[h][k] = us;
      eU[h][k] = eu;
      // |PP_k|_1, summed plainly and raised by V u (at most V - 1 roundings)
      double ppn = 0.0;
      for (int m = 0; m < V; ++m) ppn += std::fabs(pp[m]);
      PPn[h][k] = mul_up(ppn, 1.0 + (V + 1.0) * kUnitRoundoff);
    }
  }
  std::vector<char> is_major(V, 0);
  for (int m : major) is_major[m] = 1;
  // per head and coordinate e: sum over the minor symbols of |Q_em|, rounded up
  std::vector<std::vector<double>> minor(H, std::vector<double>(n, 0.0));
  for (int h = 0; h < H; ++h) {
    const std::vector<SymbolicForm>& q = *heads[h].q;
    for (int e = 0; e < n; ++e) {
      double t = 0.0;
      for (int m = 0; m < V && !q[e].g.empty(); ++m) {
        if (!is_major[m]) t = add_up(t, std::fabs(q[e].g[m]));
      }
      minor[h][e] = t;
    }
  }
  // 2 N u, N = 2 (n + H K) + 16 rounded operations per coefficient
  const double gamma = 2.0 * (2.0 * (n + H * K) + 16.0) * kUnitRoundoff;
  std::vector<double> Qd, Cm, Phi(V), lin(V);
  for (int d = 0; d < n; ++d) {
    // the affine part: sum_h (What_d - sum_k alpha log(alpha) V_{k,d}), then C + L . e
    SymbolicForm form;
    for (int h = 0; h < H; ++h) sa.add(form, ex[h].affine[d]);
    double C = 0.0, mass = 0.0, extra = 0.0, crude_quad = 0.0, crude_cubic = 0.0;
    double minor_cubic = 0.0;
    std::fill(lin.begin(), lin.end(), 0.0);
    for (int h = 0; h < H; ++h) {
      const std::vector<SymbolicForm>& q = *heads[h].q;
      for (int k = 0; k < K; ++k) {
        const double a = ex[h].alpha[k].mid, a_up = ex[h].alpha_up[k];
        const SymbolicForm& w = ex[h].V[k * n + d];
        const double wsup = linear_sup(w), pp_norm = PPn[h][k];
        // C += alpha pi omega;  L += alpha (pi Omega + omega PP)
        C += a * pi[h][k] * w.c;
        for (int m = 0; m < V; ++m) lin[m] += a * (pi[h][k] * coef(w, m) + w.c * PP[h][k][m]);
        // every product of the expansion, in absolute value
        mass = add_up(mass, mul_up(a_up, mul_up(Usup[h][k], wsup)));
        // |U V - U~ V~| and (alpha - abar) U V
        const double uv = mul_up(add_up(Usup[h][k], eU[h][k]), form_sup(w));
        extra = add_up(
            extra, mul_up(a_up, add_up(mul_up(eU[h][k], form_sup(w)), mul_up(Usup[h][k], w.r))));
        extra = add_up(extra, mul_up(ex[h].alpha[k].rad, uv));
        // sum_e |Q_e|_1 |Z_ke|_1, and its minor-symbol part
        double qz = 0.0, qz_minor = 0.0;
        for (int e = 0; e < n; ++e) {
          qz = add_up(qz, mul_up(q[e].norm, ex[h].z[k * n + e].norm));
          qz_minor = add_up(qz_minor, mul_up(minor[h][e], ex[h].z[k * n + e].norm));
        }
        // crude: |e^T Qd e| <= sum alpha (|PP|_1 |Omega|_1 + |omega| qz),
        // |sum_m e_m e^T C_m e| <= sum alpha qz |Omega|_1
        crude_quad = add_up(
            crude_quad, mul_up(a_up, add_up(mul_up(pp_norm, w.norm), mul_up(std::fabs(w.c), qz))));
        crude_cubic = add_up(crude_cubic, mul_up(a_up, mul_up(qz, w.norm)));
        minor_cubic = add_up(minor_cubic, mul_up(a_up, mul_up(qz_minor, w.norm)));
      }
    }
    SymbolicForm poly{C, lin, 0.0, 0.0, {}};
    double norm = 0.0;
    for (double v : lin) norm = add_up(norm, std::fabs(v));
    poly.norm = norm;
    // rounding of every coefficient, 2 N u mass
    poly.r = add_up(add_up(mul_up(gamma, mass), extra), kTiny);
    sa.add(form, poly);
    const auto e2_of = [&]() {
      double e2 = 0.0;
      for (int h = 0; h < H; ++h) e2 = add_up(e2, ex[h].e2[d]);
      return e2;
    };
    // r0: rounding and the forms' remainders; base: what every variant costs
    const double r0 = form.r, base = add_up(form.norm, form.r), skip = skip_at_least[d];
    if (!(base < skip)) continue;
    // the quadratic and cubic parts: the crude bounds when they do not dominate
    // the rest, else the coefficient sums (V^2 work per coordinate for Qd, and
    // per major symbol for the cubic part, each tried only while the result can
    // still be the narrowest)
    const double rest = add_up(r0, e2_of());
    const double crude = add_up(crude_quad, crude_cubic);
    // the narrowest of the enclosures below, E2 left out (the same in each)
    SymbolicForm best = form;
    best.r = add_up(r0, crude);
    if (crude > rest && V > 0) {
      // Qd = sum alpha (PP Omega^T + omega Phi),  Phi_{k,a} = sum_e Q_ea Z_ke
      Qd.assign(static_cast<std::size_t>(V) * V, 0.0);
      for (int h = 0; h < H; ++h) {
        const std::vector<SymbolicForm>& q = *heads[h].q;
        // Xi_e = sum_k alpha omega_k Z_ke;  Qd += sum_e Q_e Xi_e^T
        std::vector<std::vector<double>> Xi(n, std::vector<double>(V, 0.0));
        for (int k = 0; k < K; ++k) {
          const double a = ex[h].alpha[k].mid;
          const SymbolicForm& w = ex[h].V[k * n + d];
          if (!w.g.empty()) {
            for (int m = 0; m < V; ++m) {
              const double u = a * PP[h][k][m];
              if (u == 0) continue;
              double* row = &Qd[static_cast<std::size_t>(m) * V];
              for (int b = 0; b < V; ++b) row[b] += u * w.g[b];
            }
          }
          for (int e = 0; e < n; ++e) {
            const SymbolicForm& z = ex[h].z[k * n + e];
            if (z.g.empty()) continue;
            for (int b = 0; b < V; ++b) Xi[e][b] += a * w.c * z.g[b];
          }
        }
        for (int e = 0; e < n; ++e) {
          if (q[e].g.empty()) continue;
          for (int m = 0; m < V; ++m) {
            const double u = q[e].g[m];
            if (u == 0) continue;
            double* row = &Qd[static_cast<std::size_t>(m) * V];
            for (int b = 0; b < V; ++b) row[b] += u * Xi[e][b];
          }
        }
      }
      const DiagonalSplit quad = diagonal_split(Qd, V);
      if (!(add_up(base, std::min(quad.bound, crude_quad)) < skip)) continue;
      // e^T Qd e = sum_a Qd_aa / 2 + rest: the centre moves by the shift; the
      // addition rounds by at most 2u (|c| + |shift|)
      const auto shifted = [&](SymbolicForm f) {
        const double moved = add_up(std::fabs(f.c), std::fabs(quad.shift));
        f.c += quad.shift;
        f.r = add_up(f.r, add_up(mul_up(moved, 2.0 * kUnitRoundoff), quad.shift_error));
        return f;
      };
      const auto keep = [&best](const SymbolicForm& f) {
        if (width(f) < width(best)) best = f;
      };
      // exact quadratic part, crude cubic part
      SymbolicForm f = shifted(form);
      f.r = add_up(f.r, add_up(quad.bound, crude_cubic));
      keep(f);
      if (crude_cubic > rest) {
        // cubic: C_m = sum alpha Phi_m Omega^T per major symbol m, split at its
        // diagonal: e_m e^T C_m e = e_m sum_a C_m,aa / 2 + e_m rest_m, the first
        // term linear (moved into the form's coefficient of m), |e_m rest_m| <=
        // its bound; the first kCubicVertexSymbols that the work allows go with
        // Qd through vertex_split_bound instead
        int vertex_count = 0;
        while (vertex_count < std::min(kCubicVertexSymbols, static_cast<int>(major.size())) &&
               std::ldexp(static_cast<double>(V) * V, vertex_count + 1) <= kCubicVertexWork) {
          ++vertex_count;
        }
        std::vector<std::vector<double>> vertex_C;
        double split_cubic = minor_cubic, vertex_rest = minor_cubic, linear_error = 0.0;
        std::vector<std::pair<int, double>> linear;
        for (std::size_t idx = 0; idx < major.size(); ++idx) {
          const int m = major[idx];
          Cm.assign(static_cast<std::size_t>(V) * V, 0.0);
          for (int h = 0; h < H; ++h) {
            const std::vector<SymbolicForm>& q = *heads[h].q;
            for (int k = 0; k < K; ++k) {
              const SymbolicForm& w = ex[h].V[k * n + d];
              if (w.g.empty()) continue;
              std::fill(Phi.begin(), Phi.end(), 0.0);
              bool any = false;
              for (int e = 0; e < n; ++e) {
                const double qm = coef(q[e], m);
                const SymbolicForm& z = ex[h].z[k * n + e];
                if (qm == 0 || z.g.empty()) continue;
                any = true;
                for (int a = 0; a < V; ++a) Phi[a] += qm * z.g[a];
              }
              if (!any) continue;
              const double al = ex[h].alpha[k].mid;
              for (int a = 0; a < V; ++a) {
                const double u = al * Phi[a];
                if (u == 0) continue;
                double* row = &Cm[static_cast<std::size_t>(a) * V];
                for (int b = 0; b < V; ++b) row[b] += u * w.g[b];
              }
            }
          }
          const DiagonalSplit cubic = diagonal_split(Cm, V);
          split_cubic = add_up(split_cubic, cubic.bound);
          linear.emplace_back(m, cubic.shift);
          linear_error = add_up(linear_error, cubic.shift_error);
          if (static_cast<int>(idx) < vertex_count) {
            vertex_C.push_back(std::move(Cm));  // Cm is assigned afresh per symbol
          } else {
            vertex_rest = add_up(vertex_rest, cubic.bound);
          }
        }
        // the linear terms e_m sum_a C_m,aa / 2 in the form: each coefficient's
        // addition rounds by at most u |g_m + s_m|, the norm is recomputed
        const auto with_linear = [&](SymbolicForm g) {
          if (g.g.empty()) g.g.assign(V, 0.0);
          double added = linear_error;
          for (const auto& [m, v] : linear) {
            added = add_up(added, mul_up(add_up(std::fabs(g.g[m]), std::fabs(v)), kUnitRoundoff));
            g.g[m] += v;
          }
          double norm = 0.0;
          for (double v : g.g) norm += std::fabs(v);
          g.norm = mul_up(norm, 1.0 + (V + 1.0) * kUnitRoundoff);
          g.r = add_up(g.r, added);
          return g;
        };
        // crude quadratic part, split cubic parts
        SymbolicForm c = with_linear(form);
        c.r = add_up(c.r, add_up(crude_quad, split_cubic));
        keep(c);
        // both split, the vertex symbols' cubic parts with Qd
        SymbolicForm both = with_linear(shifted(form));
        const double joint = vertex_C.empty()
                                 ? add_up(quad.bound, split_cubic)
                                 : add_up(vertex_split_bound(Qd, vertex_C, V), vertex_rest);
        both.r = add_up(both.r, joint);
        keep(both);
      }
    }
    if (!(width(best) < skip)) continue;
    // E2: the spreads at the query's vertices (once per row), where E2 is the
    // larger part of the remainder or keeps the expansion from being the
    // narrowest, and a sixteenth of it would not (the vertices have narrowed W
    // by about 2, E2 by 4, on the path models; a heuristic for the cost only)
    double e2 = e2_of();
    const double without_e2 = width(best);
    if (add_up(without_e2, e2 / 16) < skip && (e2 > best.r || !(add_up(without_e2, e2) < skip))) {
      for (int h = 0; h < H; ++h) refine_spread(sa, n, y, heads[h], vertex_symbols, ex[h]);
      e2 = e2_of();
    }
    best.r = add_up(best.r, e2);
    out[d] = best;
  }
  return out;
}

}  // namespace sinkcert::theorems::bounds
