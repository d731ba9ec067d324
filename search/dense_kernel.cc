// SPDX-License-Identifier: MIT
//
// The dense kernels of search/dense_kernel.h. This file is compiled twice:
// with the project's flags into sinkcert_search, where it also holds the
// choice of instruction set, and with SINKCERT_DENSE_KERNEL_AVX2 defined,
// -mavx2 -mfma and hidden symbols into the shared library of AVX2 kernels,
// where it defines only the three *_avx2 entry points.
//   gram:        G_up += J^T J,  g += J^T r,  S += r^T r
//   cholesky:    C = L L^T (Eigen's blocked LLT, in place)
//   lower_solve: L y_new = y
#include "search/dense_kernel.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <optional>
#include <stdexcept>

#include "search/recipe_kernel.h"

namespace sinkcert::search {

#if defined(SINKCERT_DENSE_KERNEL_AVX2)
#define SINKCERT_DENSE_SUFFIX(name) name##_avx2
#define SINKCERT_DENSE_EXPORT __attribute__((visibility("default")))
#else
#define SINKCERT_DENSE_SUFFIX(name) name##_baseline
#define SINKCERT_DENSE_EXPORT
#endif

// The AVX2 compilation's entry points (defined in the shared library).
void gram_avx2(double* G, double* g, double* S, const double* J, const double* r, int rows,
               int width);
bool cholesky_avx2(double* C, int size);
void lower_solve_avx2(const double* C, int size, double* y);

namespace {

using ColMap = Eigen::Map<Eigen::MatrixXd>;
using ConstRowMap =
    Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

}  // namespace

SINKCERT_DENSE_EXPORT void SINKCERT_DENSE_SUFFIX(gram)(double* G, double* g, double* S,
                                                       const double* J, const double* r, int rows,
                                                       int width) {
  const ConstRowMap Jc(J, rows, width);
  const Eigen::Map<const Eigen::VectorXd> rc(r, rows);
  ColMap Gm(G, width, width);
  Eigen::Map<Eigen::VectorXd> gm(g, width);
  // G += J^T J (upper triangle: Eigen's symmetric rank-k update)
  Gm.selfadjointView<Eigen::Upper>().rankUpdate(Jc.transpose());
  // g += J^T r
  gm.noalias() += Jc.transpose() * rc;
  // S += |r|^2
  *S += rc.squaredNorm();
}

SINKCERT_DENSE_EXPORT bool SINKCERT_DENSE_SUFFIX(cholesky)(double* C, int size) {
  ColMap Cm(C, size, size);
  // C = L L^T, L over C's lower triangle
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(Cm);
  return llt.info() == Eigen::Success;
}

SINKCERT_DENSE_EXPORT void SINKCERT_DENSE_SUFFIX(lower_solve)(const double* C, int size,
                                                              double* y) {
  const Eigen::Map<const Eigen::MatrixXd> Cm(C, size, size);
  Eigen::Map<Eigen::VectorXd> ym(y, size);
  // L y_new = y
  Cm.triangularView<Eigen::Lower>().solveInPlace(ym);
}

#if !defined(SINKCERT_DENSE_KERNEL_AVX2)

std::string to_string(DenseIsa isa) {
  switch (isa) {
    case DenseIsa::kAuto:
      return "auto";
    case DenseIsa::kBaseline:
      return "baseline";
    case DenseIsa::kAvx2:
      return "avx2+fma";
  }
  return "?";
}

DenseIsa parse_dense_isa(const std::string& text) {
  if (text == "auto") return DenseIsa::kAuto;
  if (text == "baseline") return DenseIsa::kBaseline;
  if (text == "avx2" || text == "avx2+fma") return DenseIsa::kAvx2;
  throw std::invalid_argument("dense kernel: expected \"auto\", \"baseline\" or \"avx2\", got \"" +
                              text + "\"");
}

DenseIsa resolve_dense_isa(DenseIsa isa) {
  const std::optional<bool> asked =
      isa == DenseIsa::kAuto ? std::nullopt : std::optional<bool>(isa == DenseIsa::kAvx2);
  return choose_avx2(asked, "SINKCERT_DENSE_ISA", "the AVX2 dense kernels are not available")
             ? DenseIsa::kAvx2
             : DenseIsa::kBaseline;
}

const DenseKernel& dense_kernel(DenseIsa isa) {
  static const DenseKernel baseline{gram_baseline, cholesky_baseline, lower_solve_baseline};
#if defined(SINKCERT_HAVE_AVX2_KERNEL)
  static const DenseKernel avx2{gram_avx2, cholesky_avx2, lower_solve_avx2};
  if (resolve_dense_isa(isa) == DenseIsa::kAvx2) return avx2;
#else
  resolve_dense_isa(isa);
#endif
  return baseline;
}

#endif  // !SINKCERT_DENSE_KERNEL_AVX2

}  // namespace sinkcert::search
