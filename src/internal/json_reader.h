// SPDX-License-Identifier: MIT
//
// Reading JSON user files with errors that name the file and the field.
//
// Fields are named by their path from the document root, e.g.
//   weights[0][1].W_K[3][2]
// (object keys joined by '.', array indices in brackets). The parser tracks
// this path while it reads, so even a number that overflows a double
// (1e400, which nlohmann::json refuses) or a syntax error is reported at its
// field. Every failure is an InputError(file, field, expected).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/scalar_traits.h"

namespace sinkcert::internal {

// Reads and parses the whole file. InputError when it cannot be opened, is
// not JSON (with byte offset and field), or holds a number out of the double
// range.
nlohmann::json read_json_file(const std::string& path);
// Parses `text` as if it were the contents of `file` (same errors).
nlohmann::json parse_json_text(const std::string& text, const std::string& file);

// "weights[0]" + key "W_K" -> "weights[0].W_K"; "" + "n" -> "n".
std::string field_join(const std::string& parent, const std::string& key);
// "weights" + 3 -> "weights[3]".
std::string field_index(const std::string& parent, std::size_t index);
// The JSON type name used in messages ("string", "array", "null", ...).
std::string json_type_name(const nlohmann::json& v);

// Members of an object: require(...) throws "missing" naming the field.
const nlohmann::json& require_member(const nlohmann::json& object, const std::string& key,
                                     const std::string& file, const std::string& parent);
// Throws InputError on any key of `object` not in `allowed` (comma list in
// the message), so a misspelt or unsupported field (a bias) is never ignored.
void reject_unknown_members(const nlohmann::json& object, const std::vector<std::string>& allowed,
                            const std::string& file, const std::string& field);
void require_object(const nlohmann::json& v, const std::string& file, const std::string& field);
std::string require_string(const nlohmann::json& v, const std::string& file,
                           const std::string& field);
// An integer in [lo, hi] (a JSON number without fraction or exponent).
int require_int(const nlohmann::json& v, const std::string& file, const std::string& field, int lo,
                int hi);
// A finite JSON number, converted to double.
double require_finite(const nlohmann::json& v, const std::string& file, const std::string& field);
// A matrix given as a non-empty array of equally long non-empty rows of finite
// numbers. rows/cols < 0 accept any size; otherwise the size must match and
// the message quotes `shape_hint` (e.g. "n x n = 5 x 5").
Matrix<double> require_matrix(const nlohmann::json& v, const std::string& file,
                              const std::string& field, int rows, int cols,
                              const std::string& shape_hint);

// A double written so that it reads back bit-identically: 17 significant
// digits ("%.17g"), negative zero as "-0.0". Throws std::invalid_argument on
// NaN or inf (JSON cannot hold them).
std::string format_double17(double x);
// A matrix as JSON text, one row per line, rows indented by `indent` spaces.
std::string format_matrix17(const Matrix<double>& m, int indent);

}  // namespace sinkcert::internal
