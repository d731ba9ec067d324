// SPDX-License-Identifier: MIT
#include "src/input_file.h"

#include <stdexcept>

#include "src/input_error.h"
#include "src/json_reader.h"
#include "src/limits.h"
#include "src/run_info.h"
#include "src/task.h"

namespace sinkcert {

InputFile read_input_file(const std::string& path, int n) {
  return input_file_from_document(internal::read_json_document(path), n);
}

InputFile input_file_from_document(const internal::JsonDocument& parsed, int n) {
  const nlohmann::json& doc = parsed.root;
  const std::string& path = parsed.file;
  internal::require_object(doc, path, "");
  internal::reject_unknown_members(doc, {"format", "version", "tokens", "metadata"}, path, "");
  const std::string format =
      internal::require_string(internal::require_member(doc, "format", path, ""), path, "format");
  if (format != kInputFormat) {
    throw InputError(path, "format",
                     std::string("expected \"") + kInputFormat + "\", got \"" + format + "\"");
  }
  if (doc.contains("version")) {
    internal::require_int(doc["version"], path, "version", kInputFormatVersion,
                          kInputFormatVersion);
  }
  InputFile in;
  in.path = path;
  const nlohmann::json& tokens = internal::require_member(doc, "tokens", path, "");
  if (tokens.is_array() && tokens.size() > static_cast<std::size_t>(kMaxL)) {
    throw InputError(path, "tokens",
                     "expected at most L = " + std::to_string(kMaxL) + " rows, got " +
                         std::to_string(tokens.size()));
  }
  in.tokens = internal::require_rational_matrix(
      parsed, tokens, "tokens", -1, n, "L x n (n = " + std::to_string(n) + ", the model's n)");
  try {
    in.trigger = validate_input(in.tokens, n);
  } catch (const InvalidInput& e) {
    throw InputError(path, e.field(), e.expected());
  }
  return in;
}

std::string input_file_text(const Matrix<Rational>& tokens) {
  return std::string("{\n  \"format\": \"") + kInputFormat +
         "\",\n  \"version\": " + std::to_string(kInputFormatVersion) +
         ",\n  \"tokens\": " + internal::format_exact_matrix(tokens, 2) + "\n}\n";
}

std::string input_file_text(const Matrix<double>& tokens) {
  return input_file_text(matrix_cast<Rational>(tokens));
}

void write_input_file(const std::string& path, const Matrix<double>& tokens) {
  write_file_atomically(path, input_file_text(tokens));
}

}  // namespace sinkcert
