// SPDX-License-Identifier: MIT
//
// Any set of residual blocks over the same parameter blocks, handed to Ceres
// as one compressed block (the form of search/normal_equations_cost.h, for
// rows without the single-head Kronecker structure: the deep minimax's rows
// and the gated kind's). With the rows' residuals r_t and Jacobians J_t
// (over the free parameter blocks, those whose Jacobian Ceres asks for),
//   G = sum_t J_t^T J_t,   g = sum_t J_t^T r_t,   S = sum_t |r_t|^2,
// accumulated in chunks of rows by symmetric rank updates (the dense kernels
// of search/dense_kernel.h, baseline or AVX2), and
//   r' = (U^{-T} g, sqrt(S - |U^{-T} g|^2)),   J' = (U; 0),
//   U^T U = G + mu diag(G)   (write_compressed),
// so that J'^T J' = G + mu diag(G), J'^T r' = g, |r'|^2 = S: Ceres' LM takes
// the steps of the full problem, while its own J^T J is formed from P + 1
// rows instead of the sum of the rows' residual counts (P the parameter
// count). At a trial point (no Jacobian asked), r' = (0, ..., 0, sqrt(S)).
// The rows are cut into kParts fixed contiguous parts, each summed on its
// own: over ranks (search/rank_group.h: rank r sums the parts k with
// k mod ranks = r, then every rank receives every part's sums) and within a
// rank on up to `threads` threads; the parts are then added in the order
// k = 0..kParts-1 on every rank. The result does not depend on the thread
// or rank count, bit for bit (every rank runs the same solve in lockstep).
#pragma once

#include <ceres/ceres.h>

#include <memory>
#include <vector>

#include "search/dense_kernel.h"
#include "search/normal_equations_cost.h"
#include "search/rank_group.h"

namespace sinkcert::search {

// One part's sums and buffers, kept between evaluations (fresh pages for
// megabytes of buffers each time cost a seventh of the single-head study).
struct CompressedRowsPart {
  NormalEquations ne;
  RowMajorMatrix<double> J;                  // a chunk of rows' Jacobians
  Vector<double> r;                          // and their residuals
  std::vector<std::vector<double>> row_jac;  // one row's Jacobian per block
  std::vector<double> row_r;                 // one row's residuals
};

class CompressedRowsCost : public ceres::CostFunction {
 public:
  // Parts of the sums: enough for 2 ranks x 2 threads; each costs a P x P
  // matrix (32 MB at P = 2048).
  static constexpr int kParts = 4;
  // Throws std::invalid_argument if rows is empty or the rows' parameter
  // block sizes differ, or if `isa` is not available (resolve_dense_isa).
  // `ranks` (null: this process alone) must outlive the cost. The sums and
  // the compression's factor run on the dense kernels of `isa`
  // (search/dense_kernel.h).
  CompressedRowsCost(std::vector<std::unique_ptr<ceres::CostFunction>> rows, int threads,
                     const RankGroup* ranks = nullptr, DenseIsa isa = DenseIsa::kBaseline);
  bool Evaluate(double const* const* p, double* r, double** J) const override;

  // The normal equations over the free blocks (free[b]: block b's columns
  // are in G and g), without compression (for tests). Returns false if a
  // row's evaluation fails.
  bool normal_equations(double const* const* p, const std::vector<bool>& free,
                        NormalEquations* out) const;

 private:
  std::vector<std::unique_ptr<ceres::CostFunction>> rows_;
  int threads_;
  const RankGroup* ranks_;
  const DenseKernel* kernel_;
  int widest_row_ = 0;  // the largest residual count of a row
  mutable NormalEquations ne_;
  mutable NormalEquationsScratch scratch_;
  mutable std::vector<CompressedRowsPart> parts_;
  mutable std::vector<std::vector<double>> packed_;  // the parts as shared between ranks
};

}  // namespace sinkcert::search
