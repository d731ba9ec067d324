// SPDX-License-Identifier: MIT
//
// Theorem 3's certificate re-checked by a proof assistant: a self-contained
// Coq 8.16 file (check it with `coqc FILE.v`) about one single-layer ReLU
// model (single-layer or one-layer residual; relu or relu-count-all).
//
// The statement is over R with symbolic content: one real variable c k d per
// content coordinate d in {2..n-2} of a position k >= 1, the model's exact
// rational entries A^h, M^h (Q2R of the file's rationals), relu = Rmax 0:
//   x_k[d]  = c k d at a content coordinate, else the flag of docs/definitions.md,
//             Definitions 1 (e_0 for BOS, e_1 for the trigger j, e_{n-1})
//   s^h_ik  = sum_{p,q<n} x_i[p] A^h[p][q] x_k[q]
//   a^h_ik  = Rmax 0 s^h_ik / max(i, 1)          (relu-count-all: / (i + 1))
//   f_{i,d} = [x_i[d]] + sum_h sum_{k<=i} a^h_ik sum_e M^h[d][e] x_k[e]
//   y_{i,d} = [x_i[d]] + (i = j ? (1/j) sum_{k=1..j} x_k[d] : 0)
// ([x_i[d]] only for a residual model) and theorem3 says: for every trigger
// position j of the convention and every content in [-1, 1],
//   f_{i,d} = y_{i,d} for all i < L, d < n, and a^h_i0 = 0 for i >= 1.
// The proof is by reflection, mirroring theorems/exact/relu_exact_checker.h: a
// checker over Q (`check`) tests that no score reads the content
// (A^h[p][q] = 0 unless p, q are flags, or p = 0 and only BOS sees it), so
// s^h_ik = flag_i^T A^h flag_k is a rational; computes the attention table
// of every (j, i); and tests that every coefficient of
//   f_{i,d} - y_{i,d} = sum_{k<=i} sum_e B_ik[d][e] x_k[e],
//   B_ik[d][e] = sum_h a^h_ik M^h[d][e] - t_ik [d = e]   (t_jk = 1/j, k >= 1)
// vanishes on the content and that the flag part sum B_ik[d][e] flag_k[e]
// is 0. `check_sound` proves once, for any n, L, weights, that check = true
// implies the statement; the file then runs `check` on its weights with
// vm_compute (kernel-checked, ~L^3 n^2 H rational operations; n = L = 16
// takes seconds). Only the standard library's real-number axioms are used,
// and the file prints them (Print Assumptions).
// A weight file's factored heads are written too, with the theorem
// weights_are_the_files_products: A^h = W_Q^T W_K and M^h = W_O W_V exactly.
// A NOT VERIFIED model gets the witness instead: its exact input X (in the
// box, by `in_box`) and the theorem f_{i,d}(X) - y_{i,d}(X) = v, v != 0 (or
// a^h_i0(X) = v != 0), with the same reflective lemmas.
#pragma once

#include <string>

#include "src/model.h"
#include "src/run_info.h"
#include "src/scalar_traits.h"
#include "src/weight_file.h"
#include "theorems/exact/relu_exact_checker.h"

namespace sinkcert::theorems::exact {

// Why `model` cannot be written as a Coq statement ("" when it can): more
// than one layer, or attention other than relu / relu-count-all.
std::string coq_unsupported_reason(const Model<Rational>& model);

// Throws InputError(option, path, expected) unless the file name (after the
// last '/') is a Coq module name followed by ".v": a letter, then letters,
// digits or '_' (coqc refuses other names, e.g. "t-3.v").
void check_coq_file_name(const std::string& path, const std::string& option);

// A Coq rational literal: "0", "(3 # 1)", "(-3 # 4)".
std::string coq_rational(const Rational& r);

struct CoqCertificate {
  std::string text;     // the .v file
  std::string theorem;  // "theorem3" or "witness"
};

// VERIFIED: theorem3 and its proof. NOT VERIFIED: the witness theorem, or,
// with force_theorem (a debug option), theorem3 anyway, whose proof coqc
// then rejects. `cert` must come from check_relu_exact(model, cert.task).
// With `file` (the weight file `model` was made from), its factored heads are
// written too, with the theorem that A^h = W_Q^T W_K and M^h = W_O W_V, so
// the statement is about the file's own entries.
// Throws std::invalid_argument when the model is unsupported or the verdict
// is UNDECIDED without force_theorem.
CoqCertificate coq_certificate(const Model<Rational>& model, const ReluCertificate& cert,
                               const RunInfo& info, bool force_theorem,
                               const WeightFile* file = nullptr);

}  // namespace sinkcert::theorems::exact
