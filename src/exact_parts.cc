// SPDX-License-Identifier: MIT
#include "src/exact_parts.h"

#include <gmp.h>
#include <mpfi.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace sinkcert {

namespace {

// Integers up to 2^53 in magnitude are exact in a double.
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
constexpr double kWord = 4294967296.0;                   // 2^32

// The kinds of an MPFR value as written.
enum MpfrKind : long { kNan = 0, kInfinity = 1, kZero = 2, kRegular = 3 };

// An owned GMP integer.
struct Integer {
  mpz_t z;
  Integer() { mpz_init(z); }
  ~Integer() { mpz_clear(z); }
  Integer(const Integer&) = delete;
  Integer& operator=(const Integer&) = delete;
};

void write_mpfr(PartWriter& w, mpfr_srcptr x) {
  w.put_int(static_cast<long>(mpfr_get_prec(x)));
  if (mpfr_nan_p(x)) {
    w.put_int(kNan);
    w.put_int(1);
    return;
  }
  const long sign = mpfr_signbit(x) ? -1 : 1;
  if (mpfr_inf_p(x) || mpfr_zero_p(x)) {
    w.put_int(mpfr_inf_p(x) ? kInfinity : kZero);
    w.put_int(sign);
    return;
  }
  w.put_int(kRegular);
  w.put_int(sign);
  // x = m 2^e, m an integer of at most prec bits
  Integer m;
  const long e = static_cast<long>(mpfr_get_z_2exp(m.z, x));
  mpz_abs(m.z, m.z);
  // e = hi 2^32 + lo, 0 <= lo < 2^32 (hi rounded toward -inf)
  const std::int64_t e64 = e;
  const std::int64_t hi = e64 >= 0 ? e64 / 4294967296LL : -((-e64 + 4294967295LL) / 4294967296LL);
  w.put_int(static_cast<long>(hi));
  w.put_int(static_cast<long>(e64 - hi * 4294967296LL));
  std::size_t count = 0;
  std::vector<std::uint32_t> words((mpz_sizeinbase(m.z, 2) + 31) / 32 + 1);
  mpz_export(words.data(), &count, -1, sizeof(std::uint32_t), 0, 0, m.z);
  w.put_int(static_cast<long>(count));
  for (std::size_t i = 0; i < count; ++i) w.put(static_cast<double>(words[i]));
}

// Reads a value written by write_mpfr into x (its precision set as written).
void read_mpfr(PartReader& r, mpfr_ptr x) {
  const long prec = r.get_int();
  if (prec < MPFR_PREC_MIN || prec > MPFR_PREC_MAX) {
    throw std::runtime_error("exact part: an MPFR precision out of range");
  }
  mpfr_set_prec(x, static_cast<mpfr_prec_t>(prec));
  const long kind = r.get_int();
  const long sign = r.get_int();
  if (sign != 1 && sign != -1) throw std::runtime_error("exact part: an MPFR sign not +-1");
  switch (kind) {
    case kNan:
      mpfr_set_nan(x);
      return;
    case kInfinity:
      mpfr_set_inf(x, static_cast<int>(sign));
      return;
    case kZero:
      mpfr_set_zero(x, static_cast<int>(sign));
      return;
    case kRegular:
      break;
    default:
      throw std::runtime_error("exact part: an unknown MPFR kind");
  }
  const long hi = r.get_int();
  const long lo = r.get_int();
  const long count = r.get_int();
  if (lo < 0 || lo >= static_cast<long>(kWord) || count < 1) {
    throw std::runtime_error("exact part: a malformed MPFR value");
  }
  std::vector<std::uint32_t> words(static_cast<std::size_t>(count));
  for (auto& word : words) {
    const long v = r.get_int();
    if (v < 0 || v >= static_cast<long>(kWord)) {
      throw std::runtime_error("exact part: an MPFR mantissa word out of range");
    }
    word = static_cast<std::uint32_t>(v);
  }
  Integer m;
  mpz_import(m.z, words.size(), -1, sizeof(std::uint32_t), 0, 0, words.data());
  if (sign < 0) mpz_neg(m.z, m.z);
  const std::int64_t e = static_cast<std::int64_t>(hi) * 4294967296LL + lo;
  // exact: m has at most prec bits
  if (mpfr_set_z_2exp(x, m.z, static_cast<mpfr_exp_t>(e), MPFR_RNDN) != 0) {
    throw std::runtime_error("exact part: an MPFR mantissa wider than its precision");
  }
}

}  // namespace

void PartWriter::put_int(long v) {
  const double d = static_cast<double>(v);
  if (!(std::fabs(d) < kMaxExactInteger)) throw std::overflow_error("exact part: integer >= 2^53");
  out_.push_back(d);
}

void PartWriter::put(const std::vector<double>& v) {
  put_int(static_cast<long>(v.size()));
  out_.insert(out_.end(), v.begin(), v.end());
}

void PartWriter::put(const Mpfr& v) { write_mpfr(*this, v.backend().data()); }

void PartWriter::put(const Mpfi& v) {
  mpfi_srcptr x = v.backend().data();
  put_int(static_cast<long>(mpfi_get_prec(x)));
  write_mpfr(*this, &x->left);
  write_mpfr(*this, &x->right);
}

void PartWriter::put(const std::string& v) {
  put_int(static_cast<long>(v.size()));
  for (unsigned char c : v) out_.push_back(c);
}

double PartReader::get_double() {
  if (at_ >= in_.size()) throw std::runtime_error("exact part: ended early (a part not shared?)");
  return in_[at_++];
}

long PartReader::get_int() {
  const double d = get_double();
  if (!(std::fabs(d) < kMaxExactInteger) || d != std::floor(d)) {
    throw std::runtime_error("exact part: an integer expected");
  }
  return static_cast<long>(d);
}

std::vector<double> PartReader::get_doubles() {
  const long size = get_int();
  if (size < 0 || static_cast<std::size_t>(size) > in_.size() - at_) {
    throw std::runtime_error("exact part: ended early (a part not shared?)");
  }
  std::vector<double> v(in_.begin() + static_cast<long>(at_),
                        in_.begin() + static_cast<long>(at_) + size);
  at_ += static_cast<std::size_t>(size);
  return v;
}

Mpfr PartReader::get_mpfr() {
  Mpfr v;
  read_mpfr(*this, v.backend().data());
  return v;
}

Mpfi PartReader::get_mpfi() {
  const long prec = get_int();
  if (prec < MPFR_PREC_MIN || prec > MPFR_PREC_MAX) {
    throw std::runtime_error("exact part: an MPFI precision out of range");
  }
  Mpfi v;
  mpfi_ptr x = v.backend().data();
  mpfi_set_prec(x, static_cast<mpfr_prec_t>(prec));
  read_mpfr(*this, &x->left);
  read_mpfr(*this, &x->right);
  if (mpfr_get_prec(&x->left) != prec || mpfr_get_prec(&x->right) != prec) {
    throw std::runtime_error("exact part: MPFI ends of another precision than the interval's");
  }
  return v;
}

std::string PartReader::get_string() {
  const long size = get_int();
  if (size < 0) throw std::runtime_error("exact part: a negative string length");
  std::string s;
  for (long i = 0; i < size; ++i) {
    const long c = get_int();
    if (c < 0 || c > 255) throw std::runtime_error("exact part: a byte out of range");
    s.push_back(static_cast<char>(c));
  }
  return s;
}

}  // namespace sinkcert
