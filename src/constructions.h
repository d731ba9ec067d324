// SPDX-License-Identifier: MIT
//
// The explicit models of docs/definitions.md, Definitions 4, for any scalar type (literals T(...)
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

#include <vector>

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

// Shares s_0..s_{count-1} of 1 with finite decimal expansions (so that a
// weight file holds them exactly): each is 1 / 2^p with 2^p >= count, the
// first takes the remainder 1 - (count - 1) / 2^p >= 1 / 2^p.
template <class T>
std::vector<T> dyadic_shares(int count) {
  int power = 1;
  while (power < count) power *= 2;
  std::vector<T> shares(count, T(1) / T(power));
  shares[0] = T(1) - T(count - 1) / T(power);
  return shares;
}

// A sink-free ReLU residual model with `layers` layers of `heads` heads that
// solves T(n, L) exactly for the residual target y_j = x_j + mean(x_1..x_j)
// (docs/definitions.md, Definitions 4). The trigger row's update splits into pieces, by
// which keys are read and which coordinates are written:
//   T: the trigger key x_j, content coordinates      (score x_i[1] x_k[1])
//   O: the ordinary keys x_k, k < j, content          (score x_i[1] x_k[n-1])
//   F: the trigger flag (from x_j) and the ordinary flag (from the x_k)
// ReLU divides row j by j, so each piece contributes 1/j per key read. Every
// query other than the trigger reads 0 from A (A has nonzero entries in row 1
// only), so those rows add nothing, and no score reads BOS: a_i0 = 0.
// With P the projection on the content coordinates and E_d = e_d e_d^T:
//   layers = 1: every head uniform on x_1..x_j (score x_i[1] (x_k[1] +
//     x_k[n-1])), M^h = s_h I, sum_h s_h = 1.
//   layers >= 2: every layer but the last writes content only (M = P ...),
//     so the flags pass through unchanged and later scores see the same
//     flags; the content of the ordinary tokens never changes (their rows
//     add 0), so piece O can be read in any layer, while piece T must be
//     taken whole before x_j's content changes:
//     layer 0, head 0: score x_i[1] (x_k[1] + w_0 x_k[n-1]), M = P
//       (piece T whole, share w_0 of piece O);
//     every other head of layers 0..last-1: score x_i[1] x_k[n-1],
//       M = w P (a share w of piece O; the w's sum to 1);
//     last layer, heads split between the two flags: score x_i[1] x_k[1]
//       with M = s E_1, or x_i[1] x_k[n-1] with M = s E_{n-1} (one head:
//       uniform score and M = E_1 + E_{n-1}).
// Every head contributes (zeroing its M changes the trigger row's output).
template <class T>
Model<T> relu_residual_construction(int n, int layers, int heads) {
  const int trigger = kTriggerFlag, ordinary = ordinary_flag(n);
  const auto zero = [n]() { return Matrix<T>::Constant(n, n, T(0)); };
  const auto projection = [&](const std::vector<int>& coords, const T& w) {
    Matrix<T> M = zero();
    for (int c : coords) M(c, c) = w;
    return M;
  };
  std::vector<int> content;
  for (int c = kFirstContent; c < ordinary; ++c) content.push_back(c);
  Model<T> m;
  m.kind = ModelKind::kResidual;
  m.attention = AttentionKind::kRelu;
  m.n = n;
  m.layers.assign(layers, std::vector<Head<T>>(heads, Head<T>{zero(), zero()}));
  if (layers == 1) {
    const std::vector<T> s = dyadic_shares<T>(heads);
    for (int h = 0; h < heads; ++h) {
      m.layers[0][h].A(trigger, trigger) = T(1);
      m.layers[0][h].A(trigger, ordinary) = T(1);
      m.layers[0][h].M = Matrix<T>::Identity(n, n) * s[h];
    }
    return m;
  }
  // Piece O over the heads of layers 0..layers-2, head (0, 0) first.
  const std::vector<T> w = dyadic_shares<T>((layers - 1) * heads);
  for (int l = 0; l + 1 < layers; ++l) {
    for (int h = 0; h < heads; ++h) {
      Head<T>& head = m.layers[l][h];
      const T& share = w[l * heads + h];
      if (l == 0 && h == 0) {
        head.A(trigger, trigger) = T(1);
        head.A(trigger, ordinary) = share;
        head.M = projection(content, T(1));
      } else {
        head.A(trigger, ordinary) = T(1);
        head.M = projection(content, share);
      }
    }
  }
  Head<T>* last = m.layers.back().data();
  if (heads == 1) {
    last[0].A(trigger, trigger) = T(1);
    last[0].A(trigger, ordinary) = T(1);
    last[0].M = projection({trigger, ordinary}, T(1));
    return m;
  }
  // Even heads: the trigger flag; odd heads: the ordinary flag.
  const std::vector<T> st = dyadic_shares<T>((heads + 1) / 2), so = dyadic_shares<T>(heads / 2);
  for (int h = 0; h < heads; ++h) {
    const bool even = h % 2 == 0;
    last[h].A(trigger, even ? trigger : ordinary) = T(1);
    last[h].M = projection({even ? trigger : ordinary}, even ? st[h / 2] : so[h / 2]);
  }
  return m;
}

}  // namespace sinkcert
