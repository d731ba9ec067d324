// SPDX-License-Identifier: MIT
//
// The forward pass, one template for every scalar type.
//
// For each layer l and head h, with the layer input X = x^(l) (L x n):
//   Q = X A                 (row i: q_i = A^T x_i, so s_ik = q_i . x_k)
//   s_ik = q_i . x_k        for k <= i
//   a_i. = attention_row(s_i.)
//   V_i  = sum_{k<=i} a_ik x_k
//   o_i  = M V_i
// and the layer output is sum_h o (single-layer) or X + sum_h o (residual).
// Cost per head: 2 L n^2 + L^2 n multiply-adds.
#pragma once

#include <vector>

#include "src/attention.h"
#include "src/model.h"

namespace sinkcert {

template <class T>
struct ForwardResult {
  Matrix<T> output;                              // L x n
  std::vector<std::vector<Matrix<T>>> attention;  // [layer][head], L x L, zero above the diagonal
};

// Runs the model on X. With keep_attention = false the attention matrices are
// not stored (faster for search loops).
template <class T>
ForwardResult<T> forward(const Model<T>& model, const Matrix<T>& X, bool keep_attention = true) {
  const int L = static_cast<int>(X.rows()), n = static_cast<int>(X.cols());
  if (n != model.n) {
    throw std::invalid_argument("input has " + std::to_string(n) +
                                " coordinates, model expects n = " + std::to_string(model.n));
  }
  ForwardResult<T> result;
  Matrix<T> x = X;
  std::vector<T> s(L), a(L);
  for (const auto& layer : model.layers) {
    Matrix<T> delta = Matrix<T>::Constant(L, n, T(0));
    if (keep_attention) result.attention.emplace_back();
    for (const auto& head : layer) {
      // Q = X A
      const Matrix<T> Q = x * head.A;
      Matrix<T> V = Matrix<T>::Constant(L, n, T(0));
      Matrix<T> attn;
      if (keep_attention) attn = Matrix<T>::Constant(L, L, T(0));
      for (int i = 0; i < L; ++i) {
        // s_ik = q_i . x_k
        for (int k = 0; k <= i; ++k) s[k] = Q.row(i).dot(x.row(k));
        attention_row(model.attention, i, s.data(), a.data());
        // V_i = sum_k a_ik x_k
        for (int k = 0; k <= i; ++k) V.row(i) += a[k] * x.row(k);
        if (keep_attention) {
          for (int k = 0; k <= i; ++k) attn(i, k) = a[k];
        }
      }
      // o = V M^T (row i: M V_i)
      delta += V * head.M.transpose();
      if (keep_attention) result.attention.back().push_back(std::move(attn));
    }
    if (model.kind == ModelKind::kResidual) {
      x += delta;
    } else {
      x = delta;
    }
  }
  result.output = std::move(x);
  return result;
}

}  // namespace sinkcert
