// SPDX-License-Identifier: MIT
//
// Values packed exactly into a vector of doubles, the parts that
// search/rank_group.h's share() hands from rank to rank: what one rank
// computed, another reads back bit for bit.
//   integers   one double each (|v| < 2^53, so exact);
//   doubles    as they are (NaN, infinities and -0 included);
//   MPFR       precision p, kind (NaN, infinity, zero, regular), sign, and
//              for a regular value x = m 2^e (m an integer of at most p
//              bits, mpfr_get_z_2exp): e as two 32-bit halves and |m| as
//              its 32-bit words, least significant first, one double each;
//   MPFI       its precision, then its two ends as MPFR values;
//   strings    length, then one double per byte.
// A decoded MPFR value has the precision it was encoded with (not the
// current default), so every later operation on it rounds as on the
// original. PartReader throws std::runtime_error when a part ends early or
// holds a value no writer writes (a part left unshared arrives empty).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "src/scalar_traits.h"

namespace sinkcert {

class PartWriter {
 public:
  explicit PartWriter(std::vector<double>& out) : out_(out) {}
  void put(double v) { out_.push_back(v); }
  void put_int(long v);  // |v| < 2^53
  void put(const std::vector<double>& v);
  void put(const Mpfr& v);
  void put(const Mpfi& v);
  void put(const std::string& v);

 private:
  std::vector<double>& out_;
};

class PartReader {
 public:
  explicit PartReader(const std::vector<double>& in) : in_(in) {}
  double get_double();
  long get_int();
  std::vector<double> get_doubles();
  Mpfr get_mpfr();
  Mpfi get_mpfi();
  std::string get_string();
  bool at_end() const { return at_ == in_.size(); }

 private:
  const std::vector<double>& in_;
  std::size_t at_ = 0;
};

}  // namespace sinkcert
