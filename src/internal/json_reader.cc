// SPDX-License-Identifier: MIT
#include "src/internal/json_reader.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "src/input_error.h"

namespace sinkcert::internal {

namespace {

using json = nlohmann::json;

// SAX handler: builds the DOM with nlohmann's own builder and keeps the path
// of the value being read, so that a parse error names its field.
class PathTrackingSax {
 public:
  PathTrackingSax(json& root, std::string file) : dom_(root, true), file_(std::move(file)) {}

  bool null() { return scalar(dom_.null()); }
  bool boolean(bool v) { return scalar(dom_.boolean(v)); }
  bool number_integer(json::number_integer_t v) { return scalar(dom_.number_integer(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(dom_.number_unsigned(v)); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return scalar(dom_.number_float(v, s));
  }
  bool string(json::string_t& v) { return scalar(dom_.string(v)); }
  bool binary(json::binary_t& v) { return scalar(dom_.binary(v)); }
  bool start_object(std::size_t size) {
    frames_.push_back(Frame{false, 0, ""});
    return dom_.start_object(size);
  }
  bool key(json::string_t& k) {
    frames_.back().key = k;
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return scalar(dom_.end_object());
  }
  bool start_array(std::size_t size) {
    frames_.push_back(Frame{true, 0, ""});
    return dom_.start_array(size);
  }
  bool end_array() {
    frames_.pop_back();
    return scalar(dom_.end_array());
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& ex) {
    const std::string field = path().empty() ? "(document)" : path();
    if (ex.id == 406) {
      // out_of_range.406: the number does not fit a double (it would be inf).
      throw InputError(file_, field,
                       "expected a finite number, got '" + token +
                           "' which overflows a double (byte " + std::to_string(position) + ")");
    }
    throw InputError(file_, field,
                     "expected valid JSON; parse error at byte " + std::to_string(position) +
                         " near '" + token + "': " + ex.what());
  }

 private:
  struct Frame {
    bool is_array;
    std::size_t index;
    std::string key;
  };
  // A value of the enclosing array is complete: move to the next index.
  bool scalar(bool ok) {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
    return ok;
  }
  std::string path() const {
    std::string out;
    for (const Frame& f : frames_) {
      out = f.is_array ? field_index(out, f.index) : field_join(out, f.key);
    }
    return out;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::string file_;
  std::vector<Frame> frames_;
};

std::string shape_of(const json& v) {
  if (!v.is_array()) return json_type_name(v);
  return "an array of " + std::to_string(v.size()) + " elements";
}

}  // namespace

json parse_json_text(const std::string& text, const std::string& file) {
  json root;
  PathTrackingSax sax(root, file);
  json::sax_parse(text, &sax);
  return root;
}

json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "(file)", "expected a readable file");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw InputError(path, "(file)", "expected a readable file (read failed)");
  return parse_json_text(buf.str(), path);
}

std::string field_join(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string field_index(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::string json_type_name(const json& v) {
  if (v.is_number()) return "number";
  return v.type_name();
}

void require_object(const json& v, const std::string& file, const std::string& field) {
  if (!v.is_object()) {
    throw InputError(file, field.empty() ? "(document)" : field,
                     "expected a JSON object, got " + json_type_name(v));
  }
}

const json& require_member(const json& object, const std::string& key, const std::string& file,
                           const std::string& parent) {
  const auto it = object.find(key);
  if (it == object.end()) throw InputError(file, field_join(parent, key), "missing required field");
  return *it;
}

void reject_unknown_members(const json& object, const std::vector<std::string>& allowed,
                            const std::string& file, const std::string& field) {
  for (const auto& item : object.items()) {
    bool known = false;
    for (const auto& a : allowed) known = known || item.key() == a;
    if (known) continue;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw InputError(file, field_join(field, item.key()), "unknown field; expected only " + list);
  }
}

std::string require_string(const json& v, const std::string& file, const std::string& field) {
  if (!v.is_string()) throw InputError(file, field, "expected a string, got " + json_type_name(v));
  return v.get<std::string>();
}

int require_int(const json& v, const std::string& file, const std::string& field, int lo, int hi) {
  const std::string range =
      "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v.is_number_integer()) {
    throw InputError(
        file, field,
        "expected " + range + ", got " + (v.is_number() ? v.dump() : json_type_name(v)));
  }
  const bool fits = v.is_number_unsigned()
                        ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) &&
                              (lo <= 0 || v.get<std::uint64_t>() >= static_cast<std::uint64_t>(lo))
                        : v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= hi;
  if (!fits) throw InputError(file, field, "expected " + range + ", got " + v.dump());
  return static_cast<int>(v.get<std::int64_t>());
}

double require_finite(const json& v, const std::string& file, const std::string& field) {
  if (!v.is_number()) {
    throw InputError(file, field,
                     "expected a finite number, got " + json_type_name(v) +
                         (v.is_string() ? " " + v.dump() : std::string()));
  }
  const double x = v.get<double>();
  if (!std::isfinite(x)) throw InputError(file, field, "expected a finite number");
  return x;
}

Matrix<double> require_matrix(const json& v, const std::string& file, const std::string& field,
                              int rows, int cols, const std::string& shape_hint) {
  const std::string want = "expected a " + shape_hint + " matrix (an array of rows)";
  if (!v.is_array() || v.empty()) throw InputError(file, field, want + ", got " + shape_of(v));
  if (rows >= 0 && static_cast<int>(v.size()) != rows) {
    throw InputError(file, field, want + ", got " + std::to_string(v.size()) + " rows");
  }
  const json& first = v[0];
  if (!first.is_array() || first.empty()) {
    throw InputError(file, field_index(field, 0),
                     "expected a non-empty array of numbers (a row), got " + shape_of(first));
  }
  const int c = cols >= 0 ? cols : static_cast<int>(first.size());
  const int r = static_cast<int>(v.size());
  Matrix<double> m(r, c);
  for (int i = 0; i < r; ++i) {
    const std::string row_field = field_index(field, i);
    const json& row = v[i];
    if (!row.is_array() || static_cast<int>(row.size()) != c) {
      throw InputError(file, row_field,
                       "expected a row of " + std::to_string(c) + " numbers (" + shape_hint +
                           "), got " + shape_of(row));
    }
    for (int k = 0; k < c; ++k) m(i, k) = require_finite(row[k], file, field_index(row_field, k));
  }
  return m;
}

std::string format_double17(double x) {
  if (!std::isfinite(x)) {
    throw std::invalid_argument("cannot write a non-finite number to JSON");
  }
  if (x == 0.0 && std::signbit(x)) return "-0.0";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string format_matrix17(const Matrix<double>& m, int indent) {
  const std::string pad(indent, ' ');
  std::string out = "[\n";
  for (int i = 0; i < m.rows(); ++i) {
    out += pad + "  [";
    for (int k = 0; k < m.cols(); ++k) out += (k ? ", " : "") + format_double17(m(i, k));
    out += i + 1 < m.rows() ? "],\n" : "]\n";
  }
  return out + pad + "]";
}

}  // namespace sinkcert::internal
