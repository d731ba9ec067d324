// SPDX-License-Identifier: MIT
//
// A certified upper bound on each trigger position's worst case for a
// single-layer, single-head softmax model, from exchangeable keys, a
// Lagrangian for the trigger row's ratio and mean, and vertices with a
// curvature correction.
//
// Trigger j, query q (the trigger's content), ordinary keys x_1..x_{j-1},
// qt = e_1 + q, xt = e_{n-1} + x. Divided by exp(alpha), alpha = qt^T A e_{n-1}
// (a common factor of every weight), the trigger row's weights are
//   BOS exp(y0(q)),  y0 = qt^T A (e_0 - e_{n-1});
//   self exp(ys(q)), ys = qt^T A (qt - e_{n-1});
//   key  exp(u),     u  = b(q) . x,  b(q) = (A^T qt) restricted to the content;
// D = their sum, values v = (M xt)_d (v0 = M[d,0], vs = (M qt)_d), targets
// tau = xt_d (tau_s = qt_d), T = (tau_s + sum_k tau_k) / j, and the signed
// error F = sigma (N / D - T), N = sum of weight * value.
//
// 1. Rows i != j: the query is ordinary, the target 0, and
//      |out_{i,d}| <= |M[d,0]| + (1 - a_i0) max_x |(M xt)_d|,
//      1 - a_i0 <= (L - 1) exp(max over the box of s_ik - s_i0),
//    enclosed in MPFI on the exact model.
// 2. Row j, for each d, sigma and a candidate lambda: F <= lambda iff
//      sum_m w_m (sigma v_m - lambda) - sigma T D <= 0.
//    The mean T couples the keys through T D. On a slice
//    C_I = {X : T(X) in I}, I = [T_ref - h, T_ref + h],
//      -sigma T D <= -sigma T_ref D - sigma (T - T_ref) D_ref + h maxdev,
//    D_ref the middle of D's range over the box and maxdev its half width;
//    and for any nu, nu (T - T_ref) + |nu| h >= 0 on C_I. With
//    c = lambda + sigma T_ref and nu' = nu - sigma D_ref,
//      sup_{C_I} [sum w (sigma v - lambda) - sigma T D]
//        <= sup over all X of Lambda + |nu' + sigma D_ref| h + h maxdev,
//      Lambda = sum_m w_m (sigma v_m - c) + nu' (T - T_ref),
//    which is a sum of one term per key plus terms of q alone.
// 3. sup Lambda by vertices. Key by key: given q and x_d = t (d a content
//    coordinate; for a flag d nothing is singled out), the key's other
//    content enters only through (u, sigma v), which ranges over a
//    zonotope Z (generators (b_l, sigma M[d,l]), l != d); f = e^u (p - c),
//    p = sigma v, has Hessian determinant -e^(2u) < 0, so its maximum over
//    Z is on the boundary: 2 (n - 4) edges, each maximized in closed form
//    (endpoints, and s* = -(P + g_p / g_u) / g_p where e^(u + s g_u) (P + s g_p)
//    is stationary). The key's x_d and the query's q_d take the ends of
//    kPiecesX and kPiecesQ equal pieces of [-1, 1]; the query's other
//    coordinates take +-1. Coordinate-wise convexity: where each variable's
//    second derivative is at least -2 kappa, Lambda + sum kappa (z - mid)^2
//    is convex in each variable alone, so its maximum over a cell is at a
//    corner; hence
//      sup Lambda <= max over the grid points of q of
//          [ h(q) + sum_l kappa_l^self(q) w_l
//            + (j - 1) max over t of (max over the edges of Z + nu' t / j) ]
//        + (j - 1) (kappa_x h_x^2 + sum_l kappa_l^key w_l) + sum_l kappa_l^bos w_l,
//    w_l = 1 for a vertex coordinate, h_q^2 for the piece one (h: half a
//    piece). The kappas bound the negative part of the second derivatives
//    over the whole box (formulas in the source); the self term's are
//    max(0, affine) functions of the other coordinates of q, convex, so the
//    argument stands.
// 4. lambda is certified when every slice I (adaptive bisection of T's
//    range, down to kMinSliceWidth; one slice with h = 0 for a flag d,
//    whose T is constant) and every piece of q_d (the pieces cover its
//    range, so each may take its own nu'; where T in I confines
//    q_d = j T - sum tau_k, as for j = 1, only that range, in pieces no
//    wider) has some nu' (golden-section search: the bound is convex in
//    nu') with bound <= -allowance. The candidates are
//    lower (1 + f relative_gap) for f in kGapFractions: the first
//    certified one is the trigger's cap for (d, sigma); the cap is the
//    largest over (d, sigma) and the rows of step 1.
// Budget: the deadline is checked before every slice and every piece of
// q_d, and between the golden-section rounds; a candidate the deadline cut
// short counts as failed (failing is always safe), so a trigger left with
// a (d, sigma) pair not certified gets no cap.
// Rounding: the vertex sums run in double on the model rounded to nearest;
// the allowance 2^-30 R (R bounds every term in absolute value) covers them
// as in relu_vertex_bound.h, including the zonotope's edges (built by
// sorting generators by angle; a misordering from rounding moves the
// boundary by rounding amounts).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/model.h"
#include "src/scalar_traits.h"
#include "src/task.h"
#include "theorems/bounds/deadline.h"
#include "theorems/bounds/progress_lines.h"
#include "theorems/bounds/relu_vertex_bound.h"

namespace sinkcert::theorems {

struct SoftmaxVertexOptions {
  double lower = 0;            // a certified lower bound on E (the candidates' base)
  double relative_gap = 0.01;  // the gap asked of the whole bound
  int threads = 1;             // (d, sigma) pairs run in parallel; same result on any count
  // nothing is tried after this (the triggers left get no cap)
  Deadline deadline;
  // progress lines every few seconds: (d, sigma, trigger) units done, an
  // estimate of the time left
  ProgressSink progress;
  double progress_seconds = kProgressSeconds;
};

struct SoftmaxVertexBound {
  bool applies = false;
  std::string reason;            // why not, when it does not apply
  std::vector<TriggerCap> caps;  // per trigger certified, in the order asked
  long slices = 0;               // T slices examined
  long evaluations = 0;          // vertex maximizations run
  double seconds = 0;
  bool deadline_passed = false;  // some candidate was cut short or never tried
};

// T = double, Mpfr or Rational (the exact model a weight file denotes).
// Does not throw for a model it does not cover: applies = false with the
// reason (also when no score reads the content: then one interval box per
// trigger is exact already). A trigger whose candidates all fail gets no
// cap.
template <class T>
SoftmaxVertexBound softmax_vertex_bound(const Model<T>& model, const Task& task,
                                        const std::vector<int>& triggers,
                                        const SoftmaxVertexOptions& options);

}  // namespace sinkcert::theorems
