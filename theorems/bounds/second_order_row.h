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
//   |R| <= max_core sup|V_k| (the same e^D (...) / 2) + sum_out alpha sup rho sup|V_k|.
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
// (2 e_a^2 - 1 in [-1, 1]), and |e_m e^T C_m e| <= sum_ab |C_m,ab|; for the
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

#include <vector>

#include "theorems/bounds/symbolic_form.h"

namespace sinkcert::theorems {

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

}  // namespace sinkcert::theorems
