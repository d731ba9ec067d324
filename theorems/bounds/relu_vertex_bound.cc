// SPDX-License-Identifier: MIT
//
// The vertex bound of relu_vertex_bound.h: the exact sign conditions, then
// the branch and bound over the query with each key's maximum over its
// zonotope, in double, raised by the rounding allowance and enclosed in
// MPFI.
#include "theorems/bounds/relu_vertex_bound.h"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include "src/double_interval.h"
#include "src/elapsed.h"
#include "theorems/bounds/spectral_norm_bound.h"

namespace sinkcert::theorems::bounds {

namespace {

// Rounding allowance, relative to the size R = 16 R_A R_M + 4 of the
// evaluated expressions with every coefficient and variable replaced by its
// absolute value (R_A = sum |A_rc|, R_M = max_d sum_c |M_dc|; each of the
// cell's terms, Bq and Kx of the header, is at most a few R_A R_M + 1,
// since |qt|, |xt| <= 1 entrywise). Each is built from + - * / and max
// (which adds no rounding): along any path at most 6 n + 40 <= 440
// roundings (n <= 66), plus one for the model's entries rounded to double,
// so its error is at most gamma_441 R < 2^-43 R (Higham's bound for sums of
// products, any summation order). The zonotope's boundary is traced in the
// order of the generators' slopes; two generators whose slopes are misordered
// in double agree to a relative 2^-51, and the traced boundary then runs
// within |delta P| <= 2^-50 |p_l| of the true one at each U (at most once per
// generator), so each edge maximum is off by at most |U| 2^-50 sum |p_l|
// <= 2^-50 R_A R_M. The allowance 2^-30 R leaves a factor 2^12 over both
// and stays far below any gap worth asking for.
constexpr double kRoundingAllowance = 0x1p-30;
// Cells (one query coordinate fixed per level) hold the fixed coordinates'
// signs in one 64-bit word.
constexpr int kMaxContentDim = 63;
// Pieces of a key's own coordinate x_d when its curvature there may be
// negative: the correction kappa h^2 falls with the square of the piece's
// half width h = 1 / kPiecesX (at 8, a 64th of kappa).
constexpr int kPiecesX = 8;
// Cells between two deadline and progress checks.
constexpr int kCellsPerCheck = 256;

// The largest value over q, x in [-1,1]^k of the bilinear function
//   cen + a . q + b . x + q^T C x,
// exactly in rationals, as the smaller of
//   cen + |a|_1 + |b|_1 + sum |C|   and
//   cen + sum_(i in L) |b_i| + sum_(i not in L) (|b_i| + r_i)
//       + |a + sum_(i in L) sgn(b_i) C[., i]|_1,   r_i = sum_l |C[l, i]|,
// L = {i : |b_i| >= r_i}: for i in L the coefficient b_i + C[., i] . q of
// x_i keeps the sign of b_i over the box, so max over x_i of x_i times it
// is sgn(b_i) (b_i + C[., i] . q), affine in q, and those terms join a . q
// before its maximum |.|_1 is taken (the others keep their own maxima). The
// same with the roles of q and x exchanged (C transposed).
Rational bilinear_max(const Rational& cen, const std::vector<Rational>& a,
                      const std::vector<Rational>& b, const Matrix<Rational>& C) {
  const int k = static_cast<int>(a.size());
  Rational crude = cen;
  for (int i = 0; i < k; ++i) {
    crude += bmp::abs(a[i]) + bmp::abs(b[i]);
    for (int l = 0; l < k; ++l) crude += bmp::abs(C(l, i));
  }
  Rational best = crude;
  for (const bool transpose : {false, true}) {
    // x's coefficients bb, q's aa, entry (l, i) of the matrix cc(l, i)
    const std::vector<Rational>& aa = transpose ? b : a;
    const std::vector<Rational>& bb = transpose ? a : b;
    const auto cc = [&](int l, int i) -> const Rational& { return transpose ? C(i, l) : C(l, i); };
    Rational v = cen;
    std::vector<Rational> joined = aa;
    for (int i = 0; i < k; ++i) {
      Rational r(0);
      for (int l = 0; l < k; ++l) r += bmp::abs(cc(l, i));
      if (bmp::abs(bb[i]) >= r) {
        v += bmp::abs(bb[i]);
        const int sg = bb[i] > 0 ? 1 : -1;
        for (int l = 0; l < k; ++l) joined[l] += sg * cc(l, i);
      } else {
        v += bmp::abs(bb[i]) + r;
      }
    }
    for (int l = 0; l < k; ++l) v += bmp::abs(joined[l]);
    best = std::min(best, v);
  }
  return best;
}

// Range of the score (e_fq + q)^T A (e_fk + x) over the box, q and x
// independent: [lo, hi]. With BOS on either side the score is affine in
// the other's content and the range is its centre +- the sum of |slopes|
// (exact); otherwise bilinear_max of the score and of its negative.
struct ScoreRange {
  Rational lo, hi;
};
ScoreRange score_range(const Matrix<Rational>& A, int n, int fq, int fk) {
  const bool q_content = fq != kBosFlag, k_content = fk != kBosFlag;
  const int cd = n - 3;
  std::vector<Rational> a(cd, Rational(0)), b(cd, Rational(0));
  Matrix<Rational> C = Matrix<Rational>::Constant(cd, cd, Rational(0));
  for (int l = 0; l < cd; ++l) {
    const int c = kFirstContent + l;
    if (q_content) a[l] = A(c, fk);
    if (k_content) b[l] = A(fq, c);
    for (int i = 0; i < cd && q_content && k_content; ++i) C(l, i) = A(c, kFirstContent + i);
  }
  ScoreRange r;
  r.hi = bilinear_max(A(fq, fk), a, b, C);
  for (auto& v : a) v = -v;
  for (auto& v : b) v = -v;
  r.lo = -bilinear_max(-A(fq, fk), a, b, Matrix<Rational>(-C));
  return r;
}

// The sign structure of the header: which of the trigger row's terms stay,
// and the largest ReLU score of the other rows (their only key is BOS).
struct SignStructure {
  std::string reason;  // the first condition that fails; empty when all hold
  bool bos = false, ordinary = false, self = false;  // trigger row: score > 0
  Rational bos_row;                                  // r_0 = max(A[0,0], 0)
  Rational ordinary_bos;                             // max(0, A[o,0] + sum_c |A[c,0]|)
};

SignStructure sign_structure(const Matrix<Rational>& A, int n) {
  const int ord = ordinary_flag(n);
  SignStructure out;
  const char* names[] = {"BOS", "ordinary", "trigger"};
  // the trigger row: a trigger key is the query itself
  bool* active[] = {&out.bos, &out.ordinary, &out.self};
  const int flags[] = {kBosFlag, ord, kTriggerFlag};
  for (int k = 0; k < 3; ++k) {
    const ScoreRange r = score_range(A, n, kTriggerFlag, flags[k]);
    *active[k] = r.lo > 0;
    if (!*active[k] && !(r.hi <= 0)) {
      out.reason = std::string("a trigger query's score of ") +
                   (k == 2 ? "itself" : std::string("a ") + names[k] + " key") +
                   " changes sign over the box";
      return out;
    }
  }
  for (int k = 1; k < 3; ++k) {
    const ScoreRange o = score_range(A, n, ord, flags[k]);
    if (!(o.hi <= 0)) {
      out.reason = std::string("an ordinary query's score of a ") + names[k] +
                   " key is not <= 0 over the whole box";
      return out;
    }
  }
  const ScoreRange o = score_range(A, n, ord, kBosFlag);
  out.ordinary_bos = std::max(Rational(0), o.hi);
  out.bos_row = std::max(Rational(0), A(kBosFlag, kBosFlag));
  return out;
}

// The largest value of U P over the zonotope {(U_c, P_c) + sum_l x_l g_l,
// x in [-1,1]^G}: on its boundary (U P has no interior maximum: its
// Hessian's determinant is -1), edge by edge. `sorted` holds the
// generators oriented to u > 0 (or p >= 0 when u = 0) in increasing order
// of slope p / u, with their sums su, sp: the boundary runs from the
// centre - sum g through + 2 g in that order (lower chain) and back through
// - 2 g (upper chain). On an edge from (U, P) along (gu, gp), s in [0, 1],
//   f(s) = (U + s gu)(P + s gp),  stationary at s* = -(U gp + P gu) / (2 gu gp),
// a maximum inside the edge only when gu gp < 0.
struct Generators {
  std::vector<std::array<double, 3>> g;  // (slope, u, p)
  double su = 0, sp = 0;
};
double zonotope_max(const Generators& gens, double Uc, double Pc) {
  double U = Uc - gens.su, P = Pc - gens.sp;
  double best = U * P;
  for (int chain = 0; chain < 2; ++chain) {
    const double sign = chain == 0 ? 2.0 : -2.0;
    for (const auto& g : gens.g) {
      const double gu = sign * g[1], gp = sign * g[2];
      const double curve = gu * gp;
      if (curve < 0) {
        // s* = -(U gp + P gu) / (2 gu gp)
        const double st = -(U * gp + P * gu) / (2 * curve);
        if (st > 0 && st < 1) best = std::max(best, (U + st * gu) * (P + st * gp));
      }
      U += gu;
      P += gp;
      best = std::max(best, U * P);
    }
  }
  return best;
}

// One (output coordinate d, sign sigma) of the trigger row: its constants.
struct Unit {
  int d = 0;
  double sigma = 1;
  int t = -1;  // the content index of d, -1 for a flag
  // per content coordinate l: own_l = sigma (2 A_ll + 2 As_ll) m_l, and the
  // suffix sums over the split order from each depth of |coef_{l,k}|,
  // coef_{l,k} = sigma (2 A_ll m_k + 2 As_kl m_l) (row-major, cd x (cd + 1))
  std::vector<double> own, coef_suffix;
  std::vector<double> mu_suffix;  // sum over the free coordinates of |m_k|
  std::vector<double> dd_suffix;  // sum over the free coordinates of |A[c_k, c_t]|
};

// A cell: the first `depth` coordinates of the split order fixed to +-1
// (bit i set: +1), the others free in [-1, 1]; bq and kx bound the query's
// and one key's terms over it (header): trigger j's row is at most
// (bq + (j - 1) kx) / j there.
struct Cell {
  double bq, kx;
  int unit, depth;
  std::uint64_t bits;
  // trigger j's row bound (bq + (j - 1) kx) / j
  double row(double j) const { return (bq + (j - 1) * kx) / j; }
};

}  // namespace

// E = max over t in [-1, 1] of (1 - t^2)(-p3 t - p2), at t = +-1 (0) or
// where 3 p3 t^2 + 2 p2 t - p3 = 0, t = (-p2 +- sqrt(p2^2 + 3 p3^2)) / (3 p3).
double cubic_chord_gap(double p3, double p2) {
  if (p3 == 0) return std::max(0.0, -p2);
  double best = 0;
  const double root = std::sqrt(p2 * p2 + 3 * p3 * p3);
  for (const double t : {(-p2 + root) / (3 * p3), (-p2 - root) / (3 * p3)})
    if (t > -1 && t < 1) best = std::max(best, (1 - t * t) * (-p3 * t - p2));
  return best;
}

template <class T>
ReluVertexBound relu_vertex_bound(const Model<T>& model, const Task& task,
                                  const std::vector<int>& triggers, const Deadline& deadline,
                                  const ProgressSink& progress_sink, long max_cells) {
  const auto t0 = std::chrono::steady_clock::now();
  ProgressLines progress(progress_sink);
  ReluVertexBound out;
  const int n = task.n, cd = task.content_dim();
  if (model.attention != AttentionKind::kRelu || model.kind != ModelKind::kSingleLayer ||
      model.num_layers() != 1 || model.num_heads() != 1 || model.n != n) {
    out.reason = "not a single-layer single-head ReLU model of dimension n";
    return out;
  }
  if (cd > kMaxContentDim) {
    out.reason = "more than " + std::to_string(kMaxContentDim) + " content coordinates";
    return out;
  }
  // the exact model the file denotes (the signs and the other rows' bound)
  const Model<Rational> exact = model.template cast<Rational>();
  const SignStructure sign = sign_structure(exact.layers[0][0].A, n);
  out.reason = sign.reason;
  if (!out.reason.empty()) return out;
  out.applies = true;
  const Model<double> md = model.template cast<double>();
  const Eigen::MatrixXd& A = md.layers[0][0].A;
  const Eigen::MatrixXd& M = md.layers[0][0].M;
  const Eigen::MatrixXd As = A + A.transpose();
  // R = 16 R_A R_M + 4 (kRoundingAllowance)
  const double RA = A.cwiseAbs().sum(), RM = M.cwiseAbs().rowwise().sum().maxCoeff();
  const double allowance = kRoundingAllowance * (16 * RA * RM + 4);
  const int ord = ordinary_flag(n);
  const auto cc = [](int l) { return kFirstContent + l; };
  // R_k = sum_l |A[c_k, c_l]| + |A[c_k, o]|: a key's score moves by at most
  // R_k |dq_k| with the query's coordinate k. The split order (any order is
  // sound): largest first-order weight R_k + sum_l |As[c_k, c_l]| + |A[c_k, 0]|
  // first.
  std::vector<double> Rk(cd), weight(cd);
  for (int k = 0; k < cd; ++k) {
    Rk[k] = std::abs(A(cc(k), ord));
    weight[k] = std::abs(A(cc(k), kBosFlag));
    for (int l = 0; l < cd; ++l) {
      Rk[k] += std::abs(A(cc(k), cc(l)));
      weight[k] += std::abs(As(cc(k), cc(l)));
    }
    weight[k] += Rk[k];
  }
  std::vector<int> order(cd), pos(cd);
  for (int k = 0; k < cd; ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return weight[a] > weight[b]; });
  for (int i = 0; i < cd; ++i) pos[order[i]] = i;
  // sums over the free coordinates F = order[i..cd) for each depth i:
  //   ek = sum_F R_k,  a0 = sum_F |A[c_k, 0]|,  acc = sum_(F x F) |A[c_k, c_l]|
  std::vector<double> ek_suffix(cd + 1, 0.0), a0_suffix(cd + 1, 0.0), acc_suffix(cd + 1, 0.0);
  for (int i = cd - 1; i >= 0; --i) {
    const int k = order[i];
    ek_suffix[i] = ek_suffix[i + 1] + Rk[k];
    a0_suffix[i] = a0_suffix[i + 1] + std::abs(A(cc(k), kBosFlag));
    double cross = std::abs(A(cc(k), cc(k)));
    for (int i2 = i + 1; i2 < cd; ++i2)
      cross += std::abs(A(cc(k), cc(order[i2]))) + std::abs(A(cc(order[i2]), cc(k)));
    acc_suffix[i] = acc_suffix[i + 1] + cross;
  }
  // Or, by Cauchy-Schwarz (||dq||_2^2 <= |F|, ||x||_2^2 <= n - 3), with the
  // norms certified (spectral_norm_bound.h) and every step rounded up;
  // about half the entrywise sums or less when the content x content
  // entries are noise-like, as on the recipe's models from n = 32 on.
  for (int i = 0; i < cd; ++i) {
    const int f = cd - i;
    Eigen::MatrixXd w(f, cd), wff(f, f);
    double ao = 0;
    for (int r = 0; r < f; ++r) {
      const int k = order[i + r];
      ao = directed::add_up(ao, std::abs(A(cc(k), ord)));
      for (int l = 0; l < cd; ++l) w(r, l) = A(cc(k), cc(l));
      for (int r2 = 0; r2 < f; ++r2) wff(r, r2) = A(cc(k), cc(order[i + r2]));
    }
    // |dq^T A[c_F, c_F] dq| <= |F| ||A[c_F, c_F]||_2
    acc_suffix[i] =
        std::min(acc_suffix[i], directed::mul_up(static_cast<double>(f), spectral_norm_upper(wff)));
    // |dq^T (A[c_F, o] + A[c_F, c] x)| <= sum_F |A[c_k, o]| + sqrt(|F| (n - 3)) ||A[c_F, c]||_2;
    // sqrt is correctly rounded, so its successor is above the exact root
    const double root = directed::succ(std::sqrt(static_cast<double>(f) * cd));
    const double spectral = directed::add_up(ao, directed::mul_up(root, spectral_norm_upper(w)));
    ek_suffix[i] = std::min(ek_suffix[i], spectral);
  }
  std::vector<Unit> units;
  for (int d = 0; d < n; ++d) {
    for (const double sigma : {1.0, -1.0}) {
      Unit u;
      u.d = d;
      u.sigma = sigma;
      u.t = d >= kFirstContent && d < ord ? d - kFirstContent : -1;
      const auto m = M.row(d);
      u.own.resize(cd);
      u.coef_suffix.assign(static_cast<std::size_t>(cd) * (cd + 1), 0.0);
      u.mu_suffix.assign(cd + 1, 0.0);
      u.dd_suffix.assign(cd + 1, 0.0);
      for (int l = 0; l < cd; ++l) {
        // own_l = sigma (2 A_ll m_l + 2 As_ll m_l)
        u.own[l] = sigma * (2 * A(cc(l), cc(l)) * m(cc(l)) + 2 * As(cc(l), cc(l)) * m(cc(l)));
        for (int i = cd - 1; i >= 0; --i) {
          const int k = order[i];
          // coef_{l,k} = sigma (2 A_ll m_k + 2 As_kl m_l)
          const double coef =
              sigma * (2 * A(cc(l), cc(l)) * m(cc(k)) + 2 * As(cc(k), cc(l)) * m(cc(l)));
          u.coef_suffix[l * (cd + 1) + i] = u.coef_suffix[l * (cd + 1) + i + 1] + std::abs(coef);
        }
      }
      for (int i = cd - 1; i >= 0; --i) {
        const int k = order[i];
        u.mu_suffix[i] = u.mu_suffix[i + 1] + std::abs(m(cc(k)));
        if (u.t >= 0) u.dd_suffix[i] = u.dd_suffix[i + 1] + std::abs(A(cc(k), cc(u.t)));
      }
      units.push_back(std::move(u));
    }
  }
  // the bounds (bq, kx) of a cell (header): the fixed coordinates at their
  // signs, the free ones at 0 in q0
  std::vector<double> q0(cd);
  Eigen::VectorXd row(n), col(n);
  Generators gens;
  const auto evaluate = [&](const Unit& u, int depth, std::uint64_t bits, double& bq, double& kx) {
    const double sigma = u.sigma;
    const auto m = M.row(u.d);
    std::fill(q0.begin(), q0.end(), 0.0);
    // row = qt0^T A (b(q0), the key's score coefficients), col = A qt0
    row = A.row(kTriggerFlag).transpose();
    col = A.col(kTriggerFlag);
    double vs0 = m(kTriggerFlag);
    for (int i = 0; i < depth; ++i) {
      const int l = order[i];
      q0[l] = (bits >> i) & 1 ? 1.0 : -1.0;
      row += q0[l] * A.row(cc(l)).transpose();
      col += q0[l] * A.col(cc(l));
      vs0 += q0[l] * m(cc(l));
    }
    // ys0 = qt0^T A qt0
    double ys0 = row(kTriggerFlag);
    for (int i = 0; i < depth; ++i) ys0 += q0[order[i]] * row(cc(order[i]));
    // sigma B(q0) and qt_d at q0 (q0's free coordinates are 0)
    const double bos0 = sign.bos ? sigma * row(kBosFlag) * M(u.d, kBosFlag) : 0.0;
    const double qd0 = u.t >= 0 ? q0[u.t] : u.d == kTriggerFlag ? 1.0 : 0.0;
    // sigma B <= sigma B(q0) + |M[d,0]| sum_F |A[c_k,0]|
    bq = bos0 + (sign.bos ? std::abs(M(u.d, kBosFlag)) * a0_suffix[depth] : 0.0);
    // - sigma qt_d: 1 where q_d is free
    bq += u.t >= 0 && pos[u.t] >= depth ? 1.0 : -sigma * qd0;
    if (sign.self) {
      // ys within ys0 +- es, es = sum_F |grad_l| + sum_(F x F) |Acc|,
      // grad_l = (A qt0 + A^T qt0)_l; sigma vs within sigma vs0 +- mu
      double es = acc_suffix[depth];
      for (int i = depth; i < cd; ++i) es += std::abs(row(cc(order[i])) + col(cc(order[i])));
      const double mu = u.mu_suffix[depth];
      const double ylo = std::max(0.0, ys0 - es), yhi = ys0 + es;
      const double plo = sigma * vs0 - mu, phi = sigma * vs0 + mu;
      // ys vs sigma <= the largest corner (a bilinear function on a rectangle)
      const double corner =
          std::max(std::max(ylo * plo, ylo * phi), std::max(yhi * plo, yhi * phi));
      // or by Taylor's formula at q0, where the linear parts of B, S and the
      // target may cancel: sigma (B + ys vs - qt_d) - its value at q0 is
      //   g . dq + sigma [(gy . dq)(m . dq) + vs0 dq^T Acc dq + (dq^T Acc dq)(m . dq)],
      //   g_k = sigma (M[d,0] A[c_k,0] + vs0 gy_k + ys0 m_k - [k = d]),
      // at most sum_F |g_k| + Gy mu + |vs0| acc + acc mu (Gy = sum_F |gy_k|)
      double lin = 0, Gy = 0;
      for (int i = depth; i < cd; ++i) {
        const int k = order[i];
        const double gy = row(cc(k)) + col(cc(k));
        Gy += std::abs(gy);
        const double bos_slope = sign.bos ? M(u.d, kBosFlag) * A(cc(k), kBosFlag) : 0.0;
        lin += std::abs(sigma * (bos_slope + vs0 * gy + ys0 * m(cc(k)) - (k == u.t ? 1.0 : 0.0)));
      }
      const double acc = acc_suffix[depth];
      const double at_q0 = bos0 + sigma * (ys0 * vs0 - qd0);
      const double taylor = at_q0 + lin + Gy * mu + std::abs(vs0) * acc + acc * mu;
      bq = std::min(bq + corner, taylor);
      for (int i = 0; i < depth; ++i) {
        const int l = order[i];
        // along q_l, sigma S is the cubic p3 t^3 + p2 t^2 + ...: its second
        // derivative c_l(q) = sigma (2 A_ll vs + 2 grad_l m_l) = 6 p3 t + 2 p2,
        // p3 = own_l / 6, p2 = (c_l(q0) - own_l q0_l) / 2 within
        // +- sum_F |coef_{l,k}| / 2 over the cell; the correction is
        // cubic_chord_gap(p3, p2), convex in p2, so largest at an end
        const double grad = row(cc(l)) + col(cc(l));
        const double c0 = sigma * (2 * A(cc(l), cc(l)) * vs0 + 2 * grad * m(cc(l)));
        const double p2 = (c0 - u.own[l] * q0[l]) / 2;
        const double spread = u.coef_suffix[static_cast<std::size_t>(l) * (cd + 1) + depth] / 2;
        const double p3 = u.own[l] / 6;
        bq += std::max(cubic_chord_gap(p3, p2 - spread), cubic_chord_gap(p3, p2 + spread));
      }
    }
    if (!sign.ordinary) {
      // phi = -xt_d
      kx = u.t >= 0 ? 1.0 : (u.d == ord ? -sigma : 0.0);
      return;
    }
    // the key's zonotope in (U, P) = (b . xt, sigma m . xt) over its content
    // but x_d; the query's free coordinates move U by at most ek
    const double ek = ek_suffix[depth];
    gens.g.clear();
    gens.su = gens.sp = 0;
    for (int l = 0; l < cd; ++l) {
      if (l == u.t) continue;
      double gu = row(cc(l)), gp = sigma * m(cc(l));
      if (gu < 0 || (gu == 0 && gp < 0)) {
        gu = -gu;
        gp = -gp;
      }
      const double slope =
          gu == 0 ? (gp > 0 ? std::numeric_limits<double>::infinity() : 0.0) : gp / gu;
      gens.g.push_back({slope, gu, gp});
      gens.su += gu;
      gens.sp += gp;
    }
    std::sort(gens.g.begin(), gens.g.end(),
              [](const auto& a, const auto& b) { return a[0] < b[0]; });
    const double Uc = row(ord), Pc = sigma * m(ord);
    // sigma phi <= (U0 + eps ek) P - sigma xt_d for the better eps = +-1
    const auto key_max = [&](double dU, double dP) {
      return std::max(zonotope_max(gens, Uc + dU + ek, Pc + dP),
                      zonotope_max(gens, Uc + dU - ek, Pc + dP));
    };
    if (u.t < 0) {
      kx = key_max(0, 0) - (u.d == ord ? sigma : 0.0);
      return;
    }
    // x_d = tv at the ends of pieces of half width h; the curvature along
    // x_d is 2 b_d pd >= -2 kappa, kappa = max(0, -b_d(q0) pd) + dd |pd|
    const double bd = row(cc(u.t)), pd = sigma * m(cc(u.t));
    const double kappa = std::max(0.0, -bd * pd) + u.dd_suffix[depth] * std::abs(pd);
    const int pieces = kappa > 0 ? kPiecesX : 1;
    const double h = 1.0 / pieces;
    double best = -std::numeric_limits<double>::infinity();
    for (int i = 0; i <= pieces; ++i) {
      const double tv = -1.0 + 2.0 * i / pieces;
      best = std::max(best, key_max(bd * tv, pd * tv) - sigma * tv);
    }
    // the piece's maximum is at most its ends' plus kappa h^2
    kx = best + kappa * h * h;
  };
  std::vector<Cell> heap;
  // a bound that is not a finite double (entries near double's range) would
  // compare false with every other and drop out of the maxima: the vertex
  // bound then does not apply
  bool overflow = false;
  const auto push = [&](int unit, int depth, std::uint64_t bits) {
    Cell c{0, 0, unit, depth, bits};
    evaluate(units[unit], depth, bits, c.bq, c.kx);
    overflow = overflow || !std::isfinite(c.bq) || !std::isfinite(c.kx);
    heap.push_back(c);
  };
  for (int u = 0; u < static_cast<int>(units.size()); ++u) push(u, 0, 0);
  out.stop = "a query vertex on top for every trigger";
  // per trigger, the largest bound over the frontier at the end of its pass
  std::vector<double> pass_end(triggers.size(), std::numeric_limits<double>::infinity());
  // trigger by trigger, the frontier (carried over) ordered by that
  // trigger's (bq + (j - 1) kx) / j, split until a vertex is on top
  const std::size_t count = triggers.size();
  for (std::size_t t = 0; t < count && !out.deadline_passed && !overflow; ++t) {
    const double j = triggers[t];
    // this trigger's share of the cells left
    const long cell_cap = out.cells + (max_cells - out.cells) / static_cast<long>(count - t);
    const auto below = [j](const Cell& a, const Cell& b) { return a.row(j) < b.row(j); };
    std::make_heap(heap.begin(), heap.end(), below);
    while (!heap.empty()) {
      const Cell top = heap.front();
      // a vertex on top: no other cell's bound is larger for this trigger
      if (top.depth == cd || overflow) break;
      if (out.cells >= cell_cap) {
        out.stop = "the cell limit (" + std::to_string(max_cells) + " over the triggers)";
        break;
      }
      if (out.cells % kCellsPerCheck == 0) {
        if (deadline.expired()) {
          out.deadline_passed = true;
          out.stop = "the deadline";
          break;
        }
        progress.maybe_send([&] {
          return "ReLU vertex bound: trigger " + std::to_string(triggers[t]) + ", " +
                 std::to_string(out.cells) + " query cells split, largest bound " +
                 progress_number(top.row(j));
        });
      }
      std::pop_heap(heap.begin(), heap.end(), below);
      heap.pop_back();
      ++out.cells;
      for (const std::uint64_t side : {std::uint64_t{0}, std::uint64_t{1} << top.depth}) {
        push(top.unit, top.depth + 1, top.bits | side);
        std::push_heap(heap.begin(), heap.end(), below);
      }
    }
    // the heap is ordered for trigger j: its front is the frontier's largest
    if (!heap.empty()) pass_end[t] = heap.front().row(j);
  }
  if (overflow) {
    out.applies = false;
    out.reason = "a bound overflowed double (model entries too large for its arithmetic)";
    out.seconds = seconds_since(t0);
    return out;
  }
  // per trigger, the largest bound over the final frontier, or over the
  // frontier its own pass ended with when that is smaller (a split may
  // raise a bound: the fixed coordinate's E_k joins it; every frontier is
  // sound)
  std::vector<double> best(triggers.size(), -std::numeric_limits<double>::infinity());
  for (const Cell& c : heap)
    for (std::size_t t = 0; t < triggers.size(); ++t)
      best[t] = std::max(best[t], c.row(triggers[t]));
  for (std::size_t t = 0; t < triggers.size(); ++t) best[t] = std::min(best[t], pass_end[t]);
  // the other rows: r_i max_d |M[d,0]|, r_i largest at the first ordinary row
  const Matrix<Rational>& M_exact = exact.layers[0][0].M;
  Rational m0(0);
  for (int d = 0; d < n; ++d) m0 = std::max(m0, Rational(bmp::abs(M_exact(d, kBosFlag))));
  for (std::size_t t = 0; t < triggers.size(); ++t) {
    const int j = triggers[t];
    const int first_ordinary = j == 1 ? 2 : 1;
    Rational r = sign.bos_row;
    // r_i = max(0, A[o,0] + sum_c |A[c,0]|) / i
    if (first_ordinary < task.L) r = std::max(r, Rational(sign.ordinary_bos / first_ordinary));
    const Mpfi other_rows = scalar_cast<Mpfi>(Rational(r * m0));
    // upper = best + allowance, enclosed (the exact error is >= 0 too)
    const Mpfi row_j = Mpfi(std::max(best[t], 0.0)) + Mpfi(allowance);
    out.caps.push_back({j, std::max(Mpfr(bmp::upper(row_j)), Mpfr(bmp::upper(other_rows)))});
  }
  out.seconds = seconds_since(t0);
  return out;
}

template ReluVertexBound relu_vertex_bound(const Model<double>&, const Task&,
                                           const std::vector<int>&, const Deadline&,
                                           const ProgressSink&, long);
template ReluVertexBound relu_vertex_bound(const Model<Mpfr>&, const Task&, const std::vector<int>&,
                                           const Deadline&, const ProgressSink&, long);
template ReluVertexBound relu_vertex_bound(const Model<Rational>&, const Task&,
                                           const std::vector<int>&, const Deadline&,
                                           const ProgressSink&, long);

}  // namespace sinkcert::theorems::bounds
