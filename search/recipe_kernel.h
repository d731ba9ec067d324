// SPDX-License-Identifier: MIT
//
// The recipe's batched double kernel (softmax and ReLU attention), one
// source built for two instruction sets, and the choice between them.
//
// Per sample X (L x n) and head, forward and reverse (search/paper_recipe.h
// gives the loss; these are the formulas of src/forward_vjp.h in matrix
// form):
//   Q = X A,  S = Q X^T,  P = attention rows of S (causal),  V = P X,
//   O = V M^T;  reverse with dO (L x n):  dM += dO^T V,  U = dO M,
//   dX += P^T U,  Z = U X^T,  dS = softmax: P * (Z - rowsum(P * Z))
//   (ReLU: Z [P > 0] / max(i, 1)),  W = dS X,  dA += X^T W,
//   dX += W A^T + dS^T Q
// (dX of the first layer is not formed). The products with A, M and their
// transposes run once over the stacked rows of a chunk of samples.
//
// Instruction sets: recipe_kernel.cc is compiled once with the project's
// flags (the baseline, x86-64 SSE2 under Debian's compiler defaults) and,
// where the compiler takes -mavx2 -mfma, once more into a shared library of
// its own whose symbols are hidden but for its one entry point, so that its
// Eigen code (four-wide packets, fused multiply-adds) is never mixed with the
// rest of the program's. The AVX2 kernel runs only on a CPU that reports
// both AVX2 and FMA. The two sum in different orders, so a trained model
// differs between them beyond the last bits after enough steps; each is
// deterministic (any thread count gives the same model).
//
// This header includes Eigen and the standard library only, and the kernel
// sees the model and the samples through the plain views below: the AVX2
// library then holds no code but the kernel's (no static initializer of the
// multiprecision backends, which would run, compiled for AVX2, on any CPU).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace sinkcert::search {

// A softmax or ReLU model seen by the kernel: per head its A and M (n x n,
// column-major, read) and the caller's dA and dM (n x n, column-major; the
// kernel adds the chunk's unscaled gradient d(sum r^2 / 2)/d(A, M) to them).
struct KernelHead {
  const double* A = nullptr;
  const double* M = nullptr;
  double* dA = nullptr;
  double* dM = nullptr;
};
struct KernelModel {
  int n = 0;
  bool relu = false;      // ReLU attention (else softmax)
  bool residual = false;  // residual model, residual target (else one layer, plain target)
  std::vector<std::vector<KernelHead>> layers;  // [l][h]
};
// One sample: X (L x n, column-major) and its trigger position.
struct KernelSample {
  int trigger = 0;
  const double* X = nullptr;
  int rows = 0, cols = 0;
};

// Sum of r^2, max |r| and the entry count of a chunk's residuals.
struct KernelStatistics {
  double sum = 0, worst = 0;
  long count = 0;
};

// r = f(X) - y of one sample added to the statistics.
template <class Derived>
void add_residual(const Eigen::MatrixBase<Derived>& r, KernelStatistics* out) {
  out->sum += r.squaredNorm();
  out->worst = std::max(out->worst, r.cwiseAbs().maxCoeff());
  out->count += r.size();
}

// The `count` samples at `samples`: adds their statistics to *stats and their
// unscaled gradient to every head's dA, dM. Throws std::invalid_argument for
// samples of different shapes or of another width than n. Its buffers are
// its own (one set per thread, kept from call to call, allocated and freed
// by the same compilation), and every result is a sum in a fixed order: the
// same inputs give the same bits on any thread.
using KernelFunction = void (*)(const KernelModel& model, const KernelSample* samples, int count,
                                KernelStatistics* stats);

// Which compilation of the kernel runs.
enum class RecipeIsa {
  kAuto,      // SINKCERT_RECIPE_ISA if set, else AVX2 where available, else the baseline
  kBaseline,  // the project's flags
  kAvx2,      // -mavx2 -mfma
};

// "auto", "baseline", "avx2+fma".
std::string to_string(RecipeIsa isa);
// True when the AVX2 kernel was built and this CPU has AVX2 and FMA.
bool avx2_kernel_available();
// Whether the AVX2 compilation runs: `asked` (true: AVX2, false: the
// baseline) or, when it is empty, the environment variable `variable`
// ("baseline" or "avx2") if set and not empty, else avx2_kernel_available().
// Throws std::invalid_argument naming the variable for another value, and
// `unavailable` + " (not built, or this CPU lacks AVX2 or FMA); use the
// baseline (VARIABLE=baseline)" where AVX2 is chosen but not available.
bool choose_avx2(std::optional<bool> asked, const char* variable, const std::string& unavailable);
// kAuto resolved: the environment variable SINKCERT_RECIPE_ISA ("baseline"
// or "avx2") if set, else kAvx2 when available, else kBaseline. Throws
// std::invalid_argument for kAvx2 (asked for, or by the variable) where it
// is not available, and for another value of the variable.
RecipeIsa resolve_recipe_isa(RecipeIsa isa);
// The kernel of a choice (kAuto is resolved first).
KernelFunction recipe_kernel(RecipeIsa isa);

}  // namespace sinkcert::search
