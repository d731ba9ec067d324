// SPDX-License-Identifier: MIT
#include "theorems/reports/row1_frontier_report.h"

#include <string>

#include "src/json_reader.h"
#include "theorems/reports/figure_frame.h"

namespace sinkcert::theorems::reports {

namespace {

// Significant digits printed: g rounded down and U_cert rounded up to 10
// (g is certified to ~1e-15, the reference script prints 12; U_cert is
// within 1e-14 of U), the ratio's upper end to 4.
constexpr int kValueDigits = 10;
constexpr int kRatioDigits = 4;

std::string size_text(int n, int L) {
  return "n = " + std::to_string(n) + ", L = " + std::to_string(L);
}

}  // namespace

std::vector<std::pair<int, int>> q1_sizes() { return {{5, 4}, {16, 16}}; }
std::vector<std::string> q1_deltas() { return {"0.5", "0.2", "0.1", "0.05", "0.02", "0.01"}; }

Table q1_table(const std::vector<studies::Row1FrontierRow>& rows) {
  Table t;
  t.name = "q1_row1_frontier";
  t.caption =
      "Q1: the row-1 frontier eps*_1(delta), the smallest worst-case loss E of a single-layer "
      "single-head softmax model (paper trigger convention) whose mean row-1 BOS mass under "
      "uniform content is at most 1 - delta: g(delta) <= eps*_1(delta) <= U_cert(delta).";
  t.caption_latex =
      "Q1: the row-1 frontier $\\varepsilon^*_1(\\delta)$, the smallest worst-case loss $E$ of a "
      "single-layer single-head softmax model (paper trigger convention) whose mean row-1 BOS "
      "mass under uniform content is at most $1-\\delta$: "
      "$g(\\delta)\\le\\varepsilon^*_1(\\delta)\\le U_{\\mathrm{cert}}(\\delta)$.";
  t.columns = {"n",
               "L",
               Cell("delta", "$\\delta$"),
               Cell("g(delta) CERTIFIED, every model", "$g(\\delta)$ CERTIFIED, every model"),
               Cell("U_cert(delta) CERTIFIED, this model",
                    "$U_{\\mathrm{cert}}(\\delta)$ CERTIFIED, this model"),
               Cell("U(delta) EXACT", "$U(\\delta)$ EXACT"),
               Cell("U_cert/g <=", "$U_{\\mathrm{cert}}/g\\le$"),
               "model file"};
  t.alignment = "rrrrrrrl";
  bool every_D = true;
  for (const studies::Row1FrontierRow& r : rows) {
    PrecisionScope scope(studies::kRow1Bits);
    const std::string g = format_down(Mpfr(r.lower.eps0), kValueDigits);
    const std::string U = format_up(r.upper.bound.upper, kValueDigits);
    const std::string ratio = format_up(r.ratio_upper, kRatioDigits);
    const std::string exact = r.U.str();
    every_D = every_D && r.upper.D_at_least_delta;
    t.rows.push_back({std::to_string(r.n), std::to_string(r.L), internal::exact_decimal(r.delta),
                      Cell(g, latex_number(g)),
                      Cell(r.upper.D_at_least_delta ? U : U + " (at D' < delta)", latex_number(U)),
                      exact, Cell(ratio, latex_number(ratio)), r.file});
  }
  t.notes = {
      "g(delta): the largest dyadic eps0 found by bisection with upper(G(eps0)) < delta, G the "
      "closed form of docs/methods.md (The row-1 frontier) enclosed in MPFI at 128 bits, "
      "printed rounded down: every model with row-1 deficit D >= delta has E >= g(delta) "
      "(CERTIFIED).",
      "U_cert(delta): the certified upper end (rounded up) of E for the model file of the row, "
      "A = s e_{n-1} e_{n-1}^T - beta e_{n-1} e_1^T - beta e_1 e_0^T, M = lambda (I - e_0 "
      "e_0^T), beta = 40, s = ln(delta/(1-delta)) rounded up and lambda = 1/(1 + alpha') "
      "rounded to 15 decimal places; its attention reads flags only, so one box per trigger "
      "is exact (verify bound). Its row-1 deficit D' = 1/(1 + e^-s) is enclosed in MPFI " +
          std::string(every_D ? "and certified >= delta in every row" : "(see the rows marked)") +
          ", so eps*_1(delta) <= U_cert(delta) (CERTIFIED for this model).",
      "U(delta) = (L-2) delta / (1 + (2L-5) delta): the family's infimum as beta -> inf "
      "(EXACT); U_cert exceeds it by the rounding of s and lambda (< 1e-14). U_cert/g: "
      "U_cert rounded up over g rounded down.",
      "Checked against scripts/row1_frontier_reference.py table (mpmath, 136 bits): g and U "
      "agree to the 12 digits it prints (tests/theorems/studies/row1_frontier_test.cc)."};
  return t;
}

Figure q1_figure(const std::vector<studies::Row1FrontierRow>& rows) {
  Figure f;
  f.name = "f4_row1_frontier";
  f.caption =
      "F4: the row-1 frontier (Q1): the certified lower curve g(delta) (every model) and the "
      "certified loss U_cert(delta) of the upper family's model, against delta (log-log), at "
      "n = 5, L = 4 and n = L = 16; eps*_1(delta) lies between the two curves of each size.";
  f.caption_latex =
      "F4: the row-1 frontier (Table~\\ref{tab:q1_row1_frontier}): the certified lower curve "
      "$g(\\delta)$ (every model) and the certified loss $U_{\\mathrm{cert}}(\\delta)$ of the "
      "upper family's model, against $\\delta$ (log-log), at $n=5$, $L=4$ and $n=L=16$; "
      "$\\varepsilon^*_1(\\delta)$ lies between the two curves of each size.";
  f.evidence = "CERTIFIED (g rounded down, U_cert rounded up)";
  f.columns = {"delta"};
  const auto sizes = q1_sizes();
  for (const auto& [n, L] : sizes) {
    const std::string s = "n" + std::to_string(n) + "_L" + std::to_string(L);
    f.columns.push_back("g_" + s);
    f.columns.push_back("U_" + s);
  }
  for (const std::string& d : q1_deltas()) {
    std::vector<std::string> cells{d};
    for (const auto& [n, L] : sizes) {
      std::string g = "?", U = "?";
      for (const studies::Row1FrontierRow& r : rows) {
        if (r.n == n && r.L == L && internal::exact_decimal(r.delta) == d) {
          PrecisionScope scope(studies::kRow1Bits);
          g = format_down(Mpfr(r.lower.eps0), kValueDigits);
          U = format_up(r.upper.bound.upper, kValueDigits);
        }
      }
      cells.push_back(g);
      cells.push_back(U);
    }
    f.rows.push_back(std::move(cells));
  }
  std::string plot = std::string(kLineColours) +
                     "set logscale xy\n"
                     "set xlabel '{/Symbol d} (row-1 deficit)'\n"
                     "set ylabel 'worst-case loss E'\n"
                     "set key bottom right opaque box\nset grid\n"
                     "plot ";
  int column = 2, colour = 1;
  for (const auto& [n, L] : sizes) {
    const std::string s = size_text(n, L);
    plot += std::string(column == 2 ? "data" : "''") + " using 1:" + std::to_string(column) +
            " with linespoints linecolor " + std::to_string(colour) + " pointtype 6 title 'g, " +
            s + "', \\\n  '' using 1:" + std::to_string(column + 1) +
            " with linespoints linecolor " + std::to_string(colour) +
            " dashtype 2 pointtype 4 title 'U_{cert}, " + s + "'" +
            (column + 2 < static_cast<int>(f.columns.size()) + 1 ? ", \\\n  " : "\n");
    column += 2;
    ++colour;
  }
  f.plot = plot;
  return f;
}

}  // namespace sinkcert::theorems::reports
