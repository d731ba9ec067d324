// SPDX-License-Identifier: MIT
//
// The attention models of docs/definitions.md, Definitions 2, parametrized by (A, M) per head.
//
// Causal self-attention, no positional encoding, no 1/sqrt(d) scaling:
//   score      s_ik = (W_Q x_i) . (W_K x_k) = x_i^T A x_k,   A = W_Q^T W_K
//   head out   o_i  = W_O sum_{k<=i} a_ik W_V x_k = M sum_k a_ik x_k,  M = W_O W_V
//   gated:     o_i  = g_i * (M sum_k a_ik x_k),  g_i = sigma(G x_i)  (* coordinatewise,
//              G = W_g n x n per head; the gate multiplies the output of M)
// Normalizations a_ik (AttentionKind):
//   softmax            exp(s_ik) / sum_{m<=i} exp(s_im)
//   relu               max(s_ik, 0) / max(i, 1)
//   relu-count-all     max(s_ik, 0) / (i + 1)   (a deliberately wrong variant)
//   softmax-off-by-one exp(s_ik) / (1 + sum_{m<=i} exp(s_im))
//   sigmoid            sigma(s_ik) / max(i, 1)
//   softpick           relu(exp(s_ik) - 1) / sum_{m<=i} |exp(s_im) - 1|
//                      (rectified softmax; 0/0 := 0: a row whose scores are
//                      all exactly 0 has all weights 0)
//   gated              softmax weights, and the head output is gated per
//                      coordinate by the query token ("gated:" above)
// Model kinds:
//   single-layer  f(X)_i = sum_h o^h_i                      (targets: plain)
//   residual      x^(l+1)_i = x^(l)_i + sum_h o^{h,l}_i     (targets: residual)
// Only A and M enter the function, so the model stores them; a weight file
// may give the factors (W_Q, W_K, W_V, W_O), which are multiplied out in the
// model's own scalar type (exactly for Rational, enclosed for Mpfi).
#pragma once

#include <string>
#include <vector>

#include "src/scalar_traits.h"
#include "src/task.h"

namespace sinkcert {

enum class AttentionKind {
  kSoftmax,
  kRelu,
  kReluCountAll,
  kSoftmaxOffByOne,
  kSigmoid,
  kSoftpick,
  kGated
};
enum class ModelKind { kSingleLayer, kResidual };

std::string to_string(AttentionKind kind);
std::string to_string(ModelKind kind);
// Parsers throw std::invalid_argument naming the accepted values.
AttentionKind parse_attention_kind(const std::string& text);
ModelKind parse_model_kind(const std::string& text);
// The list of accepted names, for error messages: "softmax, relu, ...".
std::string attention_kind_names();

inline TargetKind target_kind_of(ModelKind kind) {
  return kind == ModelKind::kResidual ? TargetKind::kResidual : TargetKind::kPlain;
}

template <class T>
struct Head {
  Matrix<T> A;                // score matrix, n x n: s_ik = x_i^T A x_k
  Matrix<T> M;                // value-output matrix, n x n: o_i = M sum_k a_ik x_k
  Matrix<T> G = Matrix<T>();  // gate matrix W_g, n x n (gated attention only, else empty):
                              // o_i = sigma(G x_i) * (M sum_k a_ik x_k)
};

template <class T>
struct Model {
  ModelKind kind = ModelKind::kSingleLayer;
  AttentionKind attention = AttentionKind::kSoftmax;
  int n = 0;
  std::vector<std::vector<Head<T>>> layers;  // layers[l][h]

  int num_layers() const { return static_cast<int>(layers.size()); }
  int num_heads() const { return layers.empty() ? 0 : static_cast<int>(layers[0].size()); }

  // The same model in another scalar type, each entry converted by
  // scalar_cast<U> (from Rational: exact, enclosed in Mpfi, rounded otherwise).
  template <class U>
  Model<U> cast() const {
    Model<U> out;
    out.kind = kind;
    out.attention = attention;
    out.n = n;
    for (const auto& layer : layers) {
      out.layers.emplace_back();
      for (const auto& h : layer) {
        Head<U> hu;
        hu.A = matrix_cast<U>(h.A);
        hu.M = matrix_cast<U>(h.M);
        hu.G = matrix_cast<U>(h.G);
        out.layers.back().push_back(std::move(hu));
      }
    }
    return out;
  }
};

// A single-layer single-head model from (A, M).
template <class T>
Model<T> single_head_model(AttentionKind attention, const Matrix<T>& A, const Matrix<T>& M) {
  Model<T> m;
  m.kind = ModelKind::kSingleLayer;
  m.attention = attention;
  m.n = static_cast<int>(A.rows());
  m.layers.push_back({Head<T>{A, M}});
  return m;
}

}  // namespace sinkcert
