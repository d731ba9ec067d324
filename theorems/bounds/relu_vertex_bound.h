// SPDX-License-Identifier: MIT
//
// A certified upper bound on the worst-case loss of a single-layer,
// single-head ReLU model whose scores have a fixed sign over the whole box,
// from a branch and bound over the trigger's content (vertices and
// curvature), with each key's exact maximum over a zonotope.
//
// Scores: s = x_i^T A x_k with x = flag + content, content in [-1,1]^(n-3).
// Over the box, with q and x the query's and key's contents taken as
// independent (a superset, so it covers a token attending to itself),
// s = A[fq,fk] + a . q + b . x + q^T C x; its largest value is at most
//   A[fq,fk] + |a|_1 + |b|_1 + sum |C|, and at most
//   A[fq,fk] + sum_(i in L) |b_i| + sum_(i not in L) (|b_i| + r_i)
//            + |a + sum_(i in L) sgn(b_i) C[., i]|_1,
// r_i = sum_l |C[l,i]|, L = {i : |b_i| >= r_i} (x_i's coefficient keeps
// b_i's sign over the box, so its best x_i makes it affine in q), and the
// same with q and x exchanged; its smallest value likewise.
// The bound applies when, exactly (in rationals):
//   - a trigger query's score of each key kind (BOS, ordinary, itself) has
//     one sign over the box: > 0 everywhere (relu(s) = s, the term stays)
//     or <= 0 everywhere (relu(s) = 0, the term drops), and
//   - an ordinary query scores ordinary and trigger keys <= 0 (its score of
//     the BOS key, and the BOS row's A[0,0], may be positive).
// Rows i != j then see only the BOS key: with target 0 (Definitions 1),
//   |f_{i,d} - y_{i,d}| = relu(s_i0) / max(i, 1) |M[d,0]|
//                      <= r_i max_d |M[d,0]|,
//   r_0 = max(A[0,0], 0),   r_i = max(0, A[o,0] + sum_c |A[c,0]|) / i,
// largest at the first ordinary row (i = 1, or 2 when j = 1): computed in
// rationals and enclosed. In row j the signed error in coordinate d is the
// polynomial (sigma = +-1, q the trigger's content, x_1..x_{j-1} the
// ordinary keys' contents, qt = e_1 + q, xt = e_{n-1} + x, m = M[d]):
//   F = (sigma/j) [ B(q) + S(q) + sum_k phi(q, x_k) ],
//   B(q) = (qt^T A e_0) M[d,0],   S(q) = (qt^T A qt)(m . qt) - qt_d,
//   phi(q, x) = (qt^T A xt)(m . xt) - xt_d,
// with B := 0, S := -qt_d or phi := -xt_d for a kind whose score is <= 0.
// Keys. Given q the keys are exchangeable and independent, so
//   max F = max over q of [ sigma (B + S)(q) + (j - 1) K(q) ] / j,
//   K(q) = max over x in [-1,1]^(n-3) of sigma phi(q, x),
// and K is convex in q (a maximum of functions affine in q: the score
// qt^T A xt is linear in q, the value and target do not depend on it).
// For a content d, x_d = t: the key's other content enters sigma phi only
// through (U, P) = (qt^T A xt, sigma m . xt), which ranges over the
// zonotope with generators (b_l(q), sigma m_l), l != d (b = A^T qt);
// sigma phi = U P - sigma t, and U P has Hessian determinant -1, so its
// maximum over the zonotope is on the boundary: the edges, each a
// quadratic in its parameter maximized in closed form. In t, the second
// derivative is 2 b_d(q) sigma m_d >= -2 kappa, so over pieces of half
// width h the maximum is at most the largest end value plus kappa h^2
// (g + kappa (t - t_c)^2 is convex on the piece); kappa = 0 needs only
// t = +-1. A flag d has no x_d.
// Query. Along q_l = t (the others fixed) sigma S is a cubic
// p3 t^3 + p2 t^2 + p1 t + p0: p3 = sigma A_ll m_l is a constant and p2 is
// affine in the other coordinates (its second derivative
// c_l = sigma (2 A_ll (m . qt) + 2 ((A + A^T) qt)_l m_l) = 6 p3 t + 2 p2).
// A cubic exceeds its chord over [-1, 1] by at most
//   E_l = max over t in [-1, 1] of (1 - t^2)(-p3 t - p2),
// a convex function of p2 (a maximum of affine ones), so of the other
// coordinates, and at most max(0, 3 |p3| - p2) (the smallest second
// derivative's correction). B is affine and K convex in t, so they stay
// below their chords, and
//   G_S = sigma (B + S) + sum_(l in S) E_l + (j - 1) K
// satisfies, for a cell N (coordinates S fixed to s in {+-1}, F free in
// [-1, 1]) and any free coordinate k,
//   sup over the cell of G_S <= max over q_k = +-1 of sup G_(S + k)
// (G_S is at most its chord in q_k plus E_k, and the chord is largest at
// an end; the E_l already added are convex in q_k), and
// G_empty = j F. So max F is at most the largest bound over any frontier
// of cells of a tree that splits one coordinate per level, divided by j.
// A cell's bound, with q0 = s on S and 0 on F (|q_l - q0_l| <= 1 on F):
//   bq >= sup sigma (B + S) + sum_S E_l:
//     sigma B <= sigma B(q0) + |M[d,0]| sum_F |A[c_k, 0]|  (B linear in q);
//     qt^T A qt within ys0 +- es, es = sum_F |grad_l(q0)| + acc,
//       sigma m . qt within sigma vs0 +- mu, mu = sum_F |m_l|: their product
//       (the score > 0) at most the rectangle's largest corner;
//     -sigma qt_d <= 1 when d's coordinate is free;
//     or, the smaller, by Taylor's formula at q0 (the linear parts of B, S
//     and the target may cancel): sigma (B + S)(q0) + sum_F |g_k|
//     + Gy mu + |vs0| acc + acc mu, g = its gradient at q0,
//     Gy = sum_F |grad_l(q0)| (the quadratic and cubic remainders);
//     acc >= |dq^T A[c_F, c_F] dq| is the smaller of sum_(F x F) |A_kl| and
//     |F| ||A[c_F, c_F]||_2 (||dq||_2^2 <= |F|; spectral norm certified,
//     spectral_norm_bound.h);
//     E_l at the ends of p2's range, p2(q0) +- sum_F |dc_l / dq_k| / 2;
//   kx >= sup over the cell of K: the score of any key moves by
//     dq^T (A[c_F, o] + A[c_F, c] x), at most ek, the smaller of
//     sum_(k in F) R_k, R_k = sum_l |A[c_k, c_l]| + |A[c_k, o]|, and
//     sum_F |A[c_k, o]| + sqrt(|F| (n - 3)) ||A[c_F, c]||_2 (Cauchy-Schwarz:
//     ||dq||_2 <= sqrt |F|, ||x||_2 <= sqrt(n - 3)), so
//     sigma phi <= (U(q0) + eps ek) P - sigma t for the better eps = +-1,
//     each a zonotope maximum at q0; and b_d by at most
//     dd = sum_(k in F) |A[c_k, c_d]|, so kappa <= max(0, -b_d(q0) pd) + dd |pd|.
// A leaf (F empty) is the value at a query vertex with the exact key
// maximum (up to the pieces' kappa h^2). Best-first, trigger by trigger
// (the frontier carried over): the cell with the largest
// (bq + (j - 1) kx) / j is split next, until that cell is a vertex or
// the trigger's share (equal over the triggers left) of a fixed cell budget
// is used (kMaxCellsSplit in the source: a count, so that MPI ranks agree),
// or the deadline; every frontier is sound, so the caps exist whenever the
// cells' bounds do, whatever stopped the search. A split may raise a
// bound (the new coordinate's E_k joins it), so each trigger keeps the
// smaller of the frontier its own pass ended with and the final one. The
// trigger's cap is the larger of its row's bound (the frontier's largest
// (bq + (j - 1) kx) / j, over d and sigma) and the other rows'. Computed in
// double on the model rounded to nearest, raised by an allowance for
// rounding (kRoundingAllowance in the source) and enclosed in MPFI:
// CERTIFIED. A cell bound that is not a finite double (entries near
// double's range) makes the bound not apply.
// Work per cell: O(n^2) for the query's terms and O(n log n + P n) for a
// key's zonotope (P = 9 ends of x_d's pieces, two shifts), so n <= 66
// (cells hold the fixed signs in 64 bits).
#pragma once

#include <string>
#include <vector>

#include "src/model.h"
#include "src/scalar_traits.h"
#include "src/task.h"
#include "theorems/bounds/deadline.h"
#include "theorems/bounds/progress_lines.h"

namespace sinkcert::theorems::bounds {

// A certified upper bound on one trigger position's worst case
// max_C e(X(j, C)).
struct TriggerCap {
  int trigger = 0;
  Mpfr upper;
};

struct ReluVertexBound {
  bool applies = false;
  std::string reason;            // why not, when it does not apply
  std::vector<TriggerCap> caps;  // per trigger, in the order asked
  double seconds = 0;
  bool deadline_passed = false;  // the caller's deadline stopped the search (caps still valid)
  long cells = 0;                // query cells split
  std::string stop;              // what ended the search over the query
};

// T = double, Mpfr or Rational (the exact model a weight file denotes: the
// sign conditions are decided on it exactly). Does not throw for a model it
// does not cover: applies = false with the reason. Progress lines go to
// `progress` every few seconds.
// Cells the search may split, shared equally by the triggers: about 15 s
// at n = 32 and at n = 64 (7 microseconds a cell, measured on
// relu_n32_s0 and relu_n64_s0), the frontier then holding about as many
// cells, 32 bytes each. A count, not a time, so that every MPI rank (each
// runs the search whole) stops at the same cells and gets the same caps;
// stopping earlier is sound, only looser.
inline constexpr long kMaxCellsSplit = 1L << 21;

// max_cells: the cell budget (kMaxCellsSplit; tests stop the search early
// with a smaller one, to check a frontier of mixed depths).
template <class T>
ReluVertexBound relu_vertex_bound(const Model<T>& model, const Task& task,
                                  const std::vector<int>& triggers, const Deadline& deadline = {},
                                  const ProgressSink& progress = {},
                                  long max_cells = kMaxCellsSplit);

// The largest gap of a cubic p3 t^3 + p2 t^2 + p1 t + p0 above its chord
// over [-1, 1]: max over t in [-1, 1] of (1 - t^2)(-p3 t - p2); for p3 = 0,
// max(0, -p2). Convex in p2 (a maximum of functions affine in p2), and at
// most max(0, 3 |p3| - p2).
double cubic_chord_gap(double p3, double p2);

}  // namespace sinkcert::theorems::bounds
