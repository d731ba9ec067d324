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
//   - a trigger query scores every key (BOS, ordinary, itself) > 0, and
//   - an ordinary query scores every key <= 0, and A[0,0] <= 0 (BOS row).
// Then every row but the trigger row j has attention 0, output 0 and error
// 0, and in row j relu(s) = s, so the signed error in coordinate d is the
// polynomial (sigma = +-1, q the trigger's content, x_1..x_{j-1} the
// ordinary keys' contents, qt = e_1 + q, xt = e_{n-1} + x, m = M[d]):
//   F = (sigma/j) [ B(q) + S(q) + sum_k phi(q, x_k) ],
//   B(q) = (qt^T A e_0) M[d,0],   S(q) = (qt^T A qt)(m . qt) - qt_d,
//   phi(q, x) = (qt^T A xt)(m . xt) - xt_d.
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
// square. So g is coordinate-wise convex, F <= g, and at a vertex
// (x^2 = q^2 = 1)
//   max F <= max over q in {-1,1}^(n-3) of
//     [ sigma (B + S)(q) + j sum_l kq_l ] / j
//     + (j - 1) [ max over x in {-1,1}^(n-3) of sigma phi(q, x) / j + sum_l kk_l(q) ],
// the keys being exchangeable given q (each takes its own best vertex).
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
