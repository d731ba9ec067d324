// SPDX-License-Identifier: MIT
#include "theorems/bounds/claim.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "src/json_reader.h"

namespace sinkcert::theorems::bounds {

Claim::Claim(double x) {
  if (!std::isfinite(x)) throw std::invalid_argument("a claim must be a finite number");
  // the shortest %.{p}e form that reads back as x; p = 17 always does
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  // %g may write "1e-06" or "5": both are in the decimal grammar once the
  // exponent's leading zeros are dropped
  std::string s = buf;
  const std::size_t e = s.find('e');
  if (e != std::string::npos) {
    std::size_t digits = e + 1;
    if (digits < s.size() && (s[digits] == '+' || s[digits] == '-')) ++digits;
    while (digits + 1 < s.size() && s[digits] == '0') s.erase(digits, 1);
  }
  text = s;
  value = internal::parse_decimal(text);
}

Claim Claim::parse(const std::string& text) {
  // the command line's decimal notation, read exactly (json_reader.h)
  Claim c;
  c.value = internal::parse_user_decimal(text);
  c.text = text;
  return c;
}

double Claim::approx() const { return value.convert_to<double>(); }

std::ostream& operator<<(std::ostream& s, const Claim& c) { return s << c.text; }

bool at_most(const Mpfr& x, const Rational& c) {
  return !bmp::isnan(x) && exact_compare(x, c) <= 0;
}

bool above(const Mpfr& x, const Rational& c) { return !bmp::isnan(x) && exact_compare(x, c) > 0; }

namespace {

// x as the rational it is (a finite MPFR value is dyadic).
Rational finite_rational(const Mpfr& x) {
  if (!bmp::isfinite(x)) throw std::invalid_argument("a claim's margin: the end is not finite");
  return scalar_cast<Rational>(x);
}

}  // namespace

double difference(const Mpfr& a, const Rational& b) {
  return Rational(finite_rational(a) - b).convert_to<double>();
}

double difference(const Rational& a, const Mpfr& b) {
  return Rational(a - finite_rational(b)).convert_to<double>();
}

ClaimDecision decide_at_most(const Mpfr& lower, const Mpfr& upper, bool has_witness,
                             const Rational& c) {
  ClaimDecision d;
  if (at_most(upper, c)) {
    d.verdict = Verdict::kVerified;
    d.margin = difference(c, upper);
  } else if (has_witness && above(lower, c)) {
    d.verdict = Verdict::kNotVerified;
    d.margin = difference(lower, c);
  }
  return d;
}

bool claim_decided(const Mpfr& lower, const Mpfr& upper, const Rational& c) {
  return at_most(upper, c) || above(lower, c);
}

}  // namespace sinkcert::theorems::bounds
