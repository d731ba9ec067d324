// SPDX-License-Identifier: MIT
//
// One attention row: turn the scores s_i0..s_ii of query position i into the
// weights a_i0..a_ii (see model.h for the seven normalizations), and the
// reverse-mode derivative of that map (attention_row_vjp), the only place
// where d a / d s is written. Gated attention has softmax weights (its gate
// acts on the head output: head_gate below, src/forward.h).
//
// Divisor of the elementwise kinds (attention_divisor):
//   relu, sigmoid: max(i, 1)   relu-count-all: i + 1   (softmax kinds,
//   softpick, gated: none)
//
// Reverse mode: given the cotangents z_k = dphi/da_k of a scalar phi, the
// cotangents of the scores g_k = dphi/ds_k = sum_m z_m d a_m / d s_k are
//   softmax, off-by-one,  g_k = a_k (z_k - sum_m a_m z_m)
//   gated                 (d a_m / d s_k = a_m ([m = k] - a_k) for both: the
//                         extra zero logit only changes the a_m)
//   relu, relu-count-all  g_k = z_k [s_k > 0] / divisor
//   sigmoid               g_k = z_k sig(s_k) (1 - sig(s_k)) / divisor
//   softpick              g_k = (exp(s_k) / D) ([s_k > 0] z_k - sgn(s_k) sum_m a_m z_m)
//                         with u_k = exp(s_k) - 1, D = sum_m |u_m|
//                         (d a_m / d s_k = ([m = k] [u_k > 0] - a_m sgn(u_k)) e^{s_k} / D);
//                         g = 0 when D = 0 (the 0/0 := 0 row). At s_k = 0
//                         exactly the one-sided derivative from the left:
//                         [s_k > 0] = 0 and sgn(s_k) = -1 (what Jets give
//                         for the branches of softpick_point); over an
//                         interval that straddles 0 the hulls [0, 1] and
//                         [-1, 1].
// ReLU at s_k = 0 exactly: the derivative is taken as 0 ([s > 0], the
// one-sided derivative from the left), which is what forward-mode Jets give
// for relu_of (its branch x > 0 ? x : 0 takes the constant at 0). Over an
// interval score that contains 0 and positive values the factor is the hull
// [0, 1] (Clarke's generalized derivative of max(s, 0)), so an interval
// evaluation encloses every one-sided derivative over the box.
//
// Softmax in point arithmetic is shifted by the largest logit m:
//   a_k = exp(s_k - m) / sum_t exp(s_t - m)
// (the off-by-one variant has the extra logit 0: m = max(0, max_t s_t) and
// the denominator gains exp(-m)).
// Over intervals, the naive quotient uses s_k twice and is loose. Softmax is
// monotone (a_k increases in s_k, decreases in every other s_t), so the exact
// range over a box of logits [l_t, u_t] is
//   a_k in [1 / (1 + sum_{t!=k} exp(u_t - l_k)),  1 / (1 + sum_{t!=k} exp(l_t - u_k))]
// and each end is evaluated in outward-rounded interval arithmetic, taking
// the lower end of the first and the upper end of the second enclosure.
// The extra zero logit of off-by-one softmax enters both sums as t = "zero".
//
// Softpick in point arithmetic, u_t = exp(s_t) - 1, is scaled by exp(-m),
// m = max(0, max_t s_t), written so that neither factor cancels nor
// overflows:
//   e_t = exp(-m) u_t = exp(s_t - m) (1 - exp(-s_t)) = -exp(s_t - m) expm1(-s_t)   (s_t > 0)
//                     = exp(-m) expm1(s_t)                                         (s_t <= 0)
//   a_k = relu(e_k) / sum_t |e_t|   (= relu(u_k) / sum_t |u_t|; 0 if the sum is 0)
// (the form relu(exp(s - m) - exp(-m)) would cancel for s near 0 once m > 0).
// Over intervals, a_k = r / (r + R) with r = relu(u_k) and R = sum_{t!=k}
// |u_t| (when s_k <= 0, r = 0 and a_k = 0 either way); this is
// nondecreasing in r and nonincreasing in R, so over a box
//   a_k in [f(r_lo, R_hi), f(r_hi, R_lo)],   f(r, R) = r / (r + R), f(0, R) = 0,
// with r and R enclosed from the unscaled u_t = expm1(s_t) (MPFR's exponent
// range makes the scaling unnecessary) and each end evaluated in
// outward-rounded interval arithmetic, as for softmax.
//
// The gate of gated attention, g = sigma(G x_i) = 1 / (1 + exp(-G x_i)),
// uses each coordinate of G x_i once, so its interval evaluation is the
// exact range up to rounding.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "src/interval.h"
#include "src/model.h"
#include "src/scalar_traits.h"

namespace sinkcert {

namespace internal {

template <class T>
void softmax_point(const T* s, int count, bool off_by_one, T* a) {
  // m = max_t s_t (and 0 for the extra logit)
  T m = off_by_one ? T(0) : s[0];
  for (int t = 0; t < count; ++t) m = max_of(m, s[t]);
  // Z = sum_t exp(s_t - m) [+ exp(0 - m)]
  T Z = off_by_one ? exp_of(T(-m)) : T(0);
  for (int t = 0; t < count; ++t) {
    a[t] = exp_of(T(s[t] - m));
    Z += a[t];
  }
  for (int t = 0; t < count; ++t) a[t] /= Z;
}

template <class T>
void softmax_interval(const T* s, int count, bool off_by_one, T* a) {
  std::vector<T> lo(count), hi(count);
  for (int t = 0; t < count; ++t) {
    lo[t] = point_of(lower_of(s[t]));
    hi[t] = point_of(upper_of(s[t]));
  }
  for (int k = 0; k < count; ++k) {
    // lower end: 1 / (1 + sum_{t!=k} exp(u_t - l_k) [+ exp(0 - l_k)])
    T sum_hi = off_by_one ? exp_of(T(-lo[k])) : T(0);
    // upper end: 1 / (1 + sum_{t!=k} exp(l_t - u_k) [+ exp(0 - u_k)])
    T sum_lo = off_by_one ? exp_of(T(-hi[k])) : T(0);
    for (int t = 0; t < count; ++t) {
      if (t == k) continue;
      sum_hi += exp_of(T(hi[t] - lo[k]));
      sum_lo += exp_of(T(lo[t] - hi[k]));
    }
    const T low = T(1) / (T(1) + sum_hi);
    const T high = T(1) / (T(1) + sum_lo);
    a[k] = T(lower_of(low), upper_of(high));
  }
}

// Softpick in point arithmetic (header): a[0..count) from s[0..count); a
// may alias s.
template <class T>
void softpick_point(const T* s, int count, T* a) {
  // m = max(0, max_t s_t)
  T m = T(0);
  for (int t = 0; t < count; ++t) m = max_of(m, s[t]);
  // rect_t = relu(e_t), D = sum_t |e_t|
  std::vector<T> rect(count);
  T D = T(0);
  for (int t = 0; t < count; ++t) {
    if (s[t] > T(0)) {
      // e_t = -exp(s_t - m) expm1(-s_t) > 0
      rect[t] = -(exp_of(T(s[t] - m)) * expm1_of(T(-s[t])));
      D += rect[t];
    } else {
      // e_t = exp(-m) expm1(s_t) <= 0
      rect[t] = T(0);
      D -= exp_of(T(-m)) * expm1_of(s[t]);
    }
  }
  // a_t = rect_t / D, 0/0 := 0 (a NaN sum stays NaN)
  const bool empty = D == T(0);
  for (int t = 0; t < count; ++t) a[t] = empty ? T(0) : T(rect[t] / D);
}

// Softpick over intervals: the monotone enclosure of the header.
template <class T>
void softpick_interval(const T* s, int count, T* a) {
  std::vector<T> rect(count), mag(count);
  for (int t = 0; t < count; ++t) {
    // u_t = expm1(s_t): relu(u_t) and |u_t| as exact ranges of the enclosure
    const T u = expm1_of(s[t]);
    rect[t] = relu_of(u);
    mag[t] = abs_of(u);
  }
  for (int k = 0; k < count; ++k) {
    // R = sum_{t!=k} |u_t|
    T R = T(0);
    for (int t = 0; t < count; ++t) {
      if (t != k) R += mag[t];
    }
    using E = Endpoint<T>;
    const E r_lo = lower_of(rect[k]), r_hi = upper_of(rect[k]);
    const E R_lo = lower_of(R), R_hi = upper_of(R);
    // lower end f(r_lo, R_hi), upper end f(r_hi, R_lo), f(0, R) = 0
    const E low = r_lo > 0 ? E(lower_of(T(T(r_lo) / (T(r_lo) + T(R_hi))))) : E(0);
    const E high = r_hi > 0 ? E(upper_of(T(T(r_hi) / (T(r_hi) + T(R_lo))))) : E(0);
    a[k] = T(low, high);
  }
}

// Whether x is exactly 0 (an interval: the point [0, 0]).
template <class T>
bool certainly_zero(const T& x) {
  if constexpr (ScalarTraits<T>::kIsInterval) {
    return lower_of(x) == 0 && upper_of(x) == 0;
  } else {
    return x == T(0);
  }
}

// [s > 0] as a scalar of type T; for an interval the hull of the indicator
// over the enclosure: 1 if certainly positive, 0 if certainly <= 0, else
// [0, 1].
template <class T>
T positive_indicator(const T& s) {
  if constexpr (ScalarTraits<T>::kIsInterval) {
    if (lower_of(s) > 0) return T(1);
    if (!(upper_of(s) > 0)) return T(0);
    return T(0, 1);
  } else {
    return s > T(0) ? T(1) : T(0);
  }
}

}  // namespace internal

// The divisor of the elementwise kinds for query row i: max(i, 1) for relu
// and sigmoid (the number of non-BOS positions row i sees, row 0 by 1),
// i + 1 for relu-count-all; 1 for the softmax kinds, which normalize by
// their sum instead.
inline int attention_divisor(AttentionKind kind, int i) {
  switch (kind) {
    case AttentionKind::kRelu:
    case AttentionKind::kSigmoid:
      return i > 1 ? i : 1;
    case AttentionKind::kReluCountAll:
      return i + 1;
    case AttentionKind::kSoftmax:
    case AttentionKind::kSoftmaxOffByOne:
    case AttentionKind::kSoftpick:
    case AttentionKind::kGated:
      return 1;
  }
  throw std::logic_error("unknown attention kind");
}

// The gate of gated attention at one query token: g = sigma(G x) (n
// entries), x the query's layer input. G must be n x n.
template <class T>
Vector<T> head_gate(const Matrix<T>& G, const Vector<T>& x) {
  const Eigen::Index n = x.size();
  if (G.rows() != n || G.cols() != n) {
    throw std::invalid_argument("gated attention: the head's gate matrix is " +
                                std::to_string(G.rows()) + " x " + std::to_string(G.cols()) +
                                ", expected n x n = " + std::to_string(n) + " x " +
                                std::to_string(n));
  }
  if constexpr (!ScalarTraits<T>::kHasExp) {
    throw std::domain_error(
        "gated attention cannot be evaluated exactly in rational arithmetic; use mpfi "
        "(certified) or mpfr");
  } else {
    // g_d = 1 / (1 + exp(-(G x)_d))
    Vector<T> g = matrix_product(G, x);
    for (Eigen::Index d = 0; d < n; ++d) g(d) = T(1) / (T(1) + exp_of(T(-g(d))));
    return g;
  }
}

// Weights a_i0..a_ii from scores s[0..i] for query position i (count = i + 1).
template <class T>
void attention_row(AttentionKind kind, int i, const T* s, T* a) {
  const int count = i + 1;
  switch (kind) {
    case AttentionKind::kSoftmax:
    case AttentionKind::kSoftmaxOffByOne:
    case AttentionKind::kGated: {
      if constexpr (!ScalarTraits<T>::kHasExp) {
        throw std::domain_error(
            "softmax attention cannot be evaluated exactly in rational "
            "arithmetic; use mpfi (certified) or mpfr");
      } else {
        const bool off = kind == AttentionKind::kSoftmaxOffByOne;
        if constexpr (ScalarTraits<T>::kIsInterval) {
          internal::softmax_interval(s, count, off, a);
        } else {
          internal::softmax_point(s, count, off, a);
        }
      }
      return;
    }
    case AttentionKind::kRelu:
    case AttentionKind::kReluCountAll: {
      // relu:           a_k = max(s_k, 0) / max(i, 1)
      // relu-count-all: a_k = max(s_k, 0) / (i + 1)
      const T denom = T(attention_divisor(kind, i));
      for (int t = 0; t < count; ++t) a[t] = relu_of(s[t]) / denom;
      return;
    }
    case AttentionKind::kSigmoid: {
      if constexpr (!ScalarTraits<T>::kHasExp) {
        throw std::domain_error(
            "sigmoid attention cannot be evaluated exactly in rational "
            "arithmetic; use mpfi (certified) or mpfr");
      } else {
        // a_k = 1 / (1 + exp(-s_k)) / max(i, 1)
        const T denom = T(attention_divisor(kind, i));
        for (int t = 0; t < count; ++t) a[t] = T(1) / (T(1) + exp_of(T(-s[t]))) / denom;
      }
      return;
    }
    case AttentionKind::kSoftpick: {
      if constexpr (!ScalarTraits<T>::kHasExp) {
        throw std::domain_error(
            "softpick attention cannot be evaluated exactly in rational "
            "arithmetic; use mpfi (certified) or mpfr");
      } else if constexpr (ScalarTraits<T>::kIsInterval) {
        internal::softpick_interval(s, count, a);
      } else {
        internal::softpick_point(s, count, a);
      }
      return;
    }
  }
  throw std::logic_error("unknown attention kind");
}

// Reverse mode of attention_row for query row i (count = i + 1): from the
// scores s, the weights a = attention_row(s) and the cotangents z_k =
// dphi/da_k, the score cotangents g_k = dphi/ds_k (formulas in the header).
// g may not alias z. weighted_mean, if given, is sum_m a_m z_m already known
// to the caller (for z_k = M[d, :] . x_k it is the head output o_i[d] =
// M[d, :] . V_i); the softmax kinds use it instead of summing again.
template <class T>
void attention_row_vjp(AttentionKind kind, int i, const T* s, const T* a, const T* z, T* g,
                       const T* weighted_mean = nullptr) {
  const int count = i + 1;
  switch (kind) {
    case AttentionKind::kSoftmax:
    case AttentionKind::kSoftmaxOffByOne:
    case AttentionKind::kGated: {
      // g_k = a_k (z_k - sum_m a_m z_m)
      T zbar = weighted_mean ? *weighted_mean : a[0] * z[0];
      if (!weighted_mean) {
        for (int k = 1; k < count; ++k) zbar += a[k] * z[k];
      }
      for (int k = 0; k < count; ++k) g[k] = a[k] * (z[k] - zbar);
      return;
    }
    case AttentionKind::kRelu:
    case AttentionKind::kReluCountAll: {
      // g_k = z_k [s_k > 0] / divisor
      const T denom = T(attention_divisor(kind, i));
      for (int k = 0; k < count; ++k) g[k] = z[k] * internal::positive_indicator(s[k]) / denom;
      return;
    }
    case AttentionKind::kSigmoid: {
      if constexpr (!ScalarTraits<T>::kHasExp) {
        throw std::domain_error(
            "sigmoid attention cannot be differentiated exactly in rational arithmetic");
      } else {
        // g_k = z_k sig(s_k) (1 - sig(s_k)) / divisor
        const T denom = T(attention_divisor(kind, i));
        for (int k = 0; k < count; ++k) {
          const T sig = T(1) / (T(1) + exp_of(T(-s[k])));
          g[k] = z[k] * sig * (T(1) - sig) / denom;
        }
      }
      return;
    }
    case AttentionKind::kSoftpick: {
      if constexpr (!ScalarTraits<T>::kHasExp) {
        throw std::domain_error(
            "softpick attention cannot be differentiated exactly in rational arithmetic");
      } else {
        // slope_k = exp(s_k - m), D = sum_k |e_k| (scaled by exp(-m) as in
        // softpick_point; intervals unscaled, m = 0)
        T m = T(0);
        if constexpr (!ScalarTraits<T>::kIsInterval) {
          for (int k = 0; k < count; ++k) m = max_of(m, s[k]);
        }
        T D = T(0);
        for (int k = 0; k < count; ++k) {
          if constexpr (ScalarTraits<T>::kIsInterval) {
            D += abs_of(expm1_of(s[k]));
          } else if (s[k] > T(0)) {
            D -= exp_of(T(s[k] - m)) * expm1_of(T(-s[k]));
          } else {
            D -= exp_of(T(-m)) * expm1_of(s[k]);
          }
        }
        if (internal::certainly_zero(D)) {
          for (int k = 0; k < count; ++k) g[k] = T(0);
          return;
        }
        // zbar = sum_m a_m z_m
        T zbar = weighted_mean ? *weighted_mean : a[0] * z[0];
        if (!weighted_mean) {
          for (int k = 1; k < count; ++k) zbar += a[k] * z[k];
        }
        // g_k = (slope_k / D) ([s_k > 0] z_k - sgn(s_k) zbar), sgn = 2 [s > 0] - 1
        for (int k = 0; k < count; ++k) {
          const T pos = internal::positive_indicator(s[k]);
          g[k] = exp_of(T(s[k] - m)) / D * (pos * z[k] - (T(2) * pos - T(1)) * zbar);
        }
      }
      return;
    }
  }
  throw std::logic_error("unknown attention kind");
}

}  // namespace sinkcert
