// SPDX-License-Identifier: MIT
#include "theorems/bounds/deep_symbolic_pass.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>

#include "src/interval.h"
#include "theorems/bounds/second_order_row.h"

namespace sinkcert::theorems::bounds {

namespace {

// The model's entries as doubles with radii (MPFI enclosures of the exact
// ones); D = A - A_r, the score matrix relative to the layer's first head r,
// enclosed from the MPFI difference.
struct HeadEntries {
  std::vector<RadiusDouble> A, M, D;  // row-major n x n
};

bool is_zero(const RadiusDouble& v) { return v.mid == 0 && v.rad == 0; }

// The width norm + r of a form (what the choice between two enclosures of
// the same term compares).
double width(const SymbolicForm& a) { return a.norm + a.r; }

// sup |v| over a form's range.
double magnitude(const SymbolicForm& a) {
  const SymbolicRange r = symbolic_range(a);
  return std::max(std::fabs(r.lo), std::fabs(r.hi));
}

struct Pass {
  const SymbolicArithmetic& sa;
  int n, rows;
  bool off_by_one;
  SymbolicVariant variant;
  const std::function<bool(int, int)>& stop;
  int done = 0, head_rows = 0;
};

// q_e = sum_p B_pe x_ip (B = A, or D for the score difference)
std::vector<SymbolicForm> query(const Pass& p, const std::vector<RadiusDouble>& B,
                                const std::vector<SymbolicForm>& x, int i) {
  std::vector<SymbolicForm> q(p.n);
  for (int e = 0; e < p.n; ++e) {
    for (int r = 0; r < p.n; ++r) {
      if (!is_zero(B[r * p.n + e])) p.sa.add_scaled(q[e], B[r * p.n + e], x[i * p.n + r]);
    }
  }
  return q;
}

// s_k = sum_e q_e x_ke, k = 0..i
std::vector<SymbolicForm> scores(const Pass& p, const std::vector<SymbolicForm>& q,
                                 const std::vector<SymbolicForm>& x, int i) {
  std::vector<SymbolicForm> s(i + 1);
  for (int k = 0; k < i; ++k) {
    for (int e = 0; e < p.n; ++e) p.sa.add(s[k], p.sa.product(q[e], x[k * p.n + e]));
  }
  // the row's own key: q = B^T x_i, so s_i = x_i^T B x_i, whose quadratic
  // part is bounded as one form (SymbolicArithmetic::dot)
  const std::vector<SymbolicForm> own(x.begin() + static_cast<std::ptrdiff_t>(i) * p.n,
                                      x.begin() + static_cast<std::ptrdiff_t>(i + 1) * p.n);
  s[i] = p.sa.dot(q, own);
  return s;
}

// o_{i,d} = W_{0,d} + sum_{k>=1} a_k (W_{k,d} - W_{0,d})   (softmax: sum_k a_k = 1)
// o_{i,d} = sum_{k>=0} a_k W_{k,d}                          (off-by-one)
// Softmax, also around the centres abar_k of the weights' forms and the
// middle c_d of the values' hull (sum_k (a_k - abar_k) = eta := 1 - sum_k abar_k):
// o_{i,d} = sum_k abar_k W_{k,d} + eta c_d + sum_k (a_k - abar_k)(W_{k,d} - c_d),
// where a value far from the others (BOS's, at a row that barely reads it)
// costs its weight's remainder times its distance to c_d, not to W_{0,d};
// the narrower of the two forms is kept (both enclose o_{i,d}).
SymbolicForm weighted_value(const Pass& p, const std::vector<SymbolicForm>& a,
                            const std::vector<SymbolicForm>& W, int i, int d) {
  if (p.off_by_one) {
    SymbolicForm o;
    for (int k = 0; k <= i; ++k) p.sa.add(o, p.sa.product(a[k], W[k * p.n + d]));
    return o;
  }
  SymbolicForm o = W[d];
  for (int k = 1; k <= i; ++k) {
    p.sa.add(o, p.sa.product(a[k], p.sa.difference(W[k * p.n + d], W[d])));
  }
  double lo = INFINITY, hi = -INFINITY;
  Mpfi eta(1);
  for (int k = 0; k <= i; ++k) {
    const SymbolicRange r = symbolic_range(W[k * p.n + d]);
    lo = std::min(lo, r.lo);
    hi = std::max(hi, r.hi);
    eta -= point_interval(Mpfr(a[k].c));
  }
  if (!(lo <= hi)) return o;  // a NaN range: the first form only
  const double c = 0.5 * (lo + hi);
  const SymbolicForm centre = p.sa.constant(c);
  SymbolicForm centred;
  p.sa.add_scaled(centred, radius_double(eta), centre);
  for (int k = 0; k <= i; ++k) {
    p.sa.add_scaled(centred, {a[k].c, 0.0}, W[k * p.n + d]);
    // a_k - abar_k: the form without its centre (exact)
    SymbolicForm deviation = a[k];
    deviation.c = 0.0;
    p.sa.add(centred, p.sa.product(deviation, p.sa.difference(W[k * p.n + d], centre)));
  }
  return width(centred) < width(o) ? centred : o;
}

// One layer's output delta_{i,d} = sum_h o^h_{i,d} (header: the per-head
// sum, or the fused form when it is narrower); false when stop() said so.
bool layer_output(Pass& p, const std::vector<HeadEntries>& heads,
                  const std::vector<SymbolicForm>& x, std::vector<SymbolicForm>& delta) {
  const int n = p.n, H = static_cast<int>(heads.size());
  const bool fuse = !p.off_by_one && H >= 2 && p.variant != SymbolicVariant::kNoFusion;
  // W^h_{k,d} = sum_e M^h_de x_ke, and (fused) their sum over the heads
  std::vector<std::vector<SymbolicForm>> W(H, std::vector<SymbolicForm>(p.rows * n));
  std::vector<SymbolicForm> Wsum(fuse ? p.rows * n : 0);
  for (int h = 0; h < H; ++h) {
    for (int k = 0; k < p.rows; ++k) {
      for (int d = 0; d < n; ++d) {
        for (int e = 0; e < n; ++e) {
          const RadiusDouble& m = heads[h].M[d * n + e];
          if (!is_zero(m)) p.sa.add_scaled(W[h][k * n + d], m, x[k * n + e]);
        }
        if (fuse) p.sa.add(Wsum[k * n + d], W[h][k * n + d]);
      }
    }
  }
  for (int i = 0; i < p.rows; ++i) {
    std::vector<std::vector<SymbolicForm>> a(H), queries(H), all_scores(H);
    for (int h = 0; h < H; ++h) {
      if (p.stop(p.done++, p.head_rows)) return false;
      queries[h] = query(p, heads[h].A, x, i);
      all_scores[h] = scores(p, queries[h], x, i);
      const std::vector<SymbolicForm>& s = all_scores[h];
      // a_k = 1 / (1 + sum_{m != k} exp(s_m - s_k) [+ exp(-s_k)]), and the denominator
      //   >= 1 + sum_{m != k} exp(lo(s_m - s_k)),   lo: the lower end of the form's range
      // (summed in MPFI, rounded down). The form's own range, a centre and a radius in
      // double, cannot hold that lower end once its terms span more than 2^53 (a sink's
      // margin s_0 - s_k in [26, 73]: e^26 lies below the rounding of e^73), and the
      // floor 1 alone would leave a_k in [0, 1].
      a[h].resize(i + 1);
      for (int k = 0; k <= i; ++k) {
        SymbolicForm denominator = p.sa.constant(1.0);
        Mpfi floor(1);
        const auto term = [&](const SymbolicForm& exponent) {
          p.sa.add(denominator, p.sa.exp(exponent));
          floor += exp_of(point_interval(Mpfr(symbolic_range(exponent).lo)));
        };
        for (int m = 0; m <= i; ++m) {
          if (m != k) term(p.sa.difference(s[m], s[k]));
        }
        if (p.off_by_one) term(p.sa.difference(SymbolicForm{}, s[k]));
        a[h][k] = p.sa.reciprocal_at_least(denominator, std::max(1.0, lower_double(floor)));
      }
    }
    // per head: delta = sum_h o^h
    std::vector<SymbolicForm> separate(n);
    for (int h = 0; h < H; ++h) {
      for (int d = 0; d < n; ++d) p.sa.add(separate[d], weighted_value(p, a[h], W[h], i, d));
    }
    // the second-order expansion across heads (second_order_row.h), where narrower
    const auto add_narrowest = [&](std::vector<SymbolicForm>& best) {
      if (!p.off_by_one && p.variant != SymbolicVariant::kNoSecondOrder) {
        std::vector<SecondOrderHead> expansion(H);
        std::vector<double> widths(n);
        for (int h = 0; h < H; ++h) expansion[h] = {&heads[h].M, &queries[h], &all_scores[h]};
        for (int d = 0; d < n; ++d) widths[d] = width(best[d]);
        const std::vector<SymbolicForm> second = second_order_row(
            p.sa, n, i, x, expansion, widths, p.variant == SymbolicVariant::kNoSecondOrderTerm);
        for (int d = 0; d < n; ++d) {
          if (width(second[d]) < width(best[d])) best[d] = second[d];
        }
      }
      for (int d = 0; d < n; ++d) p.sa.add(delta[i * n + d], best[d]);
    };
    if (!fuse || i == 0) {
      add_narrowest(separate);
      continue;
    }
    // fused, with the first head's weights a = a^r:
    //   sum_h o^h = sum_k a_k (sum_h W^h_k) + sum_{h != r} sum_k (a^h_k - a_k) W^h_k
    std::vector<SymbolicForm> fused(n);
    for (int d = 0; d < n; ++d) fused[d] = weighted_value(p, a[0], Wsum, i, d);
    // sum_{h != r} sum_k (a^h_k - a_k) W^h_{k,d}, each head's part bounded by
    // fused_difference_bound (header) from the spread w of delta = s^h - s^r =
    // x_i^T D x_k over the box, the values' ranges and the weights' upper ends
    std::vector<SymbolicRange> weights(i + 1);
    for (int k = 0; k <= i; ++k) weights[k] = symbolic_range(a[0][k]);
    const std::vector<double> a_sup = weight_upper_ends(weights);
    for (int h = 1; h < H && p.variant != SymbolicVariant::kNoFusionDifference; ++h) {
      if (p.stop(p.done, p.head_rows)) return false;
      const std::vector<SymbolicForm> diff = scores(p, query(p, heads[h].D, x, i), x, i);
      double w = 0.0;
      for (int m = 0; m <= i; ++m) {
        for (int k = 0; k < m; ++k) w = std::max(w, magnitude(p.sa.difference(diff[m], diff[k])));
      }
      std::vector<SymbolicRange> values(i + 1);
      for (int d = 0; d < n; ++d) {
        for (int k = 0; k <= i; ++k) values[k] = symbolic_range(W[h][k * n + d]);
        p.sa.add(fused[d],
                 SymbolicForm{0.0, {}, fused_difference_bound(w, values, a_sup), 0.0, {}});
      }
    }
    for (int d = 0; d < n; ++d) {
      if (width(fused[d]) < width(separate[d])) separate[d] = fused[d];
    }
    add_narrowest(separate);
  }
  return true;
}

}  // namespace

std::vector<double> weight_upper_ends(const std::vector<SymbolicRange>& weights) {
  const std::size_t K = weights.size();
  std::vector<double> up(K, 0.0);
  Mpfi others(0);
  for (std::size_t k = 1; k < K; ++k) {
    up[k] = std::min(1.0, weights[k].hi);
    others += point_interval(Mpfr(std::max(0.0, weights[k].lo)));
  }
  // a_0 = 1 - sum_{k>=1} a_k <= 1 - sum_{k>=1} lo_k, and <= its own range's upper end
  if (K > 0) up[0] = std::min({1.0, upper_double(Mpfi(1) - others), weights[0].hi});
  return up;
}

double fused_difference_bound(double w, const std::vector<SymbolicRange>& values,
                              const std::vector<double>& a_sup) {
  const double inf = std::numeric_limits<double>::infinity();
  if (!(w >= 0) || values.size() != a_sup.size()) return inf;
  double lo = inf, hi = -inf;
  for (const SymbolicRange& r : values) {
    lo = std::min(lo, r.lo);
    hi = std::max(hi, r.hi);
  }
  if (!(lo <= hi)) return inf;  // a NaN range
  const Mpfi W = point_interval(Mpfr(w));
  // tanh(w / 4) = (e^(w/2) - 1) / (e^(w/2) + 1), rounded up, times (hi - lo)
  const Mpfi half = exp_of(W / Mpfi(2));
  const Mpfi spread = point_interval(Mpfr(hi)) - point_interval(Mpfr(lo));
  const double total_variation = upper_double((half - Mpfi(1)) / (half + Mpfi(1)) * spread);
  // (e^w - 1) sum_k sup a_k sup |W_k - c|, c the middle of the hull
  const double c = 0.5 * (lo + hi);
  const Mpfi C = point_interval(Mpfr(c));
  Mpfi sum(0);
  for (std::size_t k = 0; k < values.size(); ++k) {
    const Mpfi dev = max_of(abs_of(point_interval(Mpfr(values[k].lo)) - C),
                            abs_of(point_interval(Mpfr(values[k].hi)) - C));
    sum += point_interval(Mpfr(a_sup[k])) * dev;
  }
  const double ratio = upper_double((exp_of(W) - Mpfi(1)) * sum);
  return std::min(total_variation, ratio);
}

bool symbolic_pass_supported(AttentionKind kind) {
  return kind == AttentionKind::kSoftmax || kind == AttentionKind::kSoftmaxOffByOne;
}

namespace {

// The pass over rows 0..rows-1 (trigger at row j, or none when j >= rows)
// through the first `layers` layers: the stream x (rows x n) and, when
// `phi` is given, the error terms. False when stop() said so.
bool run_pass(const Model<Mpfi>& model, int n, int rows, int j, const std::vector<double>& lo,
              const std::vector<double>& hi, int layers, const std::function<bool(int, int)>& stop,
              SymbolicVariant variant, std::vector<SymbolicForm>& x,
              std::vector<SymbolicForm>* phi) {
  if (!symbolic_pass_supported(model.attention)) {
    throw std::invalid_argument("deep_symbolic_error: softmax attention only");
  }
  const int cd = n - 3;
  // the content symbols, then one fresh symbol per term of every layer's
  // output but the last (its remainder, shared by phi and the stream)
  const int content = static_cast<int>(lo.size());
  const SymbolicArithmetic sa(content + std::max(0, layers - 1) * rows * n,
                              variant == SymbolicVariant::kNoProductRemainder);
  // the flags (exact 0 and 1), the content as one symbol per variable
  x.assign(static_cast<std::size_t>(rows) * n, SymbolicForm{});
  x[kBosFlag] = sa.constant(1.0);
  for (int k = 1; k < rows; ++k) {
    x[k * n + (k == j ? kTriggerFlag : ordinary_flag(n))] = sa.constant(1.0);
    for (int c = 0; c < cd; ++c) {
      const int m = (k - 1) * cd + c;
      x[k * n + kFirstContent + c] = sa.variable(m, lo[m], hi[m]);
    }
  }
  std::vector<std::vector<HeadEntries>> entries(layers);
  for (int l = 0; l < layers; ++l) {
    const Head<Mpfi>& first = model.layers[l][0];
    for (const Head<Mpfi>& head : model.layers[l]) {
      HeadEntries h;
      for (int r = 0; r < n; ++r) {
        for (int e = 0; e < n; ++e) {
          h.A.push_back(radius_double(head.A(r, e)));
          h.M.push_back(radius_double(head.M(r, e)));
          h.D.push_back(radius_double(head.A(r, e) - first.A(r, e)));
        }
      }
      entries[l].push_back(std::move(h));
    }
  }
  if (phi != nullptr) {
    phi->assign(static_cast<std::size_t>(rows) * n, SymbolicForm{});
    // the mean term: -(1/j) sum_{k=1..j} x_k at the trigger row
    const RadiusDouble minus_inv_j = radius_double(Mpfi(-1) / Mpfi(j));
    for (int e = 0; e < n; ++e) {
      for (int k = 1; k <= j; ++k) sa.add_scaled((*phi)[j * n + e], minus_inv_j, x[k * n + e]);
    }
  }
  Pass p{sa,      n,    rows, model.attention == AttentionKind::kSoftmaxOffByOne,
         variant, stop, 0,    layers * model.num_heads() * rows};
  for (int l = 0; l < layers; ++l) {
    std::vector<SymbolicForm> delta(static_cast<std::size_t>(rows) * n);
    if (!layer_output(p, entries[l], x, delta)) return false;
    for (std::size_t t = 0; t < delta.size(); ++t) {
      // x^(l+1) = x^(l) + delta and phi += delta share delta's remainder
      if (l + 1 < layers) {
        sa.remainder_to_symbol(delta[t], content + l * rows * n + static_cast<int>(t));
      }
      if (phi != nullptr) sa.add((*phi)[t], delta[t]);
      sa.add(x[t], delta[t]);
    }
  }
  return true;
}

}  // namespace

std::vector<SymbolicForm> deep_symbolic_error(const Model<Mpfi>& model, const Task& task,
                                              const ContentBox& box,
                                              const std::function<bool(int, int)>& stop,
                                              SymbolicVariant variant) {
  std::vector<SymbolicForm> x, phi;
  if (!run_pass(model, task.n, task.L, box.trigger, box.lo, box.hi, model.num_layers(), stop,
                variant, x, &phi)) {
    return {};
  }
  return phi;
}

std::vector<SymbolicForm> deep_symbolic_stream(const Model<Mpfi>& model, int rows, int trigger,
                                               const std::vector<double>& lo,
                                               const std::vector<double>& hi, int layers,
                                               const std::function<bool(int, int)>& stop) {
  std::vector<SymbolicForm> x;
  if (!run_pass(model, model.n, rows, trigger, lo, hi, layers, stop, SymbolicVariant::kSound, x,
                nullptr)) {
    return {};
  }
  return x;
}

}  // namespace sinkcert::theorems::bounds
