// SPDX-License-Identifier: MIT
//
// The per-input l_inf error of docs/definitions.md, Definitions 3 and where it occurs:
//   e(X) = max_{i, d} |f(X)_{i,d} - y_{i,d}|
// For intervals the value is the exact range of the max over the enclosures
// of the terms (see max_of in scalar_traits.h), and the location is the term
// with the largest upper end. Locations are chosen by comparing the terms in
// their own type (MPFR endpoints for intervals), never through a double, so
// a location below double's range (e(X) ~ 1e-400) is still the right one. A
// NaN term makes the value NaN and is the location (the first such term).
#pragma once

#include <optional>

#include "src/interval.h"
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
  // the ordering key of a term: its upper end (intervals) or itself
  using Key = Endpoint<T>;
  LinfError<T> e;
  std::optional<Key> best;  // copy-constructed: keeps the key's precision
  bool have_nan = false;
  for (int i = 0; i < output.rows(); ++i) {
    for (int d = 0; d < output.cols(); ++d) {
      // |f(X)_{i,d} - y_{i,d}|
      const T diff = abs_of(T(output(i, d) - target(i, d)));
      e.value = (i == 0 && d == 0) ? diff : max_of(e.value, diff);
      if (have_nan) continue;
      const Key key = upper_of(diff);
      const bool nan = is_nan(diff);
      if (nan || !best || key > *best) {
        best.emplace(key);
        have_nan = nan;
        e.position = i;
        e.coordinate = d;
      }
    }
  }
  return e;
}

}  // namespace sinkcert
