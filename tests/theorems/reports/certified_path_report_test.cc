// SPDX-License-Identifier: MIT
#include "theorems/reports/certified_path_report.h"

#include <doctest/doctest.h>

#include <stdexcept>

#include "src/constructions.h"
#include "tests/test_util.h"

namespace sinkcert::theorems::reports {
namespace {

// The sink family's E and 1 - min BOS on T(n, L): both (L-1) / (e^beta + L-1).
Mpfr sink_value(int L, double beta) { return Mpfr(L - 1) / (bmp::exp(Mpfr(beta)) + (L - 1)); }

CertifiedPathModel sink_model(double beta) {
  const Task task{5, 4, TriggerRange::kPaper};
  PrecisionScope scope(256);
  std::ostringstream stage;
  stage << "beta = " << beta;
  return {"sink family", stage.str(), task, sink_family<Mpfr>(5, Mpfr(beta)), std::nullopt};
}

TEST_CASE("rows: both enclosures hold the sink family's closed form, and the cells show them") {
  const std::vector<CertifiedPathRow> rows =
      certified_path_rows({sink_model(10.0), sink_model(60.0)}, CertifiedPathOptions{});
  REQUIRE(rows.size() == 2u);
  for (const auto& [row, beta] : {std::pair{rows[0], 10.0}, std::pair{rows[1], 60.0}}) {
    PrecisionScope high(1024);
    const Mpfr truth = sink_value(4, beta);
    INFO("beta " << beta);
    CHECK(row.loss.lower <= truth);
    CHECK(row.loss.upper >= truth);
    CHECK(row.bos.deficit_lower <= truth);
    CHECK(row.bos.deficit_upper >= truth);
  }
  const Table t = certified_path_table(rows);
  CHECK(t.name == "c1_certified_path");
  REQUIRE(t.rows.size() == 2u);
  // 3 / (e^10 + 3) = 1.36181e-4 in both enclosure columns, both gaps reached
  // (no remark: both gaps reached)
  CHECK(t.rows[0][3].text == "[1.361e-04, 1.362e-04]");
  CHECK(t.rows[0][5].text == "[1.361e-04, 1.362e-04]");
  CHECK(t.rows[0][0].text == "sink family, beta = 10");
  // 3 / (e^60 + 3) = 2.6205e-26
  CHECK(t.rows[1][5].text.find("e-26") != std::string::npos);
  CHECK(t.rows[1][1].text == "5");
  CHECK(t.rows[1][2].text == "4");
}

TEST_CASE("a loss enclosed beforehand is used as given, not recomputed") {
  CertifiedPathModel m = sink_model(10.0);
  bounds::WorstCaseBound given;
  {
    PrecisionScope scope(128);
    given.lower = Mpfr(0.25);
    given.upper = Mpfr(0.5);
  }
  given.relative_gap = 1.0;
  given.bits = 77;
  given.budget_exhausted = true;
  m.loss = given;
  const auto rows = certified_path_rows({m}, CertifiedPathOptions{});
  const Table t = certified_path_table(rows);
  // a bound stopped short says why, under the enclosure in LaTeX
  CHECK(t.rows[0][3].text == "[2.500e-01, 5.000e-01] (budget exhausted)");
  CHECK(t.rows[0][3].latex.find("{\\footnotesize budget exhausted}") != std::string::npos);
  CHECK(t.rows[0][7].text == "77 / 128");
  // the BOS column is the BOS bound's own, not the loss
  CHECK(t.rows[0][5].text == "[1.361e-04, 1.362e-04]");
  const Figure f = certified_path_figure(rows);
  CHECK(f.rows[0][2] == "2.50000e-01");
  CHECK(f.rows[0][3] == "5.00000e-01");
  CHECK(f.rows[0][4] == "1.36181e-04");
  CHECK(f.rows[0][6] == "3.53553e-01");  // the geometric middle sqrt(0.25 * 0.5)
}

TEST_CASE("figure: error bars from the enclosures, values gnuplot cannot hold are missing") {
  // beta = 800: 3 / (e^800 + 3) = 1.1e-347, below the double range
  const auto rows =
      certified_path_rows({sink_model(10.0), sink_model(800.0)}, CertifiedPathOptions{});
  const Figure f = certified_path_figure(rows);
  CHECK(f.name == "f2_certified_path");
  REQUIRE(f.rows.size() == 2u);
  REQUIRE(f.columns.size() == 8u);
  CHECK(f.rows[0][1] == "5");
  CHECK(f.rows[0][2] == "1.36181e-04");  // E lower, rounded to nearest
  CHECK(f.rows[0][5] == "1.36181e-04");  // deficit upper
  CHECK(f.rows[1][4] == "?");
  CHECK(f.rows[1][7] == "?");
  CHECK(f.plot.find("xyerrorbars") != std::string::npos);
}

TEST_CASE("a model the bounds refuse is an error, not a row") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> r =
      testing::random_model(5, AttentionKind::kSoftmax, 0.5, 1, 2, 1, ModelKind::kResidual);
  CertifiedPathModel m{"residual", "search (double)", task, r.cast<Rational>(), std::nullopt};
  CHECK_THROWS_AS(certified_path_rows({m}, CertifiedPathOptions{}), std::invalid_argument);
}

}  // namespace
}  // namespace sinkcert::theorems::reports
