// SPDX-License-Identifier: MIT
//
// A certified upper bound on the worst-case loss of a single-layer,
// single-head ReLU model whose scores have a fixed sign over the whole box,
// from the vertices of the content box and a curvature correction.
//
// Scores: s = x_i^T A x_k with x = flag + content, content in [-1,1]^(n-3).
// Over the box, with q and x the query's and key's contents taken as
// independent (a superset, so it covers a token attending to itself),
//   s in A[fq,fk] +- (sum_c |A[c,fk]| + sum_c |A[fq,c]| + sum_{c,c'} |A[c,c']|).
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
// Coordinate-wise convexity: if g is convex in each variable separately
// (the others fixed), its maximum over a box is at a vertex (move one
// coordinate at a time to the better end). Take
//   g = F + sum_{k,l} kk_l(q) x_kl^2 + sum_l kq_l(q_-l) q_l^2,
//   kk_l(q)    = max(0, -sigma b_l(q) m_l) / j,   b = A^T qt (content l),
//   kq_l(q_-l) = max(0, -lo_l(q_-l)) / (2 j),
// where c_l(q) = sigma (2 A_ll (m . qt) + 2 ((A + A^T) qt)_l m_l) is the
// second derivative of sigma S along q_l (affine in q) and lo_l its minimum
// over q_l in [-1,1] (its value without the q_l term, minus |coefficient|).
// Along x_kl, F curves by 2 sigma b_l(q) m_l / j >= -2 kk_l; along q_l, the
// key and BOS terms are affine in q (scores are linear in q, the values do
// not depend on it), S curves by c_l / j >= -2 kq_l, and every correction
// is a convex function (max(0, affine)) of the other variables times a
// square (a dropped term is affine and needs no correction: kq = 0 when
// the self score is <= 0, kk = 0 when the ordinary one is). So g is
// coordinate-wise convex, F <= g, and at a vertex
// (x^2 = q^2 = 1)
//   max F <= max over q in {-1,1}^(n-3) of
//     [ sigma (B + S)(q) + j sum_l kq_l ] / j
//     + (j - 1) [ max over x in {-1,1}^(n-3) of sigma phi(q, x) / j + sum_l kk_l(q) ],
// the keys being exchangeable given q (each takes its own best vertex).
// A trigger's cap is the larger of row j's bound and the other rows'.
// The vertices are enumerated in double (the model rounded to nearest); the
// result is raised by an allowance for rounding (kRoundingAllowance below)
// and then enclosed in MPFI: CERTIFIED. Work: 2^(2(n-3)) score products per
// (d, sigma), so n <= 16. The enumeration checks the deadline for every
// block of query vertices and coordinate d; past it the bound gives no caps
// (a maximum over part of the vertices bounds nothing) and says so.
#pragma once

#include <string>
#include <vector>

#include "src/model.h"
#include "src/scalar_traits.h"
#include "src/task.h"
#include "theorems/bounds/deadline.h"
#include "theorems/bounds/progress_lines.h"

namespace sinkcert::theorems {

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
  bool deadline_passed = false;  // the enumeration was cut short (then applies = false)
};

// T = double, Mpfr or Rational (the exact model a weight file denotes: the
// sign conditions are decided on it exactly). Does not throw for a model it
// does not cover: applies = false with the reason. Progress lines go to
// `progress` every few seconds.
template <class T>
ReluVertexBound relu_vertex_bound(const Model<T>& model, const Task& task,
                                  const std::vector<int>& triggers, const Deadline& deadline = {},
                                  const ProgressSink& progress = {});

}  // namespace sinkcert::theorems
