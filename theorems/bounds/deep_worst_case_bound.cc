// SPDX-License-Identifier: MIT
#include "theorems/bounds/deep_worst_case_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "src/forward.h"
#include "src/forward_vjp.h"
#include "src/interval.h"
#include "src/linf_error.h"
#include "theorems/bounds/deep_symbolic_pass.h"
#include "theorems/bounds/worst_case_search.h"

namespace sinkcert::theorems::bounds {

namespace {

Mpfr plus_infinity() { return Mpfr(std::numeric_limits<double>::infinity()); }

Matrix<Mpfi> box_input(const Task& task, const ContentBox& box) {
  std::vector<Mpfi> flat;
  for (std::size_t m = 0; m < box.lo.size(); ++m)
    flat.emplace_back(Mpfr(box.lo[m]), Mpfr(box.hi[m]));
  return make_input<Mpfi>(task, box.trigger, unflatten_content(task, flat));
}

Matrix<Mpfi> point_input(const Task& task, int trigger, const std::vector<double>& content) {
  return make_input<Mpfi>(task, trigger, matrix_cast<Mpfi>(unflatten_content(task, content)));
}

// phi = f(X) - y(X) at a point input (thin enclosures: no cancellation
// problem), target by the model's kind.
Matrix<Mpfi> point_error(const Model<Mpfi>& model, const Task& task, int trigger,
                         const std::vector<double>& content) {
  const Matrix<Mpfi> X = point_input(task, trigger, content);
  return forward(model, X, false).output - make_target(X, trigger, target_kind_of(model.kind));
}

// e(X) = max_{i,d} |phi_{i,d}| from the term enclosures.
Mpfi max_abs(const Matrix<Mpfi>& error) {
  const Matrix<Mpfi> zero = Matrix<Mpfi>::Constant(error.rows(), error.cols(), Mpfi(0));
  return linf_error(error, zero).value;
}

// sup of sigma x over the enclosure x; +inf for NaN.
Mpfr sup_of(const Mpfi& x, int sigma) {
  if (interval_is_nan(x)) return plus_infinity();
  return sigma > 0 ? Mpfr(bmp::upper(x)) : Mpfr(-bmp::lower(x));
}

// [lo - p, hi - p], enclosed.
Mpfi offset(double lo, double hi, double p) {
  const Mpfi a = point_interval(Mpfr(lo)) - point_interval(Mpfr(p));
  const Mpfi b = point_interval(Mpfr(hi)) - point_interval(Mpfr(p));
  return Mpfi(bmp::lower(a), bmp::upper(b));
}

// phi over a box from the tape's head outputs:
//   residual:      sum_l sum_h o^{l,h}_i - [i = j] (1/j) sum_{k=1..j} x_k
//   single-layer:  sum_h o^h_i           - [i = j] (1/j) sum_{k=1..j} x_k
// (the residual's x_i on both sides is left out, so it cannot fail to cancel).
Matrix<Mpfi> tape_error(const Model<Mpfi>& model, const ForwardTape<Mpfi>& tape,
                        const Matrix<Mpfi>& X, int j) {
  const int L = static_cast<int>(X.rows()), n = static_cast<int>(X.cols());
  Matrix<Mpfi> e = Matrix<Mpfi>::Constant(L, n, Mpfi(0));
  const int first = model.kind == ModelKind::kResidual ? 0 : model.num_layers() - 1;
  for (int l = first; l < model.num_layers(); ++l) {
    for (std::size_t h = 0; h < model.layers[l].size(); ++h) {
      for (int i = 0; i < L; ++i) {
        e.row(i) +=
            head_row_output(model.attention, model.layers[l][h], tape.rows[l][h][i]).transpose();
      }
    }
  }
  const Mpfi inv_j = Mpfi(1) / Mpfi(j);
  for (int d = 0; d < n; ++d) {
    Mpfi sum(0);
    for (int k = 1; k <= j; ++k) sum += X(k, d);
    e(j, d) -= sum * inv_j;
  }
  return e;
}

// The first `layers` layers of the model (the map X -> x^(layers)).
Model<Mpfi> prefix_model(const Model<Mpfi>& model, int layers) {
  Model<Mpfi> out;
  out.kind = model.kind;
  out.attention = model.attention;
  out.n = model.n;
  out.layers.assign(model.layers.begin(), model.layers.begin() + layers);
  return out;
}

// Centred form of a scalar over the box around p with gradient enclosure g
// (indexed by content variable; empty entries are exact zeros):
//   sup sigma (value(p) + sum_m g_m (B_m - p_m)).
Mpfr centred_sup(const Mpfi& value_at_p, const std::vector<Mpfi>& g, const ContentBox& box,
                 const std::vector<double>& p, int sigma, std::vector<double>* excess = nullptr) {
  Mpfi r = sigma > 0 ? value_at_p : Mpfi(-value_at_p);
  for (std::size_t m = 0; m < g.size(); ++m) {
    const Mpfi term = (sigma > 0 ? g[m] : Mpfi(-g[m])) * offset(box.lo[m], box.hi[m], p[m]);
    r += term;
    if (excess) (*excess)[m] = std::max(0.0, to_double(Mpfr(bmp::upper(term))));
  }
  return sup_of(r, 1);
}

// Baumann's point for sup sigma phi (see the header), inside the box.
std::vector<double> baumann_point(const std::vector<Mpfi>& g, const ContentBox& box, int sigma) {
  std::vector<double> p(g.size());
  for (std::size_t m = 0; m < g.size(); ++m) {
    const double lo = box.lo[m], hi = box.hi[m];
    const Mpfi s = sigma > 0 ? g[m] : Mpfi(-g[m]);
    const double gl = to_double(Mpfr(bmp::lower(s))), gu = to_double(Mpfr(bmp::upper(s)));
    if (!(gl == gl) || !(gu == gu)) {  // NaN: any point of the box is valid
      p[m] = 0.5 * (lo + hi);
    } else if (gl >= 0) {
      p[m] = hi;
    } else if (gu <= 0) {
      p[m] = lo;
    } else {
      // a convex combination of lo and hi (gu > 0 > gl)
      p[m] = std::clamp((gu * hi - gl * lo) / (gu - gl), lo, hi);
    }
  }
  return p;
}

// dphi/dx_m over the box for phi = phi_{i,d} (content variables m), from the
// reverse pass over the interval tape, minus the target's derivative:
// residual y_i = x_i + [i = j] (1/j) sum_{k=1..j} x_k.
std::vector<Mpfi> term_gradient(const Model<Mpfi>& model, const ForwardTape<Mpfi>& tape,
                                const Task& task, int j, int i, int d) {
  const int L = task.L, n = task.n, cd = task.content_dim();
  Matrix<Mpfi> dY = Matrix<Mpfi>::Constant(L, n, Mpfi(0));
  dY(i, d) = Mpfi(1);
  Matrix<Mpfi> dX = forward_vjp(model, tape, dY, nullptr, false).dX;
  if (model.kind == ModelKind::kResidual) dX(i, d) -= Mpfi(1);
  if (i == j) {
    const Mpfi inv_j = Mpfi(1) / Mpfi(j);
    for (int k = 1; k <= j; ++k) dX(k, d) -= inv_j;
  }
  std::vector<Mpfi> g(content_variables(task), Mpfi(0));
  for (int k = 1; k <= i; ++k) {
    for (int c = 0; c < cd; ++c) g[content_variable(task, k, c)] = dX(k, kFirstContent + c);
  }
  return g;
}

// The interval forward pass over the box (layer inputs and head rows, for
// the reverse pass), each intermediate layer output intersected with its
// centred form around the centre c, whose layer values centre_tape holds.
// Past the deadline the centred forms left are skipped (`stop` says so).
ForwardTape<Mpfi> box_tape(const Model<Mpfi>& model, const Task& task, const ContentBox& box,
                           const Matrix<Mpfi>& X, const std::vector<double>& centre,
                           const ForwardTape<Mpfi>* centre_tape,
                           const std::function<bool(const char*, int, int)>& stop) {
  const int L = task.L, n = task.n, layers = model.num_layers(), cd = task.content_dim();
  ForwardTape<Mpfi> tape;
  Matrix<Mpfi> x = X;
  for (int l = 0; l < layers; ++l) {
    tape.inputs.push_back(x);
    tape.rows.emplace_back();
    Matrix<Mpfi> delta = Matrix<Mpfi>::Constant(L, n, Mpfi(0));
    for (const Head<Mpfi>& head : model.layers[l]) {
      tape.rows.back().emplace_back(L);
      for (int i = 0; i < L; ++i) {
        HeadRow<Mpfi> row = head_row_forward(model.attention, head, x, i);
        delta.row(i) += head_row_output(model.attention, head, row).transpose();
        tape.rows.back().back()[i] = std::move(row);
      }
    }
    if (model.kind == ModelKind::kResidual) {
      x += delta;
    } else {
      x = delta;
    }
    if (!centre_tape || l + 1 == layers) continue;
    // x^(l+1)_{i,d} in x^(l+1)_{i,d}(c) + sum_m dx^(l+1)_{i,d}/dx_m (B) (B_m - c_m),
    // the gradient through layers 0..l (the tape so far is theirs)
    const Model<Mpfi> prefix = prefix_model(model, l + 1);
    const Matrix<Mpfi>& xc = centre_tape->inputs[l + 1];
    for (int i = 1; i < L; ++i) {
      for (int d = 0; d < n; ++d) {
        if (width_of(x(i, d)) == 0) continue;  // exact already (a flag that never changes)
        if (stop("layer outputs' centred forms", i * n + d, L * n)) break;
        Matrix<Mpfi> dY = Matrix<Mpfi>::Constant(L, n, Mpfi(0));
        dY(i, d) = Mpfi(1);
        const Matrix<Mpfi> dX = forward_vjp(prefix, tape, dY, nullptr, false).dX;
        Mpfi r = xc(i, d);
        for (int k = 1; k <= i; ++k) {
          for (int c = 0; c < cd; ++c) {
            const int m = content_variable(task, k, c);
            r += dX(k, kFirstContent + c) * offset(box.lo[m], box.hi[m], centre[m]);
          }
        }
        x(i, d) = intersection_of(x(i, d), r).value_or(x(i, d));
      }
    }
  }
  tape.output = x;
  return tape;
}

// A first-order Taylor model (affine form) over the box:
//   v in c + sum_m g_m u_m + r,   u_m = x_m - centre_m in U_m = [-h_m, h_m],
// c, g_m thin enclosures (rounding), r an interval remainder; g empty for a
// constant. Products and nonlinear functions keep the part linear in u and
// move the rest, O(width^2), into r.
struct Affine {
  Mpfi c = Mpfi(0);
  std::vector<Mpfi> g;
  Mpfi r = Mpfi(0);
};

class AffineArithmetic {
 public:
  explicit AffineArithmetic(const ContentBox& box) {
    for (std::size_t m = 0; m < box.lo.size(); ++m) {
      const Mpfr h = Mpfr(Mpfr(box.hi[m]) - Mpfr(box.lo[m])) / 2;  // exact (dyadic)
      radius_.emplace_back(Mpfr(-h), h);
    }
  }
  int vars() const { return static_cast<int>(radius_.size()); }
  Affine constant(const Mpfi& v) const { return Affine{v, {}, Mpfi(0)}; }
  Affine variable(int m, double centre) const {
    Affine a{point_interval(Mpfr(centre)), std::vector<Mpfi>(radius_.size(), Mpfi(0)), Mpfi(0)};
    a.g[m] = Mpfi(1);
    return a;
  }
  // sum_m g_m U_m
  Mpfi linear_range(const Affine& a) const {
    Mpfi s(0);
    for (std::size_t m = 0; m < a.g.size(); ++m) s += a.g[m] * radius_[m];
    return s;
  }
  Mpfi range(const Affine& a) const { return a.c + linear_range(a) + a.r; }
  static bool is_zero(const Affine& a) {
    return a.g.empty() && bmp::lower(a.c) == 0 && bmp::upper(a.c) == 0 && bmp::lower(a.r) == 0 &&
           bmp::upper(a.r) == 0;
  }
  // a += k b
  void add_scaled(Affine& a, const Mpfi& k, const Affine& b) const {
    if (bmp::lower(k) == 0 && bmp::upper(k) == 0) return;
    a.c += k * b.c;
    a.r += k * b.r;
    if (b.g.empty()) return;
    if (a.g.empty()) a.g.assign(radius_.size(), Mpfi(0));
    for (std::size_t m = 0; m < b.g.size(); ++m) a.g[m] += k * b.g[m];
  }
  Affine sum(const Affine& a, const Affine& b, const Mpfi& kb = Mpfi(1)) const {
    Affine out = a;
    add_scaled(out, kb, b);
    return out;
  }
  Affine scaled(const Affine& a, const Mpfi& k) const {
    Affine out;
    add_scaled(out, k, a);
    return out;
  }
  // a b = ca cb + (ca gb + cb ga) u + [ca rb + cb ra + (La + ra)(Lb + rb)]
  Affine product(const Affine& a, const Affine& b) const {
    if (is_zero(a) || is_zero(b)) return Affine{};
    Affine out;
    out.c = a.c * b.c;
    if (!a.g.empty() || !b.g.empty()) out.g.assign(radius_.size(), Mpfi(0));
    for (std::size_t m = 0; m < out.g.size(); ++m) {
      if (!b.g.empty()) out.g[m] += a.c * b.g[m];
      if (!a.g.empty()) out.g[m] += b.c * a.g[m];
    }
    out.r = a.c * b.r + b.c * a.r + (linear_range(a) + a.r) * (linear_range(b) + b.r);
    return out;
  }
  // f(a) for a convex (sign = 1) or concave (sign = -1) f on the range
  // [l, u] of a: the tangent at the centre c,
  //   f(a) = f(c) + f'(c) (a - c) + h(a),  h(x) = f(x) - f(c) - f'(c) (x - c),
  // with h between 0 and its larger end value (convex; the mirror image for
  // concave): the chord-tangent gap, which stays small on wide ranges where
  // a second-order remainder f''(x) (x - c)^2 / 2 does not.
  template <class F>
  Affine convex_unary(const Affine& a, const F& f, const Mpfi& f1, int sign) const {
    const Mpfi x = range(a);
    const Mpfi fc = f(a.c);
    Affine out;
    out.c = fc;
    if (!a.g.empty()) {
      out.g.resize(a.g.size());
      for (std::size_t m = 0; m < a.g.size(); ++m) out.g[m] = f1 * a.g[m];
    }
    const auto h = [&](const Mpfr& at) {
      const Mpfi p = point_interval(at);
      return f(p) - fc - f1 * (p - a.c);
    };
    const Mpfi hl = h(bmp::lower(x)), hu = h(bmp::upper(x));
    const Mpfi gap =
        sign > 0 ? Mpfi(Mpfr(0), Mpfr(bmp::upper(max_of(hl, hu))))
                 : Mpfi(Mpfr(bmp::lower(hl) < bmp::lower(hu) ? bmp::lower(hl) : bmp::lower(hu)),
                        Mpfr(0));
    out.r = f1 * a.r + gap;
    // the plain interval f(range a) when it is narrower (the form then keeps
    // no dependence on u)
    return out;
  }
  Affine exp(const Affine& a) const {
    const Mpfi e = exp_of(a.c);
    return convex_unary(
        a, [](const Mpfi& v) { return exp_of(v); }, e, 1);
  }
  // 1 / a for a range of a that excludes 0 (else the whole line: NaN)
  Affine reciprocal(const Affine& a) const {
    const Mpfi x = range(a);
    if (contains_zero(x)) return Affine{point_interval(Mpfr(NAN)), {}, Mpfi(0)};
    const Mpfi inv = Mpfi(1) / a.c;
    return convex_unary(
        a, [](const Mpfi& v) { return Mpfi(1) / v; }, -inv * inv, bmp::lower(x) > 0 ? 1 : -1);
  }
  // out, or the constant form of the enclosure alt when that is narrower.
  Affine hedge(const Affine& out, const Mpfi& alt) const {
    if (interval_is_nan(alt) || !(width_of(alt) < width_of(range(out)))) return out;
    const Mpfi mid = point_interval(Mpfr(bmp::median(alt)));
    return Affine{mid, {}, alt - mid};
  }
  // max(a, 0): a itself or 0 when the range has one sign; else the chord
  // relaxation max(s, 0) in lambda s + [0, max(-lambda l, (1 - lambda) u)],
  // lambda = u / (u - l) (any lambda in [0, 1] is valid; this one is tight).
  Affine relu(const Affine& a) const {
    const Mpfi x = range(a);
    if (bmp::lower(x) >= 0) return a;
    if (bmp::upper(x) <= 0) return Affine{};
    const double l = to_double(Mpfr(bmp::lower(x))), u = to_double(Mpfr(bmp::upper(x)));
    const double lambda = std::clamp(u / (u - l), 0.0, 1.0);
    Affine out = scaled(a, Mpfi(lambda));
    const Mpfi top = max_of(Mpfi(-lambda) * point_interval(bmp::lower(x)),
                            Mpfi(1 - lambda) * point_interval(bmp::upper(x)));
    out.r += Mpfi(Mpfr(0), Mpfr(bmp::upper(top)));
    return out;
  }

 private:
  std::vector<Mpfi> radius_;
};

bool affine_supported(AttentionKind kind) {
  return kind == AttentionKind::kSoftmax || kind == AttentionKind::kSoftmaxOffByOne ||
         kind == AttentionKind::kRelu || kind == AttentionKind::kReluCountAll ||
         kind == AttentionKind::kSigmoid;
}

// The attention row a_i0..a_ii of scores s (affine forms):
//   softmax         a_k = 1 / sum_{m<=i} exp(s_m - s_k)   (differences first:
//                   what all scores of the row share cancels)
//   off-by-one      a_k = 1 / (exp(-s_k) + sum_m exp(s_m - s_k))
//   relu            a_k = max(s_k, 0) / divisor
//   sigmoid         a_k = 1 / (1 + exp(-s_k)) / divisor
std::vector<Affine> affine_attention(const AffineArithmetic& aa, AttentionKind kind, int i,
                                     const std::vector<Affine>& s) {
  std::vector<Affine> a(i + 1);
  const Mpfi divisor(attention_divisor(kind, i));
  for (int k = 0; k <= i; ++k) {
    switch (kind) {
      case AttentionKind::kSoftmax:
      case AttentionKind::kSoftmaxOffByOne: {
        Affine denom = aa.constant(Mpfi(1));
        for (int m = 0; m <= i; ++m) {
          if (m != k) denom = aa.sum(denom, aa.exp(aa.sum(s[m], s[k], Mpfi(-1))));
        }
        if (kind == AttentionKind::kSoftmaxOffByOne) {
          denom = aa.sum(denom, aa.exp(aa.scaled(s[k], Mpfi(-1))));
        }
        a[k] = aa.reciprocal(denom);
        break;
      }
      case AttentionKind::kRelu:
      case AttentionKind::kReluCountAll:
        a[k] = aa.scaled(aa.relu(s[k]), Mpfi(1) / divisor);
        break;
      case AttentionKind::kSigmoid:
        a[k] = aa.scaled(
            aa.reciprocal(aa.sum(aa.constant(Mpfi(1)), aa.exp(aa.scaled(s[k], Mpfi(-1))))),
            Mpfi(1) / divisor);
        break;
      default:
        throw std::logic_error("affine_attention: unsupported attention kind");
    }
  }
  return a;
}

// phi = f - y over the box as affine forms (L x n, row-major): the forward
// pass of the header in affine arithmetic, the head outputs summed apart
// from the residual stream, minus the mean term at the trigger row. Empty
// when stop() (checked per head row) says the deadline passed.
std::vector<Affine> affine_error(const Model<Mpfi>& model, const Task& task, const ContentBox& box,
                                 const AffineArithmetic& aa,
                                 const std::function<bool(const char*, int, int)>& stop) {
  const int L = task.L, n = task.n, j = box.trigger, cd = task.content_dim();
  const Matrix<Mpfi> X0 = make_input<Mpfi>(
      task, j, Matrix<Mpfi>::Constant(L - 1, cd, Mpfi(0)));  // flags (content set below)
  std::vector<Affine> x(static_cast<std::size_t>(L) * n);
  for (int k = 0; k < L; ++k) {
    for (int e = 0; e < n; ++e) x[k * n + e] = aa.constant(X0(k, e));
  }
  for (int k = 1; k < L; ++k) {
    for (int c = 0; c < cd; ++c) {
      const int m = content_variable(task, k, c);
      x[k * n + kFirstContent + c] = aa.variable(m, 0.5 * (box.lo[m] + box.hi[m]));
    }
  }
  std::vector<Affine> phi(static_cast<std::size_t>(L) * n);
  // the mean term: -(1/j) sum_{k=1..j} x_k at the trigger row
  const Mpfi inv_j = Mpfi(1) / Mpfi(j);
  for (int e = 0; e < n; ++e) {
    for (int k = 1; k <= j; ++k) aa.add_scaled(phi[j * n + e], -inv_j, x[k * n + e]);
  }
  const auto is_zero = [](const Mpfi& v) { return bmp::lower(v) == 0 && bmp::upper(v) == 0; };
  const int head_rows = model.num_layers() * model.num_heads() * L;
  int done = 0;
  for (int l = 0; l < model.num_layers(); ++l) {
    std::vector<Affine> delta(static_cast<std::size_t>(L) * n);
    for (const Head<Mpfi>& head : model.layers[l]) {
      for (int i = 0; i < L; ++i) {
        if (stop("affine forms, head rows", done++, head_rows)) return {};
        // q = A^T x_i, s_k = q . x_k
        std::vector<Affine> q(n);
        for (int e = 0; e < n; ++e) {
          for (int p = 0; p < n; ++p) {
            if (!is_zero(head.A(p, e))) aa.add_scaled(q[e], head.A(p, e), x[i * n + p]);
          }
        }
        std::vector<Affine> s(i + 1);
        for (int k = 0; k <= i; ++k) {
          for (int e = 0; e < n; ++e) s[k] = aa.sum(s[k], aa.product(q[e], x[k * n + e]));
        }
        const std::vector<Affine> a = affine_attention(aa, model.attention, i, s);
        // V = sum_k a_k x_k, o = M V
        std::vector<Affine> V(n);
        for (int k = 0; k <= i; ++k) {
          for (int e = 0; e < n; ++e) V[e] = aa.sum(V[e], aa.product(a[k], x[k * n + e]));
        }
        for (int d = 0; d < n; ++d) {
          for (int e = 0; e < n; ++e) {
            if (!is_zero(head.M(d, e))) aa.add_scaled(delta[i * n + d], head.M(d, e), V[e]);
          }
        }
      }
    }
    for (std::size_t t = 0; t < delta.size(); ++t) {
      aa.add_scaled(phi[t], Mpfi(1), delta[t]);
      aa.add_scaled(x[t], Mpfi(1), delta[t]);
    }
  }
  return phi;
}

// The bound of a box from the term enclosures (plain intersected with the
// symbolic forms): upper = max_{i,d,sigma} sup sigma phi_{i,d}; the split
// weights are the worst term's remainder credits (symbolic_form.h), else
// its linear coefficients |g_m|, else the widths of the variables its row
// reads; the witness vertex maximizes the worst term's linear part.
std::vector<double> finish_symbolic_box(const Task& task, const ContentBox& box,
                                        const Matrix<Mpfi>& terms,
                                        const std::vector<SymbolicForm>& symbolic,
                                        DeepBoxBound& out) {
  const int L = task.L, n = task.n, vars = static_cast<int>(box.lo.size());
  int sigma_worst = 1;
  for (int i = 0; i < L; ++i) {
    for (int d = 0; d < n; ++d) {
      for (int sigma : {1, -1}) {
        Mpfr b = sup_of(terms(i, d), sigma);
        if (bmp::isnan(b)) b = plus_infinity();
        if (b > out.upper) {
          out.upper = b;
          out.position = i;
          out.coordinate = d;
          sigma_worst = sigma;
        }
      }
    }
  }
  if (out.upper < 0) out.upper = Mpfr(0);  // every term exactly 0
  out.weight.assign(vars, 0.0);
  const int t = out.position * n + out.coordinate;
  const SymbolicForm* f = symbolic.empty() ? nullptr : &symbolic[t];
  if (f && !f->share.empty()) {
    out.weight.assign(f->share.begin(), f->share.begin() + vars);  // content symbols only
    out.symbolic = true;
  } else if (f && !f->g.empty()) {
    for (int m = 0; m < vars; ++m) out.weight[m] = std::fabs(f->g[m]);
  } else {
    for (int k = 1; k <= out.position; ++k) {
      for (int c = 0; c < task.content_dim(); ++c) {
        const int m = content_variable(task, k, c);
        out.weight[m] = box.hi[m] - box.lo[m];
      }
    }
  }
  std::vector<double> vertex;
  if (f && !f->g.empty()) {
    vertex.resize(vars);
    for (int m = 0; m < vars; ++m) vertex[m] = sigma_worst * f->g[m] >= 0 ? box.hi[m] : box.lo[m];
  }
  return vertex;
}

}  // namespace

Mpfi certified_deep_error(const Model<Mpfi>& model, const Task& task, int trigger,
                          const std::vector<double>& content) {
  return max_abs(point_error(model, task, trigger, content));
}

void write_deep_box_bound(const DeepBoxBound& b, PartWriter& w) {
  w.put(b.upper);
  w.put_int(b.position);
  w.put_int(b.coordinate);
  w.put(b.weight);
  w.put(b.witness_lower);
  w.put(b.witness_rounding);
  w.put(b.witness);
  w.put_int(b.cut ? 1 : 0);
  w.put_int(b.symbolic ? 1 : 0);
}

DeepBoxBound read_deep_box_bound(PartReader& r) {
  DeepBoxBound b;
  b.upper = r.get_mpfr();
  b.position = static_cast<int>(r.get_int());
  b.coordinate = static_cast<int>(r.get_int());
  b.weight = r.get_doubles();
  b.witness_lower = r.get_mpfr();
  b.witness_rounding = r.get_mpfr();
  b.witness = r.get_doubles();
  const auto flag = [&r](const char* name) {
    const long v = r.get_int();
    if (v != 0 && v != 1) {
      throw std::runtime_error(std::string("a deep box part whose ") + name + " flag is " +
                               std::to_string(v) + ", not 0 or 1");
    }
    return v == 1;
  };
  b.cut = flag("cut");
  b.symbolic = flag("symbolic");
  return b;
}

DeepBoxBound bound_deep_box(const Model<Mpfi>& model, const Task& task, const ContentBox& box,
                            DeepForm form, const Mpfr& prune_below, const DeepBoxBudget& budget) {
  const int L = task.L, n = task.n, j = box.trigger;
  const int vars = static_cast<int>(box.lo.size());
  const Matrix<Mpfi> X = box_input(task, box);
  std::vector<double> centre(vars);
  for (int m = 0; m < vars; ++m) centre[m] = 0.5 * (box.lo[m] + box.hi[m]);
  DeepBoxBound out;
  // true once the deadline has passed (the refinements left are skipped);
  // sends a progress line "<stage> k of all" when one is due
  const auto stop = [&](const char* stage, int k, int all) {
    if (budget.progress) {
      budget.progress->maybe_send([&] {
        return "bounding trigger " + std::to_string(j) + "'s box (depth " +
               std::to_string(box.depth) + "): " + stage + " " + std::to_string(k) + " of " +
               std::to_string(all);
      });
    }
    if (!out.cut && budget.deadline.expired()) out.cut = true;
    return out.cut;
  };
  const bool centred = form == DeepForm::kCentred && !stop("the centre", 0, 1);
  out.upper = Mpfr(-1);
  out.witness_lower = Mpfr(-1);
  out.witness_rounding = plus_infinity();
  // a point of the box as a witness: the lower end of e(X) there
  const auto offer = [&](const Matrix<Mpfi>& error, const std::vector<double>& p) {
    const Mpfi e = max_abs(error);
    if (interval_is_nan(e)) return;
    const Mpfr low = bmp::lower(e);
    if (low > out.witness_lower) {
      out.witness_lower = low;
      out.witness_rounding = width_of(e);
      out.witness = p;
    }
  };
  std::optional<ForwardTape<Mpfi>> centre_tape;
  Matrix<Mpfi> centre_error;
  if (centred) {
    const Matrix<Mpfi> Xc = point_input(task, j, centre);
    centre_tape = forward_tape(model, Xc);
    centre_error = centre_tape->output - make_target(Xc, j, target_kind_of(model.kind));
    offer(centre_error, centre);
  }
  const ForwardTape<Mpfi> tape =
      box_tape(model, task, box, X, centre, centre_tape ? &*centre_tape : nullptr, stop);
  Matrix<Mpfi> plain = tape_error(model, tape, X, j);
  std::vector<SymbolicForm> symbolic;
  if (form != DeepForm::kPlain && symbolic_pass_supported(model.attention) &&
      !stop("the symbolic forms", 0, 1)) {
    // the symbolic forms' ranges, where narrower (both enclose phi)
    symbolic = deep_symbolic_error(model, task, box, [&](int k, int all) {
      return stop("symbolic forms, head rows", k, all);
    });
    for (int t = 0; t < static_cast<int>(symbolic.size()); ++t) {
      const SymbolicRange r = symbolic_range(symbolic[t]);
      Mpfi& p = plain(t / n, t % n);
      p = intersection_of(p, Mpfi(Mpfr(r.lo), Mpfr(r.hi))).value_or(p);
    }
  }
  if (form == DeepForm::kSymbolic) {
    const std::vector<double> vertex = finish_symbolic_box(task, box, plain, symbolic, out);
    // witnesses: the centre, and the vertex where the worst term's linear
    // part is largest (p_m = hi_m where sigma g_m >= 0, else lo_m)
    offer(point_error(model, task, j, centre), centre);
    if (!vertex.empty()) offer(point_error(model, task, j, vertex), vertex);
    return out;
  }
  if (centred && affine_supported(model.attention) && !stop("the affine forms", 0, 1)) {
    // the affine forms' ranges, where narrower (both enclose phi)
    const AffineArithmetic aa(box);
    const std::vector<Affine> phi = affine_error(model, task, box, aa, stop);
    for (int t = 0; t < static_cast<int>(phi.size()); ++t) {
      Mpfi& p = plain(t / n, t % n);
      p = intersection_of(p, aa.range(phi[t])).value_or(p);
    }
  }
  // Per term (i, d) and sign: the cheaper bound min(plain, centred at c)
  struct Candidate {
    int i, d, sigma;
    Mpfr bound;
  };
  std::vector<Candidate> candidates;
  std::vector<std::vector<Mpfi>> gradients(static_cast<std::size_t>(L) * n);
  for (int i = 0; i < L; ++i) {
    for (int d = 0; d < n; ++d) {
      const Mpfi& p = plain(i, d);
      // a term that depends on no content variable, or the plain form alone
      const bool constant = width_of(p) == 0;
      if (centred && !constant && !stop("term gradients", i * n + d, L * n)) {
        gradients[i * n + d] = term_gradient(model, tape, task, j, i, d);
      }
      for (int sigma : {1, -1}) {
        Mpfr b = sup_of(p, sigma);
        if (!gradients[i * n + d].empty()) {
          const Mpfr c = centred_sup(centre_error(i, d), gradients[i * n + d], box, centre, sigma);
          if (c < b) b = c;
        }
        candidates.push_back({i, d, sigma, b});
      }
    }
  }
  // largest first (NaN = +inf first), so that the Baumann form runs only
  // where it can change the maximum
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.bound > b.bound; });
  int rank = 0;
  for (const Candidate& cand : candidates) {
    Mpfr b = cand.bound;
    if (b <= out.upper) break;  // neither it nor the rest can raise the maximum
    std::vector<double> weight(vars, 0.0);
    const auto& g = gradients[cand.i * n + cand.d];
    const int all = static_cast<int>(candidates.size());
    if (!g.empty() && b > prune_below && !bmp::isinf(b) && !stop("Baumann forms", ++rank, all)) {
      const std::vector<double> p = baumann_point(g, box, cand.sigma);
      const Matrix<Mpfi> error_p = point_error(model, task, j, p);
      offer(error_p, p);
      const Mpfr u = centred_sup(error_p(cand.i, cand.d), g, box, p, cand.sigma, &weight);
      if (u < b) b = u;
    } else if (!g.empty()) {
      centred_sup(centre_error(cand.i, cand.d), g, box, centre, cand.sigma, &weight);
    }
    if (bmp::isnan(b)) b = plus_infinity();
    if (b > out.upper) {
      out.upper = b;
      out.position = cand.i;
      out.coordinate = cand.d;
      out.weight = std::move(weight);
    }
  }
  if (out.upper < 0) out.upper = Mpfr(0);  // every term exactly 0
  if (!centred) {  // no gradients: the variables the worst term reads, by width
    out.weight.assign(vars, 0.0);
    for (int k = 1; k <= out.position; ++k) {
      for (int c = 0; c < task.content_dim(); ++c) {
        const int m = content_variable(task, k, c);
        out.weight[m] = box.hi[m] - box.lo[m];
      }
    }
    offer(point_error(model, task, j, centre), centre);
  }
  return out;
}

namespace {

template <class T>
void check_model(const Model<T>& model, const Task& task) {
  if (model.kind != ModelKind::kResidual) {
    throw std::invalid_argument("deep worst-case bound: only residual models are supported");
  }
  if (model.num_layers() < 1 || model.num_heads() < 1) {
    throw std::invalid_argument("deep worst-case bound: the model has no heads");
  }
  if (model.n != task.n) throw std::invalid_argument("deep worst-case bound: model n != task n");
  task.validate();
}

using DeepNode = BoxNode<DeepBoxBound>;

// Output terms L n up to which the loop uses the centred forms on softmax
// models (see DeepEvaluator::refine_form): 64 is n = L = 8.
constexpr int kCentredMaxTerms = 64;
// Content variables (L - 1)(n - 3) up to which the loop uses the symbolic
// forms alone on softmax models and bisects the widest variable the worst
// term reads: 12 covers n = 5 (6 variables) to n = 7 at L = 4. Measured
// (docs/methods.md, results/benchmarks/small_deep_benchmark.txt): at 6
// variables the centred forms never lowered a box's bound below the
// symbolic forms' on the models tried, their gradients only steered the
// split, and they took about half of a box's time; at n = L = 8
// (35 variables) they still end lower within a minute, and at n = L = 16
// the remainder credits split better than the widest variable.
constexpr int kSmallBoxVariables = 12;

// The box phase's form (DeepEvaluator::refine_form, which says why).
DeepForm loop_form(AttentionKind attention, const Task& task) {
  if (!symbolic_pass_supported(attention)) return DeepForm::kCentred;
  if (content_variables(task) <= kSmallBoxVariables) return DeepForm::kSymbolic;
  return task.L * task.n <= kCentredMaxTerms ? DeepForm::kCentred : DeepForm::kSymbolic;
}

// The variable to bisect (see the header); -1 if none can be split.
int choose_deep_split(const DeepNode& node, const Task& task) {
  const ContentBox& box = node.box;
  const auto splittable = [&box](std::size_t m) {
    const double mid = 0.5 * (box.lo[m] + box.hi[m]);
    return box.lo[m] < mid && mid < box.hi[m];
  };
  const auto widest = [&](const std::function<bool(std::size_t)>& allowed) {
    int split = -1;
    for (std::size_t m = 0; m < box.lo.size(); ++m) {
      if (!splittable(m) || !allowed(m)) continue;
      if (split < 0 || box.hi[m] - box.lo[m] > box.hi[split] - box.lo[split]) {
        split = static_cast<int>(m);
      }
    }
    return split;
  };
  const int cd = task.content_dim(), i = node.bound.position;
  const auto entering = [cd, i](std::size_t m) { return static_cast<int>(m) / cd + 1 <= i; };
  // few variables: each in turn (the widest the worst term reads)
  if (node.bound.symbolic && static_cast<int>(box.lo.size()) <= kSmallBoxVariables) {
    const int w = widest(entering);
    if (w >= 0) return w;
  }
  // symbolic forms: by the remainder credits, with every fourth split the
  // widest entering variable (credits concentrated on few variables must
  // not starve the others forever)
  const int period = node.bound.symbolic ? 4 : 2;
  if (box.depth % period == period - 1) {
    const int w = widest(entering);
    if (w >= 0) return w;
  }
  int split = -1;
  double best = 0.0;
  const auto& weight = node.bound.weight;
  for (std::size_t m = 0; m < weight.size(); ++m) {
    if (splittable(m) && weight[m] > best) {
      best = weight[m];
      split = static_cast<int>(m);
    }
  }
  if (split >= 0) return split;
  // the variables of positions up to the worst term's row
  split = widest(entering);
  return split >= 0 ? split : widest([](std::size_t) { return true; });
}

// The deep box kind of the driver (worst_case_search.h): bound_deep_box,
// whose centre and Baumann points are offered as witnesses (the best one's
// enclosure width, rounding only, is the node's rounding).
// The first pass (evaluate) bounds each trigger's whole box by the plain
// interval form, which takes milliseconds at any size, so that every
// trigger has a finite upper bound before any expensive form starts;
// node.bits = 0 then makes the loop bound that box again, with the loop's
// forms (bound), when it reaches the top (the loop re-evaluates a box
// bounded below the working precision). There are no caps, so under
// several ranks the first pass is split by trigger and the box phase by
// batch (worst_case_search.h): a box's bound depends on its box, the
// lower end fixed before its batch (the Baumann forms' pruning) and the
// deadline; the deadline alone can make a box's bound depend on timing,
// and then the owner's bound, shared exactly, is every rank's.
struct DeepEvaluator {
  const Task& task;
  long cut_boxes = 0;  // boxes whose refinements the deadline cut short
  static constexpr bool kSharesFirstPass = true;
  int first_pass_left = 0;  // (no caps: no time kept for the first pass)
  bool caps_pending() const { return false; }
  void share_caps(const Model<Mpfi>&, const Mpfr&, const Deadline&, const search::RankGroup&) {}
  void write_bound(const DeepBoxBound& b, PartWriter& w) const { write_deep_box_bound(b, w); }
  DeepBoxBound read_bound(PartReader& r) const { return read_deep_box_bound(r); }
  void counted(const DeepBoxBound& b) {
    if (b.cut) ++cut_boxes;
  }
  Mpfi point_error(const Model<Mpfi>& model, int trigger, const std::vector<double>& content) {
    return certified_deep_error(model, task, trigger, content);
  }
  // The loop's form: the symbolic forms alone up to kSmallBoxVariables
  // content variables (there the centred forms steered only the split,
  // which the widest variable in turn does as well, at half the cost per
  // box); the centred forms (which include the symbolic ones) while their
  // O(L n) reverse passes per layer are cheap, L n <= kCentredMaxTerms;
  // above it the symbolic forms alone (tens of seconds against about one
  // per box at n = L = 16); the centred forms for kinds the symbolic pass
  // does not handle.
  DeepForm refine_form(const Model<Mpfi>& model) const { return loop_form(model.attention, task); }
  // The first pass's box: the plain form, bound again at the top.
  void evaluate(const Model<Mpfi>& model, DeepNode& node, const Mpfr& lower,
                const TakeWitness& take, const Deadline& deadline, ProgressLines& progress) {
    first_plain(model, node, lower, take, DeepBoxBudget{deadline, &progress});
  }
  // The same on several threads at once (no progress lines).
  void first_bound(const Model<Mpfi>& model, DeepNode& node, const Mpfr& lower,
                   const TakeWitness& take, const Deadline& deadline) const {
    first_plain(model, node, lower, take, DeepBoxBudget{deadline, nullptr});
  }
  void first_plain(const Model<Mpfi>& model, DeepNode& node, const Mpfr& lower,
                   const TakeWitness& take, const DeepBoxBudget& budget) const {
    node.bound = bound_deep_box(model, task, node.box, DeepForm::kPlain, lower, budget);
    node.bits = 0;
    offer(node, take);
  }
  // The box phase's box (on several threads at once: no progress lines
  // from inside it; the loop sends its own between batches).
  void bound(const Model<Mpfi>& model, DeepNode& node, const Mpfr& lower, const TakeWitness& take,
             const Deadline& deadline) const {
    node.bound = bound_deep_box(model, task, node.box, refine_form(model), lower,
                                DeepBoxBudget{deadline, nullptr});
    offer(node, take);
  }
  // The best witness the box met (the enclosure's lower end is what the
  // driver keeps) and its rounding.
  static void offer(DeepNode& node, const TakeWitness& take) {
    node.rounding = node.bound.witness_rounding;
    if (!node.bound.witness.empty()) {
      take(node.box.trigger, node.bound.witness,
           Mpfi(node.bound.witness_lower, node.bound.witness_lower));
    }
  }
  int split(const DeepNode& node) { return choose_deep_split(node, task); }
};

// "model: residual, L layer(s) x H head(s), ATTENTION; ..." and, for a zero
// lower bound, why a relative gap cannot be reached, before the verdict line.
template <class T>
std::string with_method_lines(const Model<T>& model, const Task& task, const WorstCaseBound& bound,
                              const std::string& summary) {
  std::ostringstream head;
  const bool centred = loop_form(model.attention, task) == DeepForm::kCentred;
  head << "model: " << to_string(model.kind) << ", " << model.num_layers() << " layer(s) x "
       << model.num_heads() << " head(s), " << to_string(model.attention)
       << (symbolic_pass_supported(model.attention)
               ? std::string(" attention; upper bounds by symbolic first-order forms through the "
                             "layers (one symbol per content variable; each layer's heads also "
                             "expanded to second order in their weights, summed before "
                             "bounding)") +
                     (centred ? " and centred (mean-value) forms" : "") +
                     ", intersected with plain interval evaluation\n"
               : std::string(" attention; upper bounds by centred (mean-value) forms through "
                             "the layers, intersected with plain interval evaluation\n"));
  std::string text = head.str() + summary;
  if (bound.lower == 0 && !bmp::isinf(bound.upper)) {
    const std::size_t at = text.rfind("verdict: ");
    text.insert(at == std::string::npos ? text.size() : at,
                "E >= 0 only: no relative gap can be reached (E may be 0); a --claim can be "
                "checked\n");
  }
  return text;
}

}  // namespace

template <class T>
WorstCaseBound centred_form_search(const Model<T>& model, const Task& task,
                                   const WorstCaseOptions& options,
                                   const std::function<bool(const Mpfr&, const Mpfr&)>& done) {
  if (model.n != task.n) throw std::invalid_argument("deep worst-case bound: model n != task n");
  if (model.num_layers() < 1 || model.num_heads() < 1) {
    throw std::invalid_argument("deep worst-case bound: the model has no heads");
  }
  task.validate();
  DeepEvaluator evaluator{task};
  WorstCaseBound out = run_worst_case_search<DeepBoxBound>(model, task, options, done, evaluator,
                                                           "deep worst-case bound");
  if (evaluator.cut_boxes > 0) {
    add_budget_note(out, std::to_string(evaluator.cut_boxes) +
                             " box(es) bounded without some of their forms (the deadline passed "
                             "during their evaluation)");
  }
  return out;
}

template <class T>
WorstCaseBound bound_deep_worst_case(const Model<T>& model, const Task& task,
                                     const WorstCaseOptions& options) {
  check_model(model, task);
  return bound_to_gap(options.relative_gap, [&](const auto& done) {
    return centred_form_search(model, task, options, done);
  });
}

template <class T>
UpperBoundCheck check_deep_upper_bound(const Model<T>& model, const Task& task,
                                       const Claim& claimed, const WorstCaseOptions& options) {
  check_model(model, task);
  return check_claim(
      claimed, [&](const auto& done) { return centred_form_search(model, task, options, done); });
}

template <class T>
std::string deep_summary_text(const Model<T>& model, const WorstCaseBound& bound, const Task& task,
                              double requested_gap) {
  return with_method_lines(model, task, bound, summary_text(bound, task, requested_gap));
}

template <class T>
std::string deep_summary_text(const Model<T>& model, const UpperBoundCheck& check,
                              const Task& task) {
  return with_method_lines(model, task, check.bound, summary_text(check, task));
}

#define SINKCERT_DEEP_BOUND(T)                                                                \
  template WorstCaseBound bound_deep_worst_case(const Model<T>&, const Task&,                 \
                                                const WorstCaseOptions&);                     \
  template WorstCaseBound centred_form_search(                                                \
      const Model<T>&, const Task&, const WorstCaseOptions&,                                  \
      const std::function<bool(const Mpfr&, const Mpfr&)>&);                                  \
  template UpperBoundCheck check_deep_upper_bound(const Model<T>&, const Task&, const Claim&, \
                                                  const WorstCaseOptions&);                   \
  template std::string deep_summary_text(const Model<T>&, const WorstCaseBound&, const Task&, \
                                         double);                                             \
  template std::string deep_summary_text(const Model<T>&, const UpperBoundCheck&, const Task&);
SINKCERT_DEEP_BOUND(double)
SINKCERT_DEEP_BOUND(Mpfr)
SINKCERT_DEEP_BOUND(Rational)
#undef SINKCERT_DEEP_BOUND

}  // namespace sinkcert::theorems::bounds
