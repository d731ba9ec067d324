// SPDX-License-Identifier: MIT
#include "src/table_writer.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "src/input_error.h"
#include "src/output_files.h"
#include "src/subprocess.h"

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
  t.rows = {{"5", Cell("1.0e-2", "$1.0\\times 10^{-2}$"), "a, \"b\""}, {"10", "6.8e-5", "plain"}};
  t.notes = {"CERTIFIED: outward rounded"};
  return t;
}

Figure small_figure() {
  Figure f;
  f.name = "demo_fig";
  f.caption = "Demo curve.";
  f.evidence = "NUMERIC(53)";
  f.columns = {"x", "y", "the model"};
  f.rows = {{"1", "2", "path"}, {"2", "?", "frontier delta=0.5"}};
  f.plot = "plot data using 1:2 title 'y'\n";
  return f;
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

TEST_CASE("LaTeX writer: a landscape table is a sidewaystable, never scaled down") {
  Table t = small_table();
  t.landscape = true;
  t.alignment = "ccc";
  const std::string out = to_latex(t, fixed_info());
  CHECK(out.find("\\begin{sidewaystable}\n\\centering\n") != std::string::npos);
  CHECK(out.find("\\begin{tabular}{ccc}") != std::string::npos);
  CHECK(out.substr(out.size() - 20) == "\\end{sidewaystable}\n");
  CHECK(out.find("resizebox") == std::string::npos);
  // and the portrait form is not one
  CHECK(to_latex(small_table(), fixed_info()).find("sidewaystable") == std::string::npos);
}

TEST_CASE("CSV writer: golden output, RFC 4180 quoting") {
  const std::string expected =
      "# sinkcert table demo\n"
      "# command_line: sinkcert appendix --out results\n"
      "# revision: abc123\n"
      "# time_utc: 2026-11-29T00:00:00Z\n"
      "# seed: 7\n"
      "# precision: mpfi 257 bits\n"
      "# caption: Loss & BOS_mass, 100%\n"
      "# note: CERTIFIED: outward rounded\n"
      "beta,loss,note\n"
      "5,1.0e-2,\"a, \"\"b\"\"\"\n"
      "10,6.8e-5,plain\n";
  CHECK(to_csv(small_table(), fixed_info()) == expected);
}

TEST_CASE("JSON writer: golden output") {
  const std::string expected =
      R"({"caption":"Loss & BOS_mass, 100%","columns":["beta","loss","note"],)"
      R"("notes":["CERTIFIED: outward rounded"],)"
      R"("provenance":{"command_line":"sinkcert appendix --out results",)"
      R"("precision":"mpfi 257 bits","revision":"abc123","seed":7,"time_utc":"2026-11-29T00:00:00Z"},)"
      R"("rows":[["5","1.0e-2","a, \"b\""],["10","6.8e-5","plain"]],"table":"demo",)"
      R"("values":[[5,0.01,null],[10,6.8e-05,null]]})";
  CHECK(to_json(small_table(), fixed_info()).dump() == expected);
}

TEST_CASE("LaTeX forms of the caption and notes: in the .tex only, golden") {
  Table t = small_table();
  t.caption = "Loss at beta <= 10";
  t.caption_latex = "Loss at $\\beta\\le 10$";
  t.notes = {"eps*(delta) is no bound", "plain & escaped", "third"};
  t.notes_latex = {"$\\varepsilon^*(\\delta)$ is no bound", ""};  // 2nd empty, 3rd missing
  const std::string expected =
      "% sinkcert table demo\n"
      "% command_line: sinkcert appendix --out results\n"
      "% revision: abc123\n"
      "% time_utc: 2026-11-29T00:00:00Z\n"
      "% seed: 7\n"
      "% precision: mpfi 257 bits\n"
      "\\begin{table}[htbp]\n"
      "\\centering\n"
      "\\caption{Loss at $\\beta\\le 10$}\n"
      "\\label{tab:demo}\n"
      "\\begin{tabular}{lrr}\n"
      "\\toprule\n"
      "beta & $E$ & note \\\\\n"
      "\\midrule\n"
      "5 & $1.0\\times 10^{-2}$ & a, \"b\" \\\\\n"
      "10 & 6.8e-5 & plain \\\\\n"
      "\\bottomrule\n"
      "\\end{tabular}\n"
      "\\par\\smallskip{\\footnotesize $\\varepsilon^*(\\delta)$ is no bound}\n"
      "\\par\\smallskip{\\footnotesize plain \\& escaped}\n"
      "\\par\\smallskip{\\footnotesize third}\n"
      "\\end{table}\n";
  CHECK(to_latex(t, fixed_info()) == expected);
  // CSV and JSON keep the plain text
  const std::string csv = to_csv(t, fixed_info());
  CHECK(csv.find("# caption: Loss at beta <= 10\n# note: eps*(delta) is no bound\n") !=
        std::string::npos);
  CHECK(csv.find("varepsilon") == std::string::npos);
  const nlohmann::json j = to_json(t, fixed_info());
  CHECK(j["caption"] == "Loss at beta <= 10");
  CHECK(j["notes"][0] == "eps*(delta) is no bound");
  CHECK(j.dump().find("varepsilon") == std::string::npos);
}

TEST_CASE("a figure's caption in LaTeX: its raw form, or the plain one escaped") {
  Figure f = small_figure();
  f.caption = "1 - a_i0 against beta.";
  CHECK(figure_caption_latex(f) == "1 - a\\_i0 against beta. Evidence: NUMERIC(53).");
  f.caption_latex = "$1-a_{i0}$ against $\\beta$.";
  CHECK(figure_caption_latex(f) == "$1-a_{i0}$ against $\\beta$. Evidence: NUMERIC(53).");
  // the data and the script keep the plain caption
  CHECK(figure_data(f, fixed_info()).find("# caption: 1 - a_i0 against beta. Evidence:") !=
        std::string::npos);
  CHECK(figure_script(f, fixed_info()).find("beta$") == std::string::npos);
}

TEST_CASE("table cells as numbers for scripts, the display strings unchanged") {
  CHECK(cell_value("16") == 16);
  CHECK(cell_value("1.361e-04").get<double>() == 1.361e-04);
  CHECK(cell_value("[2.01e-11, 2.02e-11]") == nlohmann::json::array({2.01e-11, 2.02e-11}));
  CHECK(cell_value("2.46e-11 (budget exhausted)").get<double>() == 2.46e-11);
  for (const char* text : {"-", "VERIFIED", "n/a", "inf", "nan", "1.2.3", "[1, x]", "5,4"}) {
    INFO(text);
    CHECK(cell_value(text).is_null());
  }
}

TEST_CASE("the former provenance key run_info is still read") {
  const std::string dir = std::string(SINKCERT_BINARY_DIR) + "/table_writer_test_old_key";
  std::filesystem::create_directories(dir);
  nlohmann::json j = to_json(small_table(), fixed_info());
  j["run_info"] = j["provenance"];
  j.erase("provenance");
  j.erase("values");  // a file written before the values
  write_file_atomically(dir + "/old.json", j.dump());
  RunInfo info;
  const Table t = read_table_json(dir + "/old.json", &info);
  CHECK(info.revision == "abc123");
  CHECK(t.rows.size() == 2u);
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
  PrecisionScope scope(128);
  // a common power of ten is factored out; the ends are rounded outward
  const Mpfi x(Mpfr("6.3718e-17"), Mpfr("6.3722e-17"));
  CHECK(latex_interval(x, 3) == "$[6.37,\\ 6.38]\\times 10^{-17}$");
  CHECK(latex_interval(Mpfi(Mpfr("0.00999"), Mpfr("0.0101")), 3) ==
        "$[9.99\\times 10^{-3},\\ 1.01\\times 10^{-2}]$");
  CHECK(latex_interval(Mpfi(Mpfr("1.5"), Mpfr("2.5")), 2) == "$[1.5,\\ 2.5]$");
  const Cell c = interval_cell(x, 3);
  CHECK(c.text == format_interval(x, 3));
  CHECK(c.latex == latex_interval(x, 3));
}

TEST_CASE("one provenance header: the same keys in every format") {
  const std::string keys =
      "command_line: sinkcert appendix --out results\n"
      "# revision: abc123\n"
      "# time_utc: 2026-11-29T00:00:00Z\n"
      "# seed: 7\n"
      "# precision: mpfi 257 bits\n";
  CHECK(provenance_header("# ", "sinkcert table demo", fixed_info()) ==
        "# sinkcert table demo\n# " + keys);
  const Figure f = small_figure();
  CHECK(figure_data(f, fixed_info()).rfind("# sinkcert figure data demo_fig\n# " + keys, 0) == 0);
  CHECK(figure_script(f, fixed_info()).rfind("# sinkcert figure script demo_fig\n# " + keys, 0) ==
        0);
  CHECK(to_csv(small_table(), fixed_info()).rfind("# sinkcert table demo\n# " + keys, 0) == 0);
  // LaTeX: the same lines behind "% "
  std::string latex_keys = keys;
  for (std::size_t p = 0; (p = latex_keys.find("# ", p)) != std::string::npos;) {
    latex_keys.replace(p, 2, "% ");
  }
  CHECK(to_latex(small_table(), fixed_info()).rfind("% sinkcert table demo\n% " + latex_keys, 0) ==
        0);
  // the JSON form has exactly these keys
  const nlohmann::json j = to_json(small_table(), fixed_info())["provenance"];
  CHECK(j.size() == 5u);
  for (const char* k : {"command_line", "revision", "time_utc", "seed", "precision"}) {
    CHECK(j.contains(k));
  }
  // a newline in a value cannot start a line of its own
  RunInfo info = fixed_info();
  info.command_line = "a\nb";
  CHECK(provenance_header("# ", "t", info).find("# command_line: a b\n") != std::string::npos);
}

TEST_CASE("figure data: whitespace columns, quoted text, missing values") {
  const std::string data = figure_data(small_figure(), fixed_info());
  CHECK(data.find("# caption: Demo curve. Evidence: NUMERIC(53).\n") != std::string::npos);
  CHECK(data.find("\n# x y \"the model\"\n1 2 path\n2 ? \"frontier delta=0.5\"\n") !=
        std::string::npos);
  const std::string script = figure_script(small_figure(), fixed_info());
  CHECK(script.find("data = 'demo_fig.dat'\n") != std::string::npos);
  CHECK(script.find("set output 'demo_fig.'.format\n") != std::string::npos);
  const std::string last = "\nplot data using 1:2 title 'y'\n";
  CHECK(script.substr(script.size() - last.size()) == last);
}

TEST_CASE("write_figure renders with gnuplot, and reports a figure it cannot render") {
  namespace fs = std::filesystem;
  const std::string dir = std::string(SINKCERT_BINARY_DIR) + "/table_writer_test_figure";
  fs::remove_all(dir);
  fs::create_directories(dir);
  Figure good = small_figure();
  good.png = true;
  const FigureFiles ok = write_figure(good, fixed_info(), dir);
  CHECK(fs::exists(dir + "/demo_fig.dat"));
  CHECK(fs::exists(dir + "/demo_fig.gp"));
  if (run_program({"gnuplot", "--version"}).ok()) {
    CHECK(ok.failures.empty());
    CHECK(ok.pdf == dir + "/demo_fig.pdf");
    CHECK(fs::file_size(dir + "/demo_fig.pdf") > 0);
    CHECK(fs::file_size(dir + "/demo_fig.png") > 0);
    CHECK(ok.written.size() == 4u);
  }
  // a plot gnuplot rejects: no PDF is left behind, and the failure is named
  Figure bad = small_figure();
  bad.name = "bad_fig";
  bad.plot = "plot data using 1:2 with nonsense\n";
  const FigureFiles no = write_figure(bad, fixed_info(), dir);
  CHECK(no.pdf.empty());
  REQUIRE(no.failures.size() == 1u);
  CHECK(no.failures[0].rfind("bad_fig.pdf (", 0) == 0);
  CHECK_FALSE(fs::exists(dir + "/bad_fig.pdf"));
  CHECK(fs::exists(dir + "/bad_fig.dat"));
  fs::remove_all(dir);
}

TEST_CASE("write_table writes the three files") {
  const std::string dir = std::string(SINKCERT_BINARY_DIR) + "/table_writer_test_out";
  const auto paths = write_table(small_table(), fixed_info(), dir);
  REQUIRE(paths.size() == 3);
  CHECK(paths[0] == dir + "/demo.tex");
  CHECK(paths[2] == dir + "/demo.json");
}

TEST_CASE("read_table_json reads back what write_table wrote, and names a bad field") {
  const std::string dir = std::string(SINKCERT_BINARY_DIR) + "/table_writer_test_read";
  const auto paths = write_table(small_table(), fixed_info(), dir);
  RunInfo info;
  const Table t = read_table_json(paths[2], &info);
  CHECK(t.name == "demo");
  CHECK(t.caption == small_table().caption);
  REQUIRE(t.columns.size() == 3);
  CHECK(t.columns[1].text == "loss");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0][1].text == "1.0e-2");
  CHECK(t.rows[0][2].text == "a, \"b\"");
  CHECK(t.notes == small_table().notes);
  CHECK_FALSE(t.landscape);
  CHECK(info.command_line == fixed_info().command_line);
  CHECK(info.revision == "abc123");
  CHECK(info.seed == 7);
  CHECK(info.precision == "mpfi 257 bits");
  // written again, the same CSV (the text cells and the provenance survive)
  CHECK(to_csv(t, info) == to_csv(small_table(), fixed_info()));
  // a row shorter than the header: the error names the file and rows[1]
  nlohmann::json j = to_json(small_table(), fixed_info());
  j["rows"][1].erase(2);
  const std::string bad = dir + "/bad.json";
  write_file_atomically(bad, j.dump());
  try {
    read_table_json(bad, nullptr);
    FAIL("a short row was accepted");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find(bad) != std::string::npos);
    CHECK(what.find("rows[1]") != std::string::npos);
    CHECK(what.find("3 text cells") != std::string::npos);
  }
}

}  // namespace
}  // namespace sinkcert
