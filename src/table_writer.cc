// SPDX-License-Identifier: MIT
#include "src/table_writer.h"

#include <mpfr.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "src/input_error.h"
#include "src/json_reader.h"
#include "src/subprocess.h"

namespace sinkcert {

namespace {

std::string flat(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

// The provenance keys, in the order of RunInfo's JSON form.
std::vector<std::pair<std::string, std::string>> provenance(const RunInfo& info) {
  return {{"command_line", flat(info.command_line)},
          {"revision", flat(info.revision)},
          {"time_utc", flat(info.time_utc)},
          {"seed", std::to_string(info.seed)},
          {"precision", flat(info.precision)}};
}

std::string latex_cell(const Cell& cell) {
  return cell.latex.empty() ? latex_escape(cell.text) : cell.latex;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// A gnuplot data cell: double-quoted when it holds white space.
std::string data_field(const std::string& text) {
  if (text.empty()) return "?";
  if (text.find_first_of(" \t") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? '\'' : c;
  return out + "\"";
}

// mpfr_asprintf with a rounding letter: 'D' down, 'U' up, 'N' nearest.
std::string format_rounded(const Mpfr& x, int digits, char rounding) {
  if (digits < 1) throw std::invalid_argument("format: digits must be >= 1");
  const std::string spec = std::string("%.*R") + rounding + "e";
  char* buf = nullptr;
  const int precision_after_point = digits - 1;
  if (mpfr_asprintf(&buf, spec.c_str(), precision_after_point, x.backend().data()) < 0) {
    throw std::runtime_error("mpfr_asprintf failed");
  }
  std::string out(buf);
  mpfr_free_str(buf);
  return out;
}

// Mantissa and decimal exponent of a number in the form format_rounded
// prints ("6.37e-17" -> "6.37", -17; "0" -> "0", 0).
std::pair<std::string, long> split_scientific(const std::string& text) {
  const auto e = text.find_first_of("eE");
  if (e == std::string::npos) return {text, 0};
  return {text.substr(0, e), std::stol(text.substr(e + 1))};
}

std::string times_ten(long exponent) {
  return exponent == 0 ? "" : "\\times 10^{" + std::to_string(exponent) + "}";
}

// "m \times 10^{e}" (no dollars); "m" when the exponent is 0.
std::string latex_math(const std::string& text) {
  const auto [mantissa, exponent] = split_scientific(text);
  return mantissa + times_ten(exponent);
}

}  // namespace

std::string provenance_header(const std::string& comment, const std::string& title,
                              const RunInfo& info) {
  std::string out = comment + flat(title) + "\n";
  for (const auto& [key, value] : provenance(info)) out += comment + key + ": " + value + "\n";
  return out;
}

std::string latex_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
      case '%':
      case '$':
      case '#':
      case '_':
      case '{':
      case '}':
        out += '\\';
        out += c;
        break;
      case '~':
        out += "\\textasciitilde{}";
        break;
      case '^':
        out += "\\textasciicircum{}";
        break;
      case '\\':
        out += "\\textbackslash{}";
        break;
      // OT1 fonts print these three as other glyphs ("|" as a dash)
      case '|':
        out += "\\textbar{}";
        break;
      case '<':
        out += "\\textless{}";
        break;
      case '>':
        out += "\\textgreater{}";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string to_latex(const Table& table, const RunInfo& info) {
  std::ostringstream out;
  out << provenance_header("% ", "sinkcert table " + table.name, info);
  std::string align = table.alignment;
  if (align.empty() && !table.columns.empty()) {
    align = "l" + std::string(table.columns.size() - 1, 'r');
  }
  auto row_line = [&](const std::vector<Cell>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      out << (c ? " & " : "") << latex_cell(cells[c]);
    }
    out << " \\\\\n";
  };
  const std::string env = table.landscape ? "sidewaystable" : "table";
  out << "\\begin{" << env << "}" << (table.landscape ? "" : "[htbp]") << "\n\\centering\n";
  out << "\\caption{"
      << (table.caption_latex.empty() ? latex_escape(table.caption) : table.caption_latex) << "}\n";
  out << "\\label{tab:" << table.name << "}\n";
  // a landscape table is wide: narrower gaps between columns, same font
  if (table.landscape) out << "\\setlength{\\tabcolsep}{4pt}\n";
  out << "\\begin{tabular}{" << align << "}\n\\toprule\n";
  row_line(table.columns);
  out << "\\midrule\n";
  for (const auto& row : table.rows) row_line(row);
  out << "\\bottomrule\n\\end{tabular}\n";
  for (std::size_t k = 0; k < table.notes.size(); ++k) {
    const bool raw = k < table.notes_latex.size() && !table.notes_latex[k].empty();
    out << "\\par\\smallskip{\\footnotesize "
        << (raw ? table.notes_latex[k] : latex_escape(table.notes[k])) << "}\n";
  }
  out << "\\end{" << env << "}\n";
  return out.str();
}

std::string to_csv(const Table& table, const RunInfo& info) {
  std::ostringstream out;
  out << provenance_header("# ", "sinkcert table " + table.name, info);
  if (!table.caption.empty()) out << "# caption: " << flat(table.caption) << "\n";
  for (const auto& note : table.notes) out << "# note: " << flat(note) << "\n";
  auto row_line = [&](const std::vector<Cell>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c)
      out << (c ? "," : "") << csv_field(cells[c].text);
    out << "\n";
  };
  row_line(table.columns);
  for (const auto& row : table.rows) row_line(row);
  return out.str();
}

namespace {

// The number `text` begins with and where it ends; nullopt unless it starts
// with one (decimal notation only: no "nan", "inf" or hexadecimal).
std::optional<std::pair<nlohmann::json, std::size_t>> leading_number(const std::string& text) {
  const std::size_t end = text.find_first_not_of("0123456789.eE+-");
  const std::string word = text.substr(0, end);
  if (word.empty() || word.find_first_of("0123456789") == std::string::npos) return std::nullopt;
  char* stop = nullptr;
  errno = 0;
  const double x = std::strtod(word.c_str(), &stop);
  if (stop != word.c_str() + word.size() || errno == ERANGE || !std::isfinite(x)) {
    return std::nullopt;
  }
  const std::size_t used = word.size();
  if (word.find_first_of(".eE") == std::string::npos && word.size() < 16) {
    return std::make_pair(nlohmann::json(std::stoll(word)), used);  // an integer as itself
  }
  return std::make_pair(nlohmann::json(x), used);
}

}  // namespace

nlohmann::json cell_value(const std::string& text) {
  // "[lo, hi]"
  if (text.size() > 2 && text.front() == '[' && text.back() == ']') {
    const std::size_t comma = text.find(", ");
    if (comma == std::string::npos) return nullptr;
    const std::string lo = text.substr(1, comma - 1), hi = text.substr(comma + 2);
    const auto a = leading_number(lo), b = leading_number(hi.substr(0, hi.size() - 1));
    if (!a || !b || a->second != lo.size() || b->second != hi.size() - 1) return nullptr;
    return nlohmann::json::array({a->first, b->first});
  }
  const auto x = leading_number(text);
  // the whole text, or a number followed by a remark after a blank
  if (!x || (x->second != text.size() && text[x->second] != ' ')) return nullptr;
  return x->first;
}

nlohmann::json to_json(const Table& table, const RunInfo& info) {
  nlohmann::json columns = nlohmann::json::array();
  for (const auto& c : table.columns) columns.push_back(c.text);
  nlohmann::json rows = nlohmann::json::array(), values = nlohmann::json::array();
  for (const auto& row : table.rows) {
    nlohmann::json r = nlohmann::json::array(), v = nlohmann::json::array();
    for (const auto& c : row) {
      r.push_back(c.text);
      v.push_back(cell_value(c.text));
    }
    rows.push_back(r);
    values.push_back(v);
  }
  return nlohmann::json{{"table", table.name},
                        {"caption", table.caption},
                        {"columns", columns},
                        {"rows", rows},
                        {"values", values},
                        {"notes", table.notes},
                        {kProvenanceKey, to_json(info)}};
}

namespace {

Table read_table_json_of(const std::string& path, RunInfo* info) {
  const nlohmann::json j = internal::read_json_file(path);
  const auto expect = [&](bool ok, const std::string& field, const std::string& what) {
    if (!ok) throw InputError(path, field, what);
  };
  const auto is_text_array = [](const nlohmann::json& a) {
    return a.is_array() &&
           std::all_of(a.begin(), a.end(), [](const auto& c) { return c.is_string(); });
  };
  expect(j.is_object(), "(top level)", "an object written by sinkcert's table writer");
  expect(j.contains("table") && j["table"].is_string() && !j["table"].get<std::string>().empty(),
         "table", "the table's name");
  expect(j.contains("caption") && j["caption"].is_string(), "caption", "text");
  expect(j.contains("columns") && is_text_array(j["columns"]) && !j["columns"].empty(), "columns",
         "a non-empty array of text");
  expect(j.contains("rows") && j["rows"].is_array(), "rows", "an array of rows");
  expect(!j.contains("notes") || is_text_array(j["notes"]), "notes", "an array of text");
  Table t;
  t.name = j["table"].get<std::string>();
  t.caption = j["caption"].get<std::string>();
  for (const auto& c : j["columns"]) t.columns.emplace_back(c.get<std::string>());
  for (std::size_t r = 0; r < j["rows"].size(); ++r) {
    const nlohmann::json& row = j["rows"][r];
    expect(is_text_array(row) && row.size() == t.columns.size(), "rows[" + std::to_string(r) + "]",
           std::to_string(t.columns.size()) + " text cells");
    std::vector<Cell> cells;
    for (const auto& c : row) cells.emplace_back(c.get<std::string>());
    t.rows.push_back(std::move(cells));
  }
  if (j.contains("notes"))
    for (const auto& note : j["notes"]) t.notes.push_back(note.get<std::string>());
  t.landscape = t.columns.size() > kPortraitColumns;
  if (info != nullptr) *info = run_info_from_json(provenance_of(j));
  return t;
}

}  // namespace

Table read_table_json(const std::string& path, RunInfo* info) {
  return internal::reading_json(path, [&] { return read_table_json_of(path, info); });
}

std::vector<std::string> write_table(const Table& table, const RunInfo& info,
                                     const std::string& dir) {
  const std::string stem = dir + "/" + table.name;
  write_file_atomically(stem + ".tex", to_latex(table, info));
  write_file_atomically(stem + ".csv", to_csv(table, info));
  write_file_atomically(stem + ".json", to_json(table, info).dump(2) + "\n");
  return {stem + ".tex", stem + ".csv", stem + ".json"};
}

std::string write_csv_table(const Table& table, const RunInfo& info, const std::string& dir,
                            const std::string& file_name) {
  const std::string path = dir + "/" + file_name;
  write_file_atomically(path, to_csv(table, info));
  return path;
}

std::string figure_caption(const Figure& figure) {
  return figure.caption + " Evidence: " + figure.evidence + ".";
}

std::string figure_caption_latex(const Figure& figure) {
  return (figure.caption_latex.empty() ? latex_escape(figure.caption) : figure.caption_latex) +
         " Evidence: " + latex_escape(figure.evidence) + ".";
}

std::string figure_data(const Figure& figure, const RunInfo& info) {
  std::ostringstream out;
  out << provenance_header("# ", "sinkcert figure data " + figure.name, info);
  out << "# caption: " << flat(figure_caption(figure)) << "\n#";
  for (const auto& c : figure.columns) out << " " << data_field(c);
  out << "\n";
  for (const auto& row : figure.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out << (c ? " " : "") << data_field(row[c]);
    out << "\n";
  }
  return out.str();
}

std::string figure_script(const Figure& figure, const RunInfo& info) {
  std::ostringstream out;
  out << provenance_header("# ", "sinkcert figure script " + figure.name, info);
  out << "# caption: " << flat(figure_caption(figure)) << "\n"
      << "# gnuplot " << figure.name << ".gp renders " << figure.name
      << ".pdf; gnuplot -e \"format='png'\" " << figure.name << ".gp renders " << figure.name
      << ".png\n"
      << "data = '" << figure.name << ".dat'\n"
      << "if (!exists(\"format\")) format = 'pdf'\n"
      << "if (format eq 'png') {\n  set terminal pngcairo size 900,600\n} else {\n"
      << "  set terminal pdfcairo size 6in,4in font \"Helvetica,10\"\n}\n"
      << "set output '" << figure.name << ".'.format\n"
      << "set datafile missing '?'\n"
      << figure.plot;
  if (!figure.plot.empty() && figure.plot.back() != '\n') out << "\n";
  return out.str();
}

FigureFiles write_figure(const Figure& figure, const RunInfo& info, const std::string& dir) {
  namespace fs = std::filesystem;
  FigureFiles files;
  const std::string stem = (fs::path(dir) / figure.name).string();
  write_file_atomically(stem + ".dat", figure_data(figure, info));
  write_file_atomically(stem + ".gp", figure_script(figure, info));
  files.written = {stem + ".dat", stem + ".gp"};
  std::vector<std::string> formats{"pdf"};
  if (figure.png) formats.push_back("png");
  for (const std::string& format : formats) {
    // gnuplot runs in `dir`, without a shell, on our own file names
    RunOptions run;
    run.working_dir = dir;
    run.capture = RunOptions::Capture::kStderr;
    const ProgramResult r =
        run_program({"gnuplot", "-e", "format='" + format + "'", figure.name + ".gp"}, run);
    const std::string target = stem + "." + format;
    std::error_code ec;
    if (r.ok() && fs::is_regular_file(target, ec) && fs::file_size(target, ec) > 0) {
      files.written.push_back(target);
      if (format == "pdf") files.pdf = target;
    } else {
      fs::remove(target, ec);  // a partial figure
      files.failures.push_back(
          figure.name + "." + format + " (" +
          (r.ok() ? std::string("gnuplot wrote no file") : describe_failure(r)) + ")");
    }
  }
  return files;
}

std::string format_down(const Mpfr& x, int digits) { return format_rounded(x, digits, 'D'); }
std::string format_up(const Mpfr& x, int digits) { return format_rounded(x, digits, 'U'); }
std::string format_nearest(const Mpfr& x, int digits) { return format_rounded(x, digits, 'N'); }

std::string format_interval(const Mpfi& x, int digits) {
  return "[" + format_down(bmp::lower(x), digits) + ", " + format_up(bmp::upper(x), digits) + "]";
}

std::string latex_number(const std::string& text) { return "$" + latex_math(text) + "$"; }

std::string latex_interval(const Mpfi& x, int digits) {
  const auto [lo, lo_exponent] = split_scientific(format_down(bmp::lower(x), digits));
  const auto [hi, hi_exponent] = split_scientific(format_up(bmp::upper(x), digits));
  if (lo_exponent == hi_exponent) {
    return "$[" + lo + ",\\ " + hi + "]" + times_ten(lo_exponent) + "$";
  }
  return "$[" + lo + times_ten(lo_exponent) + ",\\ " + hi + times_ten(hi_exponent) + "]$";
}

Cell interval_cell(const Mpfi& x, int digits) {
  return Cell(format_interval(x, digits), latex_interval(x, digits));
}

}  // namespace sinkcert
