// SPDX-License-Identifier: MIT
//
// The dense steps of a compressed least-squares solve
// (search/compressed_rows_cost.h, search/normal_equations_cost.h), one
// source built for two instruction sets, and the choice between them:
//   gram:         G += J^T J (upper triangle), g += J^T r, S += |r|^2
//                 for a chunk of residual rows J (rows x width), r;
//   cholesky:     C = L L^T, L written over C's lower triangle;
//   lower_solve:  y := L^{-1} y.
// At the paper's size with 4 x 4 heads (P = 8192 parameters, about 3 P
// residual rows), these are R P^2 / 2 + P^3 / 6 multiply-adds per Jacobian
// evaluation, most of a descent round's time.
//
// As for the recipe's kernel (search/recipe_kernel.h), dense_kernel.cc is
// compiled once with the project's flags (the baseline: x86-64 SSE2, Eigen's
// two-wide packets) and, where the compiler takes -mavx2 -mfma, once more
// into the shared library of AVX2 kernels, whose symbols are hidden but for
// the entry points, so that its Eigen code (four-wide packets, fused
// multiply-adds) is never mixed with the program's. The AVX2 compilation
// runs only on a CPU that reports AVX2 and FMA. The two round differently
// (fused multiply-adds, other summation orders), so a descent's iterates
// differ beyond the last bits between them after a few rounds; each is
// deterministic (any thread or rank count gives the same bits).
//
// The kernels read and write the caller's memory through unaligned maps
// only, and this header includes nothing but the standard library, so the
// AVX2 library holds no code but the kernels'.
#pragma once

#include <string>

namespace sinkcert::search {

// Matrices are column-major with leading dimension = their size (G, C:
// width x width, size x size); J is row-major (rows x width).
struct DenseKernel {
  void (*gram)(double* G, double* g, double* S, const double* J, const double* r, int rows,
               int width);
  // false (C then unspecified) when C is not numerically positive definite
  bool (*cholesky)(double* C, int size);
  void (*lower_solve)(const double* C, int size, double* y);
};

// Which compilation of the dense kernels runs.
enum class DenseIsa {
  kAuto,      // SINKCERT_DENSE_ISA ("baseline" or "avx2") if set, else AVX2 where available
  kBaseline,  // the project's flags
  kAvx2,      // -mavx2 -mfma
};

// "auto", "baseline", "avx2+fma".
std::string to_string(DenseIsa isa);
// "auto", "baseline" or "avx2" (or "avx2+fma"); throws std::invalid_argument
// naming the expected values otherwise.
DenseIsa parse_dense_isa(const std::string& text);
// kAuto resolved as above. Throws std::invalid_argument for kAvx2 (asked
// for, or by the variable) where the AVX2 compilation is not available (not
// built, or the CPU lacks AVX2 or FMA), and for another value of the
// variable.
DenseIsa resolve_dense_isa(DenseIsa isa);
// The kernels of a choice (kAuto is resolved first).
const DenseKernel& dense_kernel(DenseIsa isa);

}  // namespace sinkcert::search
