// SPDX-License-Identifier: MIT
//
// The forward pass, one template for every scalar type.
//
// For each layer l and head h, with the layer input X = x^(l) (L x n):
//   S = (X A) X^T           (s_ik = x_i^T A x_k; only k <= i is used)
//   a_i. = attention_row(s_i.)
//   V_i  = sum_{k<=i} a_ik x_k
//   o_i  = M V_i          (gated: o_i = sigma(G x_i) * M V_i, * coordinatewise)
// computed as dense products (S is formed transposed so that each row of
// scores is contiguous for attention_row, which works in place).
// and the layer output is sum_h o (single-layer) or X + sum_h o (residual).
// Cost per head: 2 L n^2 + 1.5 L^2 n multiply-adds.
#pragma once

#include <vector>

#include "src/attention.h"
#include "src/model.h"

namespace sinkcert {

template <class T>
struct ForwardResult {
  Matrix<T> output;                               // L x n
  std::vector<std::vector<Matrix<T>>> attention;  // [layer][head], L x L, zero above the diagonal
};

// The forward pass with `row(i, scores, out)` as the attention of query row
// i (scores s_i0..s_ii in, a_i0..a_ii out, possibly in place); forward()
// below passes attention_row of the model's kind, search/certified_forward.h
// an enclosure of softmax rows in O(L) exponentials.
template <class T, class Row>
ForwardResult<T> forward_with_rows(const Model<T>& model, const Matrix<T>& X, bool keep_attention,
                                   const Row& row) {
  const int L = static_cast<int>(X.rows()), n = static_cast<int>(X.cols());
  if (n != model.n) {
    throw std::invalid_argument("input has " + std::to_string(n) +
                                " coordinates, model expects n = " + std::to_string(model.n));
  }
  ForwardResult<T> result;
  Matrix<T> x = X;
  Matrix<T> W(L, L), V(L, n);
  for (const auto& layer : model.layers) {
    Matrix<T> delta = Matrix<T>::Constant(L, n, T(0));
    if (keep_attention) result.attention.emplace_back();
    for (const auto& head : layer) {
      // W = X (X A)^T = S^T: column i holds s_i0..s_ii contiguously
      W.noalias() = matrix_product(x, matrix_product(x, head.A).transpose());
      // a_i. = row(s_i.), in place in column i; a_ik = 0 for k > i
      for (int i = 0; i < L; ++i) {
        row(i, &W(0, i), &W(0, i));
        W.col(i).tail(L - 1 - i).setZero();
      }
      // V_i = sum_{k<=i} a_ik x_k, i.e. V = W^T X (zeros above the diagonal
      // of W^T; a general product, see matrix_product on triangular kernels)
      V.noalias() = matrix_product(W.transpose(), x);
      if (model.attention == AttentionKind::kGated) {
        // o_i = g_i * (M V_i), g_i = sigma(G x_i), x_i the query token of this layer
        Matrix<T> o = matrix_product(V, head.M.transpose());
        for (int i = 0; i < L; ++i) {
          o.row(i).array() *=
              head_gate(head.G, Vector<T>(x.row(i).transpose())).array().transpose();
        }
        delta += o;
      } else {
        // o = V M^T (row i: M V_i)
        delta.noalias() += matrix_product(V, head.M.transpose());
      }
      if (keep_attention) result.attention.back().push_back(W.transpose());
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

// Runs the model on X. With keep_attention = false the attention matrices are
// not stored (faster for search loops).
template <class T>
ForwardResult<T> forward(const Model<T>& model, const Matrix<T>& X, bool keep_attention = true) {
  return forward_with_rows(model, X, keep_attention, [&model](int i, const T* s, T* a) {
    attention_row(model.attention, i, s, a);
  });
}

// The scalar types most units run the forward pass in are compiled once, in
// src/forward.cc, instead of in every unit that calls it (a third of the
// code generation of a typical unit); other types instantiate as usual.
extern template ForwardResult<double> forward(const Model<double>&, const Matrix<double>&, bool);
extern template ForwardResult<Mpfr> forward(const Model<Mpfr>&, const Matrix<Mpfr>&, bool);
extern template ForwardResult<Mpfi> forward(const Model<Mpfi>&, const Matrix<Mpfi>&, bool);

}  // namespace sinkcert
