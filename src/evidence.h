// SPDX-License-Identifier: MIT
//
// Evidence levels (docs/definitions.md, Definitions 5) and checker verdicts. Every number the
// tool prints or writes carries one of these labels:
//   EXACT        exact rational arithmetic or an exact argument
//   CERTIFIED    an outward-rounded interval enclosure (MPFI)
//   NUMERIC(p)   p-bit floating point, no error bound
//   SEARCH       an optimizer's best value; a bound in one direction only,
//                named in the label: "SEARCH(lower bound)" (Bound)
#pragma once

#include <stdexcept>
#include <string>

namespace sinkcert {

// A checker's answer. To a claim: VERIFIED (it holds), NOT VERIFIED (it
// fails, with a witness), UNDECIDED (the budget ran out between). Without a
// claim a bound answers with its enclosure: ENCLOSED when it reached the
// requested gap, NOT ENCLOSED when it did not (the enclosure is still true).
// NOT APPLICABLE: the checker does not fit the model (the reason is said).
enum class Verdict { kVerified, kNotVerified, kUndecided, kEnclosed, kNotEnclosed, kNotApplicable };

inline std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::kVerified:
      return "VERIFIED";
    case Verdict::kNotVerified:
      return "NOT VERIFIED";
    case Verdict::kUndecided:
      return "UNDECIDED";
    case Verdict::kEnclosed:
      return "ENCLOSED";
    case Verdict::kNotEnclosed:
      return "NOT ENCLOSED";
    case Verdict::kNotApplicable:
      return "NOT APPLICABLE";
  }
  throw std::logic_error("unknown verdict");
}

// The one direction a SEARCH value bounds: an optimizer's best value is a
// lower bound when it maximizes (a worst case found) and an upper bound when
// it minimizes (a smallest BOS mass found); kNone for an unlabelled search.
enum class Bound { kNone, kLower, kUpper };

// "lower bound", "upper bound"; empty for kNone.
inline std::string to_string(Bound b) {
  switch (b) {
    case Bound::kNone:
      return "";
    case Bound::kLower:
      return "lower bound";
    case Bound::kUpper:
      return "upper bound";
  }
  throw std::logic_error("unknown bound direction");
}

struct Evidence {
  enum class Level { kExact, kCertified, kNumeric, kSearch };
  Level level = Level::kNumeric;
  int bits = 53;                   // NUMERIC: working precision; CERTIFIED: MPFI precision
  Bound direction = Bound::kNone;  // SEARCH: which side of the true value it bounds

  static Evidence exact() { return {Level::kExact, 0, Bound::kNone}; }
  static Evidence certified(int bits) { return {Level::kCertified, bits, Bound::kNone}; }
  static Evidence numeric(int bits) { return {Level::kNumeric, bits, Bound::kNone}; }
  static Evidence search(Bound direction) { return {Level::kSearch, 53, direction}; }

  // "EXACT", "CERTIFIED", "NUMERIC(53)", "SEARCH(lower bound)".
  std::string label() const {
    switch (level) {
      case Level::kExact:
        return "EXACT";
      case Level::kCertified:
        return "CERTIFIED";
      case Level::kNumeric:
        return "NUMERIC(" + std::to_string(bits) + ")";
      case Level::kSearch:
        return direction == Bound::kNone ? "SEARCH" : "SEARCH(" + to_string(direction) + ")";
    }
    throw std::logic_error("unknown evidence level");
  }
};

}  // namespace sinkcert
