// SPDX-License-Identifier: MIT
#include "theorems/reports/precision_report.h"

#include <doctest/doctest.h>

namespace sinkcert::theorems::reports {
namespace {

studies::PrecisionRow made_up_row() {
  PrecisionScope scope(256);
  studies::PrecisionRow row;
  row.beta = 40;
  row.deficit = Mpfi(Mpfr("6.372531e-17"), Mpfr("6.372532e-17"));
  row.loss = row.deficit;
  row.loss_bits = row.deficit_bits = 384;
  row.loss_digits = row.deficit_digits = 6;
  row.deficit_numeric = {{"double (53)", 53, Mpfr(0), 0},
                         {"MPFR (257)", 257, Mpfr("6.3725315e-17"), 6}};
  row.loss_numeric = row.deficit_numeric;
  return row;
}

TEST_CASE("P1 table: certified interval, bits, precisions with digits; landscape, legible") {
  const Table t = p1_bos_table({made_up_row()}, Task{16, 16, TriggerRange::kPaper});
  CHECK(t.name == "p1_sink_bos");
  REQUIRE(t.rows.size() == 1u);
  CHECK(t.rows[0][0].text == "40");
  CHECK(t.rows[0][1].text == "[6.37253e-17, 6.37254e-17]");
  CHECK(t.rows[0][1].latex == "$[6.37253,\\ 6.37254]\\times 10^{-17}$");
  CHECK(t.rows[0][2].text == "384");
  CHECK(t.rows[0][3].text == "0 (0)");
  CHECK(t.rows[0][4].text == "6.37e-17 (>=6)");
  CHECK(t.rows[0][4].latex == "$6.37\\times 10^{-17}$ ($\\geq$6)");
  // one line in CSV, two in LaTeX
  CHECK(t.columns[3].text == "double (53) NUMERIC(53)");
  CHECK(t.columns[3].latex ==
        "\\begin{tabular}[b]{@{}c@{}}double (53)\\\\ NUMERIC(53)\\end{tabular}");
  CHECK(t.landscape);
  RunInfo info;
  CHECK(to_latex(t, info).find("resizebox") == std::string::npos);
}

TEST_CASE("F1: data per beta, a computed 0 missing, caption with evidence") {
  const Figure f = p1_figure({made_up_row()}, Task{16, 16, TriggerRange::kPaper});
  CHECK(f.name == "f1_sink_precision");
  REQUIRE(f.rows.size() == 1u);
  CHECK(f.rows[0] == std::vector<std::string>{"40", "6.37253e-17", "?", "6.37253e-17"});
  CHECK(f.columns[2] == "double (53)");
  CHECK(f.caption.find("1 - min BOS mass against beta") != std::string::npos);
  CHECK(f.evidence.find("CERTIFIED") != std::string::npos);
  CHECK(f.evidence.find("NUMERIC(p)") != std::string::npos);
}

TEST_CASE("P1 notes say what each table's column is; LaTeX math in the .tex only") {
  const Task task{16, 16, TriggerRange::kPaper};
  const Table bos = p1_bos_table({made_up_row()}, task);
  REQUIRE(bos.notes.size() == 2u);
  // the BOS table's column is the BOS deficit, not the loss
  CHECK(bos.notes[0].find("The column is 1 - min a_i0") == 0);
  CHECK(bos.notes[0].find("(L-1) / (e^beta + L-1)") != std::string::npos);
  CHECK(bos.notes[0].find("the loss over") == std::string::npos);
  CHECK(bos.notes[1].find("NUMERIC(p): 1 - a_i0 computed in p-bit arithmetic") == 0);
  const Table loss = p1_loss_table({made_up_row()}, task);
  REQUIRE(loss.notes.size() == 2u);
  CHECK(loss.notes[0].find("worst-case loss E over the whole content box") != std::string::npos);
  CHECK(loss.notes[0].find("a_i0") == std::string::npos);
  RunInfo info;
  const std::string tex = to_latex(bos, info);
  CHECK(tex.find("\\caption{P1: softmax sink family, n = 16, L = 16, triggers paper: "
                 "$1-\\min a_{i0}$") != std::string::npos);
  CHECK(tex.find("$(L-1)/(e^{\\beta}+L-1)$") != std::string::npos);
  CHECK(to_latex(loss, info).find("the worst-case loss $E$ over") != std::string::npos);
  // CSV and JSON keep the plain text
  CHECK(to_csv(bos, info).find("$") == std::string::npos);
  CHECK(to_json(bos, info).dump().find("\\\\min") == std::string::npos);
}

TEST_CASE("F1 marks where double fails: beta with 1 - a_i0 below 2^-53") {
  const Figure f = p1_figure({made_up_row()}, Task{16, 16, TriggerRange::kPaper});
  // (L-1) / (e^beta + L-1) = 2^-53 at beta = ln(15 (2^53 - 1)) = 39.4449 (L = 16)
  CHECK(f.plot.find("beta53 = 39.44") != std::string::npos);
  CHECK(f.plot.find("set object 1 rectangle from first beta53, graph 0 to graph 1, graph 1") !=
        std::string::npos);
  CHECK(f.plot.find("first 2**-53") != std::string::npos);
  CHECK(f.caption.find("beta > 39.4, is where the certified 1 - min BOS mass is below 2^-53") !=
        std::string::npos);
  CHECK(f.caption_latex.find("$\\beta > 39.4$") != std::string::npos);
  // a shorter sequence sinks with less: double fails earlier (ln(3 (2^53 - 1)) = 37.8)
  CHECK(p1_figure({made_up_row()}, Task{5, 4, TriggerRange::kPaper}).plot.find("beta53 = 37.8") !=
        std::string::npos);
}

TEST_CASE("P3 table: an exact zero prints as 0, a fraction as p/q") {
  studies::ReluRow zero{5, 4, Verdict::kVerified, Evidence::exact(), Rational(0), 0.001};
  studies::ReluRow third{5, 4, Verdict::kNotVerified, Evidence::exact(), Rational(1) / 3, 0.001};
  const Table t = p3_table({zero, third});
  CHECK(t.columns.size() == 6u);
  CHECK(t.rows[0][2].text == "VERIFIED");
  CHECK(t.rows[0][3].text == "EXACT");
  CHECK(t.rows[0][4].text == "0");
  CHECK(t.rows[0][4].latex == "$0$");
  CHECK(t.rows[1][2].text == "NOT VERIFIED");
  CHECK(t.rows[1][4].text == "1/3");
  CHECK(rational_cell(Rational(-6) / 4).text == "-3/2");
  CHECK(rational_cell(Rational(7)).text == "7");
  // the note states the checker's argument (coefficients, kernel), not an
  // affinely spanning set of content points, which it does not use
  REQUIRE(t.notes.size() == 1u);
  CHECK(t.notes[0].find("kernel") != std::string::npos);
  CHECK(t.notes[0].find("content block") != std::string::npos);
  CHECK(t.notes[0].find("affinely spanning") == std::string::npos);
}

TEST_CASE("P2 table: search loss rounded down, remarks on a second line in LaTeX") {
  studies::SearchModelRow r;
  r.file = "edges/n5_L4_paper/path_start0.weights.json";
  r.n = 5;
  r.L = 4;
  r.search.certified = 1.36186e-4;
  r.search.value = 5.6e-4;
  r.search.double_disagrees = true;
  r.bounded = true;
  r.bound.verdict = Verdict::kNotEnclosed;
  r.bound.budget_exhausted = true;
  {
    PrecisionScope scope(128);
    r.bound.upper = Mpfr("2.4512e-11");
    r.witness.loss = r.witness.deficit = Mpfi(Mpfr("2.011e-11"), Mpfr("2.019e-11"));
  }
  const Table t = p2_table({r}, "theorem1/");
  REQUIRE(t.rows.size() == 1u);
  CHECK(t.rows[0][0].text == r.file);
  CHECK(t.rows[0][0].latex.find("edges/n5\\_L4\\_paper/\\\\ path\\_start0") != std::string::npos);
  CHECK(t.rows[0][3].text == "1.361e-04 (double 5.6e-04)");
  CHECK(t.rows[0][4].text == "[2.01e-11, 2.02e-11]");
  CHECK(t.rows[0][6].text == "2.46e-11 (budget exhausted)");
  CHECK(t.rows[0][6].latex.find("{\\footnotesize (budget exhausted)}") != std::string::npos);
  CHECK(t.rows[0][7].text == "-");
  CHECK(t.landscape);
}

TEST_CASE("bound status names why the branch and bound stopped") {
  theorems::bounds::WorstCaseBound b;
  b.verdict = Verdict::kEnclosed;
  CHECK(bound_status(b) == "gap reached");
  b.verdict = Verdict::kNotEnclosed;
  b.upper = Mpfr(1);
  b.budget_exhausted = true;
  CHECK(bound_status(b) == "budget exhausted");
  b.precision_floor = true;
  b.bits = 192;
  CHECK(bound_status(b) == "precision floor at 192 bits");
}

}  // namespace
}  // namespace sinkcert::theorems::reports
