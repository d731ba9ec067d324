// SPDX-License-Identifier: MIT
//
// A claim's bound as written: the exact rational its decimal denotes.
//
// A claim "E <= c" (or "min BOS >= c", "max BOS <= c") is compared with the
// certified MPFR ends of a bound. Compared as a double, "0.1" would mean
// 0.1000000000000000055511...: a bound between the two would verify a claim
// that is false as written. So the claim keeps
//   value = the exact rational of its decimal literal (parse_user_decimal,
//           src/json_reader.h: the command line's notation, read exactly,
//           as for --tolerance and --sink-bar),
//   text  = the literal itself, printed wherever the claim is,
// and every comparison with an MPFR end x is exact: a finite x = m 2^e (m an
// integer) is a rational, so x <= c and x > c are decided in GMP rationals,
// never rounded. A claim built from a double is the shortest decimal that
// reads back as that double (what a person wrote who typed the double:
// Claim(0.1) is exactly 1/10).
#pragma once

#include <ostream>
#include <string>

#include "src/evidence.h"
#include "src/scalar_traits.h"

namespace sinkcert::theorems::bounds {

struct Claim {
  Rational value{0};
  std::string text = "0";

  Claim() = default;
  // The shortest decimal that reads back as x (finite x only: throws
  // std::invalid_argument otherwise).
  Claim(double x);  // NOLINT(google-explicit-constructor): a literal claim reads as one
  // The decimal literal `text` exactly (as strtod reads decimals: an
  // optional sign, digits with an optional point, an optional exponent;
  // text keeps it as written); std::invalid_argument naming what is wrong
  // when it is not one.
  static Claim parse(const std::string& text);

  // The double nearest the value (for JSON fields read by plotting scripts).
  double approx() const;
};

// The claim's text as written.
std::ostream& operator<<(std::ostream& s, const Claim& c);

// x <= c and x > c, exactly (exact_compare, src/scalar_traits.h). +inf is
// above every claim, -inf below; NaN is neither (both false).
bool at_most(const Mpfr& x, const Rational& c);
bool above(const Mpfr& x, const Rational& c);

// a - b for a finite MPFR end (std::invalid_argument for an infinite or NaN
// one), rounded to the nearest double (a claim's margin).
double difference(const Mpfr& a, const Rational& b);
double difference(const Rational& a, const Mpfr& b);

// The answer to a claim "q <= c" from a certified enclosure lower <= q <= upper
// whose lower end a witness attains (has_witness):
//   VERIFIED      upper <= c,  margin c - upper
//   NOT VERIFIED  lower > c,   margin lower - c  (only with a witness)
//   UNDECIDED     otherwise,   margin 0
// Every claim of the bounds has this form: E <= c; min BOS >= b is
// D <= 1 - b (1 - b an exact rational); max BOS <= b is itself of it.
struct ClaimDecision {
  Verdict verdict = Verdict::kUndecided;
  double margin = 0.0;
};
ClaimDecision decide_at_most(const Mpfr& lower, const Mpfr& upper, bool has_witness,
                             const Rational& c);

// The stopping rule of a search for that answer: upper <= c or lower > c.
bool claim_decided(const Mpfr& lower, const Mpfr& upper, const Rational& c);

}  // namespace sinkcert::theorems::bounds
