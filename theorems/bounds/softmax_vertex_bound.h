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
//      1 - a_i0 = S / (1 + S) <= U / (1 + U),  S = sum_(k >= 1) e^(s_ik - s_i0),
//      U = (L - 1) exp(max over the box of s_ik - s_i0) >= S (S / (1 + S) grows with S),
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
//    Z is on the boundary, and since f grows with p at every u, on the
//    upper chain of the boundary: n - 4 edges (those that add -2 g, g in
//    order of angle), each maximized in closed form (endpoints, and
//    s* = -(P + g_p / g_u) / g_p where e^(u + s g_u) (P + s g_p) is
//    stationary). The key's x_d and the query's q_d take the ends of
//    kPiecesX and kPiecesQ equal pieces of [-1, 1]; the query's other
//    coordinates take +-1. Coordinate-wise convexity: on a cell of
//    half width h_l in q_l, a function whose second derivative in q_l is
//    at least -2 kappa is at most its larger end value plus kappa h_l^2.
//    The kappas are weight-aware: each term's is its own weight at the
//    grid point times a factor, so it folds into the term.
//    Keys: u = b(q) . x is linear in q_l with slope r_l = sum_k A[c_l,c_k]
//    x_k, |r_l| <= R_l; e^u (p - c) has negative curvature
//    e^u r_l^2 (c - p)_+ and e^u varies by at most e^(2 h_l R_l) over the
//    cell, so reducing q's coordinates to their ends one at a time (each
//    correction is a positive multiple of e^u: convex in the coordinates
//    left) turns the key term at the grid point into
//      e^u (p - c + K_q (c - p)_+) = e^u max(p - c, (1 - K_q)(p - c)),
//      K_q = sum_l 0.5 h_l^2 e^(2 h_l R_l) R_l^2   (must be < 1),
//    whose maximum over the key's box is max(S, (1 - K_q) S), S that of
//    e^u (p - c). BOS: y0 = const + beta . q, the same argument gives
//    e^y0 (sigma v0 - c) (1 - K_b) where sigma v0 < c,
//      K_b = sum_l 0.5 h_l^2 e^(2 h_l |beta_l|) beta_l^2.
//    Key coordinate x_d (pieces of half width h_x), at a grid point q:
//    each branch alpha e^u (p - c) (alpha = 1, 1 - K_q) has negative
//    curvature in t = x_d at most alpha e^u (b_d^2 Pneg + 2 |b_d m_d|),
//    Pneg >= (c - p)_+ over the box, b_d = b_d(q) exact, so the piece's
//    maximum is at most its ends' with c lowered by
//      K_t(q) = 0.5 h_x^2 e^(2 h_x |b_d(q)|) (b_d(q)^2 Pneg + 2 |b_d(q) m_d|).
//    Self: ys is quadratic in q; its correction stays
//      0.5 e^(max ys) sum_l w_l [P_l (c - rest_l + |m_l|)_+
//                                + N_l (rest_l + |m_l| - c)_+ + 2 Y_l |m_l|],
//    P_l = (Y_l^2 + 2 A_ll)_+, N_l = (-2 A_ll)_+, Y_l >= |dys/dq_l| over
//    the box, rest_l = sigma vs without q_l's part: max(0, affine)
//    functions of q's other coordinates, convex, so the reduction stands.
//    Hence
//      sup Lambda <= max over the grid points q of
//          [ h(q) (BOS factor) + self correction(q)
//            + (j - 1) max over t of (max(S_t, (1 - K_q) S_t) + nu' t / j) ],
//    S_t the edges' maximum with c - K_t(q) in place of c, w_l = h_l^2.
// 3b. sup Lambda by branch and bound over the query (beyond n = 16, where
//    the 2^(n - 4) vertices are too many; or when asked). q_d keeps its
//    pieces; the other coordinates are searched in a fixed order (by their
//    first-order share of the bound at the root, a heuristic: any order is
//    sound). A cell N = (S, s) fixes the coordinates S (q_d and the first
//    ones of the order) to s in {+-1} and leaves F, the rest, free in
//    [-1, 1]. G_S is Lambda with step 3's corrections for the coordinates
//    of S only (K_q(S) = sum over S of K_q's terms, likewise K_b and the
//    self correction); G_empty = Lambda. Claim: for any cell and any
//    coordinate k in F,
//      sup_(q_F) G_S(s, q_F) <= max over q_k = +-1 of sup G_(S + k),
//    which is step 3's reduction of one coordinate with the others held
//    fixed (anywhere in the box: every bound it uses, R_k, beta_k and the
//    self term's box-wide factors, holds on the whole box, and the
//    corrections already added are positive multiples of e^u, of e^y0 or
//    max(0, affine): convex in q_k). By induction over the tree, sup Lambda
//    is at most the largest bound B(N) >= sup_(q_F) G_S(s, q_F) over a
//    frontier of cells, and lambda holds when every frontier cell has
//    B(N) + penalty + allowance <= 0. B(N): q0 = s on S and 0 on F,
//    every |q_l - q0_l| <= 1 on F, and
//      y0 - y0(q0) = sum_F beta_l (q_l - q0_l):        |.| <= eb = sum_F |beta_l|;
//      ys - ys(q0) = grad . dq + dq^T Acc dq (ys quadratic, exact):
//                                 |.| <= es = sum_F |grad_l(q0)| + sum_(F x F) |Acc|;
//      sigma vs - sigma vs(q0):   |.| <= mu = sum_F |m_l|;
//      u - u(q0) = (Acc^T dq) . x: |.| <= ek = sum_(k in F) R_k  (|x_l| <= 1);
//      b_d - b_d(q0):             |.| <= dd = sum_(k in F) |Acc_(k,cd)|.
//    With up(y, e) = y e^e for y >= 0 and y e^-e for y < 0 (increasing in
//    y), e^z y <= e^z0 up(Y, e) when |z - z0| <= e and y <= Y. So
//      BOS  <= up(e^y0(q0) (sigma v0 - c) (1 - K_b(S) where sigma v0 < c), eb),
//      self <= e^ys(q0) up(sigma vs(q0) + mu - c, es),
//    the self correction over S takes rest_l within +-mu, and each key at
//    x_d = t: step 3's S_t at q0 with K_t from |b_d(q0)| + dd (K_t grows
//    with |b_d|), then max(S_t, (1 - K_q(S)) S_t), then up(., ek) (up is
//    increasing, so it commutes with the maximum over the key's content).
//    A cell whose bound fails is split at its first free coordinate into
//    q_k = -1 and +1; a leaf (F empty) has eb = es = mu = ek = dd = 0 and
//    is step 3's bound at that vertex. The first failing leaves (up to 96)
//    feed the golden-section search over nu' as the failing query points
//    do in step 4, and the search is confirmed by a new branch and bound.
//    Cells are kept per slice (at most 2^19; a search that needs more
//    fails, which is safe).
// 4. lambda is certified when every slice I (adaptive bisection of T's
//    range, down to kMinSliceWidth; one slice with h = 0 for a flag d,
//    whose T is constant) and every piece of q_d (the pieces cover its
//    range, so each may take its own nu'; where T in I confines
//    q_d = j T - sum tau_k, as for j = 1, the pieces that meet that
//    range, or when one of them fails, that range alone in pieces no
//    wider) has some nu' (golden-section search: the bound is convex in
//    nu') with bound <= -allowance. Per (trigger, d, sigma) the candidates
//    are lower (1 + gap 2^i / 2), i = 0, 1, ..., until one holds; when
//    that one is above lower (1 + gap), a bisection between the last that
//    failed and the smallest that held, until one at or below
//    lower (1 + gap) holds or they are gap / 8 relative to lower apart (a
//    candidate costs seconds at n = 16: none below what the asked gap
//    needs). Every lambda that holds is a certificate; the pair's value
//    is the smallest. The trigger's cap
//    is the largest over its (d, sigma) pairs and the rows of step 1; a
//    pair with no lambda certified leaves its trigger uncapped. The
//    (trigger, d, sigma) units run on options.threads threads, trigger by
//    trigger; each unit's result depends only on the model (and the
//    deadline), so the caps do not depend on the count.
// Cost: per slice, each query point's terms that do not depend on nu' (its
// keys' S_t above all) are computed once, when a piece of q_d first asks
// for it; the golden section then costs NT operations per point.
// Budget: the deadline is checked before every unit, every candidate,
// every slice and every piece of q_d, and between the golden-section
// rounds; a candidate the deadline cut short counts as failed (failing is
// always safe), so a trigger left with a (d, sigma) pair not certified
// gets no cap. Progress lines come after units and slices.
// Rounding: the vertex sums run in double on the model rounded to nearest;
// the allowance 2^-30 R (R bounds every term in absolute value) covers them
// as in relu_vertex_bound.h, including the zonotope's edges (built by
// sorting generators by angle; a misordering from rounding moves the
// boundary by rounding amounts). A cell's spans are sums of at most
// (n - 3)^2 + n < 2^13 terms (gamma_k < 2^-40), its terms stay within the
// box's maxima that R bounds (y0(q0) + eb <= max y0, likewise ys and u),
// and its self correction, which grows with mu, adds 2^-30 of itself.
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

namespace sinkcert::theorems::bounds {

// Testing only: corrections a run leaves out (the bound is then unsound;
// the tests show each omission certifying a false cap on a model built for
// it).
enum SoftmaxVertexDrop : unsigned {
  kDropKeyQuery = 1,     // the keys' query-coordinate factor K_q
  kDropKeyContent = 2,   // the keys' x_d-piece shift K_t
  kDropBos = 4,          // the BOS factor K_b
  kDropSelf = 8,         // the self term's corrections
  kDropFirstOrder = 16,  // branch and bound: a cell's spans over its free coordinates
};

// How sup Lambda is bounded over the query (step 3): by its vertices, or by
// branch and bound over the query box (step 3b); kAuto enumerates up to
// content dimension 13 (n = 16), branches beyond up to
// kMaxSoftmaxVertexAutoN (src/limits.h) and is not applicable above.
enum class SoftmaxQuerySearch { kAuto, kEnumerate, kBranch };

struct SoftmaxVertexOptions {
  double lower = 0;            // a certified lower bound on E (the candidates' base)
  double relative_gap = 0.01;  // the gap asked of the whole bound
  int threads = 1;  // (trigger, d, sigma) units run in parallel; same result on any count
  // nothing is tried after this (the triggers left get no cap)
  Deadline deadline;
  // progress lines every few seconds: (d, sigma, trigger) units done, an
  // estimate of the time left
  ProgressSink progress;
  double progress_seconds = kProgressSeconds;
  unsigned drop = 0;  // testing only: SoftmaxVertexDrop flags (unsound when set)
  SoftmaxQuerySearch query_search = SoftmaxQuerySearch::kAuto;
  // diagnosis: fill each failed candidate's terms (a pass over the query
  // points more per failed slice)
  bool diagnose = false;
};

// For diagnosis (nothing prints these): the bound's terms at the query
// point where a candidate failed, at the best nu' found. The bound held
// when their sum (`total`) is <= 0.
struct SoftmaxVertexTerms {
  double bos = 0;              // e^y0 (sigma v0 - c), with K_b
  double self = 0;             // e^ys (sigma vs - c)
  double self_correction = 0;  // the self term's curvature correction
  double keys = 0;             // (j - 1) times the best key, with K_q and K_t
  double key_corrections = 0;  // how much of `keys` K_q and K_t add
  double mean = 0;             // nu' (tau_s / j - T_ref)
  double penalty = 0;          // |nu' + sigma D_ref| h + h maxdev
  double allowance = 0;        // the rounding allowance
  double total = 0;
};

struct SoftmaxVertexCandidate {
  double lambda = 0;
  bool held = false;
  bool cut = false;  // the deadline stopped it
  double seconds = 0;
  long slices = 0;
  // when it failed: the slice [t_ref - h, t_ref + h] given up on, and the
  // terms there
  double t_ref = 0, h = 0;
  SoftmaxVertexTerms terms;
};

// One (trigger, d, sigma) unit, in the order the candidates were tried.
struct SoftmaxVertexUnit {
  int trigger = 0, d = 0;
  double sigma = 1;
  double seconds = 0;
  std::vector<SoftmaxVertexCandidate> candidates;
};

struct SoftmaxVertexBound {
  bool applies = false;
  std::string reason;            // why not, when it does not apply
  std::vector<TriggerCap> caps;  // per trigger certified, in the order asked
  long slices = 0;               // T slices examined
  long evaluations = 0;          // vertex maximizations run
  long cells = 0;                // branch and bound: query cells examined
  bool branched = false;         // the query searched by branch and bound (step 3b)
  double seconds = 0;
  bool deadline_passed = false;          // some candidate was cut short or never tried
  std::vector<SoftmaxVertexUnit> units;  // the units started, for diagnosis
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

}  // namespace sinkcert::theorems::bounds
