// SPDX-License-Identifier: MIT
//
// The single-head least-squares problem of the minimax (search/minimax.h), in
// compressed form. Its residual rows are, over the terms t = (input X, row i)
// of the active set and the output coordinates d,
//   r_{t,d} = sqrt(w_{t,d}) (o_{t,d} - y_{t,d}),   o_t = M V_t,
// and an LM step needs only G = J^T J, g = J^T r and S = r^T r. Each
// Jacobian row has Kronecker structure (src/forward_vjp.h,
// head_row_output_jacobian): with x = x_i, V = V_i, W the row's output
// Jacobian (row d = w_d) and W~ = diag(sqrt w_t) W,
//   dr_{t,d}/dA = x (x) W~[d, :],   dr_{t,d}/dM = sqrt(w_{t,d}) e_d (x) V,
// so that, summed over t (A and M row-major, (p,q) = p n + q):
//   G_AA[(p,q),(p',q')] = sum_t x_p x_p' (W~^T W~)[q,q']
//   G_AM[(p,q),(d,e)]   = sum_t x_p W~[d,q] sqrt(w_{t,d}) V_e
//   G_MM[(d,e),(d',e')] = [d = d'] sum_t w_{t,d} V_e V_e'
//   g_A[(p,q)] = sum_t x_p (W~^T r_t)_q,   g_M[(d,e)] = sum_t sqrt(w_{t,d}) r_{t,d} V_e
// : about 2 T n^4 multiply-adds in three matrix products, where forming J^T J
// from the T n x 2 n^2 Jacobian takes 2 T n^5 (n times more; at n = 16 this
// was about 80% of the Theorem 1 study's time).
//
// Compression: with G + mu diag(G) = U^T U (a Cholesky factor; mu = 1e-12,
// a damping far below the LM's own, keeps the factor defined where G is only
// semidefinite) and y = U^{-T} g, the 2 n^2 + 1 residuals and their Jacobian
//   r' = (y, sqrt(S - |y|^2)),   J' = U (then a zero row)
// satisfy J'^T J' = G + mu diag(G), J'^T r' = g and |r'|^2 = S, so Ceres'
// LM, which sees only these (and the column norms of J', those of J up to
// mu), takes the steps it would take on the full problem. At a point where
// only the cost is asked (a trial step), r' = (0, ..., 0, sqrt(S)).
// The factor is taken of the Jacobi-scaled C = D G D + mu I,
// D = diag(G)^{-1/2}, so that mu is scale-free.
// A parameter block that Ceres holds constant (its Jacobian not asked for)
// is left out of G: the factor is over the free blocks only.
#pragma once

#include <ceres/ceres.h>

#include <cstdint>
#include <vector>

#include "search/dense_kernel.h"
#include "src/attention.h"
#include "src/forward_vjp.h"
#include "src/model.h"
#include "src/parameter_layout.h"

namespace sinkcert::search {

// One term t of the sum: row i of input X against target Y, with the
// residual weights w[0 .. n) of that row (the Lawson weights of (i, d)).
struct ResidualRow {
  const Matrix<double>* X = nullptr;
  const Matrix<double>* Y = nullptr;
  int i = 0;
  const double* w = nullptr;
};

// The forward pass of one term: the attention row, V_i = X_{0..i}^T a_i (one
// matrix-vector product, as the Jacobian below uses it), p_i = M V_i and the
// weighted residuals r_d = sqrt(w_d) (o_d - y_d), o = p (o = g * p with
// the gate g = sigma(G x_i) of gated attention, G row-major n x n; the
// compressed block below is for the ungated kinds).
struct RowResidual {
  HeadRow<double> row;
  Vector<double> mixed, out, gate, r;  // out = p = M V_i; gate empty if ungated
};
RowResidual row_residual(AttentionKind kind, const Eigen::Map<const RowMajorMatrix<double>>& A,
                         const Eigen::Map<const RowMajorMatrix<double>>& M, const ResidualRow& t,
                         const double* G = nullptr);

// G, g (over the free blocks: A's n^2 entries first if with_a, then M's if
// with_m) and S = r^T r, by the structured sums above.
struct NormalEquations {
  Matrix<double> G;
  Vector<double> g;
  double S = 0;
};
// Terms per block of the structured products: the largest buffer (Z)
// holds kNormalEquationsChunk n^3 doubles (2 MB at n = 16), and each
// product still has it as its inner dimension, long enough for Eigen's
// blocked kernels.
inline constexpr int kNormalEquationsChunk = 64;
// The buffers of one evaluation, kept between evaluations: at n = 16 they
// are megabytes, and allocating them anew each time (fresh pages from the
// system) cost about a seventh of the study's time.
struct NormalEquationsScratch {
  RowMajorMatrix<double> XX, SS, Xm, WR, Z, VV, Wd, RS, Vm, G4, GAM, GMM, gA, gM;
  Matrix<double> C;
  Vector<double> scale, unscale, y;
};
void normal_equations(AttentionKind kind, const double* A, const double* M, int n,
                      const std::vector<ResidualRow>& rows, bool with_a, bool with_m,
                      NormalEquations* out, NormalEquationsScratch* scratch);
NormalEquations normal_equations(AttentionKind kind, const double* A, const double* M, int n,
                                 const std::vector<ResidualRow>& rows, bool with_a, bool with_m);

// The compression of the header for any parameter blocks: given ne (G and g
// over the free blocks, in block order; S over all rows), writes
// r' = (U^{-T} g, 0, ..., 0, sqrt(S - |U^{-T} g|^2)) (sum of block_sizes + 1
// entries) and, for each free block b, J[b] = its columns of (U; 0)
// (row-major, block_sizes[b] columns). Returns false when G + mu diag(G)
// has no Cholesky factor for any damping mu up to 1e-6 (the point is then
// rejected). The factor and its solve run on `kernel` (search/dense_kernel.h).
// Used by NormalEquationsCost (the baseline kernels) and CompressedRowsCost.
bool write_compressed(const NormalEquations& ne, const std::vector<int32_t>& block_sizes,
                      const std::vector<bool>& free, double* r, double** J,
                      NormalEquationsScratch* scratch, const DenseKernel& kernel);

// The compressed residual block: parameters A and M (row-major n x n each),
// 2 n^2 + 1 residuals. Not for concurrent Evaluate calls on one object
// (its buffers are shared; the minimax's single-head solve is on one
// thread).
class NormalEquationsCost : public ceres::CostFunction {
 public:
  NormalEquationsCost(std::vector<ResidualRow> rows, AttentionKind kind, int n);
  bool Evaluate(double const* const* p, double* r, double** J) const override;

 private:
  std::vector<ResidualRow> rows_;
  AttentionKind kind_;
  int n_;
  mutable NormalEquations ne_;
  mutable NormalEquationsScratch scratch_;
};

}  // namespace sinkcert::search
