// SPDX-License-Identifier: MIT
//
// One attention row: turn the scores s_i0..s_ii of query position i into the
// weights a_i0..a_ii (see model.h for the five normalizations), and the
// reverse-mode derivative of that map (attention_row_vjp), the only place
// where d a / d s is written.
//
// Divisor of the elementwise kinds (attention_divisor):
//   relu, sigmoid: max(i, 1)   relu-count-all: i + 1   (softmax kinds: none)
//
// Reverse mode: given the cotangents z_k = dphi/da_k of a scalar phi, the
// cotangents of the scores g_k = dphi/ds_k = sum_m z_m d a_m / d s_k are
//   softmax, off-by-one   g_k = a_k (z_k - sum_m a_m z_m)
//                         (d a_m / d s_k = a_m ([m = k] - a_k) for both: the
//                         extra zero logit only changes the a_m)
//   relu, relu-count-all  g_k = z_k [s_k > 0] / divisor
//   sigmoid               g_k = z_k sig(s_k) (1 - sig(s_k)) / divisor
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
#pragma once

#include <stdexcept>
#include <vector>

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
    lo[t] = T(bmp::lower(s[t]));
    hi[t] = T(bmp::upper(s[t]));
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
    a[k] = T(bmp::lower(low), bmp::upper(high));
  }
}

// [s > 0] as a scalar of type T; for an interval the hull of the indicator
// over the enclosure: 1 if certainly positive, 0 if certainly <= 0, else
// [0, 1].
template <class T>
T positive_indicator(const T& s) {
  if constexpr (ScalarTraits<T>::kIsInterval) {
    if (bmp::lower(s) > 0) return T(1);
    if (!(bmp::upper(s) > 0)) return T(0);
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
      return 1;
  }
  throw std::logic_error("unknown attention kind");
}

// Weights a_i0..a_ii from scores s[0..i] for query position i (count = i + 1).
template <class T>
void attention_row(AttentionKind kind, int i, const T* s, T* a) {
  const int count = i + 1;
  switch (kind) {
    case AttentionKind::kSoftmax:
    case AttentionKind::kSoftmaxOffByOne: {
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
    case AttentionKind::kSoftmaxOffByOne: {
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
  }
  throw std::logic_error("unknown attention kind");
}

}  // namespace sinkcert
