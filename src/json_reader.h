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
//
// Exact numbers. A number in a file means the exact rational its decimal
// literal denotes: "0.1" is 1/10, not the double nearest to it, and "1e-400"
// is 10^-400, not 0. Inside the top-level "weights", "tokens" and "task" members the
// parser keeps the literal text of every non-integer number (stored in the
// document as a string that starts with kLiteralMarker), and
// require_rational reads it exactly:
//   [-] digits [. digits] [(e|E) [+|-] digits]  ->  +-(mantissa) * 10^(exp - #fraction digits)
// An entry may also be a JSON string in the same grammar, with as many digits
// as needed (sinkcert writes high-precision models that way).
//
// Hostile files. A file is read only if it is a regular file of at most
// kMaxFileBytes; it must not contain a NUL byte; objects and arrays nest at
// most kMaxDepth deep; an object must not repeat a key; nothing may follow
// the document. Each violation is an InputError naming the limit.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/input_error.h"
#include "src/scalar_traits.h"

namespace sinkcert::internal {

// Limits on what the reader accepts (see above).
inline constexpr std::size_t kMaxFileBytes = std::size_t{16} << 20;  // 16 MiB
inline constexpr int kMaxDepth = 64;
// Limits on one exact decimal literal: digits of the mantissa and magnitude of
// the exponent (10^-10000 has a 33 kbit denominator; P5's 513-bit models need
// about 160 digits).
inline constexpr int kMaxLiteralDigits = 10000;
inline constexpr int kMaxLiteralExponent = 10000;

// Marks a number's literal text kept in place of its double (see above).
inline constexpr char kLiteralMarker = '\x01';

// A parsed file and its name (for errors).
struct JsonDocument {
  nlohmann::json root;
  std::string file;
};

// Reads and parses the whole file and records it, with the SHA-256 of its
// bytes, as an input of this run (run_info.h). InputError when it cannot be opened, is
// not a regular file, is too large, is not JSON (with byte offset and field),
// breaks one of the limits above, or holds a number out of the double range.
JsonDocument read_json_document(const std::string& path);
// Parses `text` as if it were the contents of `file` (same errors).
JsonDocument parse_json_document(const std::string& text, const std::string& file);
// The same, keeping only the document (numbers as doubles).
nlohmann::json read_json_file(const std::string& path);
nlohmann::json parse_json_text(const std::string& text, const std::string& file);

// The exact rational a decimal literal denotes, in the grammar above.
// std::invalid_argument naming what is wrong (syntax, too many digits,
// exponent out of range).
Rational parse_decimal(const std::string& text);
// A decimal number as a user types it on a command line or in Python
// (strtod's decimal notation): a leading '+', a bare point (".5", "5.") and
// leading zeros are accepted, then the rest is parse_decimal's grammar and
// exact value. One grammar for every exact decimal the user gives (claims,
// tolerance, sink bar). std::invalid_argument like parse_decimal.
Rational parse_user_decimal(const std::string& text);
// The shortest decimal literal whose exact value is x (x's full expansion,
// which is finite when the denominator divides a power of 10, e.g. every
// double and every MPFR value). std::invalid_argument otherwise.
std::string exact_decimal(const Rational& x);

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
// The exact value of a number field: a JSON number (its kept literal text,
// or its value, which is then exact: an integer, or a double in a document
// built in memory), or a decimal string. Values beyond
// the double range (|x| > DBL_MAX) are rejected, so every exact entry also
// has a finite double rounding.
Rational require_rational(const JsonDocument& doc, const nlohmann::json& v,
                          const std::string& field);
// A matrix of exact entries, validated like require_matrix.
Matrix<Rational> require_rational_matrix(const JsonDocument& doc, const nlohmann::json& v,
                                         const std::string& field, int rows, int cols,
                                         const std::string& shape_hint);
// A matrix given as a non-empty array of equally long non-empty rows of finite
// numbers. rows/cols < 0 accept any size; otherwise the size must match and
// the message quotes `shape_hint` (e.g. "n x n = 5 x 5").
Matrix<double> require_matrix(const nlohmann::json& v, const std::string& file,
                              const std::string& field, int rows, int cols,
                              const std::string& shape_hint);

// A matrix as JSON text, one row per line, rows indented by `indent` spaces,
// each entry written as exact_decimal (a JSON number).
std::string format_exact_matrix(const Matrix<Rational>& m, int indent);

// Runs `read`, a reader of the file `file`, turning the JSON library's own
// errors (a field of another type than the reader takes, an index out of
// range) into an InputError naming the file. Readers that check every
// field's type before they use it never get here; the others, which read
// back files sinkcert itself wrote, go through this so that a hand-edited
// file is refused with a message instead of ending the program.
template <class Read>
auto reading_json(const std::string& file, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file, "(document)",
                     std::string("fields of the types sinkcert writes (") + e.what() + ")");
  }
}

}  // namespace sinkcert::internal
