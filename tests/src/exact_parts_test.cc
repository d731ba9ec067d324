// SPDX-License-Identifier: MIT
//
// src/exact_parts.h: every value written comes back bit for bit (random
// MPFR values of 53..1024 bits with exponents of +-10^6, values whose
// mantissa has every bit set, +-0, +-inf, NaN, MPFI intervals, doubles,
// integers, strings), each with the precision it was written at whatever
// the current default; a part cut short or left empty (a part not shared)
// throws instead of reading something else.
#include "src/exact_parts.h"

#include <doctest/doctest.h>
#include <gmp.h>
#include <mpfi.h>
#include <mpfr.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace sinkcert {
namespace {

// Same bits: precision, NaN-ness, sign bit and value.
bool same_mpfr(mpfr_srcptr a, mpfr_srcptr b) {
  if (mpfr_get_prec(a) != mpfr_get_prec(b)) return false;
  if (mpfr_nan_p(a) || mpfr_nan_p(b)) return mpfr_nan_p(a) && mpfr_nan_p(b);
  return mpfr_signbit(a) == mpfr_signbit(b) && mpfr_equal_p(a, b);
}
bool same(const Mpfr& a, const Mpfr& b) {
  return same_mpfr(a.backend().data(), b.backend().data());
}
bool same(const Mpfi& a, const Mpfi& b) {
  return mpfi_get_prec(a.backend().data()) == mpfi_get_prec(b.backend().data()) &&
         same_mpfr(&a.backend().data()->left, &b.backend().data()->left) &&
         same_mpfr(&a.backend().data()->right, &b.backend().data()->right);
}

Mpfr with_precision(long bits) {
  Mpfr x;
  mpfr_set_prec(x.backend().data(), bits);
  return x;
}

// Random values: mantissa uniform in [0, 1) at `bits`, exponent in
// [-10^6, 10^6], either sign.
std::vector<Mpfr> random_values(int count) {
  gmp_randstate_t state;
  gmp_randinit_default(state);
  gmp_randseed_ui(state, 20261206);
  std::vector<Mpfr> out;
  for (int i = 0; i < count; ++i) {
    const long bits = 53 + static_cast<long>(gmp_urandomm_ui(state, 1024 - 53 + 1));
    Mpfr x = with_precision(bits);
    mpfr_urandomb(x.backend().data(), state);
    const long shift = static_cast<long>(gmp_urandomm_ui(state, 2000001)) - 1000000;
    mpfr_mul_2si(x.backend().data(), x.backend().data(), shift, MPFR_RNDN);
    if (gmp_urandomm_ui(state, 2) == 1) mpfr_neg(x.backend().data(), x.backend().data(), MPFR_RNDN);
    out.push_back(x);
  }
  gmp_randclear(state);
  return out;
}

// Every bit of the mantissa set: 1 - 2^-bits, times 2^e.
Mpfr all_bits(long bits, long e) {
  Mpfr x = with_precision(bits);
  mpfr_set_ui_2exp(x.backend().data(), 1, 0, MPFR_RNDN);
  Mpfr ulp = with_precision(bits);
  mpfr_set_ui_2exp(ulp.backend().data(), 1, -bits, MPFR_RNDN);
  mpfr_sub(x.backend().data(), x.backend().data(), ulp.backend().data(), MPFR_RNDN);
  mpfr_mul_2si(x.backend().data(), x.backend().data(), e, MPFR_RNDN);
  return x;
}

std::vector<Mpfr> special_values() {
  std::vector<Mpfr> out;
  for (long bits : {53L, 128L, 1024L}) {
    Mpfr x = with_precision(bits);
    mpfr_set_zero(x.backend().data(), 1);
    out.push_back(x);
    mpfr_set_zero(x.backend().data(), -1);
    out.push_back(x);
    mpfr_set_inf(x.backend().data(), 1);
    out.push_back(x);
    mpfr_set_inf(x.backend().data(), -1);
    out.push_back(x);
    mpfr_set_nan(x.backend().data());
    out.push_back(x);
    out.push_back(all_bits(bits, 0));
    out.push_back(all_bits(bits, -1000000));
    out.push_back(all_bits(bits, 1000000));
    out.push_back(-all_bits(bits, 33));
  }
  return out;
}

TEST_CASE("MPFR values come back bit for bit, at the precision written") {
  std::vector<Mpfr> values = random_values(500);
  for (const Mpfr& v : special_values()) values.push_back(v);
  std::vector<double> part;
  PartWriter w(part);
  for (const Mpfr& v : values) w.put(v);
  // read back under another default precision: each value keeps its own
  PrecisionScope other(200);
  PartReader r(part);
  for (const Mpfr& v : values) {
    const Mpfr back = r.get_mpfr();
    CHECK(same(v, back));
  }
  CHECK(r.at_end());
  // the comparison tells a changed last bit apart
  Mpfr changed = values[0];
  mpfr_nextabove(changed.backend().data());
  CHECK_FALSE(same(values[0], changed));
}

TEST_CASE("MPFI intervals, doubles, integers and strings come back") {
  PrecisionScope scope(192);
  const Mpfi a(Mpfr(1) / 3, Mpfr(2) / 3);
  const Mpfi b = Mpfi(1) / Mpfi(7);
  Mpfi nan_end;  // a default interval: NaN ends
  mpfr_set_nan(&nan_end.backend().data()->left);
  mpfr_set_nan(&nan_end.backend().data()->right);
  const std::vector<double> doubles = {0.0,
                                       -0.0,
                                       1e-310,
                                       -1.5,
                                       std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::quiet_NaN()};
  std::vector<double> part;
  PartWriter w(part);
  w.put(a);
  w.put(b);
  w.put(nan_end);
  w.put(doubles);
  w.put_int(-(1L << 52));
  w.put(std::string("softmax vertex bound: \"x\"\n"));
  PrecisionScope other(64);
  PartReader r(part);
  CHECK(same(a, r.get_mpfi()));
  CHECK(same(b, r.get_mpfi()));
  CHECK(same(nan_end, r.get_mpfi()));
  const std::vector<double> back = r.get_doubles();
  REQUIRE(back.size() == doubles.size());
  for (std::size_t i = 0; i < doubles.size(); ++i) {
    if (std::isnan(doubles[i])) {
      CHECK(std::isnan(back[i]));
    } else {
      CHECK(back[i] == doubles[i]);
      CHECK(std::signbit(back[i]) == std::signbit(doubles[i]));
    }
  }
  CHECK(r.get_int() == -(1L << 52));
  CHECK(r.get_string() == "softmax vertex bound: \"x\"\n");
  CHECK(r.at_end());
  CHECK_THROWS_AS(w.put_int(1L << 53), std::overflow_error);
}

TEST_CASE("a part cut short or not shared throws") {
  std::vector<double> part;
  PartWriter w(part);
  w.put(all_bits(300, 5));
  const std::vector<double> empty;
  PartReader from_empty(empty);
  CHECK_THROWS_AS(from_empty.get_mpfr(), std::runtime_error);
  std::vector<double> cut(part.begin(), part.end() - 1);
  PartReader from_cut(cut);
  CHECK_THROWS_AS(from_cut.get_mpfr(), std::runtime_error);
  std::vector<double> wrong = part;
  wrong[1] = 7;  // no such kind
  PartReader from_wrong(wrong);
  CHECK_THROWS_AS(from_wrong.get_mpfr(), std::runtime_error);
}

}  // namespace
}  // namespace sinkcert
