// SPDX-License-Identifier: MIT
//
// The bound of softmax_vertex_bound.h: the rows without the trigger in MPFI,
// then per (d, sigma) the query grid, the key zonotopes and the slices of
// T, in double with the rounding allowance.
#include "theorems/bounds/softmax_vertex_bound.h"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <tuple>

#include "src/interval.h"
#include "src/limits.h"
#include "src/parallel_tasks.h"

namespace sinkcert::theorems::bounds {

namespace {

// Rounding allowance relative to R, a bound on every term of the sums in
// absolute value (as in relu_vertex_bound.cc: each term is a few dozen
// roundings and one exp, whose error glibc keeps under 1 ulp, so gamma_k R
// with k < 100 is under 2^-46 R; the zonotope's vertices are sums of at
// most 2 (n - 4) generators; 2^-30 leaves a factor 2^16).
constexpr double kRoundingAllowance = 0x1p-30;
// Largest content dimension n - 3 whose query vertices are enumerated
// ((kPiecesQ + 1) 2^12 query points); beyond it (or when asked) the query
// box is searched by branch and bound (header, step 3b).
constexpr int kMaxEnumeratedContentDim = 13;
// Branch and bound: query cells kept per slice (each holds NT + 4 doubles
// and its key, about 200 bytes at n = 64: 2^19 cells stay near 100 MB per
// thread); a piece whose search needs more fails (failing is safe).
constexpr int kMaxCells = 1 << 19;
// Branch and bound: cells evaluated between deadline checks (a cell costs
// O(n^2), microseconds at n = 64).
constexpr int kCellsPerCheck = 1024;
// A cell's key holds one bit per split coordinate.
static_assert(kMaxSoftmaxVertexN - 3 <= 64, "cell keys hold one bit per coordinate");
// Pieces of [-1, 1] for the query's and the key's coordinate d; the
// corrections they carry fall as 1 / pieces^2 (at n = L = 16 on the
// paper-recipe model: under 0.2 % of E at these counts, against 1 % and
// 0.5 % at 4 and 2 pieces).
constexpr int kPiecesQ = 4;
constexpr int kPiecesX = 8;
// Slices of T's range [-1, 1] to start from: at n = L = 16 on the
// paper-recipe models a candidate near the worst case needs slices of
// width 1/8 to 1/32 (the relaxation of T D costs h max|D - D_ref|), so the
// wider ones would only fail and be split.
constexpr int kInitialSlices = 8;
// Slices of T narrower than this are not split further: lambda fails.
constexpr double kMinSliceWidth = 1.0 / 1024;
// Candidates per (trigger, d, sigma): lambda = lower (1 + kFirstFraction
// gap 2^i), i = 0..kGrowSteps - 1, until one holds (at gap 0.05 up to
// lower (1 + 12.8)), then, when that one is above lower (1 + gap),
// bisection between the last that failed and the smallest that held,
// until one at or below lower (1 + gap) holds or they are kResolution gap
// lower apart. A candidate costs seconds at n = 16 (tens of slices), so
// none is tried below what the asked gap needs.
constexpr double kFirstFraction = 0.5;
constexpr int kGrowSteps = 10;
constexpr double kResolution = 0.125;
// Below this lower bound the candidates are not tried: the allowance,
// about 2^-30 (2 + |c| + max |v|) relative to the weights' sum, would eat
// the gap (the sink family and the minimax's path models sit near 1e-10,
// where the branch and bound alone closes).
constexpr double kMinLower = 1e-6;
// Golden-section steps over nu' (the bracket shrinks by 0.618 a step).
constexpr int kGoldenSteps = 40;
// Query points kept in the active set per refresh.
constexpr int kActive = 96;
// Branch mode: rounds of golden section and confirmation per piece (the
// failing leaves of one confirmation join the active set of the next;
// more than the enumeration's 3 since a search stops at kActive of them).
constexpr int kBranchRounds = 6;

using Clock = std::chrono::steady_clock;

// Everything about one (d, sigma) that does not depend on j, lambda, the
// slice or nu'.
struct Setup {
  int n = 0, C = 0, d = 0, cd = -1, ord = 0;  // cd: content index of d, or -1 for a flag
  double sigma = 1;
  Eigen::MatrixXd A, M;
  // key coordinate x_d values (content d) or the single 0 (flag d)
  std::vector<double> tvals, cp, tau;  // cp(t) = sigma (M[d,ord] + m_cd t); tau(t) = xt_d
  int NQ = 0, E = 0, NT = 0;
  std::vector<double> q;  // NQ x C
  std::vector<double> e_y0, e_ys, vs, taus;
  // NQ x E: the zonotope's point -sum g, then its upper chain's edges
  // (start, direction)
  std::vector<double> EU, sp, gu, gp, inv_gu, inv_gp;
  std::vector<double> ET;  // NQ x NT
  // constants over the whole box
  double Umax = 0, Bd = 0, Y0max = 0, Y0min = 0, Ysmax = 0, Ysmin = 0, Vmax = 0;
  double msum = 0;                             // sum_l |M[d,c_l]|
  std::vector<double> R, beta, Ylmax, All, m;  // per content coordinate
  double hq = 1, hx = 1;                       // half a piece (1: vertex)
  // weight-aware corrections (see corrections()): the keys' query factor
  // K_q, the BOS one K_b; per query point b_d(q) and e^(2 h_x |b_d(q)|)
  double Kq = 0, Kb = 0;
  std::vector<double> bd, ebd;
  unsigned drop = 0;   // SoftmaxVertexOptions::drop (testing only)
  bool finite = true;  // every exponential above finite (else nothing is certified)
  std::vector<std::vector<int>> pieces;  // query points per piece of q_d
  // branch and bound over the query (header, step 3b): the query points
  // are then the values of q_d alone (the roots of the search), `others`
  // the content coordinates it splits, and per coordinate l its term of
  // K_q and K_b (half width h_l: h_q for q_d, 1 for the others)
  bool branch = false;
  std::vector<double> qd_vals;
  std::vector<int> others;
  std::vector<double> kq_term, kb_term;
};

// Where a key zonotope's upper chain is stored: E = G + 1 entries (the
// start -sum g, then the G edges that add -2 g), each e^u at its start,
// p there, the edge's direction (g_u, g_p) and their inverses (0 for an
// edge along an axis: no interior stationary point).
struct ChainSlots {
  double *EU, *sp, *gu, *gp, *inv_gu, *inv_gp;
};
// The same, read only.
struct ChainView {
  const double *EU, *sp, *gu, *gp, *inv_gu, *inv_gp;
};

// The upper chain of the zonotope of the generators (b_l, sigma m_l), l in
// `gens`: oriented to u > 0 (or p >= 0 when u = 0), sorted by angle, the
// boundary runs from -sum g through +2 g in that order to +sum g (the
// lower chain), and back through -2 g (the upper chain: at each u the
// largest p). `gen` is scratch of size gens.size().
void upper_chain(const std::vector<int>& gens, const Eigen::VectorXd& b,
                 const std::vector<double>& m, double sigma,
                 std::vector<std::array<double, 3>>& gen, ChainSlots out) {
  const int G = static_cast<int>(gens.size());
  double su = 0, spp = 0;
  for (int g = 0; g < G; ++g) {
    double u = b(gens[g]), p = sigma * m[gens[g]];
    if (u < 0 || (u == 0 && p < 0)) {
      u = -u;
      p = -p;
    }
    // the angle's order is that of the slope p / u (+inf at u = 0, p > 0)
    const double slope = u == 0 ? (p > 0 ? std::numeric_limits<double>::infinity() : 0.0) : p / u;
    // insertion into the sorted front (G is at most 60)
    int at = g;
    for (; at > 0 && gen[at - 1][0] > slope; --at) gen[at] = gen[at - 1];
    gen[at] = {slope, u, p};
    su -= u;
    spp -= p;
  }
  // the start -sum g (as a point: no edge)
  out.sp[0] = spp;
  out.EU[0] = std::exp(su);
  out.gu[0] = out.gp[0] = out.inv_gu[0] = out.inv_gp[0] = 0.0;
  for (int e = 0; e < 2 * G; ++e) {
    const auto& g = gen[e % G];
    const double sign = e < G ? 2.0 : -2.0;
    const double gu = sign * g[1], gp = sign * g[2];
    if (e >= G) {
      const int k = e - G + 1;
      const bool interior = gu != 0 && gp != 0;
      out.sp[k] = spp;
      out.EU[k] = std::exp(su);
      out.gu[k] = gu;
      out.gp[k] = gp;
      out.inv_gu[k] = interior ? 1.0 / gu : 0.0;
      out.inv_gp[k] = interior ? 1.0 / gp : 0.0;
    }
    su += gu;
    spp += gp;
  }
}

// The maximum of e^u (p + shift) over a stored upper chain of E entries:
// at every edge's start, and at the edge's interior stationary point
// s* = -(P / g_p) - 1 / g_u of e^(u + s g_u) (P + s g_p), P = p + shift at
// the start, when 0 < s* < 1.
double chain_max(const ChainView& c, int E, double shift) {
  double best = -std::numeric_limits<double>::infinity();
  for (int e = 0; e < E; ++e) {
    const double P = c.sp[e] + shift;
    best = std::max(best, c.EU[e] * P);
    if (c.inv_gp[e] != 0) {
      const double st = -P * c.inv_gp[e] - c.inv_gu[e];
      if (st > 0 && st < 1)
        best = std::max(best, c.EU[e] * std::exp(st * c.gu[e]) * (P + st * c.gp[e]));
    }
  }
  return best;
}

void set_queries(Setup& s, const std::vector<double>& qd_grid);

// qd_grid: the values of the query's q_d (empty: kPiecesQ equal pieces of
// [-1, 1]; ignored for a flag d).
Setup make_setup(const Eigen::MatrixXd& A, const Eigen::MatrixXd& M, int n, int d, double sigma,
                 unsigned drop, bool branch, std::vector<double> qd_grid = {}) {
  Setup s;
  s.drop = drop;
  s.branch = branch;
  s.n = n;
  s.C = n - 3;
  s.d = d;
  s.ord = n - 1;
  s.sigma = sigma;
  s.A = A;
  s.M = M;
  const int C = s.C, ord = s.ord, c0 = kFirstContent;
  s.cd = (d >= c0 && d < c0 + C) ? d - c0 : -1;
  const auto Ac = [&](int l, int k) { return A(c0 + l, c0 + k); };
  s.m.resize(C);
  for (int l = 0; l < C; ++l) s.m[l] = M(d, c0 + l);
  // Umax >= |b(q)|_1, b_l(q) = A[1,c_l] + sum_k q_k A[c_k,c_l]
  s.R.assign(C, 0);
  s.beta.resize(C);
  s.Ylmax.resize(C);
  s.All.resize(C);
  double gamma_sum = 0, acc_sum = 0;
  for (int l = 0; l < C; ++l) {
    s.Umax += std::abs(A(kTriggerFlag, c0 + l));
    for (int k = 0; k < C; ++k) {
      s.Umax += std::abs(Ac(k, l));
      s.R[l] += std::abs(Ac(l, k));  // du/dq_l = sum_k A[c_l,c_k] x_k
      acc_sum += std::abs(Ac(l, k));
    }
    // y0 = A[1,0] - A[1,ord] + sum_l beta_l q_l
    s.beta[l] = A(c0 + l, kBosFlag) - A(c0 + l, ord);
    // ys = A[1,1] - A[1,ord] + sum_l gamma_l q_l + q^T Acc q
    const double gamma = A(c0 + l, kTriggerFlag) + A(kTriggerFlag, c0 + l) - A(c0 + l, ord);
    gamma_sum += std::abs(gamma);
    // dys/dq_l = gamma_l + sum_k (Acc + Acc^T)_lk q_k
    s.Ylmax[l] = std::abs(gamma);
    for (int k = 0; k < C; ++k) s.Ylmax[l] += std::abs(Ac(l, k) + Ac(k, l));
    s.All[l] = Ac(l, l);
  }
  if (s.cd >= 0) {
    s.Bd = std::abs(A(kTriggerFlag, d));
    for (int k = 0; k < C; ++k) s.Bd += std::abs(Ac(k, s.cd));
  }
  const double beta_sum = std::accumulate(s.beta.begin(), s.beta.end(), 0.0,
                                          [](double a, double b) { return a + std::abs(b); });
  const double y0c = A(kTriggerFlag, kBosFlag) - A(kTriggerFlag, ord);
  s.Y0max = y0c + beta_sum;
  s.Y0min = y0c - beta_sum;
  const double ysc = A(kTriggerFlag, kTriggerFlag) - A(kTriggerFlag, ord);
  s.Ysmax = ysc + gamma_sum + acc_sum;
  s.Ysmin = ysc - gamma_sum - acc_sum;
  for (double v : s.m) s.msum += std::abs(v);
  s.Vmax = std::max({std::abs(M(d, kBosFlag)), std::abs(M(d, ord)) + s.msum,
                     std::abs(M(d, kTriggerFlag)) + s.msum});
  // key grid in x_d, query grid in q_d
  if (s.cd >= 0) {
    s.hx = 1.0 / kPiecesX;
    for (int i = 0; i <= kPiecesX; ++i) s.tvals.push_back(-1.0 + 2.0 * i / kPiecesX);
  } else {
    s.tvals.push_back(0.0);
  }
  s.NT = static_cast<int>(s.tvals.size());
  for (double t : s.tvals) {
    s.cp.push_back(sigma * (M(d, ord) + (s.cd >= 0 ? s.m[s.cd] * t : 0.0)));
    s.tau.push_back(s.cd >= 0 ? t : (d == ord ? 1.0 : 0.0));
  }
  if (s.cd < 0) {
    qd_grid = {0.0};
  } else if (qd_grid.empty()) {
    for (int i = 0; i <= kPiecesQ; ++i) qd_grid.push_back(-1.0 + 2.0 * i / kPiecesQ);
  }
  set_queries(s, qd_grid);
  return s;
}

// The query points: the coordinates other than cd at +-1, cd at the values
// of qd_grid (ends of equal pieces; one value for a flag d), with their
// weights, values and key zonotopes.
void set_queries(Setup& s, const std::vector<double>& qd_grid) {
  const int n = s.n, C = s.C, ord = s.ord, c0 = kFirstContent, d = s.d;
  const double sigma = s.sigma;
  const Eigen::MatrixXd& A = s.A;
  const Eigen::MatrixXd& M = s.M;
  std::vector<int> others;
  for (int l = 0; l < C; ++l) {
    if (l != s.cd) others.push_back(l);
  }
  const int G = static_cast<int>(others.size());
  s.hq = qd_grid.size() > 1 ? 0.5 * (qd_grid[1] - qd_grid[0]) : 1.0;
  // K_q's and K_b's terms per coordinate:
  //   0.5 h_l^2 e^(2 h_l R_l) R_l^2,  0.5 h_l^2 e^(2 h_l |beta_l|) beta_l^2
  s.kq_term.assign(C, 0.0);
  s.kb_term.assign(C, 0.0);
  for (int l = 0; l < C; ++l) {
    const double hl = l == s.cd ? s.hq : 1.0;
    s.kq_term[l] = 0.5 * hl * hl * std::exp(2 * hl * s.R[l]) * s.R[l] * s.R[l];
    s.kb_term[l] = 0.5 * hl * hl * std::exp(2 * hl * std::abs(s.beta[l])) * s.beta[l] * s.beta[l];
  }
  if (s.branch) {
    // the roots of the search: one per value of q_d (cells are built per
    // slice, SliceTable); piece i holds roots i and i + 1
    s.others = others;
    s.qd_vals = qd_grid;
    s.NQ = static_cast<int>(qd_grid.size());
    s.E = G + 1;
    s.pieces.assign(std::max<std::size_t>(1, qd_grid.size() - 1), {});
    for (int g = 0; g < s.NQ; ++g) {
      if (g < static_cast<int>(s.pieces.size())) s.pieces[g].push_back(g);
      if (g > 0) s.pieces[g - 1].push_back(g);
    }
    // tau_s = qt_d per root
    s.taus.assign(s.NQ, s.cd >= 0 ? 0.0 : (d == kTriggerFlag ? 1.0 : 0.0));
    for (int g = 0; s.cd >= 0 && g < s.NQ; ++g) s.taus[g] = qd_grid[g];
    s.Kq = std::accumulate(s.kq_term.begin(), s.kq_term.end(), 0.0);
    s.Kb = std::accumulate(s.kb_term.begin(), s.kb_term.end(), 0.0);
    if (s.drop & kDropKeyQuery) s.Kq = 0;
    if (s.drop & kDropBos) s.Kb = 0;
    const auto finite = [](double x) { return std::isfinite(x); };
    s.finite = std::all_of(s.kq_term.begin(), s.kq_term.end(), finite) &&
               std::all_of(s.kb_term.begin(), s.kb_term.end(), finite);
    return;
  }
  // piece i: the points whose q_d is qd_grid[i] or qd_grid[i + 1]
  s.pieces.assign(std::max<std::size_t>(1, qd_grid.size() - 1), {});
  s.NQ = static_cast<int>(qd_grid.size()) << G;
  for (int iq = 0; iq < s.NQ; ++iq) {
    const int g = iq >> G;
    if (g < static_cast<int>(s.pieces.size())) s.pieces[g].push_back(iq);
    if (g > 0) s.pieces[g - 1].push_back(iq);
  }
  s.E = G + 1;
  s.q.assign(static_cast<std::size_t>(s.NQ) * C, 0.0);
  s.e_y0.resize(s.NQ);
  s.e_ys.resize(s.NQ);
  s.vs.resize(s.NQ);
  s.taus.resize(s.NQ);
  const std::size_t ne = static_cast<std::size_t>(s.NQ) * s.E;
  s.EU.resize(ne);
  s.sp.resize(ne);
  s.gu.resize(ne);
  s.gp.resize(ne);
  s.inv_gu.resize(ne);
  s.inv_gp.resize(ne);
  s.ET.resize(static_cast<std::size_t>(s.NQ) * s.NT);
  s.bd.assign(s.NQ, 0.0);
  s.ebd.assign(s.NQ, 1.0);
  Eigen::VectorXd qt(n), b(C);
  std::vector<std::array<double, 3>> gen(G);  // (slope, u, p)
  for (int iq = 0; iq < s.NQ; ++iq) {
    const int vertex = iq & ((1 << G) - 1), piece = iq >> G;
    double* qp = &s.q[static_cast<std::size_t>(iq) * C];
    for (int g = 0; g < G; ++g) qp[others[g]] = (vertex >> g) & 1 ? 1.0 : -1.0;
    if (s.cd >= 0) qp[s.cd] = qd_grid[piece];
    qt.setZero();
    qt(kTriggerFlag) = 1.0;
    for (int l = 0; l < C; ++l) qt(c0 + l) = qp[l];
    // qA = qt^T A
    const Eigen::RowVectorXd qA = qt.transpose() * A;
    const double alpha = qA(ord);
    for (int l = 0; l < C; ++l) b(l) = qA(c0 + l);
    // y0 = qt^T A e_0 - alpha;  ys = qt^T A qt - alpha
    s.e_y0[iq] = std::exp(qA(kBosFlag) - alpha);
    s.e_ys[iq] = std::exp(qA.dot(qt) - alpha);
    // vs = (M qt)_d;  tau_s = qt_d
    s.vs[iq] = M.row(d).dot(qt);
    s.taus[iq] = qt(d);
    for (int t = 0; t < s.NT; ++t) {
      s.ET[static_cast<std::size_t>(iq) * s.NT + t] =
          s.cd >= 0 ? std::exp(b(s.cd) * s.tvals[t]) : 1.0;
    }
    if (s.cd >= 0) {
      s.bd[iq] = b(s.cd);
      s.ebd[iq] = std::exp(2 * s.hx * std::abs(b(s.cd)));
    }
    const std::size_t base = static_cast<std::size_t>(iq) * s.E;
    upper_chain(
        others, b, s.m, sigma, gen,
        {&s.EU[base], &s.sp[base], &s.gu[base], &s.gp[base], &s.inv_gu[base], &s.inv_gp[base]});
  }
  const auto all_finite = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
  };
  // K_q = sum_l 0.5 w_l e^(2 h_l R_l) R_l^2,  K_b = sum_l 0.5 w_l e^(2 h_l |beta_l|) beta_l^2
  // (h_l half the cell's width in q_l: 1 for a vertex coordinate, h_q for
  // q_d; w_l = h_l^2)
  s.Kq = std::accumulate(s.kq_term.begin(), s.kq_term.end(), 0.0);
  s.Kb = std::accumulate(s.kb_term.begin(), s.kb_term.end(), 0.0);
  if (s.drop & kDropKeyQuery) s.Kq = 0;
  if (s.drop & kDropBos) s.Kb = 0;
  s.finite = all_finite(s.EU) && all_finite(s.ET) && all_finite(s.e_y0) && all_finite(s.e_ys) &&
             all_finite(s.sp) && all_finite(s.gu) && all_finite(s.gp) && all_finite(s.ebd) &&
             std::isfinite(s.Kq) && std::isfinite(s.Kb);
}

// The parts of the bound that depend on j and c but not on the query point.
// The curvature corrections (header, step 3) are weight-aware: each is the
// weight of its own term at the grid point times a factor, not a box-wide
// maximum of the weight.
//  - keys, query coordinate l (cell half width h_l): along q_l the key term
//    e^u (p - c) has u = b(q) . x linear in q_l with slope
//    r_l = sum_k A[c_l,c_k] x_k, |r_l| <= R_l, so its negative curvature
//    is e^u r_l^2 (c - p)_+, and on the cell e^u <= e^(u at either end)
//    e^(2 h_l R_l). Reducing the coordinates to their ends one at a time
//    (each correction added is a positive multiple of e^u, convex in the
//    coordinates left) gives at the grid point the key term
//      e^u (p - c + K_q (c - p)_+) = e^u g(p),  g(p) = max(p - c, (1 - K_q)(p - c)),
//    so the key's maximum over its box is max(S, (1 - K_q) S), S the
//    maximum of e^u (p - c) (needs K_q < 1; else nothing is certified).
//  - BOS, likewise with y0 = ... + beta . q:  e^y0 (sigma v0 - c) times
//    (1 - K_b) when sigma v0 < c.
//  - key coordinate x_d (piece half width h_x), at a grid point of q: along
//    t = x_d, for each branch alpha of g, alpha e^u (p - c) has negative
//    curvature alpha e^u (b_d^2 (c - p)_+ + 2 |b_d m_d|), e^u <= e^(u at
//    either end) e^(2 h_x |b_d|), so the piece's maximum is at most the
//    ends' with c lowered by
//      K_t(q) = 0.5 h_x^2 e^(2 h_x |b_d(q)|) (b_d(q)^2 Pneg + 2 |b_d(q) m_d|),
//    Pneg >= max over the key's box of (c - p)_+.
//  - self: as before, 0.5 e^(max ys) times the bracket below, per coordinate
//    (max(0, affine) functions of the other coordinates of q, convex).
struct Corrections {
  double pneg = 0;  // max over the key's box of (c - sigma v)_+
  double self_scale = 0;
  std::vector<double> P, N, w;  // self-term coefficients and weights per coordinate
  double Dref = 0, maxdev = 0, Dmax = 0;
};

Corrections corrections(const Setup& s, int j, double c) {
  Corrections k;
  const int C = s.C;
  // Pneg >= max over x of (c - sigma v(x))
  k.pneg = std::max(0.0, c - s.sigma * s.M(s.d, s.ord) + s.msum);
  const double eU = std::exp(s.Umax);
  k.w.assign(C, 1.0);
  if (s.cd >= 0) k.w[s.cd] = s.hq * s.hq;
  // self: e^ys [(y_l^2 + 2 A_ll)(sigma vs - c) + 2 y_l sigma m_l]
  k.self_scale = (s.drop & kDropSelf) ? 0.0 : 0.5 * std::exp(s.Ysmax);
  k.P.resize(C);
  k.N.resize(C);
  for (int l = 0; l < C; ++l) {
    k.P[l] = std::max(0.0, s.Ylmax[l] * s.Ylmax[l] + 2 * s.All[l]);
    k.N[l] = std::max(0.0, -2 * s.All[l]);
  }
  const double dmin = std::exp(s.Y0min) + std::exp(s.Ysmin) + (j - 1) * std::exp(-s.Umax);
  k.Dmax = std::exp(s.Y0max) + std::exp(s.Ysmax) + (j - 1) * eU;
  k.Dref = 0.5 * (dmin + k.Dmax);
  k.maxdev = 0.5 * (k.Dmax - dmin);
  return k;
}

// S_t at query point iq for every key value t of x_d: the maximum over the
// key's zonotope of e^u (p - c + K_t), times e^(b_d t), then
// max(S_t, (1 - K_q) S_t); with the corrections K_q and K_t or (`corrected`
// false, diagnosis only) without. Only the zonotope's upper chain is
// stored (set_queries): e^u > 0, so at each u the largest p wins.
void key_values(const Setup& s, const Corrections& k, int iq, double c, double* S,
                bool corrected = true) {
  // c lowered by K_t(q) = 0.5 h_x^2 e^(2 h_x |b_d|) (b_d^2 Pneg + 2 |b_d m_d|)
  double Kt = 0;
  if (corrected && s.cd >= 0 && !(s.drop & kDropKeyContent)) {
    const double bd = std::abs(s.bd[iq]);
    Kt = 0.5 * s.hx * s.hx * s.ebd[iq] * (bd * bd * k.pneg + 2 * bd * std::abs(s.m[s.cd]));
  }
  const double Kq = corrected ? s.Kq : 0.0;
  const std::size_t base = static_cast<std::size_t>(iq) * s.E;
  const ChainView chain{&s.EU[base], &s.sp[base],     &s.gu[base],
                        &s.gp[base], &s.inv_gu[base], &s.inv_gp[base]};
  for (int t = 0; t < s.NT; ++t) {
    const double best = chain_max(chain, s.E, s.cp[t] - c + Kt);
    // S_t = e^(b_d t) max_edges;  max(S_t, (1 - K_q) S_t)
    double St = s.ET[static_cast<std::size_t>(iq) * s.NT + t] * best;
    if (St < 0) St *= 1 - Kq;
    S[t] = St;
  }
}

// One slice (j, c and T_ref fixed): per query point, the parts of its value
// G_q(nu') = h(q) + self correction + (j - 1) max_t (S_t + nu' tau(t) / j),
//   h(q) = e^y0 (sigma v0 - c) + e^ys (sigma vs - c) + nu' (tau_s / j - T_ref),
// that do not depend on nu', computed when a piece first asks for the
// point (the pieces share their ends' points). The BOS term is times
// (1 - K_b) where sigma v0 < c.
struct SliceTable {
  const Setup* s = nullptr;
  Corrections k;
  int j = 1;
  double c = 0, Tref = 0;
  std::vector<char> done;
  std::vector<double> bos, self, correction, slope, S;  // S: NQ x NT
  // branch mode (Setup::branch): the entries above are per cell, ids
  // 0..NQ-1 the roots (q_d at its grid value, every other coordinate
  // free); a cell is (root, depth, bits): the first `depth` coordinates of
  // `order` fixed, the i-th at +1 where bit i is set and -1 elsewhere
  std::vector<int> order;                  // split order of Setup::others
  std::vector<double> kq_fixed, kb_fixed;  // K_q, K_b of the fixed set, per depth
  std::vector<std::uint64_t> cell_bits;
  std::vector<int> cell_root, cell_depth;
  std::map<std::tuple<int, int, std::uint64_t>, int> cells;

  // kept from slice to slice (its buffers keep their capacity)
  void reset(const Setup& setup, int j_in, double c_in, double Tref_in) {
    s = &setup;
    k = corrections(setup, j_in, c_in);
    j = j_in;
    c = c_in;
    Tref = Tref_in;
    const std::size_t nq = static_cast<std::size_t>(setup.NQ);
    done.assign(nq, 0);
    bos.resize(nq);
    self.resize(nq);
    correction.resize(nq);
    slope.resize(nq);
    S.resize(nq * setup.NT);
    if (setup.branch) start_cells();
  }

  // branch mode: the roots, the split order and the K's per depth
  void start_cells() {
    const Setup& q = *s;
    cells.clear();
    cell_bits.assign(q.NQ, 0);
    cell_root.resize(q.NQ);
    std::iota(cell_root.begin(), cell_root.end(), 0);
    cell_depth.assign(q.NQ, 0);
    for (int g = 0; g < q.NQ; ++g) cells[{g, 0, 0}] = g;
    const bool drop_q = q.drop & kDropKeyQuery, drop_b = q.drop & kDropBos;
    kq_fixed.assign(1, q.cd >= 0 && !drop_q ? q.kq_term[q.cd] : 0.0);
    kb_fixed.assign(1, q.cd >= 0 && !drop_b ? q.kb_term[q.cd] : 0.0);
    // split order: by each coordinate's first-order share of root 0's
    // bound (a heuristic only: any order is sound), largest first
    std::vector<double> share(q.C, 0.0);
    order = q.others;
    compute(0);
    double key_scale = 0;
    for (int t = 0; j > 1 && t < q.NT; ++t)
      key_scale = std::max(key_scale, (j - 1) * std::abs(S[t]));
    if (!std::isfinite(key_scale)) key_scale = 1;
    const Eigen::VectorXd qt = root_query(0);
    const Eigen::VectorXd Aq = q.A * qt;
    const Eigen::RowVectorXd qA = qt.transpose() * q.A;
    const double ys = qA.dot(qt) - qA(q.ord);
    for (int l : q.others) {
      const int cl = kFirstContent + l;
      const double grad = Aq(cl) + qA(cl) - q.A(cl, q.ord);
      share[l] = key_scale * q.R[l] + std::abs(bos[0]) * std::abs(q.beta[l]) +
                 (std::abs(self[0]) + std::exp(ys)) * std::abs(grad) +
                 std::exp(ys) * std::abs(q.m[l]);
      if (!std::isfinite(share[l])) share[l] = 0;
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return share[a] > share[b]; });
    for (int l : order) {
      kq_fixed.push_back(kq_fixed.back() + (drop_q ? 0.0 : q.kq_term[l]));
      kb_fixed.push_back(kb_fixed.back() + (drop_b ? 0.0 : q.kb_term[l]));
    }
  }

  // branch mode: qt = e_1 + q at root g (q_d at its value, the rest 0)
  Eigen::VectorXd root_query(int g) const {
    Eigen::VectorXd qt = Eigen::VectorXd::Zero(s->n);
    qt(kTriggerFlag) = 1.0;
    if (s->cd >= 0) qt(kFirstContent + s->cd) = s->qd_vals[g];
    return qt;
  }

  // branch mode: the id of a cell, made (not computed) when new
  int cell(int root, int depth, std::uint64_t bits) {
    const auto [it, fresh] = cells.try_emplace({root, depth, bits}, static_cast<int>(done.size()));
    if (fresh) {
      done.push_back(0);
      cell_bits.push_back(bits);
      cell_root.push_back(root);
      cell_depth.push_back(depth);
      const std::size_t m = done.size();
      bos.resize(m);
      self.resize(m);
      correction.resize(m);
      slope.resize(m);
      S.resize(m * s->NT);
    }
    return it->second;
  }

  // branch mode: the cell's two halves, q_(order[depth]) = -1 and +1
  std::array<int, 2> children(int id) {
    const int depth = cell_depth[id], root = cell_root[id];
    const std::uint64_t bits = cell_bits[id];
    const int minus = cell(root, depth + 1, bits);
    const int plus = cell(root, depth + 1, bits | (std::uint64_t{1} << depth));
    return {minus, plus};
  }

  bool leaf(int id) const { return !s->branch || cell_depth[id] == static_cast<int>(order.size()); }

  // branch mode: the cell's terms, bounds over its free coordinates
  // (header, step 3b). q0: the fixed coordinates at their values, the free
  // ones at 0; F the free set. With |q_l - q0_l| <= 1 on F:
  //   y0 - y0(q0) = sum_F beta_l (q_l - q0_l), within +-eb = sum_F |beta_l|;
  //   ys - ys(q0) = grad . (q - q0) + (q - q0)^T Acc (q - q0), within
  //     +-es = sum_F |grad_l| + sum_(F x F) |Acc_kl|;
  //   sigma vs - sigma vs(q0) within +-mu = sum_F |m_l|;
  //   b(q) - b(q0) = Acc^T (q - q0): per key u moves by at most
  //     ek = sum_(k in F) R_k (|x_l| <= 1), and b_d by at most
  //     dd = sum_(k in F) |Acc_(k,cd)|.
  // A term e^z y with z within z0 +- e and y <= Y is at most
  //   up(e^z0 Y, e) = e^z0 Y e^(+-e) (+ when Y >= 0),
  // and up(., e) is increasing, so it passes through the maxima over keys.
  void compute_cell(int id) {
    const Setup& q = *s;
    const int depth = cell_depth[id], C = q.C, c0 = kFirstContent;
    const std::uint64_t bits = cell_bits[id];
    Eigen::VectorXd qt = root_query(cell_root[id]);
    std::vector<char> free(C, 0);
    for (int i = 0; i < static_cast<int>(order.size()); ++i) {
      if (i < depth) {
        qt(c0 + order[i]) = (bits >> i) & 1 ? 1.0 : -1.0;
      } else {
        free[order[i]] = 1;
      }
    }
    const Eigen::RowVectorXd qA = qt.transpose() * q.A;
    const Eigen::VectorXd Aq = q.A * qt;
    const double alpha = qA(q.ord);
    Eigen::VectorXd b(C);
    for (int l = 0; l < C; ++l) b(l) = qA(c0 + l);
    double eb = 0, es = 0, mu = 0, ek = 0, dd = 0;
    for (int l = 0; l < C; ++l) {
      if (!free[l]) continue;
      const int cl = c0 + l;
      eb += std::abs(q.beta[l]);
      // dys/dq_l at q0 = (A qt)_l + (qt^T A)_l - A[c_l, ord]
      es += std::abs(Aq(cl) + qA(cl) - q.A(cl, q.ord));
      for (int k2 = 0; k2 < C; ++k2) {
        if (free[k2]) es += std::abs(q.A(c0 + k2, cl));
      }
      mu += std::abs(q.m[l]);
      ek += q.R[l];
      if (q.cd >= 0) dd += std::abs(q.A(cl, c0 + q.cd));
    }
    if (q.drop & kDropFirstOrder) eb = es = mu = ek = dd = 0;
    const auto up = [](double y, double e) { return y * std::exp(y >= 0 ? e : -e); };
    const double Kq = kq_fixed[depth], Kb = kb_fixed[depth];
    const double sv = q.sigma * q.M.row(q.d).dot(qt);
    const double b0 = q.sigma * q.M(q.d, kBosFlag) - c;
    // e^y0 (sigma v0 - c), times (1 - K_b) where sigma v0 < c
    bos[id] = up(std::exp(qA(kBosFlag) - alpha) * b0 * (b0 < 0 ? 1 - Kb : 1.0), eb);
    // e^ys (sigma vs - c) with sigma vs <= sigma vs(q0) + mu
    self[id] = std::exp(qA.dot(qt) - alpha) * up(sv + mu - c, es);
    slope[id] = qt(q.d) / j - Tref;
    // the self term's corrections over the fixed coordinates (q_d with
    // w = h_q^2), rest_l within rest_l(q0) +- mu
    double sum = 0;
    for (int l = 0; l < C; ++l) {
      if (free[l]) continue;
      const double rest = sv - q.sigma * q.m[l] * qt(c0 + l), am = std::abs(q.m[l]);
      sum += k.w[l] * (k.P[l] * std::max(0.0, c - rest + am + mu) +
                       k.N[l] * std::max(0.0, rest + mu + am - c) + 2 * q.Ylmax[l] * am);
    }
    correction[id] = k.self_scale * sum;
    if (j == 1) return;
    double* St = &S[static_cast<std::size_t>(id) * q.NT];
    // K_q >= 1 leaves g without the form max(S, (1 - K_q) S): no bound
    if (!(Kq < 1)) {
      std::fill(St, St + q.NT, std::numeric_limits<double>::infinity());
      return;
    }
    // K_t with |b_d| at most |b_d(q0)| + dd over the cell
    double Kt = 0;
    const double bd = q.cd >= 0 ? std::abs(b(q.cd)) + dd : 0.0;
    if (q.cd >= 0 && !(q.drop & kDropKeyContent)) {
      Kt = 0.5 * q.hx * q.hx * std::exp(2 * q.hx * bd) *
           (bd * bd * k.pneg + 2 * bd * std::abs(q.m[q.cd]));
    }
    const int E = q.E;
    std::vector<double> chain(6 * static_cast<std::size_t>(E));
    std::vector<std::array<double, 3>> gen(q.others.size());
    const ChainSlots slots{&chain[0],     &chain[E],     &chain[2 * E],
                           &chain[3 * E], &chain[4 * E], &chain[5 * E]};
    upper_chain(q.others, b, q.m, q.sigma, gen, slots);
    for (int t = 0; t < q.NT; ++t) {
      // S_t = e^(b_d t) max over the chain of e^u (p - c + K_t), then
      // max(S_t, (1 - K_q) S_t), then up(., ek)
      double v = (q.cd >= 0 ? std::exp(b(q.cd) * q.tvals[t]) : 1.0) *
                 chain_max({slots.EU, slots.sp, slots.gu, slots.gp, slots.inv_gu, slots.inv_gp}, E,
                           q.cp[t] - c + Kt);
      if (v < 0) v *= 1 - Kq;
      St[t] = up(v, ek);
    }
  }

  void compute(int iq) {
    if (s->branch) {
      compute_cell(iq);
      done[iq] = 1;
      return;
    }
    const Setup& q = *s;
    const double sv = q.sigma * q.vs[iq];
    const double b0 = q.sigma * q.M(q.d, kBosFlag) - c;
    bos[iq] = q.e_y0[iq] * b0 * (b0 < 0 ? 1 - q.Kb : 1.0);
    self[iq] = q.e_ys[iq] * (sv - c);
    slope[iq] = q.taus[iq] / j - Tref;
    const double* qp = &q.q[static_cast<std::size_t>(iq) * q.C];
    double sum = 0;
    for (int l = 0; l < q.C; ++l) {
      // sigma vs with q_l at its worst end: sigma (vs - m_l q_l) -+ |m_l|
      const double rest = sv - q.sigma * q.m[l] * qp[l], am = std::abs(q.m[l]);
      sum += k.w[l] * (k.P[l] * std::max(0.0, c - rest + am) +
                       k.N[l] * std::max(0.0, rest + am - c) + 2 * q.Ylmax[l] * am);
    }
    correction[iq] = k.self_scale * sum;
    if (j > 1) key_values(q, k, iq, c, &S[static_cast<std::size_t>(iq) * q.NT]);
    done[iq] = 1;
  }

  // (j - 1) max_t (S_t + nu' tau(t) / j), from the stored S_t
  double keys(int iq, double nu) const {
    if (j == 1) return 0;
    // K_q >= 1 leaves g without the form max(S, (1 - K_q) S): no bound
    // (branch mode: checked per cell, compute_cell)
    if (!s->branch && !(s->Kq < 1)) return std::numeric_limits<double>::infinity();
    const double* St = &S[static_cast<std::size_t>(iq) * s->NT];
    double best = -std::numeric_limits<double>::infinity();
    for (int t = 0; t < s->NT; ++t) best = std::max(best, St[t] + nu * s->tau[t] / j);
    return (j - 1) * best;
  }

  double value(int iq, double nu) {
    if (!done[iq]) compute(iq);
    return bos[iq] + self[iq] + nu * slope[iq] + correction[iq] + keys(iq, nu);
  }

  // diagnosis: the parts of G_q(nu')
  void parts(int iq, double nu, SoftmaxVertexTerms& terms) {
    if (!done[iq]) compute(iq);
    terms.bos = bos[iq];
    terms.self = self[iq];
    terms.self_correction = correction[iq];
    terms.mean = nu * slope[iq];
    terms.keys = keys(iq, nu);
    terms.key_corrections = 0;
    if (j > 1 && !s->branch) {
      std::vector<double> bare(s->NT);
      key_values(*s, k, iq, c, bare.data(), false);
      double best = -std::numeric_limits<double>::infinity();
      for (int t = 0; t < s->NT; ++t) best = std::max(best, bare[t] + nu * s->tau[t] / j);
      terms.key_corrections = terms.keys - (j - 1) * best;
    }
  }
};

// The bound at nu' for a slice of half width h, over the query points
// `points`, with the allowance: lambda holds on the slice and the piece
// when it is <= 0 (over all the piece's points). `top` receives the best
// points; `terms` (diagnosis) the parts of the bound at the worst point.
double slice_bound(SliceTable& table, double nu, double h, const std::vector<int>& points,
                   std::vector<int>* top = nullptr, SoftmaxVertexTerms* terms = nullptr) {
  const Setup& s = *table.s;
  const Corrections& k = table.k;
  double best = -std::numeric_limits<double>::infinity();
  int worst = -1;
  std::vector<std::pair<double, int>> values;
  if (top) values.reserve(points.size());
  for (const int iq : points) {
    const double v = table.value(iq, nu);
    // NaN would be dropped by max, inf bounds nothing: this point fails
    if (!std::isfinite(v)) return std::numeric_limits<double>::infinity();
    if (v > best) {
      best = v;
      worst = iq;
    }
    if (top) values.push_back({v, iq});
  }
  if (top) {
    const int keep = std::min<int>(kActive, static_cast<int>(values.size()));
    std::partial_sort(values.begin(), values.begin() + keep, values.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    top->clear();
    for (int i = 0; i < keep; ++i) top->push_back(values[i].second);
  }
  // + |nu' + sigma D_ref| h + h maxdev
  const double penalty = std::abs(nu + s.sigma * k.Dref) * h + h * k.maxdev;
  const double R = k.Dmax * (2 + std::abs(table.c) + s.Vmax) + 2 * std::abs(nu) + 1;
  if (terms && worst >= 0) {
    table.parts(worst, nu, *terms);
    terms->penalty = penalty;
    terms->allowance = kRoundingAllowance * R;
    terms->total = best + penalty + kRoundingAllowance * R;
  }
  return best + penalty + kRoundingAllowance * R;
}

// Per (d, sigma) task: its counts, and the deadline every loop checks.
struct Counters {
  long slices = 0, evaluations = 0, cells = 0;
  const Deadline* deadline = nullptr;
  bool cut = false;  // the deadline stopped a candidate
  // per piece index of q_d, the nu' that last held (piece_holds)
  std::vector<double> hints = std::vector<double>(kPiecesQ, std::nan(""));
  // called after every slice (progress lines between units, which take
  // seconds each at n = 16)
  std::function<void()> tick;
  // buffers kept from slice to slice within the unit: the table, and the
  // setup of a slice that confines q_d
  SliceTable* table = nullptr;
  Setup* narrow = nullptr;
  // diagnosis: the terms where a slice last failed
  bool diagnose = false;
  double fail_tref = 0, fail_h = 0;
  SoftmaxVertexTerms fail_terms;
  // true (and cut set) once the deadline has passed
  bool expired() {
    if (deadline && deadline->expired()) cut = true;
    return cut;
  }
};

enum class Slice { kHolds, kSplit, kHopeless };

// Branch mode: the bound at nu' for a slice of half width h over every
// query point below the cells `roots` (the roots of a piece of q_d), by
// branch and bound: a cell whose bound (compute_cell) plus the penalty and
// the allowance is <= 0 is done; otherwise it is split at the next
// coordinate of the order, down to the vertices (the leaves, whose bound
// is the enumeration's at that vertex). Returns the largest leaf bound
// above 0 (when one is found: then `top` receives up to kActive of the
// failing leaves, largest first, and the search stops there) or a value
// <= 0 when every cell is done; +inf when a bound is not finite, the cell
// store is full or the deadline passed (failing is safe).
double branch_bound(SliceTable& table, double nu, double h, const std::vector<int>& roots,
                    std::vector<int>* top, Counters& n) {
  const Setup& s = *table.s;
  const Corrections& k = table.k;
  const double penalty = std::abs(nu + s.sigma * k.Dref) * h + h * k.maxdev;
  const double R = k.Dmax * (2 + std::abs(table.c) + s.Vmax) + 2 * std::abs(nu) + 1;
  const double extra = penalty + kRoundingAllowance * R;
  std::vector<int> stack(roots.rbegin(), roots.rend());
  std::vector<std::pair<double, int>> failing;
  double done_max = -std::numeric_limits<double>::infinity();
  long visited = 0;
  while (!stack.empty()) {
    if (++visited % kCellsPerCheck == 0 && n.expired())
      return std::numeric_limits<double>::infinity();
    const int id = stack.back();
    stack.pop_back();
    ++n.cells;
    // the self correction grows with mu: its own share of the allowance
    const double v =
        table.value(id, nu) + extra + kRoundingAllowance * std::abs(table.correction[id]);
    if (!std::isfinite(v)) return std::numeric_limits<double>::infinity();
    if (v <= 0) {
      done_max = std::max(done_max, v);
      continue;
    }
    if (table.leaf(id)) {
      failing.push_back({v, id});
      if (static_cast<int>(failing.size()) >= kActive) break;
      continue;
    }
    if (static_cast<int>(table.done.size()) + 2 > kMaxCells)
      return std::numeric_limits<double>::infinity();
    const auto [minus, plus] = table.children(id);
    // the half with the larger bound first (found failing sooner)
    const double vm = table.value(minus, nu), vp = table.value(plus, nu);
    if (vm < vp) {
      stack.push_back(minus);
      stack.push_back(plus);
    } else {
      stack.push_back(plus);
      stack.push_back(minus);
    }
  }
  if (failing.empty()) return done_max;
  std::sort(failing.begin(), failing.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  if (top) {
    top->clear();
    for (const auto& f : failing) top->push_back(f.second);
  }
  return failing.front().first;
}

// The bound at nu' over a whole piece: every query point (slice_bound) or,
// in branch mode, the branch and bound over the piece's roots.
double piece_bound(SliceTable& table, double nu, double h, const std::vector<int>& piece,
                   std::vector<int>* top, Counters& n) {
  if (table.s->branch) return branch_bound(table, nu, h, piece, top, n);
  return slice_bound(table, nu, h, piece, top);
}

// Whether lambda holds on the slice [Tref - h, Tref + h] and one piece of
// q_d: a golden-section search over nu' on an active set of the piece's
// query points, confirmed on all of them.
// kHopeless when even without the slice's own penalty (which narrower
// slices shrink) the active set's bound stays above D_max h: splitting
// would not help (a guess that only saves time: failing is always safe).
// `hint`: the nu' that last held on this piece index (NaN: none), tried
// first (neighbouring slices take similar nu'; saves the golden section
// and a pass over the piece when it holds); set to the nu' that held.
Slice piece_holds(SliceTable& table, const std::vector<int>& piece, double h, Counters& n,
                  double& hint) {
  const Corrections& k = table.k;
  const double centre = -table.s->sigma * k.Dref;  // the nu' without a penalty
  const double first = std::isfinite(hint) ? hint : centre;
  std::vector<int> active;
  ++n.evaluations;
  if (piece_bound(table, first, h, piece, &active, n) <= 0) {
    hint = first;
    return Slice::kHolds;
  }
  // branch mode: no failing leaf to start from (the store was full, the
  // deadline passed or a bound was not finite)
  if (active.empty()) return Slice::kHopeless;
  const int rounds = table.s->branch ? kBranchRounds : 3;
  for (int round = 0; round < rounds; ++round) {
    if (n.expired()) return Slice::kHopeless;  // failing is safe
    // the active set's bound, convex in nu', minimized on a bracket
    const auto f = [&](double nu) { return slice_bound(table, nu, h, active); };
    double lo = centre - 2 * k.Dmax, hi = centre + 2 * k.Dmax;
    double x1 = hi - 0.618033988749895 * (hi - lo), x2 = lo + 0.618033988749895 * (hi - lo);
    double f1 = f(x1), f2 = f(x2);
    for (int step = 0; step < kGoldenSteps && f1 > 0 && f2 > 0; ++step) {
      if (f1 < f2) {
        hi = x2;
        x2 = x1;
        f2 = f1;
        x1 = hi - 0.618033988749895 * (hi - lo);
        f1 = f(x1);
      } else {
        lo = x1;
        x1 = x2;
        f1 = f2;
        x2 = lo + 0.618033988749895 * (hi - lo);
        f2 = f(x2);
      }
    }
    const double nu = f1 <= f2 ? x1 : x2;
    if (n.diagnose) {
      n.fail_tref = table.Tref;
      n.fail_h = h;
      // branch mode: at the failing leaves found
      slice_bound(table, nu, h, table.s->branch ? active : piece, nullptr, &n.fail_terms);
    }
    // the active set's bound is below the whole set's: no nu' found works
    if (std::min(f1, f2) > 0) {
      const double without = slice_bound(table, nu, 0.0, active);
      return without > k.Dmax * h ? Slice::kHopeless : Slice::kSplit;
    }
    std::vector<int> top;
    ++n.evaluations;
    if (piece_bound(table, nu, h, piece, &top, n) <= 0) {
      hint = nu;
      return Slice::kHolds;
    }
    for (int iq : top) {
      if (std::find(active.begin(), active.end(), iq) == active.end()) active.push_back(iq);
    }
  }
  return Slice::kSplit;
}

// Whether lambda holds on a slice: on every piece of q_d, each with its own
// nu' (the pieces cover q_d's range, so their bounds together bound the
// slice). T in I confines q_d = tau_s = j T - sum tau_k to
// [j (T_ref - h) - (j - 1), j (T_ref + h) + (j - 1)]: when that is narrower
// than [-1, 1] (j = 1: q_d = T), the pieces of [-1, 1] that meet it are
// tried first, and when one fails, pieces of that range alone.
Slice slice_holds(const Setup& s, int j, double lambda, double Tref, double h, Counters& n) {
  if (n.expired()) return Slice::kHopeless;  // failing is safe
  ++n.slices;
  if (n.tick) n.tick();
  const Setup* use = &s;
  if (s.cd >= 0) {
    const double lo = std::max(-1.0, j * (Tref - h) - (j - 1));
    const double hi = std::min(1.0, j * (Tref + h) + (j - 1));
    if (lo > -1.0 || hi < 1.0) {
      // first the pieces of [-1, 1] that meet [lo, hi] (together they
      // cover it): no new query points
      SliceTable& table = *n.table;
      table.reset(s, j, lambda + s.sigma * Tref, Tref);
      bool held = true;
      for (int p = 0; p < kPiecesQ && held; ++p) {
        if (n.expired()) return Slice::kHopeless;  // failing is safe
        const double a = -1.0 + 2.0 * p / kPiecesQ, b = -1.0 + 2.0 * (p + 1) / kPiecesQ;
        if (b < lo || a > hi) continue;
        held = piece_holds(table, s.pieces[p], h, n, n.hints[p]) == Slice::kHolds;
      }
      if (held) return Slice::kHolds;
      // else equal pieces of [lo, hi], none wider than those of [-1, 1]
      const int count = std::max(1, static_cast<int>(std::ceil((hi - lo) * kPiecesQ / 2)));
      std::vector<double> grid;
      for (int i = 0; i <= count; ++i) grid.push_back(lo + (hi - lo) * i / count);
      // the same (d, sigma) with this grid of q_d (set_queries replaces
      // everything that depends on the query points)
      Setup& narrow = *n.narrow;
      if (narrow.n == 0) {
        narrow = make_setup(s.A, s.M, s.n, s.d, s.sigma, s.drop, s.branch, grid);
      } else {
        set_queries(narrow, grid);
      }
      if (!narrow.finite) return Slice::kHopeless;
      use = &narrow;
    }
  }
  SliceTable& table = *n.table;
  table.reset(*use, j, lambda + s.sigma * Tref, Tref);
  for (std::size_t p = 0; p < use->pieces.size(); ++p) {
    if (n.expired()) return Slice::kHopeless;  // failing is safe
    double spare = std::nan("");
    double& hint = p < n.hints.size() ? n.hints[p] : spare;
    const Slice verdict = piece_holds(table, use->pieces[p], h, n, hint);
    if (verdict != Slice::kHolds) return verdict;
  }
  return Slice::kHolds;
}

// Whether lambda holds for trigger j, (d, sigma): every slice of T's range.
bool lambda_holds(const Setup& s, int j, double lambda, Counters& n) {
  if (!s.finite) return false;
  if (s.cd < 0) {
    // T = (tau_s + (j - 1) tau_key) / j is the same for every input
    const double T = (s.taus[0] + (j - 1) * s.tau[0]) / j;
    return slice_holds(s, j, lambda, T, 0.0, n) == Slice::kHolds;
  }
  // kInitialSlices equal slices to start with (pushed so that the lowest
  // is examined first)
  std::vector<std::pair<double, double>> stack;
  for (int i = kInitialSlices - 1; i >= 0; --i) {
    stack.push_back({-1.0 + 2.0 * i / kInitialSlices, -1.0 + 2.0 * (i + 1) / kInitialSlices});
  }
  while (!stack.empty()) {
    const auto [a, b] = stack.back();
    stack.pop_back();
    const Slice verdict = slice_holds(s, j, lambda, 0.5 * (a + b), 0.5 * (b - a), n);
    if (verdict == Slice::kHolds) continue;
    if (verdict == Slice::kHopeless || b - a <= kMinSliceWidth) return false;
    const double mid = 0.5 * (a + b);
    stack.push_back({mid, b});
    stack.push_back({a, mid});
  }
  return true;
}

// Rows i != j: |M[d,0]| + min(1, (L - 1) exp(max score difference)) V_d,
// the largest over d, in MPFI on the model's entries.
Mpfr other_rows_bound(const Model<Mpfi>& model, const Task& task) {
  const Matrix<Mpfi>& A = model.layers[0][0].A;
  const Matrix<Mpfi>& M = model.layers[0][0].M;
  const int n = task.n, ord = ordinary_flag(n), c0 = kFirstContent, c1 = n - 1;
  // max over the box of s_ik - s_i0 = qt^T A (xt - e_0), query ordinary,
  // key flag fk with content
  Mpfr worst(-1e300);
  for (const int fk : {ord, static_cast<int>(kTriggerFlag)}) {
    Mpfi r = A(ord, fk) - A(ord, kBosFlag);
    for (int c = c0; c < c1; ++c) {
      r += point_interval(magnitude_of(Mpfi(A(c, fk) - A(c, kBosFlag)))) +
           point_interval(magnitude_of(A(ord, c)));
      for (int c2 = c0; c2 < c1; ++c2) r += point_interval(magnitude_of(A(c, c2)));
    }
    worst = std::max(worst, Mpfr(bmp::upper(r)));
  }
  // 1 - a_i0 = S / (1 + S), S = sum_(k >= 1) exp(s_ik - s_i0) <= U = (L - 1) exp(worst),
  // and S / (1 + S) grows with S: 1 - a_i0 <= U / (1 + U) (the upper end
  // of the MPFI quotient with U at its upper end)
  const Mpfr mass = bmp::upper(Mpfi(task.L - 1) * exp_of(point_interval(worst)));
  const Mpfi U = point_interval(mass);
  const Mpfi one_minus = point_interval(Mpfr(bmp::upper(U / (Mpfi(1) + U))));
  Mpfr best(0);
  for (int d = 0; d < n; ++d) {
    Mpfi v = point_interval(std::max(magnitude_of(M(d, ord)), magnitude_of(M(d, kTriggerFlag))));
    for (int c = c0; c < c1; ++c) v += point_interval(magnitude_of(M(d, c)));
    const Mpfi bound = point_interval(magnitude_of(M(d, kBosFlag))) + one_minus * v;
    if (bmp::upper(bound) > best) best = bmp::upper(bound);
  }
  return best;
}

}  // namespace

template <class T>
SoftmaxVertexBound softmax_vertex_bound(const Model<T>& model, const Task& task,
                                        const std::vector<int>& triggers,
                                        const SoftmaxVertexOptions& options) {
  const auto t0 = Clock::now();
  SoftmaxVertexBound out;
  const int n = task.n, C = task.content_dim();
  if (model.attention != AttentionKind::kSoftmax || model.kind != ModelKind::kSingleLayer ||
      model.num_layers() != 1 || model.num_heads() != 1 || model.n != n) {
    out.reason = "not a single-layer single-head softmax model of dimension n";
    return out;
  }
  if (C < 1 || n > kMaxSoftmaxVertexN) {
    out.reason = "content dimension outside 1.." + std::to_string(kMaxSoftmaxVertexN - 3) +
                 " (n <= " + std::to_string(kMaxSoftmaxVertexN) + ", src/limits.h)";
    return out;
  }
  if (options.query_search == SoftmaxQuerySearch::kAuto && n > kMaxSoftmaxVertexAutoN) {
    out.reason = "n > " + std::to_string(kMaxSoftmaxVertexAutoN) +
                 ": the query's branch and bound runs by default up to n = " +
                 std::to_string(kMaxSoftmaxVertexAutoN) + " (src/limits.h)";
    return out;
  }
  const bool branch =
      options.query_search == SoftmaxQuerySearch::kBranch ||
      (options.query_search == SoftmaxQuerySearch::kAuto && C > kMaxEnumeratedContentDim);
  if (!branch && C > kMaxEnumeratedContentDim) {
    out.reason = "more than 2^" + std::to_string(kMaxEnumeratedContentDim - 1) +
                 " query vertices to enumerate";
    return out;
  }
  out.branched = branch;
  if (!(options.lower > 0) || !(options.relative_gap > 0)) {
    out.reason = "no positive lower bound or gap to aim at";
    return out;
  }
  // scores that read no content: one interval box per trigger is exact
  const Matrix<Rational> A_exact = model.template cast<Rational>().layers[0][0].A;
  bool content_free = true;
  for (int c = kFirstContent; c < kFirstContent + C; ++c) {
    for (int k = 0; k < n; ++k)
      content_free = content_free && A_exact(c, k) == 0 && A_exact(k, c) == 0;
  }
  if (content_free) {
    out.reason = "the scores do not depend on the content (one box per trigger is exact)";
    return out;
  }
  if (options.lower < kMinLower) {
    out.reason =
        "the lower bound is below what sums in double with the rounding allowance can "
        "certify";
    return out;
  }
  out.applies = true;
  PrecisionScope scope(128);
  const Mpfr others = other_rows_bound(model.template cast<Mpfi>(), task);
  const Model<double> md = model.template cast<double>();
  const Eigen::MatrixXd A = md.layers[0][0].A, M = md.layers[0][0].M;
  // per (d, sigma) task, per trigger: the smallest lambda certified (inf: none)
  const int pairs = 2 * n, J = static_cast<int>(triggers.size());
  std::vector<std::vector<double>> certified(pairs, std::vector<double>(J, INFINITY));
  // one task per (trigger, d, sigma) unit, trigger by trigger (a deadline
  // then leaves the first triggers capped), each with its own counters
  const long units = static_cast<long>(pairs) * J;
  std::vector<Counters> counters(units);
  for (Counters& c : counters) c.deadline = &options.deadline;
  std::mutex lock;
  ProgressLines progress(options.progress, options.progress_seconds);
  long finished = 0;  // (d, sigma, trigger) units
  const double lower = options.lower, gap = options.relative_gap;
  long slices_done = 0;  // over all units, for the progress lines
  const auto send = [&] {
    progress.maybe_send([&] {
      // at this pace; units of every kind count alike
      const double left = finished > 0 ? progress.elapsed() / finished * (units - finished) : 0;
      return "softmax vertex bound: " + std::to_string(finished) + " of " + std::to_string(units) +
             " (coordinate, sign, trigger) units, " + std::to_string(slices_done) +
             " slices, about " + progress_number(left) + " s more (estimate)";
    });
  };
  for (Counters& c : counters) {
    c.tick = [&] {
      const std::lock_guard<std::mutex> guard(lock);
      ++slices_done;
      send();
    };
  }
  std::vector<SoftmaxVertexUnit> unit_log(units);
  std::vector<char> started(units, 0);
  run_tasks(static_cast<int>(units), std::max(1, options.threads), [&](int unit) {
    Counters& counter = counters[unit];
    counter.diagnose = options.diagnose;
    const int t = unit / pairs, k = unit % pairs;
    if (counter.expired()) return;
    const auto u0 = Clock::now();
    started[unit] = 1;
    SoftmaxVertexUnit& log = unit_log[unit];
    log.trigger = triggers[t];
    log.d = k / 2;
    log.sigma = k % 2 == 0 ? 1.0 : -1.0;
    // about 20 ms at n = 16, against seconds for a candidate
    const Setup s = make_setup(A, M, n, k / 2, k % 2 == 0 ? 1.0 : -1.0, options.drop, branch);
    SliceTable table;
    Setup narrow;
    counter.table = &table;
    counter.narrow = &narrow;
    const auto attempt = [&](double lambda) {
      const auto c0 = Clock::now();
      const long slices0 = counter.slices;
      const bool held = lambda_holds(s, triggers[t], lambda, counter);
      SoftmaxVertexCandidate c;
      c.lambda = lambda;
      c.held = held;
      c.cut = counter.cut;
      c.seconds = std::chrono::duration<double>(Clock::now() - c0).count();
      c.slices = counter.slices - slices0;
      if (!held) {
        c.t_ref = counter.fail_tref;
        c.h = counter.fail_h;
        c.terms = counter.fail_terms;
      }
      log.candidates.push_back(c);
      return held;
    };
    // grow lambda = lower (1 + kFirstFraction gap 2^i) until one holds,
    // then bisect [last failed (or lower), smallest held] down to
    // kResolution gap lower; every lambda that holds is a certificate
    double lo = lower, hi = INFINITY;
    for (int i = 0; i < kGrowSteps && std::isinf(hi); ++i) {
      if (counter.expired()) break;
      const double lambda = lower * (1 + kFirstFraction * gap * std::ldexp(1.0, i));
      if (attempt(lambda)) {
        hi = lambda;
      } else {
        lo = lambda;
      }
    }
    while (!std::isinf(hi) && hi > lower * (1 + gap) && hi - lo > kResolution * gap * lower &&
           !counter.expired()) {
      const double mid = 0.5 * (lo + hi);
      if (attempt(mid)) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    certified[k][t] = hi;
    counter.table = nullptr;
    counter.narrow = nullptr;
    log.seconds = std::chrono::duration<double>(Clock::now() - u0).count();
    const std::lock_guard<std::mutex> guard(lock);
    ++finished;
    send();
  });
  for (long u = 0; u < units; ++u) {
    if (started[u]) out.units.push_back(std::move(unit_log[u]));
  }
  for (const Counters& c : counters) out.deadline_passed = out.deadline_passed || c.cut;
  for (int t = 0; t < J; ++t) {
    double worst = 0;
    for (int k = 0; k < pairs; ++k) worst = std::max(worst, certified[k][t]);
    if (std::isinf(worst)) continue;
    out.caps.push_back({triggers[t], std::max(Mpfr(worst), others)});
  }
  for (const Counters& c : counters) {
    out.slices += c.slices;
    out.evaluations += c.evaluations;
    out.cells += c.cells;
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

template SoftmaxVertexBound softmax_vertex_bound(const Model<double>&, const Task&,
                                                 const std::vector<int>&,
                                                 const SoftmaxVertexOptions&);
template SoftmaxVertexBound softmax_vertex_bound(const Model<Mpfr>&, const Task&,
                                                 const std::vector<int>&,
                                                 const SoftmaxVertexOptions&);
template SoftmaxVertexBound softmax_vertex_bound(const Model<Rational>&, const Task&,
                                                 const std::vector<int>&,
                                                 const SoftmaxVertexOptions&);

}  // namespace sinkcert::theorems::bounds
