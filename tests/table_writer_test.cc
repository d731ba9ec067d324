// SPDX-License-Identifier: MIT
#include "src/table_writer.h"

#include <doctest/doctest.h>

namespace sinkcert {
namespace {

RunInfo fixed_info() {
  RunInfo info;
  info.command_line = "sinkcert appendix --out results";
  info.revision = "abc123";
  info.time_utc = "2026-11-29T00:00:00Z";
  info.seed = 7;
  info.precision = "mpfi 257 bits";
  return info;
}

Table small_table() {
  Table t;
  t.name = "demo";
  t.caption = "Loss & BOS_mass, 100%";
  t.columns = {"beta", Cell("loss", "$E$"), "note"};
  t.rows = {{"5", Cell("1.0e-2", "$1.0\\times 10^{-2}$"), "a, \"b\""},
            {"10", "6.8e-5", "plain"}};
  t.notes = {"CERTIFIED: outward rounded"};
  return t;
}

TEST_CASE("LaTeX writer: golden output with booktabs and provenance") {
  const std::string expected =
      "% sinkcert table demo\n"
      "% command_line: sinkcert appendix --out results\n"
      "% revision: abc123\n"
      "% time_utc: 2026-11-29T00:00:00Z\n"
      "% seed: 7\n"
      "% precision: mpfi 257 bits\n"
      "\\begin{table}[htbp]\n"
      "\\centering\n"
      "\\caption{Loss \\& BOS\\_mass, 100\\%}\n"
      "\\label{tab:demo}\n"
      "\\begin{tabular}{lrr}\n"
      "\\toprule\n"
      "beta & $E$ & note \\\\\n"
      "\\midrule\n"
      "5 & $1.0\\times 10^{-2}$ & a, \"b\" \\\\\n"
      "10 & 6.8e-5 & plain \\\\\n"
      "\\bottomrule\n"
      "\\end{tabular}\n"
      "\\par\\smallskip{\\footnotesize CERTIFIED: outward rounded}\n"
      "\\end{table}\n";
  CHECK(to_latex(small_table(), fixed_info()) == expected);
}

TEST_CASE("LaTeX writer: fit_width wraps the tabular in resizebox") {
  Table t = small_table();
  t.fit_width = true;
  t.alignment = "ccc";
  const std::string out = to_latex(t, fixed_info());
  CHECK(out.find("\\resizebox{\\linewidth}{!}{%\n\\begin{tabular}{ccc}") != std::string::npos);
  CHECK(out.find("\\end{tabular}}\n") != std::string::npos);
}

TEST_CASE("CSV writer: golden output, RFC 4180 quoting") {
  const std::string expected =
      "# sinkcert table demo\n"
      "# command_line: sinkcert appendix --out results\n"
      "# revision: abc123\n"
      "# time_utc: 2026-11-29T00:00:00Z\n"
      "# seed: 7\n"
      "# precision: mpfi 257 bits\n"
      "beta,loss,note\n"
      "5,1.0e-2,\"a, \"\"b\"\"\"\n"
      "10,6.8e-5,plain\n";
  CHECK(to_csv(small_table(), fixed_info()) == expected);
}

TEST_CASE("JSON writer: golden output") {
  const std::string expected =
      R"({"caption":"Loss & BOS_mass, 100%","columns":["beta","loss","note"],)"
      R"("notes":["CERTIFIED: outward rounded"],"rows":[["5","1.0e-2","a, \"b\""],)"
      R"(["10","6.8e-5","plain"]],"run_info":{"command_line":"sinkcert appendix --out results",)"
      R"("precision":"mpfi 257 bits","revision":"abc123","seed":7,"time_utc":"2026-11-29T00:00:00Z"},)"
      R"("table":"demo"})";
  CHECK(to_json(small_table(), fixed_info()).dump() == expected);
}

TEST_CASE("LaTeX escaping covers every special character") {
  CHECK(latex_escape("a&b%c$d#e_f{g}h~i^j\\k") ==
        "a\\&b\\%c\\$d\\#e\\_f\\{g\\}h\\textasciitilde{}i\\textasciicircum{}j\\textbackslash{}k");
  CHECK(latex_escape("|A| -> s A, x < 1") ==
        "\\textbar{}A\\textbar{} -\\textgreater{} s A, x \\textless{} 1");
}

TEST_CASE("directed formatting: the printed interval still encloses the value") {
  PrecisionScope scope(128);
  const Mpfr third = Mpfr(1) / 3;
  CHECK(format_down(third, 3) == "3.33e-01");
  CHECK(format_up(third, 3) == "3.34e-01");
  CHECK(format_nearest(-third, 3) == "-3.33e-01");
  CHECK(format_up(-third, 3) == "-3.33e-01");
  CHECK(format_down(-third, 3) == "-3.34e-01");
  const Mpfi x(Mpfr("6.3718e-17"), Mpfr("6.3722e-17"));
  CHECK(format_interval(x, 3) == "[6.37e-17, 6.38e-17]");
  CHECK(format_interval(Mpfi(Mpfr("1e-100"), Mpfr("1e100")), 2) == "[9.9e-101, 1.0e+100]");
}

TEST_CASE("numbers and intervals in LaTeX form") {
  CHECK(latex_number("6.37e-17") == "$6.37\\times 10^{-17}$");
  CHECK(latex_number("1.5e+00") == "$1.5$");
  CHECK(latex_number("0") == "$0$");
  CHECK(latex_interval("[6.37e-17, 6.38e-17]") == "$[6.37\\times 10^{-17},\\ 6.38\\times 10^{-17}]$");
  CHECK(latex_interval("not an interval") == "not an interval");
}

TEST_CASE("write_table writes the three files") {
  const std::string dir = std::string(SINKCERT_BINARY_DIR) + "/table_writer_test_out";
  const auto paths = write_table(small_table(), fixed_info(), dir);
  REQUIRE(paths.size() == 3);
  CHECK(paths[0] == dir + "/demo.tex");
  CHECK(paths[2] == dir + "/demo.json");
}

}  // namespace
}  // namespace sinkcert
