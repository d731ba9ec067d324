// SPDX-License-Identifier: MIT
#include "theorems/bounds/value_hull_bound.h"

#include <array>
#include <initializer_list>
#include <limits>
#include <vector>

#include "src/interval.h"

namespace sinkcert::theorems::bounds {

namespace {

// The kinds of token: on one layer a value depends on the kind alone (every
// ordinary token's content is the same box).
enum TokenKind { kBos = 0, kOrdinary = 1, kTrigger = 2 };

// (M x)_d = sum_c M[d, c] x_c, enclosed
std::vector<Mpfi> times(const Matrix<Mpfi>& M, const Matrix<Mpfi>& x, int k) {
  const int n = static_cast<int>(M.rows());
  std::vector<Mpfi> v(static_cast<std::size_t>(n), Mpfi(0));
  for (int d = 0; d < n; ++d) {
    for (int c = 0; c < n; ++c) v[d] += M(d, c) * x(k, c);
  }
  return v;
}

}  // namespace

bool value_hull_applies(AttentionKind attention) {
  switch (attention) {
    case AttentionKind::kSoftmax:
    case AttentionKind::kSoftmaxOffByOne:
    case AttentionKind::kSoftpick:
    case AttentionKind::kGated:
      return true;
    default:
      return false;
  }
}

namespace {

// |f - y| at one coordinate: the magnitude of the enclosure; NaN: +inf
Mpfr error_magnitude(const Mpfi& f, const Mpfi& y) {
  const Mpfi e = f - y;
  if (interval_is_nan(e)) return Mpfr(std::numeric_limits<double>::infinity());
  return magnitude_of(e);
}

// The hull of the intervals added so far, as an interval, with 0 when
// asked (weights that may sum to less than 1).
struct Hull {
  Mpfr lo, hi;
  bool empty = true;
  void add(const Mpfi& v) {
    if (empty || lower_of(v) < lo) lo = lower_of(v);
    if (empty || upper_of(v) > hi) hi = upper_of(v);
    empty = false;
  }
  Mpfi interval(bool with_zero) const {
    const Mpfr zero(0);
    return Mpfi(with_zero && zero < lo ? zero : lo, with_zero && zero > hi ? zero : hi);
  }
};

// The hull of the values of the kinds in `kinds`, with 0 when asked.
Mpfi hull_of(const std::array<std::vector<Mpfi>, 3>& values, std::initializer_list<TokenKind> kinds,
             int d, bool with_zero) {
  Hull h;
  for (const TokenKind k : kinds) h.add(values[k][static_cast<std::size_t>(d)]);
  return h.interval(with_zero);
}

// One layer: a value depends on the token's kind alone, so each head's
// values are computed once for every trigger, and a trigger's rows fall in
// four groups by the kinds they see and their target:
//   row 0           {BOS}                 y = 0
//   rows 1..j-1     {BOS, ordinary}       y = 0
//   row j           {BOS, trigger} (+ ordinary when j >= 2)
//                   y = (0 on the BOS flag, 1/j, [-1, 1] on the content, (j - 1)/j)
//   rows j+1..L-1   {BOS, ordinary, trigger}  y = 0
std::vector<Mpfr> single_layer_bounds(const Model<Mpfi>& model, const Task& task,
                                      const std::vector<int>& triggers, bool with_zero) {
  const int L = task.L, n = task.n;
  const Mpfi box(Mpfr(-1), Mpfr(1));
  std::vector<std::array<std::vector<Mpfi>, 3>> values;
  for (const Head<Mpfi>& head : model.layers.at(0)) {
    Matrix<Mpfi> x = Matrix<Mpfi>::Constant(3, n, Mpfi(0));
    x(kBos, kBosFlag) = x(kTrigger, kTriggerFlag) = x(kOrdinary, ordinary_flag(n)) = Mpfi(1);
    for (int c = 0; c < task.content_dim(); ++c)
      x(kTrigger, kFirstContent + c) = x(kOrdinary, kFirstContent + c) = box;
    values.push_back(
        {times(head.M, x, kBos), times(head.M, x, kOrdinary), times(head.M, x, kTrigger)});
    for (const auto& v : values.back()) {
      for (const Mpfi& e : v) {
        if (interval_is_nan(e)) {
          return std::vector<Mpfr>(triggers.size(), Mpfr(std::numeric_limits<double>::infinity()));
        }
      }
    }
  }
  // f over a group's kinds: the sum of the heads' hulls
  const auto f = [&](std::initializer_list<TokenKind> kinds, int d) {
    Mpfi sum(0);
    for (const auto& v : values) sum += hull_of(v, kinds, d, with_zero);
    return sum;
  };
  std::vector<Mpfr> out;
  for (const int j : triggers) {
    Mpfr worst(0);
    const auto raise = [&](const Mpfr& e) {
      if (e > worst) worst = e;
    };
    for (int d = 0; d < n; ++d) {
      raise(error_magnitude(f({kBos}, d), Mpfi(0)));
      if (j >= 2) raise(error_magnitude(f({kBos, kOrdinary}, d), Mpfi(0)));
      if (j + 1 < L) raise(error_magnitude(f({kBos, kOrdinary, kTrigger}, d), Mpfi(0)));
      // the mean (1/j) sum_(k=1..j) x_k: each flag's count over j, the
      // content's range exactly [-1, 1]
      Mpfi y(0);
      if (d == kTriggerFlag) y = Mpfi(1) / Mpfi(j);
      if (d == ordinary_flag(n)) y = Mpfi(j - 1) / Mpfi(j);
      if (d >= kFirstContent && d < ordinary_flag(n)) y = box;
      raise(
          error_magnitude(j >= 2 ? f({kBos, kOrdinary, kTrigger}, d) : f({kBos, kTrigger}, d), y));
    }
    out.push_back(worst);
  }
  return out;
}

// Residual models: every position's enclosure, layer by layer (header).
Mpfr residual_bound(const Model<Mpfi>& model, const Task& task, int trigger, bool with_zero) {
  const Mpfr infinity(std::numeric_limits<double>::infinity());
  const int L = task.L, n = task.n;
  const Matrix<Mpfi> content =
      Matrix<Mpfi>::Constant(L - 1, task.content_dim(), Mpfi(Mpfr(-1), Mpfr(1)));
  const Matrix<Mpfi> X = make_input<Mpfi>(task, trigger, content);
  Matrix<Mpfi> r = Matrix<Mpfi>::Constant(L, n, Mpfi(0));
  for (const auto& layer : model.layers) {
    // x^(l) = x + r^(l)
    const Matrix<Mpfi> x = X + r;
    Matrix<Mpfi> delta = Matrix<Mpfi>::Constant(L, n, Mpfi(0));
    for (const Head<Mpfi>& head : layer) {
      std::vector<Hull> hulls(static_cast<std::size_t>(n));
      for (int i = 0; i < L; ++i) {
        const std::vector<Mpfi> v = times(head.M, x, i);
        for (int d = 0; d < n; ++d) {
          const std::size_t dd = static_cast<std::size_t>(d);
          if (interval_is_nan(v[dd])) return infinity;
          // hull{ M x^(l)_k : k <= i }, grown by row i's own key
          hulls[dd].add(v[dd]);
          // o_(i,d) in the hull, or in the hull with 0
          delta(i, d) += hulls[dd].interval(with_zero);
        }
      }
    }
    r += delta;
  }
  // ybar: 0 off the trigger row, the mean (1/j) sum_(k=1..j) x_k on it
  const Matrix<Mpfi> ybar = make_target<Mpfi>(X, trigger, TargetKind::kPlain);
  Mpfr worst(0);
  for (int i = 0; i < L; ++i) {
    for (int d = 0; d < n; ++d) {
      // |r_(i,d) - ybar_(i,d)|
      const Mpfr m = error_magnitude(r(i, d), ybar(i, d));
      if (m > worst) worst = m;
    }
  }
  return worst;
}

}  // namespace

std::vector<Mpfr> value_hull_bounds(const Model<Mpfi>& model, const Task& task,
                                    const std::vector<int>& triggers) {
  if (!value_hull_applies(model.attention)) {
    return std::vector<Mpfr>(triggers.size(), Mpfr(std::numeric_limits<double>::infinity()));
  }
  // weights that may sum to less than 1 put 0 in the hull
  const bool with_zero = model.attention != AttentionKind::kSoftmax;
  if (model.kind == ModelKind::kSingleLayer)
    return single_layer_bounds(model, task, triggers, with_zero);
  std::vector<Mpfr> out;
  for (const int j : triggers) out.push_back(residual_bound(model, task, j, with_zero));
  return out;
}

Mpfr value_hull_bound(const Model<Mpfi>& model, const Task& task, int trigger) {
  return value_hull_bounds(model, task, {trigger}).at(0);
}

}  // namespace sinkcert::theorems::bounds
