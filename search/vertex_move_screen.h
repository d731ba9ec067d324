// SPDX-License-Identifier: MIT
//
// The vertex search's screen: a move's value estimated from the current
// vertex's attention sums instead of a fresh forward pass.
//
// Every move of the vertex search (vertex_search.h) flips a block of
// content entries: positions m in K = first..last, coordinates t in T,
//   x'_m = x_m + delta_m,   delta_{m,t} = -2 C(m-1, t - kFirstContent)
// (single: |K| = |T| = 1; row: |K| = 1; column: |T| = 1). In a
// single-layer model (f(X)_i = sum_h o^h_i) the scores change as
//   s'_im = s_im + [m in K] (x_i^T A) . delta_m + [i in K] delta_i . (A x_m)
//           + [i, m in K] delta_i^T A delta_m,
// so rows i < first of f and of the target are unchanged. Rows i >= first:
//   i in K, or when cheaper: the row recomputed from s'_i. (O(i (n + |T|)),
//     o'_i = sum_{m<=i} a'_im (p_m + [m in K] M delta_m), p_m = M x_m);
//   i > last: only the terms m in K of the attention sum change (O(|K| n)):
//     softmax kinds, u_im = exp(s_im - m_i), Z_i = sum_m u_im [+ exp(-m_i)],
//     R_i = sum_m u_im p_m, o_i = R_i / Z_i:
//       m' = max(m_i, max_K s'_im), g = exp(m_i - m'), u'_m = exp(s'_im - m'),
//       Z'_i = (Z_i - sum_K u_im) g + sum_K u'_m,
//       o'_i = ((R_i - sum_K u_im p_m) g + sum_K u'_m p'_m) / Z'_i
//     (only while sum_K u_im <= Z_i / 2: beyond, the subtraction loses the
//     digits that matter, and the row is recomputed);
//     relu, relu-count-all, sigmoid (a_im = phi(s_im) / divisor_i, o_i = R_i):
//       o'_i = R_i + sum_K (a'_im p'_m - a_im p_m);
// the target changes at the trigger row only: y'_j = y_j + (1/j)
// sum_{m in K, m <= j} delta_m. A single flip costs O(heads L n) and a
// column move O(heads L^2 n) at most, against the forward pass's
// heads (2 L n^2 + 1.5 L^2 n) and its allocations.
//
// The screen never decides a move by these estimates: the vertex search
// accepts a move only on a fresh forward pass (score_error /
// score_bos_mass), as without the screen. It only skips the fresh pass of a
// move that cannot strictly improve the current value v: rows i < first are
// computed by the fresh pass exactly as at the current vertex (the same
// operations on the same operands), so their errors stay <= v (error;
// BOS mass >= v); the rows i >= first are estimated, and when
//   max_{i >= first} e~_i < v - tol     (error)
//   min_{i >= first} b~_i > v + tol     (BOS mass)
// the fresh value cannot beat v, given |e~_i - e_i| <= tol. So the search's
// path, values and witnesses are those of the fresh passes alone
// (tests/search/vertex_move_screen_test.cc checks both: every estimate within
// tol of the fresh pass, and the same ascent with and without the screen).
// A move whose estimate is not finite is not screened: the fresh pass
// decides.
//
// The tolerance bounds the difference of two double evaluations of the same
// row (the fresh pass and the estimate), each within a few units of
//   eps (L + n + n S_A) out_scale
// of the exact value: a score is a dot product of n terms, each at most
// |x_i| |A| |x_k| with |x| <= 1 entrywise, so its rounding is at most about
// n eps S_A, S_A = max_h sum_{t,u} |A_h[t,u]|, and that error enters the
// weights relatively through exp (or linearly through relu and sigmoid,
// whose slopes are at most 1); the sums of at most L + n products add
// (L + n) eps relative to out_scale, a bound on sum_m a_im |p_m| plus the
// target's 1:
//   out_scale = 1 + sum_h max_d sum_t |M_h[d, t]| w,
//   w = 1 (softmax kinds: the weights sum to at most 1),
//   w = 2 max(1, S_A) (relu kinds: sum_m relu(s_im) / divisor_i <= 2 S_A;
//   sigmoid: <= 2);
// and out_scale = 1 for the BOS mass (a weight in [0, 1]). kScreenSlack = 64
// covers the two evaluations' few units each (exp and division round once
// more) several times over; the tests measure the largest ratio
// |e~ - e| / tol on random models (about 1.5e-4; the tests fail above 0.05).
#pragma once

#include <limits>
#include <vector>

#include "search/adversary.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert::search {

// Units of the tolerance (header).
constexpr double kScreenSlack = 64.0;
// Factor on a row's change bound (estimate() with a cutoff): the bound is a
// sum of at most 2 L + 2 nonnegative products, each rounded once, so its
// relative rounding is below (2 L + 2) eps < 2^-40 for L <= kMaxL; 1 + 2^-20
// covers it with room.
constexpr double kBoundRounding = 1.0 + 0x1.0p-20;

class VertexMoveScreen {
 public:
  // Whether the screen applies to `model`: a single-layer model with
  // softmax, softmax-off-by-one, relu, relu-count-all or sigmoid attention
  // (deeper models and the other kinds take a fresh pass for every move).
  static bool applies(const Model<double>& model);
  // The same from a model's description (a weight file's kind, attention
  // and layer count).
  static bool applies(ModelKind kind, AttentionKind attention, int layers);

  // The screen of trigger j for `model` (applies(model) must hold).
  VertexMoveScreen(const Model<double>& model, const Task& task, int trigger,
                   WitnessQuantity quantity);

  // The witness of vertex C exactly as score_error / score_bos_mass give it
  // (a fresh forward pass), without changing the current vertex.
  Witness score(const Matrix<double>& C);
  // Makes the vertex last passed to score() the current one (its fresh
  // pass gives the unchanged rows; the estimates' sums are rebuilt).
  void accept();
  // score(C) and accept().
  Witness reset(const Matrix<double>& C);

  // Estimated value of the rows i >= first after flipping C(m-1, c) of the
  // current vertex for positions m = first..last and c in [col_begin,
  // col_end) (max of the row errors, or min of the non-trigger BOS masses
  // a^h_i0 over heads); *sure is false when an estimate is not finite.
  // With a cutoff (error only), a row whose value provably stays below it
  // (its current value, the tolerance and a bound on its change, see the
  // header) is not computed; its estimated_rows() entry is NaN.
  double estimate(int first, int last, int col_begin, int col_end, bool* sure,
                  double cutoff = std::numeric_limits<double>::quiet_NaN());
  // The move judged against the current value v (header): kWorse (kBetter)
  // when its estimate is worse (better) than v by more than 2 tolerance(),
  // else kUndecided (and when the estimate is not finite).
  enum class Verdict { kWorse, kBetter, kUndecided };
  Verdict judge(int first, int last, int col_begin, int col_end);
  // Makes the move's vertex the current one without a forward pass: the
  // sums are updated as the estimate computes them, and the rows i >= first
  // take their estimates (exact() is false until the next reset/accept).
  void apply(int first, int last, int col_begin, int col_end);
  // Whether the current rows are a fresh pass's; moves applied since.
  bool exact() const { return exact_; }
  int applied() const { return applied_; }
  // The current vertex and its value (max of the row errors, or min of the
  // BOS masses; a fresh pass's when exact()).
  const Matrix<double>& content() const { return C_; }
  double current() const { return current_; }
  double tolerance() const { return tolerance_; }

  // The current row values (a fresh pass's when exact()), and the estimate's rows
  // of the last estimate() (rows k..L-1; earlier rows NaN), for tests.
  const std::vector<double>& fresh_rows() const { return rows_; }
  const std::vector<double>& estimated_rows() const { return estimated_; }

 private:
  struct HeadState {
    Matrix<double> XA;    // L x n, row i = x_i^T A
    Matrix<double> AXt;   // L x n, row m = (A x_m)^T
    Matrix<double> P;     // L x n, row m = (M x_m)^T
    Matrix<double> S;     // L x L, s_ik (k <= i)
    Matrix<double> U;     // L x L: u_ik (softmax kinds) or a_ik (elementwise)
    Vector<double> Z;     // softmax kinds: sum_m u_im [+ exp(-m_i)]; else 1
    Vector<double> mx;    // softmax kinds: m_i
    Matrix<double> R;     // L x n, row i = sum_m U_im p_m
    Vector<double> Pn;    // |p_m|_inf
    Vector<double> Pmax;  // max_{m <= i} |p_m|_inf
  };
  void rebuild();
  void update_norms(HeadState& st);
  void update_current();

  const Model<double>& model_;
  Task task_;
  int trigger_;
  bool bos_;
  bool softmax_;
  double tolerance_ = 0;
  bool exact_ = false;
  int applied_ = 0;
  double current_ = 0;
  // the current vertex (fresh pass) and the pending one (score())
  Matrix<double> C_, X_, Y_;
  Matrix<double> pending_C_, pending_X_, pending_Y_, pending_out_;
  std::vector<Matrix<double>> pending_attention_;  // BOS mass: a_. per head (L x L)
  std::vector<double> rows_, estimated_;
  std::vector<HeadState> heads_;
  // scratch of estimate()
  Matrix<double> out_, delta_, dpn_;
  std::vector<Matrix<double>> dps_;
  Vector<double> vec_;
  std::vector<int> t_idx_;
  std::vector<double> bos_rows_, s_row_, a_row_;
};

}  // namespace sinkcert::search
