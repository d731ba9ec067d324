// SPDX-License-Identifier: MIT
//
// The parameter vector theta of the searches, defined once.
//
// A head (A, M), both n x n, is packed row-major, A first:
//   theta[p n + q]       = A[p, q]
//   theta[n^2 + p n + q] = M[p, q]          (2 n^2 numbers per head)
// and a model's theta is its heads in order (layer 0 head 0, layer 0 head 1,
// ..., layer 1 head 0, ...), head t at offset 2 n^2 t. The same order packs
// derivatives dphi/dA, dphi/dM (a Head of derivatives, src/forward_vjp.h)
// into a Jacobian row. The Ceres search keeps A and M of every head as two
// parameter blocks of n^2 each: the two halves of this layout, block 2 t
// holding A of head t and block 2 t + 1 its M (head_blocks below).
#pragma once

#include <stdexcept>
#include <vector>

#include "src/model.h"

namespace sinkcert {

// Numbers per head: 2 n^2.
inline int head_parameter_count(int n) { return 2 * n * n; }

// A (n x n) written row-major to out[0 .. n^2).
template <class T, class Derived>
void pack_row_major(const Eigen::MatrixBase<Derived>& A, T* out) {
  const int n = static_cast<int>(A.cols());
  for (int p = 0; p < A.rows(); ++p) {
    for (int q = 0; q < n; ++q) out[p * n + q] = A(p, q);
  }
}

// The outer product u v^T (u, v of length n) written row-major to
// out[0 .. n^2), without forming it (a Jacobian row of A, x_i w^T).
template <class T, class U, class V>
void pack_outer_row_major(const Eigen::MatrixBase<U>& u, const Eigen::MatrixBase<V>& v, T* out) {
  const int n = static_cast<int>(v.size());
  for (int p = 0; p < u.size(); ++p) {
    for (int q = 0; q < n; ++q) out[p * n + q] = u(p) * v(q);
  }
}

// The n x n matrix stored row-major at in[0 .. n^2).
template <class T>
Matrix<T> unpack_row_major(const T* in, int n) {
  Matrix<T> A(n, n);
  for (int p = 0; p < n; ++p) {
    for (int q = 0; q < n; ++q) A(p, q) = in[p * n + q];
  }
  return A;
}

// The n x n matrix stored row-major at in[0 .. n^2), read in place (a Ceres
// parameter block).
template <class T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
Eigen::Map<const RowMajorMatrix<T>> row_major_view(const T* in, int n) {
  return Eigen::Map<const RowMajorMatrix<T>>(in, n, n);
}

// (A, M) written to out[0 .. 2 n^2) and read back.
template <class T>
void pack_head(const Head<T>& head, T* out) {
  const int n = static_cast<int>(head.A.rows());
  pack_row_major(head.A, out);
  pack_row_major(head.M, out + n * n);
}
template <class T>
Head<T> unpack_head(const T* in, int n) {
  return Head<T>{unpack_row_major(in, n), unpack_row_major(in + n * n, n)};
}

// theta of every head of the model, in the order of the header.
// Gated attention has a gate per head that this layout does not hold: both
// refuse it.
template <class T>
void require_ungated(const Model<T>& model) {
  if (model.attention == AttentionKind::kGated) {
    throw std::invalid_argument(
        "the parameter vector holds (A, M) per head only: gated attention (a gate W_g per "
        "head) is not covered by the search");
  }
}

template <class T>
Vector<T> pack_theta(const Model<T>& model) {
  require_ungated(model);
  const int per_head = head_parameter_count(model.n);
  int heads = 0;
  for (const auto& layer : model.layers) heads += static_cast<int>(layer.size());
  Vector<T> theta(static_cast<Eigen::Index>(per_head) * heads);
  int t = 0;
  for (const auto& layer : model.layers) {
    for (const Head<T>& head : layer) pack_head(head, theta.data() + per_head * t++);
  }
  return theta;
}

// The model's heads replaced by those packed in theta (same shape).
template <class T>
void unpack_theta(const Vector<T>& theta, Model<T>& model) {
  require_ungated(model);
  const int per_head = head_parameter_count(model.n);
  int heads = 0;
  for (const auto& layer : model.layers) heads += static_cast<int>(layer.size());
  if (theta.size() != static_cast<Eigen::Index>(per_head) * heads) {
    throw std::invalid_argument("theta has " + std::to_string(theta.size()) +
                                " entries, the model " + std::to_string(per_head * heads));
  }
  int t = 0;
  for (auto& layer : model.layers) {
    for (Head<T>& head : layer) head = unpack_head(theta.data() + per_head * t++, model.n);
  }
}

// Heads of the model, sum over layers of the heads per layer.
template <class T>
int head_count(const Model<T>& model) {
  int heads = 0;
  for (const auto& layer : model.layers) heads += static_cast<int>(layer.size());
  return heads;
}

// The heads as 2 * head_count parameter blocks of n^2 each (the Ceres
// layout): blocks[2 t] = A of head t row-major, blocks[2 t + 1] = its M.
template <class T>
std::vector<std::vector<T>> head_blocks(const Model<T>& model) {
  require_ungated(model);
  const int n = model.n;
  std::vector<std::vector<T>> blocks;
  for (const auto& layer : model.layers) {
    for (const Head<T>& head : layer) {
      blocks.emplace_back(static_cast<std::size_t>(n) * n);
      pack_row_major(head.A, blocks.back().data());
      blocks.emplace_back(static_cast<std::size_t>(n) * n);
      pack_row_major(head.M, blocks.back().data());
    }
  }
  return blocks;
}

// The model's heads replaced by the blocks (same order as head_blocks);
// blocks[b] points to n^2 numbers.
template <class T>
void unpack_head_blocks(T const* const* blocks, Model<T>& model) {
  require_ungated(model);
  int t = 0;
  for (auto& layer : model.layers) {
    for (Head<T>& head : layer) {
      head.A = unpack_row_major(blocks[2 * t], model.n);
      head.M = unpack_row_major(blocks[2 * t + 1], model.n);
      ++t;
    }
  }
}

}  // namespace sinkcert
