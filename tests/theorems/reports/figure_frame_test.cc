// SPDX-License-Identifier: MIT
#include "theorems/reports/figure_frame.h"

#include <doctest/doctest.h>

#include <stdexcept>

namespace sinkcert::theorems::reports {
namespace {

const std::vector<FigureText>& texts() {
  static const std::vector<FigureText> t = {
      {"path", std::string("Path") + kStudyMark + ": E falls.",
       std::string("Path") + kStudyMark + ": $E$ falls.", "SEARCH(lower bound)"},
      {"plain", std::string("Plain") + kStudyMark + ".", "", "NUMERIC(53)"}};
  return t;
}

TEST_CASE("a figure frame: name, caption with the study, LaTeX caption, evidence") {
  const Figure f = figure_frame("path", "Demo", " (n = 5, L_max)", texts());
  CHECK(f.name == "path");
  CHECK(f.png);
  CHECK(f.caption == "Path (n = 5, L_max): E falls.");
  // the study's text is plain: escaped inside the LaTeX caption
  CHECK(f.caption_latex == "Path (n = 5, L\\_max): $E$ falls.");
  CHECK(f.evidence == "SEARCH(lower bound)");
  CHECK(figure_caption_latex(f) ==
        "Path (n = 5, L\\_max): $E$ falls. Evidence: SEARCH(lower bound).");
  // without a LaTeX form the document escapes the plain caption
  const Figure g = figure_frame("plain", "Demo", " (1 < 2)", texts());
  CHECK(g.caption == "Plain (1 < 2).");
  CHECK(g.caption_latex.empty());
  CHECK(figure_caption_latex(g) == "Plain (1 \\textless{} 2). Evidence: NUMERIC(53).");
  CHECK(f.rows.empty());
  CHECK(f.plot.empty());
}

TEST_CASE("a figure the study does not have is refused by name") {
  try {
    figure_frame("nuance", "Demo", "", texts());
    FAIL("an unknown figure got a frame");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "no Demo figure called \"nuance\"");
  }
}

}  // namespace
}  // namespace sinkcert::theorems::reports
