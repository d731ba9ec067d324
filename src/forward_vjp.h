// SPDX-License-Identifier: MIT
//
// The reverse-mode derivative (vector-Jacobian product) of the forward pass,
// one template for every scalar type (double, ceres::Jet, Mpfr, Mpfi).
//
// Forward, per layer l with input x = x^(l) (L x n), head h = (A, M), query
// row i (head_row_forward):
//   q_i  = A^T x_i,   s_ik = q_i . x_k = x_i^T A x_k   (k <= i)
//   a_i. = attention_row(s_i.),   V_i = sum_{k<=i} a_ik x_k,   o_i = M V_i
//   x^(l+1) = sum_h o (single-layer)  or  x + sum_h o (residual)
// Reverse, for a scalar phi with cotangents dO_i = dphi/do_i and (optionally)
// z0_ik = dphi/da_ik given directly (e.g. a BOS-mass term phi = a_i0)
// (head_row_vjp):
//   dM  += dO_i V_i^T
//   u    = M^T dO_i                       (= dphi/dV_i)
//   z_k  = u . x_k + z0_ik                (= dphi/da_ik)
//   g_k  = attention_row_vjp(z)           (= dphi/ds_ik, src/attention.h)
//   w    = sum_k g_k x_k
//   dx_k += a_ik u + g_k q_i              (k <= i)
//   dx_i += A w
//   dA  += x_i w^T
// Gated attention, o_i = g * p with p = M V_i, g = sigma(G x_i) (* elementwise):
// the steps above run with dO_i replaced by g * dO_i (the cotangent of p), and
//   c    = dO_i * p * g * (1 - g)         (= dphi/d(G x_i))
//   dG  += c x_i^T,   dx_i += G^T c
// forward_vjp runs this for every row of every head, from the last layer to
// the first, with dx^(l) = dx^(l+1) + (head terms) for residual layers and
// dx^(l) = (head terms) for single-layer ones. Rows whose cotangents are all
// exactly zero are skipped (a term at one output row costs O(n^2 + i n)).
// Cost of a full pass: that of the forward pass, O(L n^2 + L^2 n) per head.
// Batched (forward_vjp_batch, ungated kinds): K cotangents dY_c in one pass,
// the per-cotangent vectors stacked as rows of K x n matrices at each row i:
//   U = DO M,  Z = U X^T (k <= i),  G_c. = attention_row_vjp(Z_c.),
//   W = G X,  dx_c,k += a_ik U_c + G_ck q_i,  dx_c,i += (W A^T)_c,
//   dA_c += x_i W_c^T,  dM_c += dO_c V_i^T
// (DO_c = dphi_c/do_i): the n Jacobian rows of an output row in one pass.
// Derivative conventions of the attention kinds (ReLU at a zero score:
// derivative 0; intervals: the hull of the one-sided derivatives) are those
// of attention_row_vjp. With T = Mpfi on an interval input, the result
// encloses the derivative at every point of the box.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "src/attention.h"
#include "src/model.h"

namespace sinkcert {

namespace internal {

template <class T>
struct IsJet : std::false_type {};
template <class U, int N>
struct IsJet<ceres::Jet<U, N>> : std::true_type {};

// Whether x is exactly zero (a Jet: value and every derivative part).
template <class T>
bool is_exact_zero(const T& x) {
  if constexpr (IsJet<T>::value) {
    return x.a == 0 && x.v.isZero(0);
  } else if constexpr (ScalarTraits<T>::kIsInterval) {
    return lower_of(x) == 0 && upper_of(x) == 0;
  } else {
    return x == T(0);
  }
}

// T in a parameter position that does not take part in deduction (so that
// nullptr may be passed for the optional pointers).
template <class T>
struct NonDeduced {
  using type = T;
};
template <class T>
using NonDeducedT = typename NonDeduced<T>::type;

}  // namespace internal

// What the reverse pass reads of one head at one query row i.
template <class T>
struct HeadRow {
  int i = 0;
  Vector<T> query;   // q = A^T x_i
  std::vector<T> s;  // s_ik, k = 0..i
  std::vector<T> a;  // a_ik, k = 0..i (a caller may replace them by tighter
                     // enclosures of the same weights)
  Vector<T> mixed;   // V_i = sum_k a_ik x_k
  Vector<T> gate;    // g_i = sigma(G x_i), gated attention only (else empty)
};

// The forward pass of one head at query row i of a layer with input x. A
// may be any n x n expression (a Ceres parameter block is read in place,
// row-major: src/parameter_layout.h row_major_view).
template <class T, class AMatrix>
HeadRow<T> head_row_forward(AttentionKind kind, const Eigen::MatrixBase<AMatrix>& A,
                            const Matrix<T>& x, int i) {
  HeadRow<T> row;
  row.i = i;
  // q = A^T x_i, s_k = q . x_k
  row.query = matrix_product(A.transpose(), x.row(i).transpose());
  row.s.resize(i + 1);
  row.a.resize(i + 1);
  for (int k = 0; k <= i; ++k) row.s[k] = row.query.dot(x.row(k));
  attention_row(kind, i, row.s.data(), row.a.data());
  // V_i = sum_k a_k x_k
  row.mixed = row.a[0] * x.row(0).transpose();
  for (int k = 1; k <= i; ++k) row.mixed += row.a[k] * x.row(k).transpose();
  return row;
}
// From a Head: for gated attention also the gate g_i = sigma(G x_i) (the
// overload above, which sees A only, leaves it empty).
template <class T>
HeadRow<T> head_row_forward(AttentionKind kind, const Head<T>& head, const Matrix<T>& x, int i) {
  HeadRow<T> row = head_row_forward(kind, head.A, x, i);
  if (kind == AttentionKind::kGated) row.gate = head_gate(head.G, Vector<T>(x.row(i).transpose()));
  return row;
}

// The head output at the row: o_i = M V_i, times the gate for gated attention.
template <class T>
Vector<T> head_row_output(AttentionKind kind, const Head<T>& head, const HeadRow<T>& row) {
  Vector<T> out = matrix_product(head.M, row.mixed);
  if (kind == AttentionKind::kGated) out.array() *= row.gate.array();
  return out;
}

// Accumulates the reverse pass of one head at one row (header formulas).
// d_out: dphi/do_i (n entries) or nullptr; d_attention: dphi/da_ik for
// k = 0..i or nullptr. dx (L x n), dA and dM (n x n) are added to, each may
// be nullptr when not wanted. keys, if given, holds (A x_k)^T in row k, and
// dx_i gets sum_k g_k (A x_k) from it instead of A w (equal in exact
// arithmetic; over an interval box the keys' enclosure is the one the
// caller already has). Returns sum_k a_ik z_k = dO_i . o_i + sum_k z0_ik a_ik,
// the cotangents applied to the row's own outputs (for phi = sigma o_i[d]
// it is phi, as sum_k a_ik (sigma M[d, :] . x_k)). Gated attention: the row
// must come from the Head overload of head_row_forward (it carries the
// gate), and dG (n x n, may be nullptr) is added dphi/dG.
template <class T>
T head_row_vjp(AttentionKind kind, const Head<T>& head, const internal::NonDeducedT<Matrix<T>>& x,
               const internal::NonDeducedT<HeadRow<T>>& row,
               const internal::NonDeducedT<Vector<T>>* d_out,
               const internal::NonDeducedT<T>* d_attention, internal::NonDeducedT<Matrix<T>>* dx,
               internal::NonDeducedT<Matrix<T>>* dA, internal::NonDeducedT<Matrix<T>>* dM,
               const internal::NonDeducedT<Matrix<T>>* keys = nullptr,
               internal::NonDeducedT<Matrix<T>>* dG = nullptr) {
  const int i = row.i, n = static_cast<int>(x.cols());
  std::vector<T> z(i + 1, T(0)), g(i + 1);
  Vector<T> u;          // dphi/dV_i
  Vector<T> gated_out;  // gated: g * dO_i, the cotangent of p = M V_i
  if (kind == AttentionKind::kGated && d_out) {
    if (row.gate.size() != n) {
      throw std::invalid_argument(
          "head_row_vjp: gated attention needs the row's gate (head_row_forward from a Head)");
    }
    gated_out = d_out->cwiseProduct(row.gate);
    if (dG || dx) {
      // c = dO_i * p * g * (1 - g)
      const Vector<T> p = matrix_product(head.M, row.mixed);
      Vector<T> c(n);
      for (int d = 0; d < n; ++d) c(d) = (*d_out)(d)*p(d) * row.gate(d) * (T(1) - row.gate(d));
      // dG += c x_i^T
      if (dG) {
        for (int d = 0; d < n; ++d) {
          for (int e = 0; e < n; ++e) (*dG)(d, e) += c(d) * x(i, e);
        }
      }
      // dx_i += G^T c
      if (dx) dx->row(i) += matrix_product(head.G.transpose(), c).transpose();
    }
    d_out = &gated_out;
  }
  if (d_out) {
    // dM += dO_i V_i^T
    if (dM) {
      for (int d = 0; d < n; ++d) {
        if (internal::is_exact_zero((*d_out)(d))) continue;
        for (int e = 0; e < n; ++e) (*dM)(d, e) += (*d_out)(d)*row.mixed(e);
      }
    }
    // u = M^T dO_i = sum_d dO_i[d] M[d, :]^T over the nonzero dO_i[d]
    // (a term at one output coordinate costs n, not n^2)
    u = Vector<T>::Constant(n, T(0));
    for (int d = 0; d < n; ++d) {
      if (!internal::is_exact_zero((*d_out)(d))) u += (*d_out)(d)*head.M.row(d).transpose();
    }
    // z_k = u . x_k
    for (int k = 0; k <= i; ++k) z[k] = u.dot(x.row(k));
  }
  if (d_attention) {
    for (int k = 0; k <= i; ++k) z[k] += d_attention[k];
  }
  // sum_k a_k z_k
  T applied = row.a[0] * z[0];
  for (int k = 1; k <= i; ++k) applied += row.a[k] * z[k];
  // g_k = dphi/ds_ik
  attention_row_vjp(kind, i, row.s.data(), row.a.data(), z.data(), g.data(), &applied);
  // w = sum_k g_k x_k (read by dA and, without keys, dx_i)
  Vector<T> w;
  if (dA || (dx && !keys)) {
    w = g[0] * x.row(0).transpose();
    for (int k = 1; k <= i; ++k) w += g[k] * x.row(k).transpose();
  }
  // dx_k += a_k u + g_k q
  if (dx) {
    for (int k = 0; k <= i; ++k) {
      if (d_out) {
        dx->row(k) += (row.a[k] * u + g[k] * row.query).transpose();
      } else {
        dx->row(k) += g[k] * row.query.transpose();
      }
      // dx_i += g_k A x_k
      if (keys) dx->row(i) += g[k] * keys->row(k);
    }
    // dx_i += A w
    if (!keys) dx->row(i) += matrix_product(head.A, w).transpose();
  }
  // dA += x_i w^T
  if (dA) {
    for (int p = 0; p < n; ++p) {
      const T xp = x(i, p);
      if (internal::is_exact_zero(xp)) continue;
      for (int q = 0; q < n; ++q) (*dA)(p, q) += xp * w(q);
    }
  }
  return applied;
}

// The reverse pass of one head at row i for the n unit cotangents e_d on o_i
// at once (the rows of the Jacobian of o_i; a least-squares Jacobian row
// block): row d of the result is w_d = sum_k g^d_k x_k with g^d =
// attention_row_vjp(z^d), z^d_k = M[d, :] . x_k, so that
//   d o_i[d] / dA = x_i w_d^T,   d o_i[d] / dM = e_d V_i^T.
// Equal to n calls of head_row_vjp, at the cost of one. M may be any n x n
// expression; out, if given, is o_i = M V_i, which is sum_k a_k z^d_k in its
// d-th entry (the softmax rule's weighted mean).
template <class T, class MMatrix>
Matrix<T> head_row_output_jacobian(AttentionKind kind, const Eigen::MatrixBase<MMatrix>& M,
                                   const internal::NonDeducedT<Matrix<T>>& x, const HeadRow<T>& row,
                                   const internal::NonDeducedT<Vector<T>>* out = nullptr) {
  if (kind == AttentionKind::kGated) {
    throw std::invalid_argument(
        "head_row_output_jacobian: gated attention is not covered (use head_row_vjp)");
  }
  const int i = row.i, n = static_cast<int>(x.cols());
  const auto xi = x.topRows(i + 1);
  // Z(k, d) = z^d_k = M[d, :] . x_k
  const Matrix<T> Z = matrix_product(xi, M.transpose());
  Matrix<T> G(i + 1, n);  // G(k, d) = g^d_k
  std::vector<T> z(i + 1), g(i + 1);
  for (int d = 0; d < n; ++d) {
    for (int k = 0; k <= i; ++k) z[k] = Z(k, d);
    attention_row_vjp(kind, i, row.s.data(), row.a.data(), z.data(), g.data(),
                      out ? &(*out)(d) : nullptr);
    for (int k = 0; k <= i; ++k) G(k, d) = g[k];
  }
  // row d: w_d = sum_k g^d_k x_k
  return matrix_product(G.transpose(), xi);
}

// The reverse pass for phi = a_i0 of a softmax head, in closed form: with
// g_k = a_i0 ([k = 0] - a_ik) (src/attention.h),
//   w = sum_k g_k x_k = a_i0 (x_0 - V_i),
//   dphi/dA += (a_i0 x_i) (x_0 - V_i)^T
// (equal to head_row_vjp with cotangent 1 on a_i0; the BOS-mass terms of a
// search call this once per probe row).
template <class T>
void bos_mass_row_vjp(AttentionKind kind, const internal::NonDeducedT<Matrix<T>>& x,
                      const HeadRow<T>& row, internal::NonDeducedT<Matrix<T>>& dA) {
  if (kind != AttentionKind::kSoftmax && kind != AttentionKind::kSoftmaxOffByOne &&
      kind != AttentionKind::kGated) {
    throw std::invalid_argument("bos_mass_row_vjp: softmax kinds only");
  }
  // dA += (a_i0 x_i) (x_0 - V_i)^T
  dA += row.a[0] * x.row(row.i).transpose() * (x.row(0).transpose() - row.mixed).transpose();
}

// Everything the reverse pass reads: layer inputs and every head row.
template <class T>
struct ForwardTape {
  std::vector<Matrix<T>> inputs;                           // [l]: x^(l), L x n
  std::vector<std::vector<std::vector<HeadRow<T>>>> rows;  // [l][h][i]; empty rows not computed
  Matrix<T> output;                                        // f(X), L x n

  // a^{l,h}_{ik} (rows computed only).
  const T& attention(int l, int h, int i, int k) const { return rows[l][h][i].a[k]; }
};

// The forward pass of `model` on X, recorded for forward_vjp. With only_row
// >= 0 only output row only_row is computed (and the rows 0..only_row that
// it reads in earlier layers); the other output rows are zero and their
// HeadRows are empty.
template <class T>
ForwardTape<T> forward_tape(const Model<T>& model, const Matrix<T>& X, int only_row = -1) {
  const int L = static_cast<int>(X.rows()), n = static_cast<int>(X.cols());
  if (n != model.n) {
    throw std::invalid_argument("input has " + std::to_string(n) +
                                " coordinates, model expects n = " + std::to_string(model.n));
  }
  if (only_row >= L) throw std::invalid_argument("forward_tape: row outside the input");
  ForwardTape<T> tape;
  Matrix<T> x = X;
  const int layers = model.num_layers();
  for (int l = 0; l < layers; ++l) {
    const bool last = l + 1 == layers;
    const int first_row = only_row >= 0 && last ? only_row : 0;
    const int end_row = only_row >= 0 ? only_row + 1 : L;
    tape.inputs.push_back(x);
    tape.rows.emplace_back();
    Matrix<T> delta = Matrix<T>::Constant(L, n, T(0));
    for (const Head<T>& head : model.layers[l]) {
      tape.rows.back().emplace_back(L);
      for (int i = first_row; i < end_row; ++i) {
        HeadRow<T> row = head_row_forward(model.attention, head, x, i);
        if (model.attention == AttentionKind::kGated) {
          // o_i = g_i * (M V_i)
          delta.row(i) += head_row_output(model.attention, head, row).transpose();
        } else {
          // o_i = M V_i
          delta.row(i) += matrix_product(head.M, row.mixed).transpose();
        }
        tape.rows.back().back()[i] = std::move(row);
      }
    }
    if (model.kind == ModelKind::kResidual) {
      x += delta;
    } else {
      x = delta;
    }
  }
  tape.output = std::move(x);
  return tape;
}

// dphi/dX and dphi/d(A, M) (and G, gated) of every head.
template <class T>
struct ForwardGradient {
  Matrix<T> dX;                              // L x n
  std::vector<std::vector<Head<T>>> dheads;  // [l][h] {dA, dM, dG (gated only)}; empty
                                             // unless asked for
  // [l]: the cotangents applied to layer l's head outputs and attention
  // weights, sum_{h,i} (dO^(l)_i . o^(l,h)_i + sum_k z0_ik a^(l,h)_ik), each
  // row's part summed as sum_k a_ik z_k (head_row_vjp). For a single-layer
  // model and a cotangent dY alone it is dY . f(X).
  std::vector<T> applied;
};

// The vector-Jacobian product of forward() at the taped point: for the
// scalar phi with dphi/df(X) = dY (L x n) and, if given, dphi/da^{l,h}_{ik}
// = (*d_attention)[l][h](i, k) (L x L each; entries above the diagonal are
// ignored), returns dphi/dX and, with weights = true, dphi/dA, dphi/dM
// (and dphi/dG for gated attention).
template <class T>
ForwardGradient<T> forward_vjp(
    const Model<T>& model, const internal::NonDeducedT<ForwardTape<T>>& tape,
    const internal::NonDeducedT<Matrix<T>>& dY,
    const internal::NonDeducedT<std::vector<std::vector<Matrix<T>>>>* d_attention = nullptr,
    bool weights = true) {
  const int L = static_cast<int>(dY.rows()), n = static_cast<int>(dY.cols());
  const int layers = model.num_layers();
  ForwardGradient<T> out;
  if (weights) {
    out.dheads.resize(layers);
    for (int l = 0; l < layers; ++l) {
      for (std::size_t h = 0; h < model.layers[l].size(); ++h) {
        out.dheads[l].push_back(
            Head<T>{Matrix<T>::Constant(n, n, T(0)), Matrix<T>::Constant(n, n, T(0))});
        if (model.attention == AttentionKind::kGated) {
          out.dheads[l].back().G = Matrix<T>::Constant(n, n, T(0));
        }
      }
    }
  }
  out.applied.assign(layers, T(0));
  Matrix<T> dx = dY;
  std::vector<T> z;
  for (int l = layers - 1; l >= 0; --l) {
    const Matrix<T>& x = tape.inputs[l];
    Matrix<T> dx_in = model.kind == ModelKind::kResidual ? dx : Matrix<T>::Constant(L, n, T(0));
    for (std::size_t h = 0; h < model.layers[l].size(); ++h) {
      const Head<T>& head = model.layers[l][h];
      for (int i = 0; i < L; ++i) {
        const Vector<T> d_out = dx.row(i).transpose();
        bool out_zero = true;
        for (int d = 0; d < n && out_zero; ++d) out_zero = internal::is_exact_zero(d_out(d));
        const T* d_att = nullptr;
        if (d_attention) {
          const Matrix<T>& da = (*d_attention)[l][h];
          z.assign(i + 1, T(0));
          bool att_zero = true;
          for (int k = 0; k <= i; ++k) {
            z[k] = da(i, k);
            att_zero = att_zero && internal::is_exact_zero(z[k]);
          }
          if (!att_zero) d_att = z.data();
        }
        if (out_zero && !d_att) continue;
        const HeadRow<T>& row = tape.rows[l][h][i];
        if (static_cast<int>(row.a.size()) != i + 1) {
          throw std::invalid_argument("forward_vjp: a cotangent on a row the tape did not compute");
        }
        out.applied[l] += head_row_vjp(model.attention, head, x, row, out_zero ? nullptr : &d_out,
                                       d_att, &dx_in, weights ? &out.dheads[l][h].A : nullptr,
                                       weights ? &out.dheads[l][h].M : nullptr, nullptr,
                                       weights ? &out.dheads[l][h].G : nullptr);
      }
    }
    dx = std::move(dx_in);
  }
  out.dX = std::move(dx);
  return out;
}

// The reverse pass of one head at row i for K cotangents at once (header,
// batched): DO (K x n) holds dphi_c/do_i in row c; dx[c] (L x n), (*dA)[c]
// and (*dM)[c] (n x n) are added to (dA, dM may be nullptr). Ungated kinds.
template <class T>
void head_row_vjp_batch(AttentionKind kind, const Head<T>& head,
                        const internal::NonDeducedT<Matrix<T>>& x,
                        const internal::NonDeducedT<HeadRow<T>>& row,
                        const internal::NonDeducedT<Matrix<T>>& DO, std::vector<Matrix<T>>& dx,
                        std::vector<Matrix<T>>* dA, std::vector<Matrix<T>>* dM) {
  const int i = row.i, n = static_cast<int>(x.cols()), K = static_cast<int>(DO.rows());
  const auto xi = x.topRows(i + 1);
  // U = DO M (row c: u_c = M^T dO_c), Z = U X^T
  const Matrix<T> U = matrix_product(DO, head.M);
  const Matrix<T> Z = matrix_product(U, xi.transpose());
  Matrix<T> G(K, i + 1);
  std::vector<T> z(i + 1), g(i + 1);
  for (int c = 0; c < K; ++c) {
    // applied = sum_k a_k z_k (the softmax rule's weighted mean)
    T applied = row.a[0] * Z(c, 0);
    for (int k = 0; k <= i; ++k) {
      z[k] = Z(c, k);
      if (k > 0) applied += row.a[k] * z[k];
    }
    attention_row_vjp(kind, i, row.s.data(), row.a.data(), z.data(), g.data(), &applied);
    for (int k = 0; k <= i; ++k) G(c, k) = g[k];
  }
  // W = G X (row c: w_c = sum_k g_ck x_k), A W^T (column c: A w_c)
  const Matrix<T> W = matrix_product(G, xi);
  const Matrix<T> AW = matrix_product(head.A, W.transpose());
  for (int c = 0; c < K; ++c) {
    // dx_c,k += a_k u_c + g_ck q;  dx_c,i += A w_c
    for (int k = 0; k <= i; ++k) {
      dx[c].row(k) += (row.a[k] * U.row(c).transpose() + G(c, k) * row.query).transpose();
    }
    dx[c].row(i) += AW.col(c).transpose();
    for (int p = 0; p < n; ++p) {
      for (int q = 0; q < n; ++q) {
        // dA_c += x_i w_c^T;  dM_c += dO_c V_i^T
        if (dA) (*dA)[c](p, q) += x(i, p) * W(c, q);
        if (dM) (*dM)[c](p, q) += DO(c, p) * row.mixed(q);
      }
    }
  }
}

// The vector-Jacobian products of forward() at the taped point for K
// cotangents dY[c] (L x n each) in one pass (header, batched): element c
// holds dphi_c/dX and dphi_c/d(A, M) of every head (applied is left
// empty). Equal to K calls of forward_vjp without d_attention, up to
// rounding. Ungated kinds.
template <class T>
std::vector<ForwardGradient<T>> forward_vjp_batch(
    const Model<T>& model, const internal::NonDeducedT<ForwardTape<T>>& tape,
    const internal::NonDeducedT<std::vector<Matrix<T>>>& dY) {
  if (model.attention == AttentionKind::kGated) {
    throw std::invalid_argument("forward_vjp_batch: gated attention is not covered (forward_vjp)");
  }
  const int K = static_cast<int>(dY.size()), layers = model.num_layers();
  const int n = model.n;
  std::vector<ForwardGradient<T>> out(K);
  if (K == 0) return out;
  const int L = static_cast<int>(dY[0].rows());
  std::vector<Matrix<T>> dx = dY;
  Matrix<T> DO(K, n);
  for (int l = layers - 1; l >= 0; --l) {
    const Matrix<T>& x = tape.inputs[l];
    std::vector<Matrix<T>> dx_in = model.kind == ModelKind::kResidual
                                       ? dx
                                       : std::vector<Matrix<T>>(K, Matrix<T>::Constant(L, n, T(0)));
    for (std::size_t h = 0; h < model.layers[l].size(); ++h) {
      std::vector<Matrix<T>> dA(K, Matrix<T>::Constant(n, n, T(0))), dM = dA;
      for (int i = 0; i < L; ++i) {
        bool zero = true;
        for (int c = 0; c < K; ++c) {
          DO.row(c) = dx[c].row(i);
          for (int d = 0; d < n && zero; ++d) zero = internal::is_exact_zero(DO(c, d));
        }
        if (zero) continue;
        const HeadRow<T>& row = tape.rows[l][h][i];
        if (static_cast<int>(row.a.size()) != i + 1) {
          throw std::invalid_argument(
              "forward_vjp_batch: a cotangent on a row the tape did not compute");
        }
        head_row_vjp_batch(model.attention, model.layers[l][h], x, row, DO, dx_in, &dA, &dM);
      }
      for (int c = 0; c < K; ++c) {
        if (out[c].dheads.size() != static_cast<std::size_t>(layers)) out[c].dheads.resize(layers);
        out[c].dheads[l].push_back(Head<T>{std::move(dA[c]), std::move(dM[c])});
      }
    }
    dx = std::move(dx_in);
  }
  for (int c = 0; c < K; ++c) out[c].dX = std::move(dx[c]);
  return out;
}

}  // namespace sinkcert
