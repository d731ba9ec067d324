// SPDX-License-Identifier: MIT
//
// The explicit models of README, Definitions 4, for any scalar type (literals T(...)
// so that they are exact in Rational).
//
// ReLU construction (Theorem 3): score s_ik = x_i[1] * (x_k[n-1] + x_k[1]),
//   i.e. A = e_1 (e_{n-1} + e_1)^T; W_V = W_O = I, so M = I.
//   At the trigger j the query reads 1 and every non-BOS key reads 1, so
//   a_jk = 1/j for k = 1..j and a_j0 = 0: the output is the mean of x_1..x_j.
//   Elsewhere the query reads 0: all scores 0, output 0.
// Softmax sink family (an upper-bound construction, not from the paper):
//   score beta * (x_i[n-1] - x_i[1]) * x_k[0], i.e. A = beta (e_{n-1} - e_1) e_0^T;
//   M = I except M e_0 = 0 (W_V e_0 = 0). A non-trigger row i puts
//   e^beta / (e^beta + i) on BOS, whose value M x_0 is 0, and 1 / (e^beta + i)
//   on each of x_1..x_i, so its error and its 1 - BOS mass are both
//   i / (e^beta + i) <= (L-1) e^-beta. The trigger row scores BOS at -beta and
//   the rest at 0: it outputs sum_{k=1..j} x_k / (j + e^-beta), the target
//   mean up to a relative e^-beta / j.
#pragma once

#include "src/model.h"

namespace sinkcert {

// Theorem 3's ReLU model for dimension n.
template <class T>
Model<T> relu_construction(int n) {
  Matrix<T> A = Matrix<T>::Constant(n, n, T(0));
  // s_ik = x_i[1] * (x_k[n-1] + x_k[1])
  A(kTriggerFlag, ordinary_flag(n)) = T(1);
  A(kTriggerFlag, kTriggerFlag) = T(1);
  const Matrix<T> M = Matrix<T>::Identity(n, n);
  return single_head_model<T>(AttentionKind::kRelu, A, M);
}

// The softmax sink family at inverse temperature beta.
template <class T>
Model<T> sink_family(int n, const T& beta) {
  Matrix<T> A = Matrix<T>::Constant(n, n, T(0));
  // s_ik = beta * (x_i[n-1] - x_i[1]) * x_k[0]
  A(ordinary_flag(n), kBosFlag) = beta;
  A(kTriggerFlag, kBosFlag) = -beta;
  Matrix<T> M = Matrix<T>::Identity(n, n);
  // W_V e_0 = 0
  M(kBosFlag, kBosFlag) = T(0);
  return single_head_model<T>(AttentionKind::kSoftmax, A, M);
}

}  // namespace sinkcert
