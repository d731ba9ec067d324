// SPDX-License-Identifier: MIT
//
// The appendix tables: one value type, three writers (LaTeX booktabs, CSV,
// JSON), each pinned by golden-string tests.
//
// A Table is a caption, a header and rows of cells. A cell has a plain text
// form (CSV, JSON) and an optional LaTeX form (raw, e.g. math); without one
// the plain text is escaped for LaTeX. Every writer stamps the provenance
// (RunInfo: command line, revision, time, seed, precision):
//   LaTeX  leading "% key: value" comment lines, then a table environment
//          (\begin{table}[htbp] ... \toprule ... \midrule ... \bottomrule),
//   CSV    leading "# key: value" comment lines, then RFC 4180 rows,
//   JSON   {"table": name, "caption", "columns", "rows", "notes", "run_info"}.
// Numbers are formatted here too, with the rounding direction made explicit:
// a lower end is printed rounded down and an upper end rounded up (MPFR's
// RNDD / RNDU), so a printed interval still contains the true value.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/run_info.h"
#include "src/scalar_traits.h"

namespace sinkcert {

struct Cell {
  std::string text;   // CSV and JSON form
  std::string latex;  // raw LaTeX; empty = escape `text`

  Cell() = default;
  Cell(const char* t) : text(t) {}                 // NOLINT: implicit by design
  Cell(std::string t) : text(std::move(t)) {}      // NOLINT
  Cell(std::string t, std::string tex) : text(std::move(t)), latex(std::move(tex)) {}
};

struct Table {
  std::string name;                   // file stem and LaTeX label: tab:<name>
  std::string caption;                // plain text, escaped for LaTeX
  std::vector<Cell> columns;          // header
  std::string alignment;              // LaTeX column spec; empty = "l" then "r"s
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> notes;     // printed under the table, plain text
  bool fit_width = false;             // LaTeX: scale the tabular to \linewidth
};

// Escapes the LaTeX specials & % $ # _ { } ~ ^ \ of plain text, and | < >,
// which OT1 fonts print as other glyphs.
std::string latex_escape(const std::string& text);

std::string to_latex(const Table& table, const RunInfo& info);
std::string to_csv(const Table& table, const RunInfo& info);
nlohmann::json to_json(const Table& table, const RunInfo& info);

// Writes <dir>/<name>.tex, .csv and .json atomically; returns the three paths.
std::vector<std::string> write_table(const Table& table, const RunInfo& info,
                                     const std::string& dir);

// ---------------------------------------------------------------------------
// Number formatting (significant digits in scientific notation).
// ---------------------------------------------------------------------------

// x rounded down / up to `digits` significant digits, e.g. "6.37e-17".
std::string format_down(const Mpfr& x, int digits);
std::string format_up(const Mpfr& x, int digits);
// x rounded to nearest.
std::string format_nearest(const Mpfr& x, int digits);
// "[lo, hi]" with lo rounded down and hi rounded up: still an enclosure.
std::string format_interval(const Mpfi& x, int digits);
// The LaTeX form of a number printed by the functions above:
// "6.37e-17" -> "$6.37\times 10^{-17}$", "0" -> "$0$".
std::string latex_number(const std::string& text);
// The LaTeX form of an interval printed by format_interval.
std::string latex_interval(const std::string& text);

}  // namespace sinkcert
