// SPDX-License-Identifier: MIT
//
// Test utility for the file readers: an InputError message names the field
// ("<file>: <field>: ...") and says what was expected. Kept apart from
// test_util.h because it needs doctest, which the benchmarks do not link.
#pragma once

#include <doctest/doctest.h>

#include <string>

namespace sinkcert::testing {

inline void check_error(const std::string& message, const std::string& field,
                        const std::string& expected) {
  INFO("message: " << message);
  CHECK(message.find(": " + field + ": ") != std::string::npos);
  CHECK(message.find(expected) != std::string::npos);
}

}  // namespace sinkcert::testing
