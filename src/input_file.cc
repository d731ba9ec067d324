// SPDX-License-Identifier: MIT
#include "src/input_file.h"

#include <stdexcept>

#include "src/input_error.h"
#include "src/internal/json_reader.h"
#include "src/run_info.h"
#include "src/task.h"

namespace sinkcert {

InputFile read_input_file(const std::string& path, int n) {
  const nlohmann::json doc = internal::read_json_file(path);
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
  in.tokens =
      internal::require_matrix(internal::require_member(doc, "tokens", path, ""), path, "tokens",
                               -1, n, "L x n (n = " + std::to_string(n) + ", the model's n)");
  try {
    in.trigger = validate_input(in.tokens, n);
  } catch (const std::invalid_argument& e) {
    // validate_input says "<field>: <what was expected>".
    const std::string msg = e.what();
    const auto colon = msg.find(": ");
    if (colon == std::string::npos) throw InputError(path, "tokens", msg);
    throw InputError(path, msg.substr(0, colon), msg.substr(colon + 2));
  }
  return in;
}

std::string input_file_text(const Matrix<double>& tokens) {
  return std::string("{\n  \"format\": \"") + kInputFormat +
         "\",\n  \"version\": " + std::to_string(kInputFormatVersion) +
         ",\n  \"tokens\": " + internal::format_matrix17(tokens, 2) + "\n}\n";
}

void write_input_file(const std::string& path, const Matrix<double>& tokens) {
  write_file_atomically(path, input_file_text(tokens));
}

}  // namespace sinkcert
