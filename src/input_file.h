// SPDX-License-Identifier: MIT
//
// The JSON input file ("sinkcert-input", version 1; docs/commands.md, "File formats"):
//   {"format": "sinkcert-input", "version": 1, "tokens": [[x_0], ..., [x_{L-1}]]}
// an explicit L x n token matrix (row i = x_i, coordinates as in task.h).
// Reading checks that it is a valid task input (BOS row e_0, exactly one
// trigger, flags 0/1, content in [-1, 1]) and errors name file and field.
// "version" and a free-form "metadata" object are optional. Every entry is the
// exact rational its decimal literal (or decimal string) denotes, as in weight
// files (src/json_reader.h): the input the file describes is exact,
// and tokens_as<T>() makes it in T (exactly for Rational, enclosed for Mpfi,
// rounded for double/Mpfr).
#pragma once

#include <string>

#include "src/json_reader.h"
#include "src/scalar_traits.h"

namespace sinkcert {

inline constexpr const char* kInputFormat = "sinkcert-input";
inline constexpr int kInputFormatVersion = 1;

struct InputFile {
  int trigger = 0;          // the position j of the trigger token
  Matrix<Rational> tokens;  // L x n, exact
  std::string path;

  template <class T>
  Matrix<T> tokens_as() const {
    return matrix_cast<T>(tokens);
  }
};

// Reads and validates; n is the model's dimension. InputError(file, field,
// expected) on any problem, e.g. field tokens[3][1] for a second trigger.
InputFile read_input_file(const std::string& path, int n);
// The same validation on an already parsed document.
InputFile input_file_from_document(const internal::JsonDocument& doc, int n);
// The file's text: one token per line, every entry its exact decimal
// expansion (a double reads back bit-identically).
std::string input_file_text(const Matrix<double>& tokens);
std::string input_file_text(const Matrix<Rational>& tokens);
// Writes input_file_text(tokens) atomically.
void write_input_file(const std::string& path, const Matrix<double>& tokens);

}  // namespace sinkcert
