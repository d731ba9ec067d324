// SPDX-License-Identifier: MIT
#include "src/weight_file.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>

#include "src/forward.h"
#include "src/input_error.h"
#include "src/json_reader.h"
#include "tests/input_error_check.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Per-process scratch directory, removed when the test binary exits.
const testing::ScratchDir kScratch("sinkcert_weight_file_test");

fs::path temp_dir() { return kScratch.path; }

std::string write_text(const std::string& name, const std::string& text) {
  const fs::path p = temp_dir() / name;
  std::ofstream(p) << text;
  return p.string();
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A valid two-head single-layer file (n = 5) with the unique marker 0.125 at
// weights[0][0].A[0][0]: malformed cases edit this document or its text.
json valid_doc() {
  json A = json::array(), M = json::array();
  for (int r = 0; r < 5; ++r) {
    A.push_back(json::array());
    M.push_back(json::array());
    for (int c = 0; c < 5; ++c) {
      A[r].push_back(r == 0 && c == 0 ? 0.125 : 0.25 * (r - c));
      M[r].push_back(r == c ? 1.0 : 0.0);
    }
  }
  json W = json::array();
  for (int r = 0; r < 5; ++r) W.push_back(json::array({0.5, 0.0, -0.5, 1.0, 2.0}));
  return {{"format", "sinkcert-weights"},
          {"version", 1},
          {"kind", "single-layer"},
          {"attention", "softmax"},
          {"n", 5},
          {"layers", 1},
          {"heads", 2},
          {"weights",
           json::array({json::array({json{{"A", A}, {"M", M}},
                                     json{{"W_Q", W}, {"W_K", W}, {"W_V", W}, {"W_O", W}}})})}};
}

using testing::caught;
using testing::CaughtError;
using testing::check_error;

// Reads the text as a weight file and returns the InputError it threw
// (thrown = false if it was accepted).
CaughtError error_of_text(const std::string& text) {
  const std::string path = write_text("case.json", text);
  try {
    read_weight_file(path);
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    return caught(e);
  }
  return {};
}

CaughtError error_of(const json& doc) { return error_of_text(doc.dump(1)); }

TEST_CASE("the valid base document reads, with both head styles") {
  REQUIRE_FALSE(error_of(valid_doc()).thrown);
  const WeightFile w = weight_file_from_json(valid_doc(), "mem");
  CHECK(w.n == 5);
  CHECK(w.num_layers() == 1);
  CHECK(w.num_heads() == 2);
  CHECK_FALSE(w.layers[0][0].factored);
  CHECK(w.layers[0][1].factored);
  CHECK(w.layers[0][0].A(0, 0) == Rational(1, 8));
  CHECK(w.metadata.is_null());
}

TEST_CASE("describe and shape_json name the model's kind, attention and sizes") {
  WeightFile w = weight_file_from_json(valid_doc(), "mem");
  CHECK(describe(w) == "softmax, single-layer, n = 5, 1 layer(s) x 2 head(s)");
  CHECK(shape_json(w) == json{{"kind", "single-layer"},
                              {"attention", "softmax"},
                              {"n", 5},
                              {"layers", 1},
                              {"heads", 2}});
  w.attention = AttentionKind::kRelu;
  w.layers[0].pop_back();
  CHECK(describe(w) == "relu, single-layer, n = 5, 1 layer(s) x 1 head(s)");
  CHECK(shape_json(w)["heads"] == 1);
}

TEST_CASE("every malformed weight file gives an InputError naming its field") {
  SUBCASE("unreadable file") {
    try {
      read_weight_file((temp_dir() / "does_not_exist.json").string());
      FAIL("accepted a missing file");
    } catch (const InputError& e) {
      check_error(caught(e), "(file)", "readable");
    }
  }
  const std::string text = valid_doc().dump(1);
  const auto replaced = [&](const std::string& what) {
    std::string t = text;
    const auto pos = t.find("0.125");
    REQUIRE(pos != std::string::npos);
    return t.replace(pos, 5, what);
  };
  SUBCASE("not JSON") { check_error(error_of_text("{ \"format\": "), "format", "valid JSON"); }
  SUBCASE("trailing garbage") {
    check_error(error_of_text(text + " x"), "(document)", "valid JSON");
  }
  SUBCASE("NaN literal") {
    check_error(error_of_text(replaced("NaN")), "weights[0][0].A[0][0]", "valid JSON");
  }
  SUBCASE("number overflowing to +inf") {
    check_error(error_of_text(replaced("1e400")), "weights[0][0].A[0][0]", "overflows a double");
  }
  SUBCASE("number overflowing to -inf") {
    check_error(error_of_text(replaced("-2.5e308")), "weights[0][0].A[0][0]", "finite number");
  }
  SUBCASE("string NaN") {
    check_error(error_of_text(replaced("\"NaN\"")), "weights[0][0].A[0][0]",
                "expected a decimal number such as -1.25e-3, got \"NaN\"");
  }
  SUBCASE("string Infinity deeper in a factor") {
    json d = valid_doc();
    d["weights"][0][1]["W_K"][3][2] = "Infinity";
    check_error(error_of(d), "weights[0][1].W_K[3][2]", "decimal number");
  }
  SUBCASE("a decimal string beyond the double range") {
    check_error(error_of_text(replaced("\"-2e308\"")), "weights[0][0].A[0][0]",
                "within the double range");
  }
  SUBCASE("an exponent beyond the literal limit") {
    check_error(error_of_text(replaced("1e-20000")), "weights[0][0].A[0][0]", "exponent beyond");
  }
  SUBCASE("a duplicate key, at the top and inside a head") {
    std::string t = text;
    t.insert(1, "\"attention\": \"relu\",");
    check_error(error_of_text(t), "attention", "duplicate key");
    t = text;
    const auto pos = t.find("\"M\":");
    REQUIRE(pos != std::string::npos);
    t.insert(pos, "\"A\": [[1]], ");
    check_error(error_of_text(t), "weights[0][0].A", "duplicate key");
  }
  SUBCASE("a NUL byte, even after the document") {
    check_error(error_of_text(text + std::string(1, '\0') + "garbage"), "(file)", "NUL byte");
  }
  SUBCASE("metadata nested deeper than the limit") {
    std::string t = text;
    t.pop_back();  // drop the closing brace
    std::string deep;
    for (int k = 0; k < internal::kMaxDepth + 5; ++k) deep += "[";
    for (int k = 0; k < internal::kMaxDepth + 5; ++k) deep += "]";
    // the first array below the limit: the root object is one level, so
    // the field is metadata followed by kMaxDepth - 1 indices
    std::string field = "metadata";
    for (int k = 0; k < internal::kMaxDepth - 1; ++k) field += "[0]";
    check_error(error_of_text(t + ", \"metadata\": " + deep + "}"), field,
                "nested more than 64 deep");
  }
  SUBCASE("a directory, a character device, an oversized file") {
    const auto error_of_path = [](const std::string& path) -> CaughtError {
      try {
        read_weight_file(path);
      } catch (const InputError& e) {
        return caught(e);
      }
      return {};
    };
    check_error(error_of_path(temp_dir().string()), "(file)", "got a directory");
    check_error(error_of_path("/dev/zero"), "(file)", "got a device, FIFO or socket");
    const std::string big = (temp_dir() / "big.json").string();
    {
      std::ofstream out(big, std::ios::binary);
      out.seekp(static_cast<std::streamoff>(internal::kMaxFileBytes));
      out.put(' ');
    }
    check_error(error_of_path(big), "(file)", "at most 16 MiB");
    fs::remove(big);
  }
  SUBCASE("null, boolean entries") {
    json d = valid_doc();
    d["weights"][0][0]["M"][1][2] = nullptr;
    check_error(error_of(d), "weights[0][0].M[1][2]", "got null");
    d = valid_doc();
    d["weights"][0][0]["M"][4][4] = true;
    check_error(error_of(d), "weights[0][0].M[4][4]", "got boolean");
  }
  SUBCASE("top level not an object") {
    check_error(error_of_text("[1, 2]"), "(document)", "object");
  }
  for (const char* key :
       {"format", "version", "kind", "attention", "n", "layers", "heads", "weights"}) {
    SUBCASE("missing top-level field") {
      json d = valid_doc();
      d.erase(key);
      check_error(error_of(d), key, "missing");
    }
  }
  SUBCASE("unknown top-level field") {
    json d = valid_doc();
    d["bias"] = 1;
    check_error(error_of(d), "bias", "unknown field");
  }
  SUBCASE("wrong format tag and version") {
    json d = valid_doc();
    d["format"] = "pytorch";
    check_error(error_of(d), "format", "sinkcert-weights");
    d = valid_doc();
    d["version"] = 2;
    check_error(error_of(d), "version", "[1, 1]");
  }
  SUBCASE("wrong types of counts") {
    json d = valid_doc();
    d["n"] = "5";
    check_error(error_of(d), "n", "expected an integer");
    d["n"] = 5.5;
    check_error(error_of(d), "n", "expected an integer");
    d["n"] = 2;
    check_error(error_of(d), "n", "in [3,");
    d = valid_doc();
    d["heads"] = 0;
    check_error(error_of(d), "heads", "in [1,");
  }
  SUBCASE("unknown attention and kind") {
    json d = valid_doc();
    d["attention"] = "softmaxx";
    check_error(error_of(d), "attention", "expected one of softmax, relu");
    d = valid_doc();
    d["kind"] = "transformer";
    check_error(error_of(d), "kind", "'single-layer' or 'residual'");
    d = valid_doc();
    d["attention"] = 3;
    check_error(error_of(d), "attention", "expected a string");
  }
  SUBCASE("single-layer with layers != 1") {
    json d = valid_doc();
    d["layers"] = 2;
    d["weights"].push_back(d["weights"][0]);
    check_error(error_of(d), "layers", "expected 1 for kind \"single-layer\"");
  }
  SUBCASE("layers and heads disagreeing with the arrays") {
    json d = valid_doc();
    d["kind"] = "residual";
    d["layers"] = 2;
    check_error(error_of(d), "weights", "2 layers, got 1 layers");
    d = valid_doc();
    d["heads"] = 3;
    check_error(error_of(d), "weights[0]", "3 heads, got 2 heads");
    d = valid_doc();
    d["weights"][0] = 7;
    check_error(error_of(d), "weights[0]", "got number");
  }
  SUBCASE("wrong shapes") {
    json d = valid_doc();
    d["weights"][0][0]["A"].erase(4);
    check_error(error_of(d), "weights[0][0].A", "5 x 5");
    d = valid_doc();
    d["weights"][0][0]["M"][3].erase(0);
    check_error(error_of(d), "weights[0][0].M[3]", "row of 5 numbers");
    d = valid_doc();
    d["weights"][0][0]["M"] = 1.0;
    check_error(error_of(d), "weights[0][0].M", "5 x 5 matrix");
    d = valid_doc();
    d["weights"][0][0]["A"] = json::array();
    check_error(error_of(d), "weights[0][0].A", "5 x 5 matrix");
    d = valid_doc();
    d["weights"][0][1]["W_K"].erase(0);
    check_error(error_of(d), "weights[0][1].W_K", "the shape of W_Q");
    d = valid_doc();
    d["weights"][0][1]["W_Q"][2].push_back(1.0);
    check_error(error_of(d), "weights[0][1].W_Q[2]", "row of 5 numbers");
    d = valid_doc();
    d["weights"][0][1]["W_V"].erase(0);  // d_v = 4 while W_O is 5 x 5
    check_error(error_of(d), "weights[0][1].W_O[0]", "n x d_v = 5 x 4");
  }
  SUBCASE("factored and unfactored keys mixed in one head") {
    json d = valid_doc();
    d["weights"][0][1]["A"] = d["weights"][0][0]["A"];
    check_error(error_of(d), "weights[0][1]", "not keys of both kinds");
  }
  SUBCASE("incomplete heads and unknown keys") {
    json d = valid_doc();
    d["weights"][0][1].erase("W_V");
    check_error(error_of(d), "weights[0][1].W_V", "missing");
    d = valid_doc();
    d["weights"][0][0].erase("M");
    check_error(error_of(d), "weights[0][0].M", "missing");
    d = valid_doc();
    d["weights"][0][1]["b_Q"] = json::array({0, 0, 0, 0, 0});
    check_error(error_of(d), "weights[0][1].b_Q", "unknown field");
    d = valid_doc();
    d["weights"][0][1] = json::object();
    check_error(error_of(d), "weights[0][1]", "expected the factors");
  }
}

TEST_CASE("a written weight file reads back bit-identically, with identical outputs") {
  Model<double> m =
      testing::random_model(6, AttentionKind::kSoftmax, 0.7, 42, 2, 2, ModelKind::kResidual);
  // Adversarial magnitudes: subnormal, extremes, negative zero, 0.1, 1 + ulp.
  Matrix<double>& A = m.layers[1][0].A;
  A(0, 0) = 4.9406564584124654e-324;
  A(0, 1) = -DBL_MIN;
  A(0, 2) = DBL_MAX;
  A(0, 3) = -0.0;
  A(0, 4) = 0.1;
  A(0, 5) = std::nextafter(1.0, 2.0);
  A(1, 0) = -1e-300;
  A(1, 1) = 1.0 / 3.0;
  const json meta = {{"note", "line1\nline2"}, {"seed", 42}};
  const std::string path = (temp_dir() / "sub" / "roundtrip.json").string();
  write_weight_file(path, weight_file_from_model(m, meta));
  CHECK_FALSE(fs::exists(path + ".tmp." + std::to_string(::getpid())));
  const WeightFile w = read_weight_file(path);
  CHECK(w.path == path);
  CHECK(w.metadata == meta);
  CHECK(w.kind == ModelKind::kResidual);
  CHECK(w.attention == AttentionKind::kSoftmax);
  const Model<double> back = to_model<double>(w);
  REQUIRE(back.num_layers() == 2);
  REQUIRE(back.num_heads() == 2);
  for (int l = 0; l < 2; ++l) {
    for (int h = 0; h < 2; ++h) {
      for (int r = 0; r < 6; ++r) {
        for (int c = 0; c < 6; ++c) {
          // -0.0 and 0.0 denote the same rational and are written as 0
          const double a = m.layers[l][h].A(r, c);
          CHECK(same_bits(back.layers[l][h].A(r, c), a == 0 ? 0.0 : a));
          CHECK(same_bits(back.layers[l][h].M(r, c), m.layers[l][h].M(r, c)));
        }
      }
    }
  }
  // Identical bits give identical outputs (on a model without the extremes).
  const Model<double> plain = testing::random_model(6, AttentionKind::kRelu, 0.7, 43);
  write_weight_file(path, weight_file_from_model(plain));
  const Model<double> plain_back = to_model<double>(read_weight_file(path));
  TaskSampler sampler(Task{6, 9, TriggerRange::kPaper}, 5);
  const Sample s = sampler.next();
  const Matrix<double> y1 = forward(plain, s.X).output, y2 = forward(plain_back, s.X).output;
  for (int i = 0; i < y1.rows(); ++i) {
    for (int d = 0; d < y1.cols(); ++d) CHECK(same_bits(y1(i, d), y2(i, d)));
  }
}

// The base document made gated: every head gets a gate (n x n) whose entry
// [0][0] is the unique marker 0.375.
json gated_doc() {
  json doc = valid_doc();
  doc["attention"] = "gated";
  for (json& head : doc["weights"][0]) {
    json G = json::array();
    for (int r = 0; r < 5; ++r) {
      G.push_back(json::array());
      for (int c = 0; c < 5; ++c) G[r].push_back(r == 0 && c == 0 ? 0.375 : 0.5 * (c - r));
    }
    head["gate"] = G;
  }
  return doc;
}

TEST_CASE("the gate of gated attention: required, n x n, refused for every other kind") {
  REQUIRE_FALSE(error_of(gated_doc()).thrown);
  const WeightFile w = weight_file_from_json(gated_doc(), "mem");
  CHECK(w.attention == AttentionKind::kGated);
  CHECK(w.layers[0][0].gate(0, 0) == Rational(3, 8));
  CHECK(w.layers[0][1].gate(2, 0) == Rational(-1));
  // the gate reaches the model, in both head styles
  const Model<Rational> m = to_model<Rational>(w);
  CHECK(m.layers[0][0].G(0, 0) == Rational(3, 8));
  CHECK(m.layers[0][1].G(0, 4) == Rational(2));
  SUBCASE("missing for gated") {
    json doc = gated_doc();
    doc["weights"][0][1].erase("gate");
    check_error(error_of(doc), "weights[0][1].gate", "gated");
  }
  SUBCASE("present for another kind") {
    for (const char* kind : {"softmax", "softpick", "relu"}) {
      json doc = gated_doc();
      doc["attention"] = kind;
      const CaughtError e = error_of(doc);
      check_error(e, "weights[0][0].gate", std::string("attention is \"") + kind + "\"");
    }
  }
  SUBCASE("wrong shape") {
    json doc = gated_doc();
    doc["weights"][0][0]["gate"].erase(4);
    check_error(error_of(doc), "weights[0][0].gate", "n x n = 5 x 5");
  }
  SUBCASE("not a number") {
    json doc = gated_doc();
    doc["weights"][0][0]["gate"][1][1] = "x";
    CHECK(error_of(doc).field.find("weights[0][0].gate") == 0);
  }
}

TEST_CASE("gated and softpick models round-trip exactly, gate included") {
  for (AttentionKind kind : {AttentionKind::kGated, AttentionKind::kSoftpick}) {
    CAPTURE(to_string(kind));
    const Model<double> m = testing::random_model(5, kind, 0.7, 44, 2, 2, ModelKind::kResidual);
    const std::string path = (temp_dir() / "gated_roundtrip.json").string();
    write_weight_file(path, weight_file_from_model(m));
    const WeightFile w = read_weight_file(path);
    CHECK(w.attention == kind);
    const Model<double> back = to_model<double>(w);
    for (int l = 0; l < 2; ++l) {
      for (int h = 0; h < 2; ++h) {
        const Head<double>& a = m.layers[l][h];
        const Head<double>& b = back.layers[l][h];
        REQUIRE(a.G.size() == b.G.size());
        CHECK(a.G.size() == (kind == AttentionKind::kGated ? 25 : 0));
        for (int t = 0; t < a.G.size(); ++t) CHECK(same_bits(a.G.data()[t], b.G.data()[t]));
        for (int t = 0; t < a.A.size(); ++t) CHECK(same_bits(a.A.data()[t], b.A.data()[t]));
      }
    }
    // a gated model without its gate cannot be written
    if (kind == AttentionKind::kGated) {
      Model<double> bare = m;
      bare.layers[1][0].G = Matrix<double>();
      CHECK_THROWS_AS(weight_file_from_model(bare), std::invalid_argument);
    }
  }
}

TEST_CASE("factored heads round-trip and multiply out exactly in Rational, enclosed in Mpfi") {
  WeightFile w = weight_file_from_json(valid_doc(), "mem");
  HeadWeights& h = w.layers[0][1];
  std::mt19937_64 eng(9);
  std::normal_distribution<double> normal(0.0, 1.0);
  // d_k = 3, d_v = 2 (PyTorch heads narrower than n).
  h.W_Q = Matrix<Rational>(3, 5);
  h.W_K = Matrix<Rational>(3, 5);
  h.W_V = Matrix<Rational>(2, 5);
  h.W_O = Matrix<Rational>(5, 2);
  for (Matrix<Rational>* W : {&h.W_Q, &h.W_K, &h.W_V, &h.W_O}) {
    for (int r = 0; r < W->rows(); ++r) {
      for (int c = 0; c < W->cols(); ++c) (*W)(r, c) = Rational(normal(eng));
    }
  }
  const std::string path = (temp_dir() / "factored.json").string();
  write_weight_file(path, w);
  const WeightFile back = read_weight_file(path);
  REQUIRE(back.layers[0][1].factored);
  CHECK(back.layers[0][1].W_O.rows() == 5);
  CHECK(back.layers[0][1].W_O.cols() == 2);
  const Model<Rational> exact = to_model<Rational>(back);
  const Head<Rational>& he = exact.layers[0][1];
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 5; ++c) {
      // A_rc = sum_k W_Q[k][r] W_K[k][c], exactly
      Rational a = 0;
      for (int k = 0; k < 3; ++k) a += h.W_Q(k, r) * h.W_K(k, c);
      CHECK(he.A(r, c) == a);
    }
  }
  // The 64-bit enclosure contains the exact value (exact in 1024-bit MPFR:
  // a sum of 3 products of 53-bit numbers needs < 120 bits).
  Model<Mpfi> enclosed;
  {
    PrecisionScope scope(64);
    enclosed = to_model<Mpfi>(back);
  }
  PrecisionScope high(1024);
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 5; ++c) {
      const Mpfr exact_a(he.A(r, c)), exact_m(he.M(r, c));
      CHECK(bmp::lower(enclosed.layers[0][1].A(r, c)) <= exact_a);
      CHECK(exact_a <= bmp::upper(enclosed.layers[0][1].A(r, c)));
      CHECK(bmp::lower(enclosed.layers[0][1].M(r, c)) <= exact_m);
      CHECK(exact_m <= bmp::upper(enclosed.layers[0][1].M(r, c)));
    }
  }
}

// The golden digits are Python's decimal.Decimal(0.1), Decimal(1e-20) and
// Decimal(1e300): the exact values of those doubles, computed independently.
TEST_CASE("the written text is pinned (golden)") {
  Matrix<double> A(3, 3), M(3, 3);
  A << 0, 1, -0.0, 0.1, 1e-20, 2.5, -3, 1e300, 0.5;
  M = Matrix<double>::Identity(3, 3);
  const WeightFile w = weight_file_from_model(single_head_model<double>(AttentionKind::kRelu, A, M),
                                              {{"by", "test"}});
  const std::string expected = R"({
  "format": "sinkcert-weights",
  "version": 1,
  "kind": "single-layer",
  "attention": "relu",
  "n": 3,
  "layers": 1,
  "heads": 1,
  "weights": [
    [
      {
        "A": [
          [0, 1, 0],
          [0.1000000000000000055511151231257827021181583404541015625, 9.99999999999999945153271454209571651729503702787392447107715776066783064379706047475337982177734375e-21, 2.5],
          [-3, 1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160, 0.5]
        ],
        "M": [
          [1, 0, 0],
          [0, 1, 0],
          [0, 0, 1]
        ]
      }
    ]
  ],
  "metadata": {
    "by": "test"
  }
}
)";
  CHECK(weight_file_text(w) == expected);
}

TEST_CASE("writing refuses non-finite values and leaves no file") {
  Matrix<double> A = Matrix<double>::Zero(3, 3), M = Matrix<double>::Identity(3, 3);
  A(1, 1) = std::numeric_limits<double>::quiet_NaN();
  const std::string path = (temp_dir() / "nan.json").string();
  fs::remove(path);
  CHECK_THROWS_AS(write_weight_file(path, weight_file_from_model(single_head_model<double>(
                                              AttentionKind::kSoftmax, A, M))),
                  std::invalid_argument);
  CHECK_FALSE(fs::exists(path));
  Model<double> empty;
  CHECK_THROWS_AS(weight_file_from_model(empty), std::invalid_argument);
}

// A head with W_Q column 1 and W_K column 2 given, W_K[0][1] = W_K[0][4] = 1
// (so A[1][1] = A[1][4] = 1: query reads the trigger flag, key "is non-BOS")
// and W_V = W_O = I: the Theorem 3 ReLU construction at n = 5 plus the
// content-dependent entry A[1][2] = sum_k W_Q[k][1] W_K[k][2].
std::string demo_file(const std::string& name, const std::vector<std::string>& q_col,
                      const std::vector<std::string>& k_col) {
  std::string t = R"({"format": "sinkcert-weights", "version": 1, "kind": "single-layer",
    "attention": "relu", "n": 5, "layers": 1, "heads": 1, "weights": [[{)";
  const auto matrix = [](const std::function<std::string(int, int)>& entry) {
    std::string m = "[";
    for (int r = 0; r < 5; ++r) {
      m += r ? ", [" : "[";
      for (int c = 0; c < 5; ++c) m += (c ? ", " : "") + entry(r, c);
      m += "]";
    }
    return m + "]";
  };
  t += "\"W_Q\": " + matrix([&](int r, int c) { return c == 1 ? q_col[r] : "0"; });
  t += ", \"W_K\": " + matrix([&](int r, int c) {
         if (c == 2) return k_col[r];
         return std::string(r == 0 && (c == 1 || c == 4) ? "1" : "0");
       });
  const auto eye = matrix([](int r, int c) { return std::string(r == c ? "1" : "0"); });
  t += ", \"W_V\": " + eye + ", \"W_O\": " + eye + "}]]}";
  return write_text(name, t);
}

// 2^-60 as an exact decimal literal.
const std::string kTwoToMinus60 = "8.67361737988403547205962240695953369140625e-19";

TEST_CASE("factored heads are multiplied out exactly: 2^-60 survives, a cancellation stays 0") {
  const Rational two_m60 = internal::parse_decimal(kTwoToMinus60);
  CHECK(two_m60 == Rational(1) / Rational(1152921504606846976));  // 2^60
  // Exact A[1][2] = 1 + 2^-60 - 1 + 1 - 1 = 2^-60 (double sums lose it).
  const WeightFile lost = read_weight_file(
      demo_file("lost.json", {"1", kTwoToMinus60, "1", "1", "1"}, {"1", "1", "-1", "1", "-1"}));
  const Model<Rational> exact = to_model<Rational>(lost);
  CHECK(exact.layers[0][0].A(1, 2) == two_m60);
  CHECK(exact.layers[0][0].A(1, 1) == 1);
  CHECK(exact.layers[0][0].A(1, 4) == 1);
  {
    PrecisionScope scope(64);
    const Mpfi a = to_model<Mpfi>(lost).layers[0][0].A(1, 2);
    CHECK(bmp::lower(a) > 0);  // the enclosure excludes the double's 0
    CHECK(bmp::lower(a) <= Mpfr(std::ldexp(1.0, -60)));
    CHECK(bmp::upper(a) >= Mpfr(std::ldexp(1.0, -60)));
  }
  // Exact A[1][2] = 1 - 1 + 2^-60 + 0 - 2^-60 = 0: the Theorem 3
  // construction, although a double product in Eigen's order gives -2^-60.
  const WeightFile kept = read_weight_file(demo_file(
      "kept.json", {"1", "1", kTwoToMinus60, "0", kTwoToMinus60}, {"1", "-1", "1", "0", "-1"}));
  CHECK(to_model<Rational>(kept).layers[0][0].A(1, 2) == 0);
  PrecisionScope scope(64);
  const Mpfi a = to_model<Mpfi>(kept).layers[0][0].A(1, 2);
  CHECK(bmp::lower(a) <= 0);
  CHECK(bmp::upper(a) >= 0);
}

TEST_CASE("every number means the exact rational its literal denotes") {
  json d = valid_doc();
  const std::string text = d.dump(1);
  const auto with = [&](const std::string& literal) {
    std::string t = text;
    const auto pos = t.find("0.125");
    REQUIRE(pos != std::string::npos);
    t.replace(pos, 5, literal);
    return read_weight_file(write_text("exact.json", t)).layers[0][0].A(0, 0);
  };
  CHECK(with("0.1") == Rational(1, 10));
  CHECK(with("0.1") != Rational(0.1));  // not the double nearest to 1/10
  // 1e-400 is not 0 (a double would underflow to 0)
  const Rational tiny = with("1e-400");
  CHECK(tiny > 0);
  CHECK(tiny * internal::parse_decimal("1e400") == 1);
  CHECK(with("1.00000000000000001") - 1 == internal::parse_decimal("1e-17"));
  CHECK(with("-12.5E+2") == -1250);
  CHECK(with("18446744073709551617") == internal::parse_decimal("18446744073709551617"));
  CHECK(with("18446744073709551617") - 18446744073709551615ull == 2);  // beyond uint64
  // a decimal string with 200 significant digits
  const std::string digits200 = "0." + std::string(199, '3') + "7";
  const Rational q = with("\"" + digits200 + "\"");
  CHECK(q * internal::parse_decimal("1e200") == internal::parse_decimal(digits200.substr(2)));
}

TEST_CASE("parse_decimal and exact_decimal are inverse on doubles and MPFR values") {
  std::mt19937_64 eng(17);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> ex(-1074, 1023);
  for (int k = 0; k < 2000; ++k) {
    const double x = std::ldexp(mant(eng), ex(eng));
    const Rational q(x);
    const std::string text = internal::exact_decimal(q);
    CHECK(internal::parse_decimal(text) == q);
    CHECK(std::strtod(text.c_str(), nullptr) == x);  // and it reads back as the same double
  }
  PrecisionScope scope(513);
  const Mpfr third = Mpfr(1) / 3;
  const Rational q = scalar_cast<Rational>(third);
  CHECK(internal::parse_decimal(internal::exact_decimal(q)) == q);
  CHECK_THROWS_AS(internal::exact_decimal(Rational(1, 3)), std::invalid_argument);
  for (const char* bad : {"", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1.5x", "0x10", " 1"}) {
    CHECK_THROWS_AS(internal::parse_decimal(bad), std::invalid_argument);
  }
  CHECK(internal::exact_decimal(Rational(-1, 8)) == "-0.125");
  CHECK(internal::exact_decimal(Rational(5, 1)) == "5");
  CHECK(internal::exact_decimal(internal::parse_decimal("1e-30")) == "1e-30");
  CHECK(internal::exact_decimal(internal::parse_decimal("-2.5e-12")) == "-2.5e-12");
  CHECK(internal::exact_decimal(internal::parse_decimal("0.000001")) == "0.000001");
}

// Random factored heads, d = 3..40 (past the sizes where Eigen switches to
// its blocked GEMM, whose padding is NaN for MPFI), multiplied out in T: the
// MPFI product must enclose the exact rational product; point types must be
// within their rounding of it.
template <class T>
double product_tolerance() {
  // |error| <= d * 2^-p * sum |terms| <= 40 * 2^-p * 40 (entries in [-1, 1])
  return 1600.0 * std::ldexp(1.0, -ScalarTraits<T>::bits());
}

TEST_CASE_TEMPLATE("to_head multiplies factored heads validly in every scalar type", T, double,
                   float, Float128, Mpfr, Mpfi, Rational, ceres::Jet<double, 2>) {
  std::mt19937_64 eng(23);
  std::uniform_real_distribution<double> unif(-1.0, 1.0);
  PrecisionScope scope(80);
  for (const int d : {3, 7, 8, 16, 17, 33, 40}) {
    HeadWeights h;
    h.factored = true;
    const auto random = [&](int r, int c) {
      Matrix<Rational> W(r, c);
      for (int i = 0; i < r; ++i) {
        for (int k = 0; k < c; ++k) W(i, k) = Rational(unif(eng));
      }
      return W;
    };
    h.W_Q = random(d + 1, d);
    h.W_K = random(d + 1, d);
    h.W_V = random(d - 1, d);
    h.W_O = random(d, d - 1);
    const Head<Rational> exact = to_head<Rational>(h);
    const Head<T> got = to_head<T>(h);
    for (int r = 0; r < d; ++r) {
      for (int c = 0; c < d; ++c) {
        for (const auto& [e, g] :
             {std::pair{exact.A(r, c), got.A(r, c)}, std::pair{exact.M(r, c), got.M(r, c)}}) {
          if constexpr (ScalarTraits<T>::kIsInterval) {
            PrecisionScope wide(4096);
            CHECK(Mpfr(bmp::lower(g)) <= scalar_cast<Mpfr>(e));
            CHECK(scalar_cast<Mpfr>(e) <= Mpfr(bmp::upper(g)));
          } else if constexpr (ScalarTraits<T>::kIsExact) {
            CHECK(g == e);
          } else {
            CHECK(std::abs(to_double(g) - scalar_cast<double>(e)) <= product_tolerance<T>());
          }
        }
      }
    }
  }
}

// --- The "task" object -------------------------------------------------------

json with_task(const json& task) {
  json doc = valid_doc();
  doc["task"] = task;
  return doc;
}

TEST_CASE("a weight file's task: L, trigger range, score scale and source are read") {
  const std::string path = write_text(
      "task.json",
      with_task({{"L", 7}, {"trigger_range", "reference-code"}, {"source", "x"}}).dump(1));
  const WeightFile w = read_weight_file(path);
  REQUIRE(w.task);
  CHECK(w.task->L == 7);
  CHECK(w.task->range == TriggerRange::kReferenceCode);
  CHECK(w.task->score_scale == 1);
  CHECK(w.task->source == "x");
  // absent: no task at all; an empty object: every member empty
  CHECK_FALSE(weight_file_from_json(valid_doc(), "mem").task);
  const WeightFile empty = weight_file_from_json(with_task(json::object()), "mem");
  REQUIRE(empty.task);
  CHECK_FALSE(empty.task->L);
  CHECK_FALSE(empty.task->range);
}

TEST_CASE("a malformed task gives an InputError naming its field") {
  check_error(error_of(with_task(json::array())), "task", "object");
  check_error(error_of(with_task({{"L", 1}})), "task.L", "[2, 1024]");
  check_error(error_of(with_task({{"L", 2.5}})), "task.L", "integer");
  check_error(error_of(with_task({{"trigger_range", "papers"}})), "task.trigger_range",
              "\"paper\" or \"reference-code\"");
  check_error(error_of(with_task({{"score_scale", 0}})), "task.score_scale", "> 0");
  check_error(error_of(with_task({{"score_scale", -0.25}})), "task.score_scale", "> 0");
  check_error(error_of(with_task({{"score_scale", "abc"}})), "task.score_scale", "decimal");
  check_error(error_of(with_task({{"source", 3}})), "task.source", "string");
  check_error(error_of(with_task({{"bias", 3}})), "task.bias", "expected only L, trigger_range");
}

TEST_CASE("score_scale s multiplies A exactly, once, and survives a round trip") {
  // 0.1 is 1/10 exactly (the literal is kept inside "task" too)
  const std::string text = with_task({{"L", 4}}).dump(1);
  std::string scaled = text;
  scaled.replace(scaled.find("\"L\": 4"), 6, "\"L\": 4, \"score_scale\": 0.1");
  const WeightFile plain = read_weight_file(write_text("plain.json", text));
  const WeightFile w = read_weight_file(write_text("scaled.json", scaled));
  REQUIRE(w.task);
  CHECK(w.task->score_scale == Rational(1, 10));
  const Model<Rational> a = to_model<Rational>(plain);
  const Model<Rational> b = to_model<Rational>(w);
  for (int h = 0; h < 2; ++h) {
    for (int r = 0; r < 5; ++r) {
      for (int c = 0; c < 5; ++c) {
        // A = s * A_file (products) and A = (s W_Q)^T W_K (factored)
        CHECK(b.layers[0][h].A(r, c) == a.layers[0][h].A(r, c) / 10);
        CHECK(b.layers[0][h].M(r, c) == a.layers[0][h].M(r, c));
      }
    }
  }
  // the stored matrices are the file's, so writing and reading back gives
  // the same model, never the scale applied twice
  const std::string again = write_text("again.json", weight_file_text(w));
  const WeightFile back = read_weight_file(again);
  REQUIRE(back.task);
  CHECK(back.task->score_scale == Rational(1, 10));
  CHECK(back.task->L == 4);
  CHECK(to_model<Rational>(back).layers[0][1].A == b.layers[0][1].A);
  // a false claim must fail: the scaled model is not the file's unscaled one
  CHECK_FALSE(b.layers[0][1].A == a.layers[0][1].A);
  // the double model is the scaled one too, rounded once per entry of s W_Q
  const Model<double> d = to_model<double>(w);
  CHECK(d.layers[0][0].A(0, 0) == 0.0125);
}

TEST_CASE("a PyTorch or numpy file is refused with the converter's command") {
  for (const std::string name : {"W.pt", "W.pth", "W.npz"}) {
    const std::string path = write_text(name, std::string("PK\x03\x04\0\0", 6));
    try {
      read_weight_file(path);
      FAIL("accepted " << name);
    } catch (const InputError& e) {
      const std::string what = e.what();
      CHECK(what.find("looks like a PyTorch/numpy file") != std::string::npos);
      CHECK(what.find("python3 scripts/convert_pytorch.py " + path) != std::string::npos);
      CHECK(what.find("NUL byte") == std::string::npos);
    }
  }
  // by content alone: a zip archive named .json
  const std::string zip = write_text("zipped.json", std::string("PK\x03\x04\0\0", 6));
  CHECK_THROWS_WITH_AS(read_weight_file(zip), doctest::Contains("PyTorch/numpy"), InputError);
  // a JSON file is not mistaken for one
  CHECK_NOTHROW(read_weight_file(write_text("fine.json", valid_doc().dump(1))));
}

}  // namespace
}  // namespace sinkcert
