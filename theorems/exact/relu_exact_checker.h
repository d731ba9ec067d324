// SPDX-License-Identifier: MIT
//
// Theorem 3, checked exactly: a single-layer ReLU-attention model solves the
// task T(n, L) with zero l_inf error over the whole content box and puts zero
// attention on BOS, proved in exact rational arithmetic (GMP mpq).
//
// Hypothesis checked first (else NOT APPLICABLE, never VERIFIED from samples):
// every head's scores depend on the flags only. With C = {2..n-2} the content
// coordinates and x_i = f_i + P c_i (f_i = e_0, e_1 or e_{n-1}), this holds iff
//   A[c, q] = 0 for c in C, every q    (content of the query)
//   A[p, c] = 0 for c in C, p != 0     (content of the key; the BOS query
//                                       x_0 = e_0 only ever sees x_0 itself)
// Then s^h_ik = A^h[flag(i), flag(k)] and the attention a^h_ik is a fixed
// rational for each trigger position j. Output and target are linear in X:
//   e_i = f(X)_i - y_i = sum_k B_ik x_k,   B_ik = sum_h a^h_ik M^h - t_ik I,
//   t_jk = 1/j for k = 1..j, t_ik = 0 otherwise
// (a one-layer residual model has the same error: x_i cancels in f - y).
// Splitting x_k = f_k + P c_k:
//   e_i = const_i + sum_{k>=1} B_ik[:, C] c_k,   const_i = sum_k B_ik f_k,
// so e vanishes on the box (which has interior) iff const_i = 0 for all i and
// B_ik[:, C] = 0 for all i, k >= 1. The second test is cheap: the tuples
//   g = (alpha_1..alpha_H, tau) with sum_h alpha_h M^h[:, C] - tau I[:, C] = 0
// form the kernel of one n(n-3) x (H+1) matrix, reduced to row echelon form
// once; each (i, k) is then a membership test R g = 0 on its tuple
// g_ik = (a^1_ik, .., a^H_ik, t_ik). The exact worst case over the box is at
// a vertex:
//   max_box |e_{i,d}| = |const_{i,d}| + sum_{k>=1, c in C} |B_ik[d, c]|,
// computed by grouping equal tuples of a row (scores take at most three
// values per head, so a row has at most a few distinct tuples).
// BOS attention: a^h_i0 = 0 for every head, trigger j and position i >= 1
// (a superset of the positions where docs/definitions.md, Definitions 3 measures BOS
// mass).
// Cost: O(H L^3) rational operations for the attention rows and tuples plus
// O(H n^2) per distinct failing tuple; never a forward pass per content point.
//
// Several layers (a residual model, x^(l+1)_i = x^(l)_i + sum_h M^{l,h} o,
// target y_i = x_i, y_j = x_j + (1/j) sum_{k=1..j} x_k). Conditions, else
// NOT APPLICABLE naming the layer, head and entry:
//   every layer's A^{l,h} satisfies the conditions above, and
//   M^{l,h}[f, :] = 0 for every flag f in {0, 1, n-1} and every layer l but
//   the last (no head writes into a flag that a later score reads; the last
//   layer must write the flags, the target changes them at j).
// Then by induction on l: the flags of x^(l)_i are those of x_i (so x^(l)_i
// [0] = 0 for i >= 1), the content rows of x^(l)_i are affine in the input
// content c, and x^(l)_0 is a constant (row 0 sees only itself). So every
// score s^{l,h}_ik = x_i^T A x_k is the constant cst_i^T A cst_k (cst = the
// token at c = 0): A[C, :] = 0 kills the query's content, A[f, C] = 0 for
// f != 0 the key's content at i >= 1, and at i = 0 the key is x_0 itself.
// The attention is one rational matrix per (j, l, h), and each layer maps
// affine functions of c to affine functions of c:
//   x^(l+1)_i = x^(l)_i + sum_h M^{l,h} sum_{k<=i} a^{l,h}_ik x^(l)_k,
// propagated exactly as (constant, coefficient matrix n x (i (n-3))) per
// position. The error e_i = x^(last)_i - y_i is affine, and
//   max_box |e_{i,d}| = |cst_{i,d}| + sum_{k, c} |coef_{i,d,(k,c)}|,
// attained at the vertex c_k[c] = sign(cst) sign(coef) (the witness).
// Cost per trigger: O(layers H (L^3 n^2 + L^2 n^3)) rational operations in
// the worst case (dense M); zero entries are skipped, so sparse models such
// as the constructions cost far less.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/evidence.h"
#include "src/model.h"
#include "src/run_info.h"
#include "src/scalar_traits.h"
#include "src/task.h"

namespace sinkcert::theorems::exact {

struct ReluTriggerDetail {
  int trigger = 0;
  Verdict verdict = Verdict::kUndecided;
  Rational max_abs_error;  // exact max over the box of max_{i,d} |f(X) - y|
  bool bos_attention_zero = false;
};

// What a NOT VERIFIED verdict exhibits: an exact input and the exact value
// that breaks the claim, re-evaluated by an independent forward<Rational>.
struct ReluWitness {
  enum class Kind { kError, kBosAttention };
  Kind kind = Kind::kError;
  int trigger = 0;      // j
  int position = 0;     // i
  int coordinate = -1;  // d (kError)
  int head = -1;        // h (kBosAttention)
  int layer = 0;        // l (kBosAttention)
  Matrix<Rational> X;   // L x n, content at a vertex of the box
  Rational value;       // predicted: f(X)_{i,d} - y_{i,d}, or a^h_i0
  Rational recomputed;  // the same quantity from forward<Rational>(model, X)
};

struct ReluCertificate {
  Verdict verdict = Verdict::kUndecided;
  Evidence evidence = Evidence::exact();
  std::string reason;
  std::string model_summary;  // e.g. "single-layer, 1 head, relu"
  Task task;
  std::vector<ReluTriggerDetail> per_trigger;
  Rational margin;  // exact max |error| over the box and triggers (0 when VERIFIED)
  std::optional<ReluWitness> witness;
  double seconds = 0.0;
};

// About how many exact rational operations check_relu_exact does at most, for
// the command line's limit: H L^3 for one layer (the tuple argument); for
// several layers, dense M, per trigger and head, L^3 n^2 / 6 for the mixing
// and L^2 n^3 / 2 for M, weighted 5x (each costs about 5 of the one-layer
// count's operations): 5 layers H (L - 1) (L^3 n^2 / 6 + L^2 n^3 / 2).
double relu_exact_work(int layers, int heads, int n, int L);

// Called after each trigger position: (done, total).
using ReluProgress = std::function<void(int, int)>;

// Throws std::invalid_argument if the task is invalid, has no trigger
// position (L = 2 under reference-code) or model.n != task.n.
ReluCertificate check_relu_exact(const Model<Rational>& model, const Task& task,
                                 const ReluProgress& progress = {});

// "p/q" (always with a denominator, e.g. "0/1").
std::string rational_string(const Rational& r);
// {"exact": "p/q", "approx": double, "evidence": "EXACT"}.
nlohmann::json rational_json(const Rational& r);

nlohmann::json to_json(const ReluCertificate& cert, const RunInfo& info);
// Per-trigger lines, the witness if any, and a last line with the verdict,
// margin, precision ("exact") and evidence level.
std::string summary_text(const ReluCertificate& cert);

}  // namespace sinkcert::theorems::exact
