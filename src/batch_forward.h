// SPDX-License-Identifier: MIT
//
// The forward pass of a single-layer softmax model (any number of heads) on a
// batch of inputs X_1 .. X_B (each L x n), in double, for throughput. Same
// function as forward<double> (forward.h, model.h):
//   s^h_ik = x_i^T A_h x_k                        (k <= i, causal)
//   a^h_ik = exp(s^h_ik - m_i) / sum_{t<=i} exp(s^h_it - m_i),  m_i = max_{t<=i} s^h_it
//   f_i    = sum_h M_h sum_{k<=i} a^h_ik x_k
// but the batch is stacked and the products with A_h and M_h are two large
// matrix products over the whole stack; the per-sequence scores, a
// row-max-shifted softmax with a vectorized exp, and the weighted sums run in
// chunks of sequences (src/internal/batch_kernel.h), split over threads. On
// x86-64 with AVX2 and FMA (checked at run time) an AVX2/FMA build of the
// kernel runs, else the baseline one. Results agree with forward<double> to
// rounding, not bit for bit (other summation orders, FMA, Eigen's exp).
#pragma once

#include <vector>

#include "src/model.h"
#include "src/scalar_traits.h"

namespace sinkcert {

struct BatchForwardOptions {
  // Worker threads; 0 means std::thread::hardware_concurrency(). The result
  // does not depend on it (the batch is cut into the same chunks either way).
  int threads = 0;
  // Also return the BOS masses a^h_i0.
  bool keep_bos_mass = false;
  // Run the baseline kernel even where the AVX2/FMA one could run (tests,
  // benchmarks).
  bool force_baseline = false;
};

struct BatchForwardResult {
  int L = 0;
  // (B L) x n: rows b L .. b L + L - 1 hold f(X_b).
  Matrix<double> output;
  // (B L) x H: entry (b L + i, h) is a^h_i0 of X_b; 0 x 0 unless kept.
  Matrix<double> bos_mass;
  bool used_avx2 = false;
  int threads_used = 0;

  int batch_size() const { return L == 0 ? 0 : static_cast<int>(output.rows() / L); }
  // f(X_b), L x n.
  Matrix<double> output_of(int b) const { return output.middleRows(b * L, L); }
  // a^h_i0 of X_b for i = 0 .. L-1, one column per head (L x H).
  Matrix<double> bos_mass_of(int b) const { return bos_mass.middleRows(b * L, L); }
};

class BatchForward {
 public:
  // Throws std::invalid_argument unless the model is single-layer with
  // softmax attention and at least one head of n x n matrices.
  explicit BatchForward(const Model<double>& model, BatchForwardOptions options = {});

  // Inputs of one common shape L x n.
  BatchForwardResult run(const std::vector<Matrix<double>>& inputs) const;
  // Inputs stacked: (B L) x n, X_b in rows b L .. b L + L - 1.
  BatchForwardResult run_stacked(const Matrix<double>& stacked, int L) const;

  // True when this build has the AVX2/FMA kernel and the CPU runs it.
  static bool avx2_available();

  const BatchForwardOptions& options() const { return options_; }

 private:
  int n_ = 0, heads_ = 0;
  Matrix<double> a_cat_;  // n x (H n): [A_1 .. A_H]
  Matrix<double> m_cat_;  // (H n) x n: [M_1^T; ..; M_H^T]
  BatchForwardOptions options_;
};

// One-call form: BatchForward(model, options).run(inputs).
BatchForwardResult batch_forward(const Model<double>& model,
                                 const std::vector<Matrix<double>>& inputs,
                                 BatchForwardOptions options = {});

}  // namespace sinkcert
