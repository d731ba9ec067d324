// SPDX-License-Identifier: MIT
#include "theorems/reports/theorem2_report.h"

#include <doctest/doctest.h>

namespace sinkcert::theorems::reports {
namespace {

studies::Theorem2Study made_up_study() {
  studies::Theorem2Study st;
  st.options.task = Task{5, 4, TriggerRange::kPaper};
  st.runs.resize(2);
  for (studies::CapScope scope : {studies::CapScope::kAll, studies::CapScope::kOne}) {
    studies::Theorem2FrontierPoint p;
    p.scope = scope;
    p.delta = 0.1;
    p.ceiling = 0.9;
    p.eps = scope == studies::CapScope::kAll ? 0.2 : 0.1;
    p.feasible = true;
    st.frontier.push_back(p);
  }
  return st;
}

TEST_CASE("Theorem 2 frontier figure: eps_all and eps_one as subscripts, not a stray one") {
  const Figure f = theorem2_frontier_figure(made_up_study());
  REQUIRE(f.rows.size() == 2u);
  // enhanced text: the whole word is the subscript
  CHECK(f.plot.find("title '{/Symbol e}_{all} (every head capped)'") != std::string::npos);
  CHECK(f.plot.find("title '{/Symbol e}_{one} (one head capped)'") != std::string::npos);
  // an unbraced underscore would subscript one letter ("eps" then "a" low, "ll")
  CHECK(f.plot.find("eps_all") == std::string::npos);
  CHECK(f.plot.find("eps_one") == std::string::npos);
  // the caption: plain text, and LaTeX math for documents
  CHECK(f.caption.find("(eps_all)") != std::string::npos);
  CHECK(f.caption_latex.find("($\\varepsilon_{\\mathrm{all}}$)") != std::string::npos);
  CHECK(f.caption_latex.find("capped at $1-\\delta$") != std::string::npos);
  // no point certified: no legend entry for certified upper ends
  CHECK(f.plot.find("(CERTIFIED)") == std::string::npos);
  studies::Theorem2Study st = made_up_study();
  st.frontier[1].certificate.loss = Verdict::kVerified;
  st.frontier[1].certificate.cap = Verdict::kVerified;
  st.frontier[1].certificate.loss_upper = 1e-7;
  const Figure g = theorem2_frontier_figure(st);
  CHECK(g.plot.find("title 'upper bound on E of the {/Symbol e}_{one} model (CERTIFIED)'\n") !=
        std::string::npos);
  CHECK(g.rows[1][3] == studies::format_double(1e-7));
}

TEST_CASE("Theorem 2 path figure: each start's sink-score curve in its worst case's colour") {
  const Figure f = theorem2_path_figure(made_up_study());
  CHECK(f.plot.find(":3 with linespoints linecolor s+1") != std::string::npos);
  CHECK(f.plot.find(":(1-$4) with lines linecolor s+1 dashtype 2") != std::string::npos);
  CHECK(f.plot.find("set ylabel 'value'") == std::string::npos);
  CHECK(f.plot.find("set ylabel 'worst case E (solid); 1 - sink score") != std::string::npos);
}

}  // namespace
}  // namespace sinkcert::theorems::reports
