// SPDX-License-Identifier: MIT
//
// The paper's training recipe, reimplemented on our evaluator: the baseline
// the minimax is measured against and the source of "as trained" models.
//
// Model: L_m layers x H heads, single-layer (plain target) or residual
// (residual target), softmax attention (the paper's; ReLU too, and the other
// kinds but gated through the generic gradient). Every head has its own
// factors W_Q, W_K, W_V, W_O (n x n; the paper's fused nn.Linear matrices
// cut per head), i.i.d. normal with std 0.02, and A = W_Q^T W_K, M = W_O W_V.
// Loss: MSE over a batch of B sampled sequences (PyTorch's MSELoss, mean over
//   all B L n entries):  l = (1 / (B L n)) sum r^2,  r = f(X) - y.
// Gradients: the reverse pass with cotangent r gives d(sum r^2 / 2)/d(A, M)
// of every head (src/forward_vjp.h, or the batched double kernel below,
// tested against it); then dl/d(A, M) = (2 / (B L n)) times that, and the
// chain rule to the factors, per head:
//   dl/dW_Q = W_K (dl/dA)^T,  dl/dW_K = W_Q dl/dA,
//   dl/dW_O = (dl/dM) W_V^T,  dl/dW_V = W_O^T dl/dM.
// Optimizer: Adam (PyTorch's form), per factor W with gradient g at step t:
//   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2,
//   W -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps),
// betas (b1, b2) = (0.9, 0.95), eps 1e-8, lr 1e-3 for one layer and 1e-4 for
// more (paper_recipe_options), a fresh batch each step from
// TaskSampler(task, seed). Stops when one batch has max |r| < stop_linf
// (measured before that step's update), or after max_steps, or time_limit,
// or at a batch whose loss is not finite.
//
// Batched kernel (double; softmax and ReLU): search/recipe_kernel.h, in a
// baseline and an AVX2 + FMA compilation. Chunks of 16 samples are summed in
// a fixed order, so the result does not depend on the number of threads.
//
// Reproducibility: the same options and seed give the same model on the same
// build and kernel (std::normal_distribution is the standard library's; the
// two kernels round differently, PaperRecipeResult::kernel says which ran).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "search/recipe_kernel.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert::search {

// The factors of one head (n x n each): A = W_Q^T W_K, M = W_O W_V.
struct HeadFactors {
  Matrix<double> WQ, WK, WV, WO;
};

// The factors of a model, layers[l][h].
struct RecipeFactors {
  ModelKind kind = ModelKind::kSingleLayer;
  AttentionKind attention = AttentionKind::kSoftmax;
  int n = 0;
  std::vector<std::vector<HeadFactors>> layers;
};

// i.i.d. normal(0, init_std) factors from std::mt19937_64(seed), drawn per
// layer, per head, in the order W_Q, W_K, W_V, W_O, each row by row.
RecipeFactors init_factors(ModelKind kind, AttentionKind attention, int n, int layers, int heads,
                           double init_std, std::uint64_t seed);
// The model (A, M per head) of the factors.
Model<double> model_of(const RecipeFactors& factors);

struct PaperRecipeProgress {
  long steps = 0;
  double seconds = 0;
  double batch_linf = 0;  // NUMERIC(53), the last batch
  double batch_mse = 0;
};

struct PaperRecipeOptions {
  ModelKind kind = ModelKind::kSingleLayer;
  AttentionKind attention = AttentionKind::kSoftmax;
  int layers = 1;
  int heads = 1;
  std::uint64_t seed = 0;
  int batch = 128;
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double adam_eps = 1e-8;
  double init_std = 0.02;
  double stop_linf = 5e-3;
  long max_steps = 200000;
  double time_limit_seconds = 600;
  int threads = 1;  // chunks of the batch in parallel (same result for any count)
  // false: the batched double kernel (softmax, ReLU); true, or another
  // attention kind: forward_tape / forward_vjp per sample.
  bool generic_gradient = false;
  // The batched kernel's compilation (search/recipe_kernel.h); kAuto: AVX2
  // + FMA where the CPU has them, unless SINKCERT_RECIPE_ISA says otherwise.
  RecipeIsa isa = RecipeIsa::kAuto;
  // Called about every progress_seconds (and not at all if empty).
  std::function<void(const PaperRecipeProgress&)> progress;
  double progress_seconds = 10;
};

// The recipe's options for a model shape: one layer: single-layer model
// (plain target), lr 1e-3; more layers: residual (residual target), lr 1e-4.
PaperRecipeOptions paper_recipe_options(int layers, int heads);

struct PaperRecipeResult {
  Model<double> model;    // (A, M) of the final factors
  RecipeFactors factors;  // the final factors
  long steps = 0;
  double seconds = 0;
  double final_batch_linf = 0;  // NUMERIC(53), the stopping batch
  double final_batch_mse = 0;
  bool reached = false;     // batch criterion met
  std::string stop_reason;  // "criterion", "step cap", "time limit", "non-finite loss"
                            // (then final_batch_linf is NaN)
  std::string kernel;       // "baseline", "avx2+fma" (the batched kernel) or "generic"
};

// Throws std::invalid_argument for a shape or option it cannot train
// (layers, heads, batch, threads or max_steps < 1; lr or init_std not finite
// and > 0; gated attention).
PaperRecipeResult train_paper_recipe(const Task& task, const PaperRecipeOptions& options);

// An "as trained" model for the figures: the recipe with
// paper_recipe_options(layers, heads) (attention, seed and step cap as
// given), stopped at its criterion or at max_steps.
Model<double> train_recipe_model(const Task& task, int layers, int heads,
                                 AttentionKind attention = AttentionKind::kSoftmax,
                                 std::uint64_t seed = 0, long max_steps = 5000);

// d(A, M) of every head, grad[l][h] = {dA, dM}.
using HeadGradients = std::vector<std::vector<Head<double>>>;

// MSE of `model` on `samples` (target by model kind) and its gradient with
// respect to every head's (A, M); max_abs, if given, gets max |r|.
// Through forward_tape / forward_vjp, any attention kind.
double mse_and_gradient(const Model<double>& model, const std::vector<Sample>& samples,
                        HeadGradients* grad, double* max_abs = nullptr);
// The same through the batched double kernel (softmax and ReLU only; throws
// std::invalid_argument otherwise), chunks spread over `threads` threads.
double mse_and_gradient_batched(const Model<double>& model, const std::vector<Sample>& samples,
                                HeadGradients* grad, double* max_abs = nullptr, int threads = 1,
                                RecipeIsa isa = RecipeIsa::kAuto);
// Single-layer single-head form (the gradient test of the first version).
double mse_and_gradient(const Model<double>& model, const std::vector<Sample>& samples,
                        Matrix<double>* grad_A, Matrix<double>* grad_M, double* max_abs = nullptr);

// MSE of model_of(factors) and its gradient with respect to every factor
// (the chain rule above); batched or generic as in the options.
double factor_mse_and_gradient(const RecipeFactors& factors, const std::vector<Sample>& samples,
                               RecipeFactors* grad, double* max_abs = nullptr,
                               bool generic_gradient = false, int threads = 1,
                               RecipeIsa isa = RecipeIsa::kAuto);

}  // namespace sinkcert::search
