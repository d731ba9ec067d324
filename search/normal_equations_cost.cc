// SPDX-License-Identifier: MIT
#include "search/normal_equations_cost.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <utility>

namespace sinkcert::search {

namespace {

// Terms per block of the structured products (normal_equations_cost.h).
constexpr int kChunk = kNormalEquationsChunk;
// mu, added to the diagonal of the Jacobi-scaled C (unit diagonal) before
// its Cholesky factor is taken: C is only semidefinite (the softmax is blind
// to some directions of A), and its entries carry rounding errors of up to
// about R eps ~ 1e-12 (R ~ 1e4 products of T n rows of J summed per entry,
// eps ~ 1.1e-16), so eigenvalues below that are noise. It acts as an LM
// damping of mu diag(G), beside Ceres' own diag(G) / radius (radius <= 1e16).
constexpr double kDamping = 1e-12;
// Past this, C is not semidefinite up to rounding: the evaluation fails (Ceres
// then rejects the point).
constexpr double kMaxDamping = 1e-6;

}  // namespace

RowResidual row_residual(AttentionKind kind, const Eigen::Map<const RowMajorMatrix<double>>& A,
                         const Eigen::Map<const RowMajorMatrix<double>>& M, const ResidualRow& t,
                         const double* G) {
  const int n = static_cast<int>(t.X->cols()), i = t.i;
  RowResidual f;
  f.row = head_row_forward(kind, A, *t.X, i);
  // V_i = X_{0..i}^T a_i as one matrix-vector product (vectorized over k; it
  // rounds differently from the running sum of head_row_forward, and the
  // residuals, their Jacobian and o_i all use this one), o_i = M V_i
  f.mixed =
      t.X->topRows(i + 1).transpose() * Eigen::Map<const Vector<double>>(f.row.a.data(), i + 1);
  f.out = M * f.mixed;
  // g = sigma(G x_i) (gated attention)
  if (G != nullptr)
    f.gate = head_gate(unpack_row_major(G, n), Vector<double>(t.X->row(i).transpose()));
  f.r.resize(n);
  // r_d = sqrt(w_d) (o_d - y_d), o_d = p_d (g_d p_d gated)
  for (int d = 0; d < n; ++d) {
    const double o = G != nullptr ? f.gate(d) * f.out(d) : f.out(d);
    f.r(d) = std::sqrt(t.w[d]) * (o - (*t.Y)(i, d));
  }
  return f;
}

NormalEquations normal_equations(AttentionKind kind, const double* A, const double* M, int n,
                                 const std::vector<ResidualRow>& rows, bool with_a, bool with_m) {
  NormalEquations ne;
  NormalEquationsScratch scratch;
  normal_equations(kind, A, M, n, rows, with_a, with_m, &ne, &scratch);
  return ne;
}

void normal_equations(AttentionKind kind, const double* Ap, const double* Mp, int n,
                      const std::vector<ResidualRow>& rows, bool with_a, bool with_m,
                      NormalEquations* out, NormalEquationsScratch* scratch) {
  const auto A = row_major_view(Ap, n);
  const auto M = row_major_view(Mp, n);
  const int n2 = n * n, n3 = n2 * n;
  NormalEquationsScratch& b = *scratch;
  // resize() keeps the storage when the size is unchanged
  b.XX.resize(kChunk, n2);
  b.SS.resize(kChunk, n2);
  b.Xm.resize(kChunk, n);
  b.WR.resize(kChunk, n);
  b.Z.resize(with_a && with_m ? kChunk : 0, n3);
  b.VV.resize(kChunk, n2);
  b.Wd.resize(kChunk, n);
  b.RS.resize(kChunk, n);
  b.Vm.resize(kChunk, n);
  b.G4.setZero(n2, n2);
  b.GAM.setZero(n, with_a && with_m ? n3 : 0);
  b.GMM.setZero(n, n2);
  b.gA.setZero(n, n);
  b.gM.setZero(n, n);
  auto &XX = b.XX, &SS = b.SS, &Xm = b.Xm, &WR = b.WR, &Z = b.Z, &VV = b.VV, &Wd = b.Wd;
  auto &RS = b.RS, &Vm = b.Vm, &G4 = b.G4, &GAM = b.GAM, &GMM = b.GMM, &gA = b.gA, &gM = b.gM;
  NormalEquations& ne = *out;
  ne.S = 0;
  const int terms = static_cast<int>(rows.size());
  for (int start = 0; start < terms; start += kChunk) {
    const int c = std::min(kChunk, terms - start);
    for (int k = 0; k < c; ++k) {
      const ResidualRow& t = rows[start + k];
      const RowResidual f = row_residual(kind, A, M, t);
      ne.S += f.r.squaredNorm();
      const Vector<double> x = t.X->row(t.i).transpose();
      Vector<double> sw(n);
      for (int d = 0; d < n; ++d) sw(d) = std::sqrt(t.w[d]);
      if (with_a) {
        // W~ = diag(sqrt w) W, row d = dr_d/dA's right factor
        const Matrix<double> Wt =
            sw.asDiagonal() * head_row_output_jacobian(kind, M, *t.X, f.row, &f.out);
        // W~^T W~ (the right factor of G_AA's term), W~^T r (of g_A's)
        const Matrix<double> S = Wt.transpose() * Wt;
        const Vector<double> wr = Wt.transpose() * f.r;
        for (int p = 0; p < n; ++p) {
          Xm(k, p) = x(p);
          WR(k, p) = wr(p);
          for (int q = 0; q < n; ++q) {
            XX(k, p * n + q) = x(p) * x(q);
            SS(k, p * n + q) = S(p, q);
          }
        }
        // Z[(q,d,e)] = W~[d,q] sqrt(w_d) V_e (G_AM's term, after x_p)
        if (with_m) {
          for (int q = 0; q < n; ++q)
            for (int d = 0; d < n; ++d)
              for (int e = 0; e < n; ++e) Z(k, q * n2 + d * n + e) = Wt(d, q) * sw(d) * f.mixed(e);
        }
      }
      if (with_m) {
        for (int e = 0; e < n; ++e) {
          Wd(k, e) = t.w[e];
          RS(k, e) = sw(e) * f.r(e);
          Vm(k, e) = f.mixed(e);
          for (int e2 = 0; e2 < n; ++e2) VV(k, e * n + e2) = f.mixed(e) * f.mixed(e2);
        }
      }
    }
    if (with_a) {
      // G4[(p,p'),(q,q')] = sum_t x_p x_p' (W~^T W~)[q,q'];  g_A = sum_t x (W~^T r)^T
      G4.noalias() += XX.topRows(c).transpose() * SS.topRows(c);
      gA.noalias() += Xm.topRows(c).transpose() * WR.topRows(c);
      // G_AM[p, (q,d,e)] = sum_t x_p Z[(q,d,e)]
      if (with_m) GAM.noalias() += Xm.topRows(c).transpose() * Z.topRows(c);
    }
    if (with_m) {
      // G_MM[d, (e,e')] = sum_t w_d V_e V_e';  g_M[d, e] = sum_t sqrt(w_d) r_d V_e
      GMM.noalias() += Wd.topRows(c).transpose() * VV.topRows(c);
      gM.noalias() += RS.topRows(c).transpose() * Vm.topRows(c);
    }
  }

  const int off_m = with_a ? n2 : 0, size = off_m + (with_m ? n2 : 0);
  ne.G.setZero(size, size);
  ne.g.setZero(size);
  for (int p = 0; p < n; ++p) {
    for (int q = 0; q < n; ++q) {
      if (with_a) {
        ne.g(p * n + q) = gA(p, q);
        for (int p2 = 0; p2 < n; ++p2)
          for (int q2 = 0; q2 < n; ++q2) ne.G(p * n + q, p2 * n + q2) = G4(p * n + p2, q * n + q2);
      }
      if (with_m) {
        // (p, q) read as (d, e) here
        ne.g(off_m + p * n + q) = gM(p, q);
        for (int e2 = 0; e2 < n; ++e2)
          ne.G(off_m + p * n + q, off_m + p * n + e2) = GMM(p, q * n + e2);
      }
      if (with_a && with_m) {
        // GAM's row-major n x n^3 layout is G_AM's n^2 x n^2 one
        for (int m = 0; m < n2; ++m) {
          const double v = GAM(p, q * n2 + m);
          ne.G(p * n + q, off_m + m) = v;
          ne.G(off_m + m, p * n + q) = v;
        }
      }
    }
  }
}

NormalEquationsCost::NormalEquationsCost(std::vector<ResidualRow> rows, AttentionKind kind, int n)
    : rows_(std::move(rows)), kind_(kind), n_(n) {
  set_num_residuals(2 * n * n + 1);
  mutable_parameter_block_sizes()->push_back(n * n);
  mutable_parameter_block_sizes()->push_back(n * n);
}

bool write_compressed(const NormalEquations& ne, const std::vector<int32_t>& block_sizes,
                      const std::vector<bool>& free, double* r, double** J,
                      NormalEquationsScratch* scratch, const DenseKernel& kernel) {
  NormalEquationsScratch& b = *scratch;
  int total = 0;
  for (int s : block_sizes) total += s;
  const int size = static_cast<int>(ne.G.rows());
  // C = D G D, D = diag(G)^{-1/2} (0 on a zero column)
  b.scale.resize(size);
  b.unscale.resize(size);
  for (int j = 0; j < size; ++j) {
    const double gjj = ne.G(j, j);
    b.scale(j) = gjj > 0 ? 1 / std::sqrt(gjj) : 0.0;
    b.unscale(j) = gjj > 0 ? std::sqrt(gjj) : 0.0;
  }
  // C + mu I = L L^T (Cholesky in place; mu raised tenfold while C is
  // numerically indefinite), U = L^T D^{-1}: U^T U = G + mu diag(G)
  bool factored = false;
  for (double mu = kDamping; !factored && mu <= kMaxDamping; mu *= 10) {
    b.C.noalias() = b.scale.asDiagonal() * ne.G * b.scale.asDiagonal();
    b.C.diagonal().array() += mu;
    factored = kernel.cholesky(b.C.data(), size);
  }
  if (!factored) return false;
  // y = U^{-T} g: L y = D g
  b.y = b.scale.cwiseProduct(ne.g);
  kernel.lower_solve(b.C.data(), size, b.y.data());
  std::fill(r, r + total + 1, 0.0);
  for (int k = 0; k < size; ++k) r[k] = b.y(k);
  // the part of r outside J's range: sqrt(S - |y|^2)
  r[total] = std::sqrt(std::max(0.0, ne.S - b.y.squaredNorm()));
  // J' = (U; 0) block by block (row-major rows of the block's size):
  // U(k, j) = L(j, k) / D_j, j = col0 + c the block's columns among the free ones
  int col0 = 0;
  for (std::size_t blk = 0; blk < block_sizes.size(); ++blk) {
    if (!free[blk]) continue;
    const int width = block_sizes[blk];
    double* out = J[blk];
    std::fill(out, out + static_cast<std::size_t>(total + 1) * width, 0.0);
    for (int k = 0; k < size; ++k)
      for (int c = std::max(0, k - col0); c < width; ++c)
        out[static_cast<std::size_t>(k) * width + c] = b.C(col0 + c, k) * b.unscale(col0 + c);
    col0 += width;
  }
  return true;
}

bool NormalEquationsCost::Evaluate(double const* const* p, double* r, double** J) const {
  const int n = n_, n2 = n * n, m = 2 * n2;
  const bool with_a = J && J[0], with_m = J && J[1];
  if (!with_a && !with_m) {
    // a trial point: r' = (0, ..., 0, sqrt(S))
    const auto A = row_major_view(p[0], n);
    const auto M = row_major_view(p[1], n);
    double S = 0;
    for (const ResidualRow& t : rows_) S += row_residual(kind_, A, M, t).r.squaredNorm();
    std::fill(r, r + m, 0.0);
    r[m] = std::sqrt(S);
    return true;
  }
  normal_equations(kind_, p[0], p[1], n, rows_, with_a, with_m, &ne_, &scratch_);
  return write_compressed(ne_, {n2, n2}, {with_a, with_m}, r, J, &scratch_,
                          dense_kernel(DenseIsa::kBaseline));
}

}  // namespace sinkcert::search
