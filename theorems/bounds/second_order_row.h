// SPDX-License-Identifier: MIT
//
// A softmax layer's output at one query row i, summed over its heads, with
// each head's weights expanded to second order around reference weights,
// so that heads whose weight deviations cancel in the sum (the trigger row
// of the Theorem 2 path models' layer 1: two heads attend uniformly up to
// score deviations of 1e-5 whose effects on the output cancel to 1e-10)
// cost only what they do not cancel.
//
// Per head, for reference weights alpha_k > 0 with sum_k alpha_k = 1 (the
// exact softmax of the score forms' centres c_k), with
//   tau_k = s_k - log alpha_k,   delta_k = tau_k - sum_m alpha_m tau_m,
//   a_k = e^{s_k} / sum_m e^{s_m} = alpha_k e^{delta_k} / sum_m alpha_m e^{delta_m}.
// With e^x = 1 + x + rho(x), rho(x) = e^x - 1 - x >= 0, the values
// W_k = M y_k, What = sum_k alpha_k W_k, V_k = W_k - What (sum_k alpha_k V_k = 0,
// sum_k alpha_k delta_k = 0) and P = sum_k alpha_k rho(delta_k) >= 0:
//   o = sum_k a_k W_k = What + (F + R) / (1 + P),
//   F = sum_k alpha_k delta_k V_k = sum_k alpha_k tau_k V_k,
//   R = sum_k alpha_k rho(delta_k) V_k = sum_k alpha_k (rho(delta_k) - kappa) V_k  (any kappa),
// so   o = What + F + E2,   |E2| = |R - P F| / (1 + P) <= |R| + P |F|,
// with |F| <= sum_k alpha_k sup|delta_k| sup|V_k| and P, R bounded per key
// from the ranges of delta_k (rho is convex, 0 at 0) or, the smaller, from
// the alpha-variance of tau over the keys whose deviations are small (the
// core): sum_core alpha_k delta_k^2 <= sum_k alpha_k (tau_k - c)^2 for any c
// (the alpha-mean minimizes it), c the middle of the core's tau at the point,
// so with W the largest spread of tau over the core (taken at the vertices
// of the query's most-read symbols, where the spread is convex in them) and
// rho(x) <= x^2 e^{max(x, 0)} / 2,
//   P <= e^D ((W/2)^2 sum_core alpha + sum_out alpha reach^2) / 2 + sum_out alpha sup rho,
//   |R| <= max_core sup|V_k| (the same e^D (...) / 2) + sum_out alpha sup rho sup|V_k|,
// or, where smaller, by the covariance form: sum_k alpha_k (rho_k - P) = 0, so for
// any c (the middle of the core's values' hull)
//   R = sum_k alpha_k (rho_k - P)(W_k - c),
//   |R| <= sqrt(S_rho) sqrt(sum_core alpha sup (W_k - c)^2)
//          + sum_out alpha max(sup rho, P) sup|W_k - c|
// (Cauchy-Schwarz over the core; S_rho below), which counts the values by their
// spread rather than by the largest deviation, and rho by its spread about its
// mean rather than by its mean: about 0.6 of the variance form on the Theorem 2
// path models' trigger rows.
// F is a polynomial in the symbols: with y the stream, q = A^T y_i (so
// s_k = q . y_k), ybar = sum_k alpha_k y_k, z_k = y_k - ybar and w row d of M,
//   F_d = sum_k alpha_k (q . z_k)(w . z_k) - sum_k alpha_k log(alpha_k) (w . z_k)
// (q . ybar drops out: sum_k alpha_k V_k = 0). q and z_k are affine in the
// symbols e, so the first sum is cubic; it is summed over the heads
// coefficient by coefficient before it is bounded (what the heads cancel is
// gone before any absolute value is taken). Writing
//   q_e = q0_e + Q_e . e,  z_ke = zeta_ke + Z_ke . e,  w . z_k = omega_k + Omega_k . e,
//   pi_k = sum_e q0_e zeta_ke,  Pi_k = sum_e q0_e Z_ke,
//   phi_km = sum_e Q_em zeta_ke,  Phi_km = sum_e Q_em Z_ke,
//   sum_k alpha_k (q . z_k)(w . z_k) = C + L . e + e^T Qd e + sum_m e_m e^T C_m e,
//   C = sum alpha pi omega,   L = sum alpha (pi Omega + omega Pi + omega phi),
//   Qd = sum alpha ((Pi + phi) Omega^T + omega Phi),   C_m = sum alpha Phi_m Omega^T,
// sums over heads and keys. Over the box (e in [-1, 1]):
//   e^T Qd e = sum_a Qd_aa / 2 + sum_a (Qd_aa / 2)(2 e_a^2 - 1) + sum_{a<b} (Qd_ab + Qd_ba) e_a
//   e_b,
// each term of the last two sums at most its coefficient in absolute value
// (2 e_a^2 - 1 in [-1, 1]): the diagonal split (quadratic_form.h). Each major symbol's
// cubic part is split the same way,
//   e_m e^T C_m e = e_m sum_a C_m,aa / 2 + e_m rest_m,
// the first term linear (it moves into the form's coefficient of e_m), the
// second at most the split's bound; the first major symbols' parts go with
// Qd through vertex_split_bound (one bound per vertex of their signs,
// where the quadratic and cubic coefficients may cancel); the narrowest of
// the crude sums below, the split parts and the joint bound is kept. For the
// symbols m that the query reads least (beyond the first kMajorSymbols)
// the cruder sum_{h,k} alpha |Phi_km|_1 |Omega_k|_1 with
// |Phi_km|_1 <= sum_e |Q_em| |Z_ke|_1. The forms' own remainders r enter
// as |UV - U~V~| <= |U - U~| sup|V| + sup|U~| r_V with
// |U - U~| <= sum_e r_qe (|zeta_ke| + |Z_ke|_1 + r_zke) + r_zke (|q0_e| + |Q_e|_1).
// Rounding: every coefficient is a sum of at most N = 2 (n + H (i + 1)) + 16
// rounded operations on products of at most four factors, so its error is
// at most 2 N u times the sum of the absolute values of the exact
// products; over all coefficients that is 2 N u times the mass
//   sum_{h,k} alpha_k (sum_e (|q0_e| + |Q_e|_1)(|zeta_ke| + |Z_ke|_1))(|omega_k| + |Omega_k|_1),
// which covers every product of the expansion; a sum of absolute values of
// V^2 coefficients is raised by (V^2 + 2) 2u.
#pragma once

#include <limits>
#include <vector>

#include "theorems/bounds/quadratic_form.h"
#include "theorems/bounds/symbolic_form.h"

namespace sinkcert::theorems::bounds {

// The variance form: at every point of the box
//   sum_core alpha_k rho(delta_k) <= e^D S2 / 2,  S2 = (W / 2)^2 A + sum_out alpha_k reach_k^2,
// since rho(x) <= x^2 e^max(x, 0) / 2 and delta_k <= D on the core, and
// sum_k alpha_k delta_k^2 <= sum_k alpha_k (tau_k - c)^2 for every c (the
// alpha-mean of tau minimizes it), with c the middle of the core's tau
// values: |tau_k - c| <= W / 2 on the core, <= reach_k for the others.
// Inputs, upper bounds: W the core's spread of tau, D >= 0 the largest
// upper end of a core delta, A = sum_core alpha_k, and per other key alpha_k
// and reach_k >= max_{m in core} |tau_k - tau_m|. Rounded up.
struct VarianceOutlier {
  double alpha = 0.0, reach = 0.0;
};
double variance_rho_bound(double W, double D, double core_alpha,
                          const std::vector<VarianceOutlier>& outliers);

// The covariance form's first factor, S_rho >= sum_core alpha_k (rho_k - P)^2 at
// every point of the box (P = sum_all alpha_k rho_k, rho_k = rho(delta_k)).
// With A = sum_core alpha, P_c = sum_core alpha rho / A and the core's own
// mean of delta mu = -sum_out alpha delta / A (|mu| <= eps),
//   sum_core alpha (rho - P)^2 = A Var_c(rho) + A (P_c - P)^2,
//   |P_c - P| = |P_c (1 - A) - sum_out alpha rho| <= P_c (1 - A) + sum_out alpha sup rho.
// At a point let the core's delta lie in [mu - a, mu + b], a, b >= 0,
// a + b <= W (W bounds the core's spread of tau, hence of delta, everywhere).
// Then (rho(x) <= x^2 / 2 below 0, x^2 e^x / 2 above)
//   max_core rho <= M(a, b) = max((a + eps)^2 / 2, (b + eps)^2 e^{b + eps} / 2),
//   P_c <= e^D (Var_c(delta) + mu^2) / 2 <= Pc(a, b) = e^D (a b + eps^2) / 2
// (Bhatia-Davis: a variance on [mu - a, mu + b] with mean mu is at most a b),
// and by Bhatia-Davis again (rho in [0, max rho] with mean P_c)
//   Var_c(rho) <= (max rho - P_c) P_c <= phi(M, Pc),  phi(M, p) = max_{0 <= x <= p} (M - x) x.
// phi grows with M and p, which grow with a and b, so its largest value is on
// a + b = W: a = t W, and over t in [t0, t1] M and Pc are at most their values
// with a = t1 W, b = (1 - t0) W and max t (1 - t) on [t0, t1]; kCovarianceSlices
// slices of [0, 1] cover every t. Where the mean of delta sits in its range
// matters: at t = 1/2 the variance is largest and every rho is small, at
// t near 0 or 1 one key's rho is large and the variance small.
//
// The inputs, each an upper bound unless named _lo: W the core's spread of
// delta, D the largest upper end of the core's delta (at least 0), eps a
// bound on |mu|, A's ends, rho_max = max_core sup rho(delta_k), out_rho =
// sum_out alpha_k sup rho(delta_k).
struct CovarianceRhoInputs {
  double W = 0.0, D = 0.0, eps = 0.0, core_alpha_lo = 0.0, core_alpha_up = 0.0;
  double rho_max = std::numeric_limits<double>::infinity(), out_rho = 0.0;
};
// S_rho (+inf when it does not apply). middle_only takes only the slice
// holding t = 1/2 (an UNSOUND variant: it assumes the core's mean of delta
// sits in the middle of its range; the tests show it fails).
double covariance_rho_bound(const CovarianceRhoInputs& in, bool middle_only = false);

// One head of the layer at row i: its entries (row-major n x n, enclosed),
// its query forms q_e = sum_p A_pe y_ip and its score forms s_k, k = 0..i.
struct SecondOrderHead {
  const std::vector<RadiusDouble>* M;
  const std::vector<SymbolicForm>* q;
  const std::vector<SymbolicForm>* s;
};

// Symbols whose cubic terms are bounded coefficient by coefficient (the
// rest by norms): the query's own content is at most 61 of them at n = 64.
constexpr int kMajorSymbols = 16;
// Of those, the ones at whose vertices the scores' spread over the keys is
// taken (2^14 vertices at most, each O(L V) work; the query's own content at
// n = 16 is 13 symbols), when the query reads them at least kVertexShare
// times the symbol it reads most (weaker ones stay in the remainder).
constexpr int kVertexSymbols = 14;
constexpr double kVertexShare = 1e-3;

// The forms of sum_h o^h_{i,d}, d = 0..n-1, by the expansion of the header,
// over the stream y (forms, rows x n, row-major); a form with r = +inf
// where it was not computed: when its cheap parts alone are at least
// `skip_at_least[d]` (an enclosure already known is that narrow), or when
// the expansion does not apply (a non-finite centre or deviation).
// drop_second_order leaves out E2 (an UNSOUND variant the tests use to show
// that they catch a missing term).
std::vector<SymbolicForm> second_order_row(const SymbolicArithmetic& sa, int n, int i,
                                           const std::vector<SymbolicForm>& y,
                                           const std::vector<SecondOrderHead>& heads,
                                           const std::vector<double>& skip_at_least,
                                           bool drop_second_order = false);

}  // namespace sinkcert::theorems::bounds
