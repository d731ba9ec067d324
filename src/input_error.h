// SPDX-License-Identifier: MIT
//
// The one error type for bad user input (files, fields, command-line values).
// Its message names the file, the field and what was expected; the CLI prints
// it on one line and exits with code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace sinkcert {

class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, const std::string& field, const std::string& expected)
      : std::runtime_error(file + ": " + field + ": " + expected),
        file_(file),
        field_(field),
        expected_(expected) {}
  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }
  const std::string& expected() const { return expected_; }

 private:
  std::string file_;
  std::string field_;
  std::string expected_;
};

}  // namespace sinkcert
