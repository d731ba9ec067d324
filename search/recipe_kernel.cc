// SPDX-License-Identifier: MIT
//
// The recipe's batched kernel (formulas in recipe_kernel.h). This file is
// compiled twice: with the project's flags into sinkcert_search, where it
// also holds the choice of instruction set, and with
// SINKCERT_RECIPE_KERNEL_AVX2 defined, -mavx2 -mfma and hidden symbols into
// the shared library sinkcert_avx2, where it defines only
// batched_chunk_avx2. Each compilation's Eigen keeps its own alignment
// (16 bytes in the baseline, 32 with AVX): the kernel reads and writes the
// caller's memory through unaligned maps only, and its buffers are its own
// (allocated, aligned and freed by the same compilation), so no summation
// order depends on where the caller's matrices happen to lie.
#include "search/recipe_kernel.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace sinkcert::search {

// The AVX2 compilation's kernel: the shared library's one exported symbol.
__attribute__((visibility("default"))) void batched_chunk_avx2(const KernelModel& model,
                                                               const KernelSample* samples,
                                                               int count, KernelStatistics* out);

#if defined(SINKCERT_RECIPE_KERNEL_AVX2)
#define SINKCERT_KERNEL_NAME batched_chunk_avx2
#else
#define SINKCERT_KERNEL_NAME batched_chunk_baseline
#endif

namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const Eigen::MatrixXd>;

// Everything one chunk writes, kept from call to call (no allocation once
// the sizes are set); one per thread.
struct Workspace {
  std::vector<RowMatrix> x;                                // [l]: stacked layer inputs
  std::vector<std::vector<RowMatrix>> Q, P, V;             // [l][h]
  std::vector<std::vector<Eigen::MatrixXd>> A, M, dA, dM;  // [l][h]: copies, gradients
  RowMatrix delta, dx, dx_in, u, w, z;
  RowMatrix mask, lower;  // the causal masks of a chunk
  bool mask_relu = false;
  Eigen::VectorXd row_scale;
};

}  // namespace

// The batched chunk (header formulas), softmax or ReLU.
void SINKCERT_KERNEL_NAME(const KernelModel& model, const KernelSample* samples, int count,
                          KernelStatistics* out) {
  static thread_local Workspace local;
  Workspace* ws = &local;
  const int n = model.n, C = count, L = samples[0].rows;
  const int layers = static_cast<int>(model.layers.size()), R = C * L;
  const bool relu = model.relu, residual = model.residual;
  // the heads' A and M in the kernel's own (aligned) storage; dA = dM = 0
  for (auto* v : {&ws->A, &ws->M, &ws->dA, &ws->dM}) v->resize(layers);
  for (int l = 0; l < layers; ++l) {
    const std::size_t heads = model.layers[l].size();
    for (auto* v : {&ws->A, &ws->M, &ws->dA, &ws->dM}) (*v)[l].resize(heads);
    for (std::size_t h = 0; h < heads; ++h) {
      ws->A[l][h] = ConstMap(model.layers[l][h].A, n, n);
      ws->M[l][h] = ConstMap(model.layers[l][h].M, n, n);
      ws->dA[l][h].setZero(n, n);
      ws->dM[l][h].setZero(n, n);
    }
  }
  // x[l]: the stacked inputs of layer l (sample c in rows c L .. c L + L - 1)
  std::vector<RowMatrix>& x = ws->x;
  x.resize(layers + 1);
  for (RowMatrix& m : x) m.resize(R, n);
  for (int c = 0; c < C; ++c) {
    if (samples[c].rows != L || samples[c].cols != n) {
      throw std::invalid_argument("mse_and_gradient_batched: samples of different shapes");
    }
    x[0].middleRows(c * L, L) = ConstMap(samples[c].X, L, n);
  }
  // mask(c L + i, k): softmax 0 for k <= i, -inf beyond; ReLU 1 / max(i, 1)
  // for k <= i, 0 beyond
  // and lower(c L + i, k) = [k <= i]
  RowMatrix &mask = ws->mask, &lower = ws->lower;
  if (mask.rows() != R || mask.cols() != L || ws->mask_relu != relu) {
    mask.resize(R, L);
    lower.resize(R, L);
    ws->mask_relu = relu;
    for (int r = 0; r < R; ++r) {
      const int i = r % L;
      for (int k = 0; k < L; ++k) {
        lower(r, k) = k <= i ? 1.0 : 0.0;
        mask(r, k) = k <= i ? (relu ? 1.0 / std::max(i, 1) : 0.0)
                            : (relu ? 0.0 : -std::numeric_limits<double>::infinity());
      }
    }
  }
  Eigen::VectorXd& row_scale = ws->row_scale;
  // tape: Q = X A, P (attention, L x L per sample), V = P X per layer and head
  ws->Q.resize(layers);
  ws->P.resize(layers);
  ws->V.resize(layers);
  RowMatrix& delta = ws->delta;
  for (int l = 0; l < layers; ++l) {
    const int heads = static_cast<int>(model.layers[l].size());
    ws->Q[l].resize(heads);
    ws->P[l].resize(heads);
    ws->V[l].resize(heads);
    delta.setZero(R, n);
    for (int h = 0; h < heads; ++h) {
      const Eigen::MatrixXd &A = ws->A[l][h], &M = ws->M[l][h];
      RowMatrix &q = ws->Q[l][h], &p = ws->P[l][h], &v = ws->V[l][h];
      q.resize(R, n);
      p.resize(R, L);
      v.resize(R, n);
      q.noalias() = x[l] * A;
      // S = Q X^T per sample
      for (int c = 0; c < C; ++c) {
        p.middleRows(c * L, L).noalias() =
            q.middleRows(c * L, L) * x[l].middleRows(c * L, L).transpose();
      }
      // each row i becomes a_i. (zero beyond k = i), the whole chunk at once
      if (relu) {
        // a_k = max(s_k, 0) / max(i, 1)
        p.array() = p.array().max(0.0) * mask.array();
      } else {
        // a_k = exp(s_k - m) / sum_t exp(s_t - m),  m = max_{t <= i} s_t
        // (the entries beyond k = i are set to 0 before the exponential and
        // after it: no overflow, and no subnormal results that are slow)
        row_scale = (p + mask).rowwise().maxCoeff();
        p.array().colwise() -= row_scale.array();
        p.array() = (p.array() * lower.array()).exp() * lower.array();
        row_scale = p.rowwise().sum();
        p.array().colwise() /= row_scale.array();
      }
      // V = P X per sample
      for (int c = 0; c < C; ++c) {
        v.middleRows(c * L, L).noalias() = p.middleRows(c * L, L) * x[l].middleRows(c * L, L);
      }
      // O = V M^T
      delta.noalias() += v * M.transpose();
    }
    if (residual) {
      x[l + 1] = x[l] + delta;
    } else {
      x[l + 1] = delta;
    }
  }
  // dX = r = f(X) - y at the output
  RowMatrix& dx = ws->dx;
  dx.resize(R, n);
  // y = X (residual) or 0 (plain), plus (1/j) sum_{k=1..j} x_k at the trigger j
  if (residual) {
    dx = x[layers] - x[0];
  } else {
    dx = x[layers];
  }
  for (int c = 0; c < C; ++c) {
    const int j = samples[c].trigger;
    auto rc = dx.middleRows(c * L, L);
    rc.row(j) -= x[0].middleRows(c * L + 1, j).colwise().sum() * (1.0 / j);
    add_residual(rc, out);
  }
  RowMatrix &dx_in = ws->dx_in, &u = ws->u, &w = ws->w, &z = ws->z;
  u.resize(R, n);
  w.resize(R, n);
  z.resize(R, L);
  for (int l = layers - 1; l >= 0; --l) {
    // dX of layer 0 (the input) is not wanted
    const bool want_dx = l > 0;
    if (want_dx && residual) {
      dx_in = dx;
    } else if (want_dx) {
      dx_in.setZero(R, n);
    }
    for (std::size_t h = 0; h < model.layers[l].size(); ++h) {
      const Eigen::MatrixXd &A = ws->A[l][h], &M = ws->M[l][h];
      const RowMatrix &q = ws->Q[l][h], &p = ws->P[l][h];
      // dM += dO^T V,  U = dO M
      ws->dM[l][h].noalias() += dx.transpose() * ws->V[l][h];
      u.noalias() = dx * M;
      // dX += P^T U,  Z = U X^T per sample
      for (int c = 0; c < C; ++c) {
        const auto uc = u.middleRows(c * L, L);
        if (want_dx)
          dx_in.middleRows(c * L, L).noalias() += p.middleRows(c * L, L).transpose() * uc;
        z.middleRows(c * L, L).noalias() = uc * x[l].middleRows(c * L, L).transpose();
      }
      // Z becomes dS, the whole chunk at once (zero beyond k = i, where a_ik = 0)
      if (relu) {
        // dS_k = Z_k [a_k > 0] / max(i, 1)
        z.array() = (p.array() > 0).select(z.array() * mask.array(), 0.0);
      } else {
        // dS_k = a_k (Z_k - sum_m a_m Z_m)
        z.array() *= p.array();
        row_scale = z.rowwise().sum();
        z.array() -= p.array().colwise() * row_scale.array();
      }
      // W = dS X,  dX += dS^T Q per sample
      for (int c = 0; c < C; ++c) {
        const auto zc = z.middleRows(c * L, L);
        w.middleRows(c * L, L).noalias() = zc * x[l].middleRows(c * L, L);
        if (want_dx)
          dx_in.middleRows(c * L, L).noalias() += zc.transpose() * q.middleRows(c * L, L);
      }
      // dA += X^T W,  dX += W A^T
      ws->dA[l][h].noalias() += x[l].transpose() * w;
      if (want_dx) dx_in.noalias() += w * A.transpose();
    }
    if (want_dx) std::swap(dx, dx_in);
  }
  // the caller's dA, dM += the chunk's (element by element)
  for (int l = 0; l < layers; ++l) {
    for (std::size_t h = 0; h < model.layers[l].size(); ++h) {
      Eigen::Map<Eigen::MatrixXd>(model.layers[l][h].dA, n, n) += ws->dA[l][h];
      Eigen::Map<Eigen::MatrixXd>(model.layers[l][h].dM, n, n) += ws->dM[l][h];
    }
  }
}

#if !defined(SINKCERT_RECIPE_KERNEL_AVX2)

std::string to_string(RecipeIsa isa) {
  switch (isa) {
    case RecipeIsa::kAuto:
      return "auto";
    case RecipeIsa::kBaseline:
      return "baseline";
    case RecipeIsa::kAvx2:
      return "avx2+fma";
  }
  return "?";
}

bool avx2_kernel_available() {
#if defined(SINKCERT_HAVE_AVX2_KERNEL)
  static const bool cpu = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return cpu;
#else
  return false;
#endif
}

bool choose_avx2(std::optional<bool> asked, const char* variable, const std::string& unavailable) {
  if (!asked) {
    const char* env = std::getenv(variable);
    const std::string value = env ? env : "";
    if (value.empty()) return avx2_kernel_available();
    if (value != "baseline" && value != "avx2") {
      throw std::invalid_argument(std::string(variable) +
                                  ": expected \"baseline\" or \"avx2\", got \"" + value + "\"");
    }
    asked = value == "avx2";
  }
  if (*asked && !avx2_kernel_available()) {
    throw std::invalid_argument(unavailable +
                                " (not built, or this CPU lacks AVX2 or FMA); use the baseline (" +
                                variable + "=baseline)");
  }
  return *asked;
}

RecipeIsa resolve_recipe_isa(RecipeIsa isa) {
  const std::optional<bool> asked =
      isa == RecipeIsa::kAuto ? std::nullopt : std::optional<bool>(isa == RecipeIsa::kAvx2);
  return choose_avx2(asked, "SINKCERT_RECIPE_ISA", "the recipe's AVX2 kernel is not available")
             ? RecipeIsa::kAvx2
             : RecipeIsa::kBaseline;
}

KernelFunction recipe_kernel(RecipeIsa isa) {
#if defined(SINKCERT_HAVE_AVX2_KERNEL)
  if (resolve_recipe_isa(isa) == RecipeIsa::kAvx2) return batched_chunk_avx2;
#else
  resolve_recipe_isa(isa);
#endif
  return batched_chunk_baseline;
}

#endif  // !SINKCERT_RECIPE_KERNEL_AVX2

}  // namespace sinkcert::search
