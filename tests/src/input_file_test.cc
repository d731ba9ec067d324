// SPDX-License-Identifier: MIT
#include "src/input_file.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "src/input_error.h"
#include "src/task.h"
#include "tests/input_error_check.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Per-process scratch directory, removed when the test binary exits.
const testing::ScratchDir kScratch("sinkcert_input_file_test");

// A valid input for n = 5, L = 5 with the trigger at 2.
json valid_doc() {
  return {{"format", "sinkcert-input"},
          {"version", 1},
          {"tokens", json::array({json::array({1, 0, 0, 0, 0}), json::array({0, 0, 0.5, -1, 1}),
                                  json::array({0, 1, 1, 0.25, 0}), json::array({0, 0, -0.5, 0, 1}),
                                  json::array({0, 0, 0, 0, 1})})}};
}

using testing::caught;
using testing::CaughtError;
using testing::check_error;

// Reads the text as an input file for dimension n and returns the
// InputError it threw (thrown = false if it was accepted).
CaughtError error_of_text(const std::string& text, int n = 5) {
  const fs::path p = kScratch.path / "input.json";
  std::ofstream(p) << text;
  try {
    read_input_file(p.string(), n);
  } catch (const InputError& e) {
    CHECK(e.file() == p.string());
    return caught(e);
  }
  return {};
}

CaughtError error_of(const json& doc, int n = 5) { return error_of_text(doc.dump(), n); }

TEST_CASE("a valid input file reads with its trigger") {
  REQUIRE_FALSE(error_of(valid_doc()).thrown);
  const fs::path p = kScratch.path / "input.json";
  const InputFile in = read_input_file(p.string(), 5);
  CHECK(in.trigger == 2);
  CHECK(in.tokens.rows() == 5);
  CHECK(in.tokens(1, 3) == -1.0);
  CHECK(in.path == p.string());
  json no_version = valid_doc();
  no_version.erase("version");
  CHECK_FALSE(error_of(no_version).thrown);
}

TEST_CASE("every malformed input file gives an InputError naming its field") {
  SUBCASE("unreadable") {
    try {
      read_input_file((kScratch.path / "missing.json").string(), 5);
      FAIL("accepted a missing file");
    } catch (const InputError& e) {
      check_error(caught(e), "(file)", "readable");
    }
  }
  SUBCASE("not JSON") {
    check_error(error_of_text("{\"tokens\": [[1, 0"), "tokens[0][2]", "valid JSON");
  }
  SUBCASE("missing or wrong fields") {
    json d = valid_doc();
    d.erase("tokens");
    check_error(error_of(d), "tokens", "missing");
    d = valid_doc();
    d.erase("format");
    check_error(error_of(d), "format", "missing");
    d = valid_doc();
    d["format"] = "sinkcert-weights";
    check_error(error_of(d), "format", "sinkcert-input");
    d = valid_doc();
    d["trigger"] = 2;
    check_error(error_of(d), "trigger", "unknown field");
  }
  SUBCASE("shape and numbers") {
    check_error(error_of(valid_doc(), 6), "tokens[0]", "row of 6 numbers");
    json d = valid_doc();
    d["tokens"][3][2] = "half";
    check_error(error_of(d), "tokens[3][2]", "decimal number");
    d = valid_doc();
    d["tokens"] = json::array({json::array({1, 0, 0, 0, 0})});
    check_error(error_of(d), "tokens", "at least 2 rows");
    std::string text = valid_doc().dump();
    text.replace(text.find("0.25"), 4, "1e999");
    check_error(error_of_text(text), "tokens[2][3]", "overflows a double");
  }
  SUBCASE("not a valid task input") {
    json d = valid_doc();
    d["tokens"][0][0] = 0;
    check_error(error_of(d), "tokens[0][0]", "BOS");
    d = valid_doc();
    d["tokens"][3] = json::array({0, 1, 0, 0, 0});
    check_error(error_of(d), "tokens[3][1]", "second trigger");
    d = valid_doc();
    d["tokens"][2] = json::array({0, 0, 0, 0, 1});
    check_error(error_of(d), "tokens", "no trigger");
    d = valid_doc();
    d["tokens"][4][4] = 0.5;
    check_error(error_of(d), "tokens[4][4]", "0 or 1");
    d = valid_doc();
    d["tokens"][1][2] = 1.5;
    check_error(error_of(d), "tokens[1][2]", "[-1, 1]");
    d = valid_doc();
    d["tokens"][1][0] = 1;
    check_error(error_of(d), "tokens[1][0]", "BOS flag must be 0");
  }
}

TEST_CASE("input entries are the exact rationals their literals denote") {
  std::string text = valid_doc().dump();
  const auto with = [&](const std::string& literal) {
    std::string t = text;
    t.replace(t.find("0.25"), 4, literal);
    return t;
  };
  // 1e-400 is a valid content value, not 0
  REQUIRE_FALSE(error_of_text(with("1e-400")).thrown);
  const InputFile in = read_input_file((kScratch.path / "input.json").string(), 5);
  CHECK(in.tokens(2, 3) > 0);
  CHECK(in.tokens_as<double>()(2, 3) == 0.0);  // what a double makes of it
  // 1.00000000000000001 lies outside the content box, although its double is 1
  check_error(error_of_text(with("1.00000000000000001")), "tokens[2][3]", "[-1, 1]");
  // a decimal string is read exactly too
  REQUIRE_FALSE(error_of_text(with("\"-0.3333333333333333333333333333333\"")).thrown);
}

TEST_CASE("write_input_file round-trips bit-identically and pins its text") {
  const Task task{7, 9, TriggerRange::kReferenceCode};
  TaskSampler sampler(task, 3);
  const Sample s = sampler.next();
  const std::string path = (kScratch.path / "written.json").string();
  write_input_file(path, s.X);
  const InputFile in = read_input_file(path, task.n);
  CHECK(in.trigger == s.trigger);
  REQUIRE(in.tokens.rows() == s.X.rows());
  const Matrix<double> back = in.tokens_as<double>();
  CHECK(std::memcmp(back.data(), s.X.data(), sizeof(double) * s.X.size()) == 0);

  Matrix<double> X(2, 3);
  X << 1, 0, 0, 0, 1, 0;
  CHECK(input_file_text(X) ==
        "{\n  \"format\": \"sinkcert-input\",\n  \"version\": 1,\n  \"tokens\": [\n"
        "    [1, 0, 0],\n    [0, 1, 0]\n  ]\n}\n");
}

}  // namespace
}  // namespace sinkcert
