// SPDX-License-Identifier: MIT
#include "src/table_writer.h"

#include <mpfr.h>

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace sinkcert {

namespace {

// Provenance lines, one "key: value" each, newlines in values flattened.
std::vector<std::pair<std::string, std::string>> provenance(const RunInfo& info) {
  auto flat = [](std::string s) {
    for (char& c : s) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    return s;
  };
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

}  // namespace

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
  out << "% sinkcert table " << table.name << "\n";
  for (const auto& [key, value] : provenance(info)) out << "% " << key << ": " << value << "\n";
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
  out << "\\begin{table}[htbp]\n\\centering\n";
  out << "\\caption{" << latex_escape(table.caption) << "}\n";
  out << "\\label{tab:" << table.name << "}\n";
  if (table.fit_width) out << "\\resizebox{\\linewidth}{!}{%\n";
  out << "\\begin{tabular}{" << align << "}\n\\toprule\n";
  row_line(table.columns);
  out << "\\midrule\n";
  for (const auto& row : table.rows) row_line(row);
  out << "\\bottomrule\n\\end{tabular}" << (table.fit_width ? "}" : "") << "\n";
  for (const auto& note : table.notes) {
    out << "\\par\\smallskip{\\footnotesize " << latex_escape(note) << "}\n";
  }
  out << "\\end{table}\n";
  return out.str();
}

std::string to_csv(const Table& table, const RunInfo& info) {
  std::ostringstream out;
  out << "# sinkcert table " << table.name << "\n";
  for (const auto& [key, value] : provenance(info)) out << "# " << key << ": " << value << "\n";
  auto row_line = [&](const std::vector<Cell>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) out << (c ? "," : "") << csv_field(cells[c].text);
    out << "\n";
  };
  row_line(table.columns);
  for (const auto& row : table.rows) row_line(row);
  return out.str();
}

nlohmann::json to_json(const Table& table, const RunInfo& info) {
  nlohmann::json columns = nlohmann::json::array();
  for (const auto& c : table.columns) columns.push_back(c.text);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : table.rows) {
    nlohmann::json r = nlohmann::json::array();
    for (const auto& c : row) r.push_back(c.text);
    rows.push_back(r);
  }
  return nlohmann::json{{"table", table.name},    {"caption", table.caption},
                        {"columns", columns},     {"rows", rows},
                        {"notes", table.notes},   {"run_info", to_json(info)}};
}

std::vector<std::string> write_table(const Table& table, const RunInfo& info,
                                     const std::string& dir) {
  const std::string stem = dir + "/" + table.name;
  write_file_atomically(stem + ".tex", to_latex(table, info));
  write_file_atomically(stem + ".csv", to_csv(table, info));
  write_file_atomically(stem + ".json", to_json(table, info).dump(2) + "\n");
  return {stem + ".tex", stem + ".csv", stem + ".json"};
}

std::string format_down(const Mpfr& x, int digits) { return format_rounded(x, digits, 'D'); }
std::string format_up(const Mpfr& x, int digits) { return format_rounded(x, digits, 'U'); }
std::string format_nearest(const Mpfr& x, int digits) { return format_rounded(x, digits, 'N'); }

std::string format_interval(const Mpfi& x, int digits) {
  return "[" + format_down(bmp::lower(x), digits) + ", " + format_up(bmp::upper(x), digits) + "]";
}

std::string latex_number(const std::string& text) {
  // mantissa "e" exponent: m x 10^e, the exponent without sign padding.
  const auto e = text.find_first_of("eE");
  if (e == std::string::npos) return "$" + text + "$";
  const std::string mantissa = text.substr(0, e);
  const long exponent = std::stol(text.substr(e + 1));
  if (exponent == 0) return "$" + mantissa + "$";
  return "$" + mantissa + "\\times 10^{" + std::to_string(exponent) + "}$";
}

std::string latex_interval(const std::string& text) {
  // "[lo, hi]" -> "$[lo, hi]$" with each end in LaTeX form.
  const auto comma = text.find(", ");
  if (text.size() < 2 || text.front() != '[' || text.back() != ']' || comma == std::string::npos) {
    return latex_escape(text);
  }
  auto strip = [](std::string s) { return s.substr(1, s.size() - 2); };
  const std::string lo = strip(latex_number(text.substr(1, comma - 1)));
  const std::string hi = strip(latex_number(text.substr(comma + 2, text.size() - comma - 3)));
  return "$[" + lo + ",\\ " + hi + "]$";
}

}  // namespace sinkcert
