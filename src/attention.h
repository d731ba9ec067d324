// SPDX-License-Identifier: MIT
//
// One attention row: turn the scores s_i0..s_ii of query position i into the
// weights a_i0..a_ii (see model.h for the five normalizations).
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

}  // namespace internal

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
      const T denom = kind == AttentionKind::kRelu ? T(i > 1 ? i : 1) : T(i + 1);
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
        const T denom = T(i > 1 ? i : 1);
        for (int t = 0; t < count; ++t) a[t] = T(1) / (T(1) + exp_of(T(-s[t]))) / denom;
      }
      return;
    }
  }
  throw std::logic_error("unknown attention kind");
}

}  // namespace sinkcert
