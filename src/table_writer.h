// SPDX-License-Identifier: MIT
//
// The one writer of every table, figure and data file sinkcert publishes.
//
// Provenance. Every artifact starts with the same header: a title line
// ("sinkcert table p1_sink_loss"), then one "key: value" line for each key of
// RunInfo's JSON form, in this order:
//   command_line, revision, time_utc, seed, precision
// each line behind the comment marker of its format ("% " LaTeX, "# " CSV,
// gnuplot data and script). JSON artifacts carry the same keys under
// "provenance" (readers accept the former "run_info" too).
//
// Tables. A Table is a caption, a header and rows of cells. A cell has a
// plain text form (CSV, JSON) and an optional LaTeX form (raw, e.g. math);
// without one the plain text is escaped for LaTeX. The caption and each note
// likewise: plain text, and an optional raw LaTeX form (caption_latex,
// notes_latex) that only the LaTeX output uses. write_table writes
//   LaTeX  the header, then a table environment (booktabs: \toprule ...
//          \midrule ... \bottomrule; a sidewaystable with 4pt column gaps
//          when `landscape`),
//   CSV    the header, "# caption:" and "# note:" lines, then RFC 4180 rows,
//   JSON   {"table": name, "caption", "columns", "rows", "notes", "provenance"}.
// No table is scaled down to fit: a table too wide for the page is set
// landscape or split by its builder.
//
// Figures. A Figure is its data (named columns of text cells), a gnuplot plot
// specification, a caption saying what it shows (plain text, and an
// optional raw LaTeX form for documents), and the evidence level of what is
// plotted. write_figure writes <name>.dat (header, then
// whitespace-separated rows; a cell holding a space is double-quoted, "?" is
// a missing value) and <name>.gp (header, then a standalone script: `gnuplot
// <name>.gp` in that folder renders <name>.pdf, `gnuplot -e "format='png'"
// <name>.gp` renders <name>.png), and runs gnuplot (src/subprocess.h, no
// shell) in the folder to render them. A figure gnuplot cannot render is
// reported, not fatal: its data and script stay.
//
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

// The provenance header (see above): `title` on the first line, then the
// RunInfo keys, each line starting with `comment`; newlines in values are
// flattened to spaces.
std::string provenance_header(const std::string& comment, const std::string& title,
                              const RunInfo& info);

struct Cell {
  std::string text;   // CSV and JSON form
  std::string latex;  // raw LaTeX; empty = escape `text`

  Cell() = default;
  Cell(const char* t) : text(t) {}             // NOLINT: implicit by design
  Cell(std::string t) : text(std::move(t)) {}  // NOLINT
  Cell(std::string t, std::string tex) : text(std::move(t)), latex(std::move(tex)) {}
};

struct Table {
  std::string name;           // file stem and LaTeX label: tab:<name>
  std::string caption;        // plain text, escaped for LaTeX
  std::string caption_latex;  // raw LaTeX form of the caption; empty = escape `caption`
  std::vector<Cell> columns;  // header
  std::string alignment;      // LaTeX column spec; empty = "l" then "r"s
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> notes;  // printed under the table, plain text
  // raw LaTeX forms of the notes, by index; a missing or empty one = escape
  // the plain note
  std::vector<std::string> notes_latex;
  bool landscape = false;  // LaTeX: a sidewaystable, on its own page
};

// Escapes the LaTeX specials & % $ # _ { } ~ ^ \ of plain text, and | < >,
// which OT1 fonts print as other glyphs.
std::string latex_escape(const std::string& text);

std::string to_latex(const Table& table, const RunInfo& info);
std::string to_csv(const Table& table, const RunInfo& info);
// The JSON form also holds "values", parallel to "rows": each cell's number
// for a script to read (cell_value), the display strings unchanged.
nlohmann::json to_json(const Table& table, const RunInfo& info);
// A display cell's number: an integer or a real when the whole text is one
// ("16", "1.361e-04"), [lo, hi] for an interval "[1.2e-3, 1.3e-3]", the
// leading number of "2.46e-11 (budget exhausted)", else null ("-",
// "VERIFIED").
nlohmann::json cell_value(const std::string& text);

// A table written by to_json, read back from `path` (a committed table that
// the appendix includes as it is): name, caption, columns, rows (text
// cells, each row as long as the header), notes and its provenance into
// *info. LaTeX cells become their escaped text; a table of more than
// kPortraitColumns columns is set landscape. Bad input throws InputError
// naming the file and the field.
inline constexpr std::size_t kPortraitColumns = 8;
Table read_table_json(const std::string& path, RunInfo* info);

// Writes <dir>/<name>.tex, .csv and .json atomically; returns the three paths.
std::vector<std::string> write_table(const Table& table, const RunInfo& info,
                                     const std::string& dir);
// Only <dir>/<file_name> as CSV (data tables of a study, e.g. path.csv).
std::string write_csv_table(const Table& table, const RunInfo& info, const std::string& dir,
                            const std::string& file_name);

struct Figure {
  std::string name;           // file stem: <name>.dat, .gp, .pdf (.png)
  std::string caption;        // what it shows, plain text
  std::string caption_latex;  // raw LaTeX form of the caption; empty = escape `caption`
  std::string evidence;       // evidence level of the plotted values, e.g. "SEARCH(lower bound)"
  std::vector<std::string> columns;            // data column names
  std::vector<std::vector<std::string>> rows;  // data cells; "?" is missing
  // gnuplot commands run after the terminal and output are set; the data
  // file's name is in the gnuplot variable `data` (plot data using 1:2 ...)
  std::string plot;
  bool png = false;  // also render <name>.png
};

// The figure's caption with its evidence level, for a document or a reader:
// "<caption> Evidence: <evidence>."
std::string figure_caption(const Figure& figure);
// The same in LaTeX: the raw caption_latex (or the escaped caption), then
// " Evidence: <evidence, escaped>."
std::string figure_caption_latex(const Figure& figure);
std::string figure_data(const Figure& figure, const RunInfo& info);
std::string figure_script(const Figure& figure, const RunInfo& info);

struct FigureFiles {
  std::vector<std::string> written;   // paths of the files written (data, script, renders)
  std::string pdf;                    // path of <name>.pdf; empty if not rendered
  std::vector<std::string> failures;  // "<name>.png (gnuplot: ...)" per render that failed
};
// Writes <dir>/<name>.dat and .gp atomically, then renders .pdf (and .png)
// with gnuplot run in `dir`; a partial render is removed.
FigureFiles write_figure(const Figure& figure, const RunInfo& info, const std::string& dir);

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
// The LaTeX form of the enclosure format_interval(x, digits) prints, each
// end rounded outward; a common power of ten is factored out:
// "$[6.37,\ 6.38]\times 10^{-17}$", "$[9.99\times 10^{-3},\ 1.01\times 10^{-2}]$".
std::string latex_interval(const Mpfi& x, int digits);
// A table cell holding both: format_interval(x, digits) and latex_interval.
Cell interval_cell(const Mpfi& x, int digits);

}  // namespace sinkcert
