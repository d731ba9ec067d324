// SPDX-License-Identifier: MIT
#include "src/json_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

#include "src/input_error.h"
#include "src/run_info.h"

namespace sinkcert::internal {

namespace {

using json = nlohmann::json;

// SAX handler: builds the DOM with nlohmann's own builder and keeps the path
// of the value being read, so that a parse error names its field.
class PathTrackingSax {
 public:
  PathTrackingSax(JsonDocument& doc) : dom_(doc.root, true), doc_(doc) {}

  bool null() { return scalar(dom_.null()); }
  bool boolean(bool v) { return scalar(dom_.boolean(v)); }
  bool number_integer(json::number_integer_t v) { return scalar(dom_.number_integer(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(dom_.number_unsigned(v)); }
  // Inside "weights", "tokens" and "task" the literal text is kept: it, not
  // the rounded double, is the number.
  bool number_float(json::number_float_t v, const json::string_t& s) {
    if (frames_.size() >= 2 && !frames_[0].is_array &&
        (frames_[0].key == "weights" || frames_[0].key == "tokens" || frames_[0].key == "task")) {
      json::string_t literal = kLiteralMarker + s;
      return scalar(dom_.string(literal));
    }
    return scalar(dom_.number_float(v, s));
  }
  bool string(json::string_t& v) { return scalar(dom_.string(v)); }
  bool binary(json::binary_t& v) { return scalar(dom_.binary(v)); }
  bool start_object(std::size_t size) {
    enter();
    frames_.push_back(Frame{false, 0, "", {}});
    return dom_.start_object(size);
  }
  bool key(json::string_t& k) {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) {
      throw InputError(doc_.file, field_join(path_of_parent(), k),
                       "duplicate key \"" + k + "\" in one object (expected each key once)");
    }
    f.key = k;
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return scalar(dom_.end_object());
  }
  bool start_array(std::size_t size) {
    enter();
    frames_.push_back(Frame{true, 0, "", {}});
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
      throw InputError(doc_.file, field,
                       "expected a finite number, got '" + token +
                           "' which overflows a double (byte " + std::to_string(position) + ")");
    }
    throw InputError(doc_.file, field,
                     "expected valid JSON; parse error at byte " + std::to_string(position) +
                         " near '" + token + "': " + ex.what());
  }

 private:
  struct Frame {
    bool is_array;
    std::size_t index;
    std::string key;
    std::unordered_set<std::string> keys;  // keys seen so far (objects)
  };
  // Opening one more object or array: refuse to nest beyond kMaxDepth (a
  // deeply nested file would otherwise exhaust the stack of every recursive
  // JSON routine that later touches it).
  void enter() const {
    if (static_cast<int>(frames_.size()) >= kMaxDepth) {
      throw InputError(doc_.file, path().empty() ? "(document)" : path(),
                       "objects and arrays nested more than " + std::to_string(kMaxDepth) +
                           " deep (expected at most " + std::to_string(kMaxDepth) + ")");
    }
  }
  std::string path_of_parent() const { return path_of(frames_.size() - 1); }
  // A value of the enclosing array is complete: move to the next index.
  bool scalar(bool ok) {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
    return ok;
  }
  std::string path() const { return path_of(frames_.size()); }
  // The field path through the first `count` frames.
  std::string path_of(std::size_t count) const {
    std::string out;
    for (std::size_t k = 0; k < count; ++k) {
      const Frame& f = frames_[k];
      out = f.is_array ? field_index(out, f.index) : field_join(out, f.key);
    }
    return out;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  JsonDocument& doc_;
  std::vector<Frame> frames_;
};

std::string shape_of(const json& v) {
  if (!v.is_array()) return json_type_name(v);
  return "an array of " + std::to_string(v.size()) + " elements";
}

// Validates the shape of a matrix (a non-empty array of equally long
// non-empty rows), calls resize(rows, cols) once, then entry(i, k, value,
// field) for every entry.
template <class Resize, class Entry>
void for_each_matrix_entry(const json& v, const std::string& file, const std::string& field,
                           int rows, int cols, const std::string& shape_hint, Resize resize,
                           Entry entry) {
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
  resize(r, c);
  for (int i = 0; i < r; ++i) {
    const std::string row_field = field_index(field, i);
    const json& row = v[i];
    if (!row.is_array() || static_cast<int>(row.size()) != c) {
      throw InputError(file, row_field,
                       "expected a row of " + std::to_string(c) + " numbers (" + shape_hint +
                           "), got " + shape_of(row));
    }
    for (int k = 0; k < c; ++k) entry(i, k, row[k], field_index(row_field, k));
  }
}

}  // namespace

JsonDocument parse_json_document(const std::string& text, const std::string& file) {
  JsonDocument doc;
  doc.file = file;
  if (text.size() > kMaxFileBytes) {
    throw InputError(file, "(file)",
                     "expected at most " + std::to_string(kMaxFileBytes >> 20) + " MiB, got " +
                         std::to_string(text.size()) + " bytes");
  }
  const auto nul = text.find('\0');
  if (nul != std::string::npos) {
    throw InputError(file, "(file)",
                     "expected JSON text; found a NUL byte at byte " + std::to_string(nul));
  }
  PathTrackingSax sax(doc);
  // strict: anything but white space after the document is an error
  json::sax_parse(text, &sax, json::input_format_t::json, /*strict=*/true);
  return doc;
}

JsonDocument read_json_document(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw InputError(path, "(file)",
                     std::string("expected a readable file: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    throw InputError(path, "(file)", "expected a regular file, got a directory");
  }
  if (!S_ISREG(st.st_mode)) {
    throw InputError(path, "(file)", "expected a regular file, got a device, FIFO or socket");
  }
  if (static_cast<std::uint64_t>(st.st_size) > kMaxFileBytes) {
    throw InputError(path, "(file)",
                     "expected at most " + std::to_string(kMaxFileBytes >> 20) + " MiB, got " +
                         std::to_string(st.st_size) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(path, "(file)",
                     std::string("expected a readable file: ") + std::strerror(errno));
  }
  std::string text;
  // Read at most one byte past the limit (the file may grow after stat).
  text.resize(kMaxFileBytes + 1);
  in.read(&text[0], static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw InputError(path, "(file)", "expected a readable file (read failed)");
  text.resize(static_cast<std::size_t>(in.gcount()));
  JsonDocument doc = parse_json_document(text, path);
  // provenance: the SHA-256 of exactly the bytes parsed (run_info.h)
  record_input_file(path, text);
  return doc;
}

json parse_json_text(const std::string& text, const std::string& file) {
  return parse_json_document(text, file).root;
}

json read_json_file(const std::string& path) { return read_json_document(path).root; }

Rational parse_decimal(const std::string& text) {
  // [-] int [. frac] [(e|E) [+|-] exp], int without leading zeros (JSON)
  std::size_t p = 0;
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument("expected a decimal number such as -1.25e-3, got \"" +
                                text.substr(0, 40) + (text.size() > 40 ? "..." : "") + "\" (" +
                                what + ")");
  };
  const auto digit = [&](std::size_t i) {
    return i < text.size() && text[i] >= '0' && text[i] <= '9';
  };
  const bool negative = p < text.size() && text[p] == '-';
  if (negative) ++p;
  std::string mantissa;
  if (!digit(p)) fail("no digits");
  if (text[p] == '0' && digit(p + 1)) fail("leading zero");
  while (digit(p)) mantissa += text[p++];
  long fraction_digits = 0;
  if (p < text.size() && text[p] == '.') {
    ++p;
    if (!digit(p)) fail("no digits after the point");
    while (digit(p)) {
      mantissa += text[p++];
      ++fraction_digits;
    }
  }
  long exponent = 0;
  if (p < text.size() && (text[p] == 'e' || text[p] == 'E')) {
    ++p;
    bool exp_negative = false;
    if (p < text.size() && (text[p] == '+' || text[p] == '-')) exp_negative = text[p++] == '-';
    if (!digit(p)) fail("no digits in the exponent");
    while (digit(p)) {
      exponent = exponent * 10 + (text[p++] - '0');
      if (exponent > kMaxLiteralExponent) {
        fail("exponent beyond +-" + std::to_string(kMaxLiteralExponent));
      }
    }
    if (exp_negative) exponent = -exponent;
  }
  if (p != text.size()) fail("unexpected character at offset " + std::to_string(p));
  const auto first = mantissa.find_first_not_of('0');
  if (first == std::string::npos) return Rational(0);
  mantissa.erase(0, first);
  if (static_cast<long>(mantissa.size()) > kMaxLiteralDigits) {
    fail("more than " + std::to_string(kMaxLiteralDigits) + " significant digits");
  }
  // value = mantissa * 10^(exponent - fraction_digits)
  const long shift = exponent - fraction_digits;
  if (shift > kMaxLiteralExponent || shift < -2L * kMaxLiteralExponent) {
    fail("exponent out of range");
  }
  mpz_t m, scale;
  mpz_init_set_str(m, mantissa.c_str(), 10);
  mpz_init(scale);
  mpz_ui_pow_ui(scale, 10, static_cast<unsigned long>(shift < 0 ? -shift : shift));
  Rational q;
  mpq_ptr out = q.backend().data();
  if (shift >= 0) {
    mpz_mul(m, m, scale);
    mpq_set_z(out, m);
  } else {
    mpq_set_num(out, m);
    mpq_set_den(out, scale);
    mpq_canonicalize(out);
  }
  mpz_clear(m);
  mpz_clear(scale);
  if (negative) q = -q;
  return q;
}

Rational parse_user_decimal(const std::string& text) {
  std::string mantissa = text, exponent;
  const std::size_t e = text.find_first_of("eE");
  if (e != std::string::npos) {
    mantissa = text.substr(0, e);
    exponent = text.substr(e);
  }
  std::string sign;
  if (!mantissa.empty() && (mantissa[0] == '+' || mantissa[0] == '-')) {
    if (mantissa[0] == '-') sign = "-";
    mantissa.erase(0, 1);
  }
  if (mantissa.find_first_of("0123456789") == std::string::npos ||
      std::count(mantissa.begin(), mantissa.end(), '.') > 1) {
    throw std::invalid_argument("expected a decimal number such as 0.25 or 1e-3, got \"" + text +
                                "\"");
  }
  // ".5" -> "0.5", "5." -> "5", "007" -> "7": parse_decimal's strict form
  if (mantissa[0] == '.') mantissa.insert(0, "0");
  if (mantissa.back() == '.') mantissa.pop_back();
  while (mantissa.size() > 1 && mantissa[0] == '0' && mantissa[1] != '.') mantissa.erase(0, 1);
  return parse_decimal(sign + mantissa + exponent);
}

std::string exact_decimal(const Rational& x) {
  mpq_srcptr q = x.backend().data();
  if (mpq_sgn(q) == 0) return "0";
  // den = 2^a 5^b is required; then x = num * 2^(k-a) * 5^(k-b) / 10^k,
  // k = max(a, b).
  mpz_t den, digits, t;
  mpz_init_set(den, mpq_denref(q));
  const unsigned long a = mpz_scan1(den, 0);
  mpz_tdiv_q_2exp(den, den, a);
  mpz_init(t);
  unsigned long b = 0;
  while (mpz_divisible_ui_p(den, 5)) {
    mpz_divexact_ui(den, den, 5);
    ++b;
  }
  const bool terminating = mpz_cmp_ui(den, 1) == 0;
  mpz_clear(den);
  if (!terminating) {
    mpz_clear(t);
    throw std::invalid_argument("exact_decimal: the value has no finite decimal expansion");
  }
  long k = static_cast<long>(a > b ? a : b);
  mpz_init(digits);
  mpz_abs(digits, mpq_numref(q));
  mpz_ui_pow_ui(t, 2, k - a);
  mpz_mul(digits, digits, t);
  mpz_ui_pow_ui(t, 5, k - b);
  mpz_mul(digits, digits, t);
  mpz_clear(t);
  std::vector<char> buf(mpz_sizeinbase(digits, 10) + 2);
  mpz_get_str(buf.data(), 10, digits);
  mpz_clear(digits);
  std::string s(buf.data());
  // drop trailing zeros of the fraction
  while (k > 0 && s.size() > 1 && s.back() == '0') {
    s.pop_back();
    --k;
  }
  const std::string sign = mpq_sgn(q) < 0 ? "-" : "";
  if (k == 0) return sign + s;
  const long n = static_cast<long>(s.size());
  // plain positional notation while it stays short, else d.ddd e-X
  if (k < n) return sign + s.substr(0, n - k) + "." + s.substr(n - k);
  if (k - n <= 8) return sign + "0." + std::string(k - n, '0') + s;
  const std::string mant = n == 1 ? s : s.substr(0, 1) + "." + s.substr(1);
  return sign + mant + "e-" + std::to_string(k - n + 1);
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

Rational require_rational(const JsonDocument& doc, const json& v, const std::string& field) {
  Rational q;
  if (v.is_number_unsigned()) {
    q = Rational(static_cast<unsigned long>(v.get<std::uint64_t>()));
  } else if (v.is_number_integer()) {
    q = Rational(static_cast<long>(v.get<std::int64_t>()));
  } else if (v.is_number_float()) {
    // built in memory: the double itself is the exact value
    const double x = v.get<double>();
    if (!std::isfinite(x)) throw InputError(doc.file, field, "expected a finite number");
    q = Rational(x);
  } else if (v.is_string()) {
    const std::string& text = v.get_ref<const std::string&>();
    const bool literal = !text.empty() && text[0] == kLiteralMarker;
    try {
      q = parse_decimal(literal ? text.substr(1) : text);
    } catch (const std::invalid_argument& e) {
      throw InputError(doc.file, field, e.what());
    }
  } else {
    throw InputError(doc.file, field,
                     "expected a finite number or a decimal string, got " + json_type_name(v));
  }
  static const Rational kDoubleMax(DBL_MAX);
  if (bmp::abs(q) > kDoubleMax) {
    throw InputError(doc.file, field,
                     "expected a number within the double range (|x| <= 1.7976931348623157e308)");
  }
  return q;
}

Matrix<Rational> require_rational_matrix(const JsonDocument& doc, const json& v,
                                         const std::string& field, int rows, int cols,
                                         const std::string& shape_hint) {
  Matrix<Rational> m;
  for_each_matrix_entry(
      v, doc.file, field, rows, cols, shape_hint, [&](int r, int c) { m.resize(r, c); },
      [&](int i, int k, const json& x, const std::string& f) {
        m(i, k) = require_rational(doc, x, f);
      });
  return m;
}

Matrix<double> require_matrix(const json& v, const std::string& file, const std::string& field,
                              int rows, int cols, const std::string& shape_hint) {
  Matrix<double> m;
  for_each_matrix_entry(
      v, file, field, rows, cols, shape_hint, [&](int r, int c) { m.resize(r, c); },
      [&](int i, int k, const json& x, const std::string& f) {
        m(i, k) = require_finite(x, file, f);
      });
  return m;
}

std::string format_exact_matrix(const Matrix<Rational>& m, int indent) {
  const std::string pad(indent, ' ');
  std::string out = "[\n";
  for (int i = 0; i < m.rows(); ++i) {
    out += pad + "  [";
    for (int k = 0; k < m.cols(); ++k) out += (k ? ", " : "") + exact_decimal(m(i, k));
    out += i + 1 < m.rows() ? "],\n" : "]\n";
  }
  return out + pad + "]";
}

}  // namespace sinkcert::internal
