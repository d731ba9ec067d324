// SPDX-License-Identifier: MIT
#include "theorems/bounds/deep_symbolic_pass.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sinkcert::theorems {

bool symbolic_pass_supported(AttentionKind kind) {
  return kind == AttentionKind::kSoftmax || kind == AttentionKind::kSoftmaxOffByOne;
}

std::vector<SymbolicForm> deep_symbolic_error(const Model<Mpfi>& model, const Task& task,
                                              const ContentBox& box,
                                              const std::function<bool(int, int)>& stop,
                                              bool drop_product_remainder) {
  if (!symbolic_pass_supported(model.attention)) {
    throw std::invalid_argument("deep_symbolic_error: softmax attention only");
  }
  const int L = task.L, n = task.n, j = box.trigger, cd = task.content_dim();
  // the content symbols, then one fresh symbol per term of every layer's
  // output but the last (its remainder, shared by phi and the stream)
  const int content = static_cast<int>(box.lo.size());
  const SymbolicArithmetic sa(content + (model.num_layers() - 1) * L * n, drop_product_remainder);
  // the flags (exact 0 and 1), the content as one symbol per variable
  const Matrix<double> X0 =
      make_input<double>(task, j, Matrix<double>::Zero(L - 1, cd));  // content set below
  std::vector<SymbolicForm> x(static_cast<std::size_t>(L) * n);
  for (int k = 0; k < L; ++k) {
    for (int e = 0; e < n; ++e) x[k * n + e] = sa.constant(X0(k, e));
  }
  for (int k = 1; k < L; ++k) {
    for (int c = 0; c < cd; ++c) {
      const int m = content_variable(task, k, c);
      x[k * n + kFirstContent + c] = sa.variable(m, box.lo[m], box.hi[m]);
    }
  }
  // the model's entries as doubles with radii (MPFI enclosures of the exact ones)
  struct HeadEntries {
    std::vector<RadiusDouble> A, M;  // row-major n x n
  };
  std::vector<std::vector<HeadEntries>> entries(model.num_layers());
  for (int l = 0; l < model.num_layers(); ++l) {
    for (const Head<Mpfi>& head : model.layers[l]) {
      HeadEntries h;
      for (int p = 0; p < n; ++p) {
        for (int e = 0; e < n; ++e) {
          h.A.push_back(radius_double(head.A(p, e)));
          h.M.push_back(radius_double(head.M(p, e)));
        }
      }
      entries[l].push_back(std::move(h));
    }
  }
  const auto is_zero = [](const RadiusDouble& v) { return v.mid == 0 && v.rad == 0; };
  std::vector<SymbolicForm> phi(static_cast<std::size_t>(L) * n);
  // the mean term: -(1/j) sum_{k=1..j} x_k at the trigger row
  RadiusDouble minus_inv_j = radius_double(Mpfi(-1) / Mpfi(j));
  for (int e = 0; e < n; ++e) {
    for (int k = 1; k <= j; ++k) sa.add_scaled(phi[j * n + e], minus_inv_j, x[k * n + e]);
  }
  const bool off_by_one = model.attention == AttentionKind::kSoftmaxOffByOne;
  const int head_rows = model.num_layers() * model.num_heads() * L;
  int done = 0;
  for (int l = 0; l < model.num_layers(); ++l) {
    std::vector<SymbolicForm> delta(static_cast<std::size_t>(L) * n);
    for (const HeadEntries& head : entries[l]) {
      for (int i = 0; i < L; ++i) {
        if (stop(done++, head_rows)) return {};
        // q_e = sum_p A_pe x_ip
        std::vector<SymbolicForm> q(n);
        for (int e = 0; e < n; ++e) {
          for (int p = 0; p < n; ++p) {
            if (!is_zero(head.A[p * n + e])) sa.add_scaled(q[e], head.A[p * n + e], x[i * n + p]);
          }
        }
        // s_k = sum_e q_e x_ke
        std::vector<SymbolicForm> s(i + 1);
        for (int k = 0; k <= i; ++k) {
          for (int e = 0; e < n; ++e) sa.add(s[k], sa.product(q[e], x[k * n + e]));
        }
        // a_k = 1 / (1 + sum_{m != k} exp(s_m - s_k) [+ exp(-s_k)]), denominator >= 1
        std::vector<SymbolicForm> a(i + 1);
        for (int k = 0; k <= i; ++k) {
          SymbolicForm denominator = sa.constant(1.0);
          for (int m = 0; m <= i; ++m) {
            if (m != k) sa.add(denominator, sa.exp(sa.difference(s[m], s[k])));
          }
          if (off_by_one) sa.add(denominator, sa.exp(sa.difference(SymbolicForm{}, s[k])));
          a[k] = sa.reciprocal_at_least(denominator, 1.0);
        }
        // V_e = sum_k a_k x_ke,  delta_i += M V
        std::vector<SymbolicForm> V(n);
        for (int k = 0; k <= i; ++k) {
          for (int e = 0; e < n; ++e) sa.add(V[e], sa.product(a[k], x[k * n + e]));
        }
        for (int d = 0; d < n; ++d) {
          for (int e = 0; e < n; ++e) {
            if (!is_zero(head.M[d * n + e]))
              sa.add_scaled(delta[i * n + d], head.M[d * n + e], V[e]);
          }
        }
      }
    }
    for (std::size_t t = 0; t < delta.size(); ++t) {
      // x^(l+1) = x^(l) + delta and phi += delta share delta's remainder
      if (l + 1 < model.num_layers()) {
        sa.remainder_to_symbol(delta[t], content + l * L * n + static_cast<int>(t));
      }
      sa.add(phi[t], delta[t]);
      sa.add(x[t], delta[t]);
    }
  }
  return phi;
}

}  // namespace sinkcert::theorems
