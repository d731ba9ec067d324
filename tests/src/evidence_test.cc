// SPDX-License-Identifier: MIT
#include "src/evidence.h"

#include <doctest/doctest.h>

namespace sinkcert {
namespace {

TEST_CASE("evidence labels name the level, the precision and a search's direction") {
  CHECK(Evidence::exact().label() == "EXACT");
  CHECK(Evidence::certified(128).label() == "CERTIFIED");
  CHECK(Evidence::numeric(53).label() == "NUMERIC(53)");
  CHECK(Evidence::numeric(113).label() == "NUMERIC(113)");
  CHECK(Evidence::search(Bound::kLower).label() == "SEARCH(lower bound)");
  CHECK(Evidence::search(Bound::kUpper).label() == "SEARCH(upper bound)");
  CHECK(Evidence::search(Bound::kNone).label() == "SEARCH");
  // a direction is a search's only: the other levels carry none
  CHECK(Evidence::exact().direction == Bound::kNone);
  CHECK(Evidence::numeric(53).direction == Bound::kNone);
  CHECK(Evidence::search(Bound::kUpper).direction == Bound::kUpper);
}

TEST_CASE("bound directions and verdicts as text") {
  CHECK(to_string(Bound::kLower) == "lower bound");
  CHECK(to_string(Bound::kUpper) == "upper bound");
  CHECK(to_string(Bound::kNone).empty());
  CHECK(to_string(Verdict::kVerified) == "VERIFIED");
  CHECK(to_string(Verdict::kNotVerified) == "NOT VERIFIED");
  CHECK(to_string(Verdict::kUndecided) == "UNDECIDED");
}

}  // namespace
}  // namespace sinkcert
