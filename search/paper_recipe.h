// SPDX-License-Identifier: MIT
//
// The paper's training recipe, reimplemented on our evaluator, as the
// baseline the minimax is measured against (benchmark only).
//
// Model: single-layer single-head softmax with factors W_Q, W_K, W_V, W_O
// (n x n, i.i.d. normal std 0.02), A = W_Q^T W_K, M = W_O W_V.
// Loss: MSE over a batch of B sampled sequences (PyTorch's MSELoss, mean over
//   all B L n entries):  l = (1 / (B L n)) sum r^2,  r = f(X) - y.
// Gradients: the reverse pass (src/forward_vjp.h) with cotangent r, i.e.
// (per row i, u = M^T r_i, h_k = a_ik (x_k . u - out_i . r_i)):
//   dl/dM = (2 / (B L n)) sum r_i V_i^T,          V_i = sum_k a_ik x_k
//   dl/dA = (2 / (B L n)) sum x_i (sum_k h_k x_k)^T
//   dl/dW_Q = W_K (dl/dA)^T, dl/dW_K = W_Q dl/dA,
//   dl/dW_O = (dl/dM) W_V^T, dl/dW_V = W_O^T dl/dM.
// Optimizer: Adam (beta1 0.9, beta2 0.999, eps 1e-8, PyTorch's defaults),
// lr 1e-3, a fresh batch each step from TaskSampler(task, seed). Stops when
// one batch has max |r| < stop_linf, or after max_steps.
#pragma once

#include <cstdint>

#include "src/model.h"
#include "src/task.h"

namespace sinkcert::search {

struct PaperRecipeOptions {
  std::uint64_t seed = 0;
  int batch = 128;
  double lr = 1e-3;
  double stop_linf = 5e-3;
  long max_steps = 200000;
  double time_limit_seconds = 600;
};

struct PaperRecipeResult {
  Model<double> model;  // (A, M) of the final factors
  long steps = 0;
  double seconds = 0;
  double final_batch_linf = 0;  // NUMERIC(53), the stopping batch
  double final_batch_mse = 0;
  bool reached = false;  // batch criterion met
};

PaperRecipeResult train_paper_recipe(const Task& task, const PaperRecipeOptions& options);

// MSE of a single-layer single-head softmax model on `samples` and its
// gradient with respect to A and M (exposed for the gradient test).
double mse_and_gradient(const Model<double>& model, const std::vector<Sample>& samples,
                        Matrix<double>* grad_A, Matrix<double>* grad_M, double* max_abs = nullptr);

}  // namespace sinkcert::search
