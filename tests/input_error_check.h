// SPDX-License-Identifier: MIT
//
// Test utility for the file readers: what a reader threw, as the
// InputError's typed parts (file, field, expected), so a test names the
// field exactly instead of searching the message. Kept apart from
// test_util.h because it needs doctest, which the benchmarks do not link.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "src/input_error.h"

namespace sinkcert::testing {

// The InputError a reader threw; thrown = false when it accepted the input.
struct CaughtError {
  bool thrown = false;
  std::string file, field, expected, message;
};

inline CaughtError caught(const InputError& e) {
  return CaughtError{true, e.file(), e.field(), e.expected(), e.what()};
}

// The reader refused the input naming exactly `field`, and what it
// expected contains `expected`.
inline void check_error(const CaughtError& error, const std::string& field,
                        const std::string& expected) {
  INFO("message: " << error.message);
  REQUIRE(error.thrown);
  CHECK(error.field == field);
  CHECK(error.expected.find(expected) != std::string::npos);
}

}  // namespace sinkcert::testing
