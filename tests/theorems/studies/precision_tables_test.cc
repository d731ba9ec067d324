// SPDX-License-Identifier: MIT
//
// The precision checkers on small configurations (n = 5, L = 4): the same
// code paths as the appendix's n = L = 16 tables, in a fraction of the time.
// For the sink family at L = 4 the closed form is E = 1 - min a_i0 =
// 3 / (e^beta + 3); double returns 1 - a_i0 = 0 once that is below 2^-53
// (beta >= 38), Float128 once it is below 2^-113 (beta >= 80).
#include "theorems/studies/precision_tables.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "src/constructions.h"
#include "src/forward.h"
#include "src/input_error.h"
#include "src/linf_error.h"
#include "src/output_files.h"
#include "src/weight_file.h"

namespace sinkcert::theorems::studies {
namespace {

const Task kSmall{5, 4, TriggerRange::kPaper};
const std::vector<double> kBetas{5, 40, 80};
// More digits than a double has (17), fewer than the production 80, so the
// double column's correct digits are measured, not limited by the enclosure.
constexpr int kDigits = 30;

// The P1 quantities at 4096 bits in MPFR (no enclosure): max over the
// vertex witnesses of e(X) and of 1 - a_i0.
std::pair<Mpfr, Mpfr> reference_4096(const Task& task, double beta) {
  const Model<Mpfr> m = sink_family<Mpfr>(task.n, Mpfr(beta));
  Mpfr loss(0), deficit(0);
  for (const auto& [j, C] : bounds::vertex_witnesses(task)) {
    const Matrix<Mpfr> X = make_input<Mpfr>(task, j, C.unaryExpr([](double v) { return Mpfr(v); }));
    const auto r = forward(m, X);
    const Mpfr e = linf_error(r.output, make_target(X, j, TargetKind::kPlain)).value;
    if (e > loss) loss = e;
    for (int i = 1; i < task.L; ++i) {
      if (i == j) continue;
      const Mpfr d = Mpfr(1) - r.attention[0][0](i, 0);
      if (d > deficit) deficit = d;
    }
  }
  return {loss, deficit};
}

bool contains(const Mpfi& x, const Mpfr& v) { return bmp::lower(x) <= v && v <= bmp::upper(x); }

TEST_CASE("P1: certified intervals contain the 4096-bit MPFR value; double fails at beta >= 40") {
  const auto rows = sink_family_precision_rows(kSmall, kBetas, kDigits);
  REQUIRE(rows.size() == kBetas.size());
  for (const auto& row : rows) {
    INFO("beta = " << row.beta);
    {
      PrecisionScope high(4096);
      const auto [loss, deficit] = reference_4096(kSmall, row.beta);
      CHECK(contains(row.loss, loss));
      CHECK(contains(row.deficit, deficit));
      // the closed form (L-1) / (e^beta + L-1) of constructions.h
      const Mpfr closed = Mpfr(3) / (bmp::exp(Mpfr(row.beta)) + 3);
      CHECK(contains(row.deficit, closed));
      CHECK(contains(row.loss, closed));
      // the enclosures are tight: a value off by one part in 10^6 is outside
      CHECK_FALSE(contains(row.deficit, Mpfr(deficit * Mpfr("1.000001"))));
      CHECK_FALSE(contains(row.loss, Mpfr(closed * Mpfr("0.999999"))));
    }
    CHECK(row.loss_digits >= kDigits);
    CHECK(row.deficit_digits >= kDigits);
    const NumericValue& dbl = row.deficit_numeric[1];
    REQUIRE(dbl.bits == 53);
    if (row.beta >= 40) {
      CHECK(dbl.value == 0);
      CHECK(dbl.correct_digits == 0);
    } else {
      CHECK(dbl.value > 0);
      CHECK(row.loss_numeric[1].correct_digits >= 12);
      CHECK(row.loss_numeric[1].correct_digits < kDigits);  // measured, not capped
    }
  }
  // Float128 (113 bits) returns 1 - BOS = 0 at beta = 80, not at 40
  CHECK(rows[2].deficit_numeric[2].value == 0);
  CHECK(rows[1].deficit_numeric[2].value > 0);
  // 257-bit MPFR still resolves it
  CHECK(rows[2].deficit_numeric[3].value > 0);
  // precision needed for 1 - BOS grows with beta (cancellation in 1 - a)
  CHECK(rows[2].deficit_bits > rows[0].deficit_bits);
}

TEST_CASE("P4: the sink family's scale path goes below 1e-30 and 1e-100, certified") {
  AdaptiveOptions options;
  options.digits = 10;
  const auto rows = scale_path(sink_family<double>(5, 10.0), kSmall, {1, 8, 32}, options);
  REQUIRE(rows.size() == 3);
  PrecisionScope scope(256);
  CHECK(bmp::upper(rows[1].cert.loss) < Mpfr("1e-30"));
  CHECK(bmp::upper(rows[1].cert.deficit) < Mpfr("1e-30"));
  CHECK(bmp::upper(rows[2].cert.loss) < Mpfr("1e-100"));
  CHECK(rows[2].cert.reached);
  CHECK(rows[2].cert.bits > rows[0].cert.bits);
  // the unscaled family is not below 1e-30: the test can fail
  CHECK_FALSE(bmp::upper(rows[0].cert.loss) < Mpfr("1e-30"));
}

TEST_CASE("P3 rows are typed: verdict, evidence, exact margin") {
  const auto rows = relu_certificate_rows({{5, 4}});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].verdict == Verdict::kVerified);
  CHECK(rows[0].evidence.level == Evidence::Level::kExact);
  CHECK(rows[0].margin == 0);
}

TEST_CASE("P2 reads the named search-model files and certifies them") {
  namespace fs = std::filesystem;
  const std::string dir = std::string(SINKCERT_BINARY_DIR) + "/precision_tables_test_p2";
  fs::remove_all(dir);
  // a recorded loss above the true E = 1.3618e-4 (as a double search could
  // write near its noise floor): P2 must not use it
  write_weight_file(
      dir + "/sink5.json",
      weight_file_from_model(sink_family<double>(5, 10.0), {{"L", 4}, {"worst_case_loss", 2e-4}}));
  const auto rows = search_model_rows({{"sink5.json", dir + "/sink5.json"}}, 10.0);
  REQUIRE(rows.size() == 1u);
  CHECK(rows[0].file == "sink5.json");
  CHECK(rows[0].L == 4);
  REQUIRE(rows[0].bounded);
  CHECK(rows[0].bound.verdict == Verdict::kEnclosed);
  PrecisionScope scope(256);
  const Mpfr truth = Mpfr(3) / (bmp::exp(Mpfr(10)) + 3);
  CHECK(rows[0].bound.lower <= truth);
  CHECK(rows[0].bound.upper >= truth);
  // re-evaluated and certified at its witness: a lower bound, close to E
  CHECK(Mpfr(rows[0].search.certified) <= truth);
  CHECK(Mpfr(rows[0].search.certified) > truth * Mpfr("0.999"));
  CHECK(bmp::lower(rows[0].witness.loss) <= truth);
  CHECK(bmp::upper(rows[0].witness.loss) >= truth);
  // a missing file, a broken file and a model of another kind: errors naming the file
  write_file_atomically(dir + "/broken.json", "{not json");
  write_weight_file(dir + "/relu.json",
                    weight_file_from_model(relu_construction<double>(5), {{"L", 4}}));
  for (const std::string name : {"missing.json", "broken.json", "relu.json"}) {
    try {
      search_model_rows({{name, dir + "/" + name}}, 1.0);
      FAIL("no error for " << name);
    } catch (const InputError& e) {
      CHECK(e.file() == dir + "/" + name);
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sinkcert::theorems::studies
