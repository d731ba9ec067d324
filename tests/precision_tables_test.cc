// SPDX-License-Identifier: MIT
#include "theorems/precision_tables.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "src/constructions.h"
#include "src/forward.h"
#include "src/linf_error.h"
#include "src/weight_file.h"

namespace sinkcert::theorems {
namespace {

const std::vector<double> kBetas{5, 10, 20, 40, 80, 160, 320};

// The P1 quantities at 4096 bits in MPFR (no enclosure): max over the
// vertex witnesses of e(X) and of 1 - a_i0.
std::pair<Mpfr, Mpfr> reference_4096(const Task& task, double beta) {
  const Model<Mpfr> m = sink_family<Mpfr>(task.n, Mpfr(beta));
  Mpfr loss(0), deficit(0);
  for (const auto& [j, C] : vertex_witnesses(task)) {
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
  const Task task{16, 16, TriggerRange::kPaper};
  const auto rows = sink_family_precision_rows(task, kBetas);
  REQUIRE(rows.size() == kBetas.size());
  for (const auto& row : rows) {
    INFO("beta = " << row.beta);
    {
      PrecisionScope high(4096);
      const auto [loss, deficit] = reference_4096(task, row.beta);
      CHECK(contains(row.loss, loss));
      CHECK(contains(row.deficit, deficit));
      // the closed form (L-1) / (e^beta + L-1) of constructions.h
      const Mpfr closed = Mpfr(15) / (bmp::exp(Mpfr(row.beta)) + 15);
      CHECK(contains(row.deficit, closed));
      CHECK(contains(row.loss, closed));
      // the enclosures are tight: a value off by one part in 10^6 is outside
      CHECK_FALSE(contains(row.deficit, Mpfr(deficit * Mpfr("1.000001"))));
    }
    CHECK(row.loss_digits >= kP1Digits);
    CHECK(row.deficit_digits >= kP1Digits);
    const NumericValue& dbl = row.deficit_numeric[1];
    REQUIRE(dbl.bits == 53);
    if (row.beta >= 40) {
      CHECK(dbl.value == 0);
      CHECK(dbl.correct_digits == 0);
      // the loss is swamped too: rounding noise of the trigger row (a_jk - 1/j)
      // exceeds E = 15 e^-beta
      CHECK(row.loss_numeric[1].correct_digits == 0);
    } else {
      CHECK(dbl.value > 0);
      CHECK(row.loss_numeric[1].correct_digits >= 12);
    }
    // precision needed for 1 - BOS grows with beta (cancellation in 1 - a)
    if (row.beta >= 160) CHECK(row.deficit_bits > 384);
  }
  // Float128 (113 bits) returns 1 - BOS = 0 from beta = 80 on
  CHECK(rows[4].deficit_numeric[2].value == 0);
  CHECK(rows[3].deficit_numeric[2].value > 0);
}

TEST_CASE("P4: the sink family's scale path goes below 1e-30 and 1e-100, certified") {
  const Task task{16, 16, TriggerRange::kPaper};
  AdaptiveOptions options;
  options.digits = 10;
  const auto rows = scale_path(sink_family<double>(16, 10.0), task, {1, 8, 32}, options);
  REQUIRE(rows.size() == 3);
  PrecisionScope scope(256);
  CHECK(bmp::upper(rows[1].cert.loss) < Mpfr("1e-30"));
  CHECK(bmp::upper(rows[1].cert.deficit) < Mpfr("1e-29"));
  CHECK(bmp::upper(rows[2].cert.loss) < Mpfr("1e-100"));
  CHECK(rows[2].cert.reached);
  CHECK(rows[2].cert.bits > rows[0].cert.bits);
  // the unscaled family is not below 1e-30: the test can fail
  CHECK_FALSE(bmp::upper(rows[0].cert.loss) < Mpfr("1e-30"));
}

TEST_CASE("P3 rows and table for a small size") {
  const auto rows = relu_certificate_rows({{5, 4}});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].verdict == "VERIFIED");
  CHECK(rows[0].evidence == "EXACT");
  const Table t = p3_table(rows);
  CHECK(t.columns.size() == 6u);
  CHECK(t.rows[0][2].text == "VERIFIED");
  // the note states the checker's argument (coefficients, kernel), not an
  // affinely spanning set of content points, which it does not use
  REQUIRE(t.notes.size() == 1u);
  CHECK(t.notes[0].find("kernel") != std::string::npos);
  CHECK(t.notes[0].find("content block") != std::string::npos);
  CHECK(t.notes[0].find("affinely spanning") == std::string::npos);
}

}  // namespace
}  // namespace sinkcert::theorems

namespace sinkcert::theorems {
namespace {

TEST_CASE("appendix document inputs every table and figure and compiles from two folders") {
  RunInfo info;
  info.command_line = "sinkcert appendix";
  info.revision = "r1";
  info.time_utc = "2026-11-29T00:00:00Z";
  info.precision = "see each table";
  const std::string doc = appendix_document({"tables/p1_sink_loss", "tables/p3_relu_certificate"},
                                            {"figures/f1_sink_precision.pdf"}, info, "results");
  CHECK(doc.find("\\documentclass[11pt]{article}") != std::string::npos);
  CHECK(doc.find("\\usepackage{booktabs}") != std::string::npos);
  CHECK(doc.find("\\def\\input@path{{./}{results/}}") != std::string::npos);
  CHECK(doc.find("\\graphicspath{{./}{results/}}") != std::string::npos);
  CHECK(doc.find("\\input{tables/p1_sink_loss}\n\\input{tables/p3_relu_certificate}\n") !=
        std::string::npos);
  CHECK(doc.find("\\includegraphics[width=0.9\\linewidth]{figures/f1_sink_precision.pdf}") !=
        std::string::npos);
  CHECK(doc.find("% command_line: sinkcert appendix\n% revision: r1\n") == 32);
  CHECK(doc.substr(doc.size() - 15) == "\\end{document}\n");
}

TEST_CASE("P1 table layout: certified interval, bits, four precisions with digits") {
  PrecisionScope scope(256);
  PrecisionRow row;
  row.beta = 40;
  row.deficit = Mpfi(Mpfr("6.372531e-17"), Mpfr("6.372532e-17"));
  row.loss = row.deficit;
  row.loss_bits = row.deficit_bits = 384;
  row.loss_digits = row.deficit_digits = 6;
  row.deficit_numeric = {{"double (53)", 53, Mpfr(0), 0},
                         {"MPFR (257)", 257, Mpfr("6.3725315e-17"), 6}};
  row.loss_numeric = row.deficit_numeric;
  const Table t = p1_bos_table({row}, Task{16, 16, TriggerRange::kPaper});
  CHECK(t.name == "p1_sink_bos");
  REQUIRE(t.rows.size() == 1u);
  CHECK(t.rows[0][0].text == "40");
  CHECK(t.rows[0][1].text == "[6.37253e-17, 6.37254e-17]");
  CHECK(t.rows[0][2].text == "384");
  CHECK(t.rows[0][3].text == "0 (0)");
  CHECK(t.rows[0][4].text == "6.37e-17 (>=6)");
  CHECK(t.rows[0][4].latex == "$6.37\\times 10^{-17}$ ($\\geq$6)");
  CHECK(t.columns[3].text == "double (53) NUMERIC(53)");
}

}  // namespace
}  // namespace sinkcert::theorems

namespace sinkcert::theorems {
namespace {

TEST_CASE("P2 hook reads search-model weight files and certifies them") {
  namespace fs = std::filesystem;
  const std::string dir = std::string(SINKCERT_BINARY_DIR) + "/precision_tables_test_p2";
  fs::remove_all(dir);
  CHECK(search_model_rows(dir, 1.0).empty());  // a missing folder is no error
  // a recorded loss above the true E = 1.3618e-4 (as a double search could
  // write near its noise floor): P2 must not print it
  write_weight_file(
      dir + "/sink5.json",
      weight_file_from_model(sink_family<double>(5, 10.0), {{"L", 4}, {"worst_case_loss", 2e-4}}));
  write_file_atomically(dir + "/broken.json", "{not json");
  const auto rows = search_model_rows(dir, 10.0);
  REQUIRE(rows.size() == 1u);  // the broken file is skipped
  CHECK(rows[0].L == 4);
  // re-evaluated and certified at its witness: 1.3618e-4 rounded down
  CHECK(rows[0].search_loss == "1.361e-04");
  REQUIRE(rows[0].bounded);
  CHECK(rows[0].bound.verdict == Verdict::kVerified);
  PrecisionScope scope(256);
  const Mpfr truth = Mpfr(3) / (bmp::exp(Mpfr(10)) + 3);
  CHECK(rows[0].bound.lower <= truth);
  CHECK(rows[0].bound.upper >= truth);
  CHECK(Mpfr(rows[0].search.certified) <= truth);
  CHECK(bmp::lower(rows[0].witness.loss) <= truth);
  CHECK(bmp::upper(rows[0].witness.loss) >= truth);
  const Table t = p2_table(rows, dir);
  CHECK(t.rows.size() == 1u);
  CHECK(t.rows[0][0].text == "sink5.json");
}

}  // namespace
}  // namespace sinkcert::theorems
