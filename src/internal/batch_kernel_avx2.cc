// SPDX-License-Identifier: MIT
//
// The batched softmax kernel (batch_kernel.h) compiled with -mavx2 -mfma
// (src/CMakeLists.txt, GCC/Clang on x86-64 only): Eigen then uses 4-wide
// double packets and fused multiply-adds in its GEMM, its coefficient-wise
// products and its vectorized exp. src/batch_forward.cc calls it only when
// __builtin_cpu_supports reports both avx2 and fma.
//
// Eigen is a header library: every template this file instantiates would be
// emitted as a weak symbol with the same name as the baseline instantiation
// elsewhere in the program, and the linker keeps one of them, which could put
// AVX2 code on a machine without it (or baseline code here). Renaming the
// namespace Eigen for this file alone gives its instantiations their own
// names; nothing Eigen-typed leaves this file (BatchKernelArgs holds raw
// pointers), so the renamed types never meet the ordinary ones.
#if !defined(__AVX2__) || !defined(__FMA__)
#error "batch_kernel_avx2.cc must be compiled with -mavx2 -mfma"
#endif

#define Eigen sinkcert_eigen_avx2
#define SINKCERT_BATCH_KERNEL_NS avx2
#include "src/internal/batch_kernel.h"
