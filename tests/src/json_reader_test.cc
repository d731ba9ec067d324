// SPDX-License-Identifier: MIT
//
// src/json_reader.h: the exact reading of decimal literals (the
// literal text of a number is kept inside "weights" and "tokens", so 0.1 is
// 1/10 and 1e-400 is 10^-400), and every refusal of a hostile file (size,
// NUL byte, nesting depth, duplicate key, trailing text, overflow, literal
// limits), each an InputError that names the file and the field.
#include "src/json_reader.h"

#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <string>

#include "src/input_error.h"
#include "tests/test_util.h"

namespace sinkcert::internal {
namespace {

const std::string kFile = "model.json";

// Runs `read`, which must throw an InputError for kFile (or `file`) at
// `field` whose message contains `expected`.
void check_refused(const std::function<void()>& read, const std::string& field,
                   const std::string& expected, const std::string& file = kFile) {
  try {
    read();
    FAIL("accepted; expected an error at " << field << " (" << expected << ")");
  } catch (const InputError& e) {
    INFO("message: " << e.what());
    CHECK(e.file() == file);
    CHECK(e.field() == field);
    CHECK(std::string(e.what()).find(expected) != std::string::npos);
    CHECK(std::string(e.what()).rfind(file + ": " + field + ": ", 0) == 0);
  }
}

void check_text_refused(const std::string& text, const std::string& field,
                        const std::string& expected) {
  check_refused([&] { parse_json_document(text, kFile); }, field, expected);
}

Rational rational_at(const JsonDocument& doc, const nlohmann::json& v) {
  return require_rational(doc, v, "x");
}

Rational power_of_ten(int e) {
  Rational r(1);
  for (int i = 0; i < (e < 0 ? -e : e); ++i) r *= 10;
  return e < 0 ? Rational(1 / r) : r;
}

TEST_CASE("literals inside weights and tokens are kept exactly") {
  const JsonDocument doc = parse_json_document(
      R"({"weights": [[0.1, -2.5e-3, 1e-400, 3, 0.30000000000000000000000001]],
          "tokens": [0.7], "other": 0.1})",
      kFile);
  const auto& row = doc.root.at("weights")[0];
  // kept as marked text, not as the nearest double
  REQUIRE(row[0].is_string());
  CHECK(row[0].get<std::string>() == std::string(1, kLiteralMarker) + "0.1");
  CHECK(rational_at(doc, row[0]) == Rational(1, 10));
  CHECK(rational_at(doc, row[0]) != Rational(0.1));  // the double 0.1 is another number
  CHECK(rational_at(doc, row[1]) == Rational(-1, 400));
  CHECK(rational_at(doc, row[2]) == power_of_ten(-400));  // a double would be 0
  CHECK(rational_at(doc, row[3]) == 3);                   // integers stay JSON integers
  CHECK(row[3].is_number_integer());
  CHECK(rational_at(doc, row[4]) == Rational(3, 10) + power_of_ten(-26));
  CHECK(rational_at(doc, doc.root.at("tokens")[0]) == Rational(7, 10));
  // elsewhere a number is a double
  CHECK(doc.root.at("other").is_number_float());
  CHECK(doc.root.at("other").get<double>() == 0.1);
  // a decimal string is read in the same grammar
  CHECK(rational_at(doc, nlohmann::json("-12.50e+2")) == -1250);
}

TEST_CASE("decimal literals: grammar, limits and the exact decimal back") {
  CHECK(parse_decimal("0") == 0);
  CHECK(parse_decimal("-0.000") == 0);
  CHECK(parse_decimal("1.25E2") == 125);
  for (const std::string bad : {"", "-", "01", "1.", ".5", "1e", "1e+", "1x", "+1", "0x10"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_decimal(bad), std::invalid_argument);
  }
  // limits: kMaxLiteralDigits significant digits, exponent within
  // +-kMaxLiteralExponent
  const std::string most(kMaxLiteralDigits, '7');
  CHECK(parse_decimal(most) > 0);
  CHECK_THROWS_WITH_AS(parse_decimal(most + "7"), doctest::Contains("significant digits"),
                       std::invalid_argument);
  CHECK(parse_decimal("1e" + std::to_string(kMaxLiteralExponent)) ==
        power_of_ten(kMaxLiteralExponent));
  CHECK_THROWS_WITH_AS(parse_decimal("1e" + std::to_string(kMaxLiteralExponent + 1)),
                       doctest::Contains("exponent"), std::invalid_argument);
  // leading zeros of the mantissa are not significant digits
  CHECK(parse_decimal("0." + std::string(100, '0') + "1") == power_of_ten(-101));
  // exact_decimal is the inverse on terminating decimals
  for (const std::string text : {"0.1", "-2.5", "3", "1e-20", "123.456", "-0.000001"}) {
    CAPTURE(text);
    CHECK(parse_decimal(exact_decimal(parse_decimal(text))) == parse_decimal(text));
  }
  CHECK(exact_decimal(Rational(1, 10)) == "0.1");
  CHECK(exact_decimal(Rational(0.1)) ==
        "0.1000000000000000055511151231257827021181583404541015625");
  CHECK_THROWS_AS(exact_decimal(Rational(1, 3)), std::invalid_argument);
}

TEST_CASE("hostile text is refused naming the file and the field") {
  // a NUL byte anywhere
  check_text_refused(std::string("{\"a\": 1}\0", 9), "(file)", "NUL byte at byte 8");
  // duplicate keys, at any depth, name the repeated key's field
  check_text_refused(R"({"a": 1, "a": 2})", "a", "duplicate key \"a\"");
  check_text_refused(R"({"weights": [{"W_K": 1, "W_Q": 2, "W_K": 3}]})", "weights[0].W_K",
                     "duplicate key");
  // nothing may follow the document
  check_text_refused(R"({"a": 1} {"b": 2})", "(document)", "expected valid JSON");
  check_text_refused(R"({"a": 1} x)", "(document)", "parse error");
  // a syntax error names the field being read
  check_text_refused(R"({"weights": [[1, 2, ]]})", "weights[0][2]", "expected valid JSON");
  // a number that overflows a double, outside the exact members
  check_text_refused(R"({"n": [1, 1e400]})", "n[1]", "overflows a double");
}

TEST_CASE("nesting is limited to kMaxDepth") {
  const auto nested = [](int depth) {
    return std::string(depth, '[') + "1" + std::string(depth, ']');
  };
  CHECK_NOTHROW(parse_json_document(nested(kMaxDepth), kFile));
  // the 65th bracket opens inside 64 arrays: its field is [0] 64 times
  std::string field;
  for (int d = 0; d < kMaxDepth; ++d) field += "[0]";
  check_text_refused(nested(kMaxDepth + 1), field, "nested more than 64 deep");
}

TEST_CASE("file limits: size, kind, existence") {
  // text one byte over the limit (checked before parsing)
  const std::string big(kMaxFileBytes + 1, ' ');
  check_text_refused(big, "(file)", "expected at most 16 MiB");
  testing::ScratchDir dir("json_reader_test");
  const std::string missing = (dir.path / "missing.json").string();
  check_refused([&] { read_json_document(missing); }, "(file)", "expected a readable file",
                missing);
  const std::string folder = dir.path.string();
  check_refused([&] { read_json_document(folder); }, "(file)", "got a directory", folder);
  const std::string good = (dir.path / "good.json").string();
  std::ofstream(good) << R"({"weights": [[0.1]]})";
  const JsonDocument doc = read_json_document(good);
  CHECK(doc.file == good);
  CHECK(require_rational(doc, doc.root.at("weights")[0][0], "weights[0][0]") == Rational(1, 10));
}

TEST_CASE("exact entries: limits and the double range name their field") {
  const JsonDocument doc = parse_json_document(
      R"({"weights": [["1e309", "1e10001", "0x1", "1.5"]], "tokens": [true]})", kFile);
  const auto& row = doc.root.at("weights")[0];
  check_refused([&] { require_rational(doc, row[0], "weights[0][0]"); }, "weights[0][0]",
                "within the double range");
  check_refused([&] { require_rational(doc, row[1], "weights[0][1]"); }, "weights[0][1]",
                "exponent");
  check_refused([&] { require_rational(doc, row[2], "weights[0][2]"); }, "weights[0][2]",
                "expected a decimal number");
  CHECK(require_rational(doc, row[3], "weights[0][3]") == Rational(3, 2));
  check_refused([&] { require_rational(doc, doc.root.at("tokens")[0], "tokens[0]"); }, "tokens[0]",
                "got boolean");
}

TEST_CASE("field accessors name the field") {
  const nlohmann::json root =
      parse_json_text(R"({"n": 3.5, "L": 99, "name": 7, "extra": 1, "m": [[1, 2], [3]]})", kFile);
  check_refused([&] { require_member(root, "missing", kFile, "model"); }, "model.missing",
                "missing required field");
  check_refused([&] { require_int(root.at("n"), kFile, "n", 1, 64); }, "n",
                "an integer in [1, 64], got 3.5");
  check_refused([&] { require_int(root.at("L"), kFile, "L", 1, 64); }, "L", "got 99");
  CHECK(require_int(root.at("L"), kFile, "L", 1, 99) == 99);
  check_refused([&] { require_string(root.at("name"), kFile, "name"); }, "name",
                "expected a string, got number");
  check_refused(
      [&] {
        reject_unknown_members(root, {"n", "L", "name", "m"}, kFile, "");
      },
      "extra", "unknown field; expected only n, L, name, m");
  check_refused([&] { require_matrix(root.at("m"), kFile, "m", -1, -1, "2 x 2"); }, "m[1]",
                "expected a row of 2 numbers");
  check_refused([&] { require_matrix(root.at("m"), kFile, "m", 3, 2, "3 x 2"); }, "m",
                "got 2 rows");
  check_refused([&] { require_object(root.at("m"), kFile, "m"); }, "m",
                "expected a JSON object, got array");
  CHECK(field_join("", "n") == "n");
  CHECK(field_join("weights[0]", "W_K") == "weights[0].W_K");
  CHECK(field_index("weights", 3) == "weights[3]");
}

}  // namespace
}  // namespace sinkcert::internal
