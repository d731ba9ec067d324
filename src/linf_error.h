// SPDX-License-Identifier: MIT
//
// The per-input l_inf error of SPEC section 3 and where it occurs:
//   e(X) = max_{i, d} |f(X)_{i,d} - y_{i,d}|
// For intervals the value is the exact range of the max over the enclosures
// of the terms (see max_of in scalar_traits.h), and the location is the term
// with the largest upper end.
#pragma once

#include "src/scalar_traits.h"

namespace sinkcert {

template <class T>
struct LinfError {
  T value = T(0);
  int position = 0;    // i
  int coordinate = 0;  // d
};

template <class T>
LinfError<T> linf_error(const Matrix<T>& output, const Matrix<T>& target) {
  LinfError<T> e;
  double best = -1.0;
  for (int i = 0; i < output.rows(); ++i) {
    for (int d = 0; d < output.cols(); ++d) {
      // |f(X)_{i,d} - y_{i,d}|
      const T diff = abs_of(T(output(i, d) - target(i, d)));
      const double key = ScalarTraits<T>::kIsInterval ? upper_of(diff).template convert_to<double>()
                                                        : to_double(diff);
      e.value = (i == 0 && d == 0) ? diff : max_of(e.value, diff);
      if (key > best) {
        best = key;
        e.position = i;
        e.coordinate = d;
      }
    }
  }
  return e;
}

}  // namespace sinkcert
