// SPDX-License-Identifier: MIT
//
// Checks of values handed between ranks as parts (src/exact_parts.h):
//   same_bits(a, b)   equal bit for bit: MPFR and MPFI values of the same
//                     precision and value (or both NaN), doubles by memory;
//   check_truncations_refused(part, refused)
//                     every truncation of a written part (one cut short in
//                     transit, or not shared: empty) and the part with one
//                     value more must be refused by the reader `refused`.
#pragma once

#include <doctest/doctest.h>
#include <mpfi.h>
#include <mpfr.h>

#include <cstring>
#include <vector>

#include "src/scalar_traits.h"

namespace sinkcert::test {

inline bool same_bits(const Mpfr& a, const Mpfr& b) {
  mpfr_srcptr x = a.backend().data(), y = b.backend().data();
  return mpfr_get_prec(x) == mpfr_get_prec(y) &&
         ((mpfr_nan_p(x) && mpfr_nan_p(y)) ||
          (mpfr_equal_p(x, y) && mpfr_signbit(x) == mpfr_signbit(y)));
}
inline bool same_bits(const Mpfi& a, const Mpfi& b) {
  return same_bits(Mpfr(bmp::lower(a)), Mpfr(bmp::lower(b))) &&
         same_bits(Mpfr(bmp::upper(a)), Mpfr(bmp::upper(b))) &&
         mpfi_get_prec(a.backend().data()) == mpfi_get_prec(b.backend().data());
}
inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// refused(p): true when reading p throws.
template <class Refused>
void check_truncations_refused(const std::vector<double>& part, const Refused& refused) {
  for (std::size_t length = 0; length < part.size(); ++length) {
    INFO("length " << length << " of " << part.size());
    CHECK(refused(std::vector<double>(part.begin(), part.begin() + static_cast<long>(length))));
  }
  std::vector<double> longer = part;
  longer.push_back(0.0);
  CHECK(refused(longer));
}

}  // namespace sinkcert::test
