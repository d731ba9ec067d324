// SPDX-License-Identifier: MIT
#include "theorems/reports/certified_path_report.h"

#include <sstream>
#include <stdexcept>

#include "theorems/reports/precision_report.h"

namespace sinkcert::theorems::reports {

namespace {

// Enough bits to hold either end of any enclosure here exactly.
constexpr int kCellBits = 1100;

// [lo, hi] as one MPFI interval (outward if it must round).
Mpfi enclosure(const Mpfr& lo, const Mpfr& hi) { return Mpfi(lo, hi); }

// "[lo, hi]" (LaTeX with a shared power of ten); an infinite end is "inf".
// A remark (why the bound stopped short) follows in parentheses, in LaTeX
// on a second, smaller line.
Cell enclosure_cell(const Mpfr& lo, const Mpfr& hi, int digits, const std::string& remark) {
  Cell c;
  if (bmp::isinf(hi) || bmp::isnan(hi)) {
    c = Cell("[" + format_down(lo, digits) + ", inf]",
             "$[" + latex_number(format_down(lo, digits)) + ",\\ \\infty]$");
  } else {
    c = interval_cell(enclosure(lo, hi), digits);
  }
  if (remark.empty()) return c;
  return Cell(c.text + " (" + remark + ")", "\\begin{tabular}[t]{@{}r@{}}" + c.latex +
                                                "\\\\ {\\footnotesize " + latex_escape(remark) +
                                                "}\\end{tabular}");
}

// The model's name over its stage (LaTeX: two lines).
Cell model_cell(const std::string& name, const std::string& stage) {
  return Cell(name + ", " + stage, "\\begin{tabular}[t]{@{}l@{}}" + latex_escape(name) +
                                       "\\\\ {\\footnotesize " + latex_escape(stage) +
                                       "}\\end{tabular}");
}

std::string gap_text(double gap) {
  std::ostringstream s;
  s.precision(2);
  s << gap;
  return s.str();
}

// What stopped a BOS bound, in the words of bound_status.
std::string bos_status(const bounds::BosBound& b) {
  return bounds::stop_status(b, !bmp::isinf(b.deficit_upper));
}

}  // namespace

std::string plot_value(const Mpfr& x) {
  if (!(x > 0) || bmp::isinf(x) || x < Mpfr(1e-300)) return "?";
  return format_nearest(x, 6);
}

// sqrt(lo hi), or hi when lo is not positive
std::string geometric_mid(const Mpfr& lo, const Mpfr& hi) {
  if (!(lo > 0)) return plot_value(hi);
  return plot_value(Mpfr(bmp::sqrt(Mpfr(lo * hi))));
}

std::vector<CertifiedPathRow> certified_path_rows(const std::vector<CertifiedPathModel>& models,
                                                  const CertifiedPathOptions& options,
                                                  const studies::Progress& progress) {
  std::vector<CertifiedPathRow> rows;
  for (const CertifiedPathModel& m : models) {
    CertifiedPathRow row;
    row.name = m.name;
    row.stage = m.stage;
    row.task = m.task;
    bounds::WorstCaseOptions lo;
    lo.max_boxes = options.loss_boxes(m.task);
    lo.max_seconds = bounds::kNoTimeLimit;
    lo.relative_gap = options.loss_gap;
    bounds::BosBoundOptions bo;
    bo.max_boxes = options.bos_boxes;
    bo.max_seconds = bounds::kNoTimeLimit;
    bo.relative_gap = options.bos_gap;
    std::visit(
        [&](const auto& model) {
          row.loss = m.loss ? *m.loss : bound_worst_case(model, m.task, lo);
          row.bos = bound_min_bos(model, m.task, bo);
        },
        m.model);
    if (progress) {
      std::ostringstream msg;
      msg << "C1 " << m.name << " (" << m.stage << "): E <= " << row.loss.upper.convert_to<double>()
          << " (gap " << row.loss.relative_gap
          << "), 1 - min BOS <= " << row.bos.deficit_upper.convert_to<double>() << " (gap "
          << row.bos.relative_gap << ")";
      progress(msg.str());
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Table certified_path_table(const std::vector<CertifiedPathRow>& rows) {
  Table t;
  t.name = "c1_certified_path";
  t.landscape = true;
  t.caption =
      "C1: the certified path. For each model on the Theorem 1 descent path (the double "
      "search's models) and its MPFR continuation beyond double (the models of P5), the "
      "worst-case loss E and the BOS deficit 1 - min BOS mass, both CERTIFIED over the whole "
      "content box (every trigger position, every non-trigger row i >= 1, every content in "
      "[-1, 1]).";
  t.caption_latex =
      "C1: the certified path. For each model on the Theorem 1 descent path (the double "
      "search's models) and its MPFR continuation beyond double (the models of P5), the "
      "worst-case loss $E$ and the BOS deficit $1-\\min a_{i0}$, both CERTIFIED over the whole "
      "content box (every trigger position, every non-trigger row $i\\ge 1$, every content in "
      "$[-1, 1]$).";
  t.columns = {"model",
               "n",
               "L",
               Cell("E CERTIFIED", "$E$ CERTIFIED"),
               Cell("gap E", "gap $E$"),
               Cell("1 - min BOS CERTIFIED", "$1-\\min a_{i0}$ CERTIFIED"),
               Cell("gap BOS", "gap"),
               Cell("bits (E / BOS)", "bits")};
  t.alignment = "lrrrrrrr";
  for (const auto& r : rows) {
    PrecisionScope scope(kCellBits);
    std::ostringstream bits;
    bits << r.loss.bits << " / " << r.bos.bits;
    const std::string loss_status = bound_status(r.loss), bos_status_text = bos_status(r.bos);
    t.rows.push_back({model_cell(r.name, r.stage), std::to_string(r.task.n),
                      std::to_string(r.task.L),
                      enclosure_cell(r.loss.lower, r.loss.upper, 4,
                                     loss_status == "gap reached" ? "" : loss_status),
                      gap_text(r.loss.relative_gap),
                      enclosure_cell(r.bos.deficit_lower, r.bos.deficit_upper, 4,
                                     bos_status_text == "gap reached" ? "" : bos_status_text),
                      gap_text(r.bos.relative_gap), bits.str()});
  }
  t.notes = {
      "CERTIFIED: outward-rounded MPFI. E: the interval branch and bound over the whole box "
      "(theorems/bounds/worst_case_bound.h), lower end a witness input, upper end the largest "
      "bound "
      "over the live boxes; for the continuation rows it is P5's own enclosure. 1 - min BOS: "
      "the BOS branch and bound (theorems/bounds/bos_bound.h), which maximizes the other tokens' "
      "content in closed form and splits only the query's n - 3 content coordinates; lower "
      "end a witness input. gap: (upper - lower) / lower. bits: MPFI precision used at the "
      "end (E / BOS). A budget that runs out leaves a valid, wider enclosure (said under it).",
      "Each model is the exact model of its weight file (search rows) or the refined MPFR "
      "model itself (continuation rows, committed as tables/p5_refined_s*.weights.json); "
      "sinkcert verify bound and sinkcert verify bos re-derive every enclosure from the file."};
  return t;
}

Figure certified_path_figure(const std::vector<CertifiedPathRow>& rows) {
  Figure f;
  f.name = "f2_certified_path";
  f.caption =
      "F2: the certified path (table C1): 1 - min BOS mass against the worst-case loss E, "
      "both certified over the whole content box, log-log. Each point is the geometric middle "
      "of the two enclosures and its error bars are the enclosures; the dashed line is "
      "1 - min BOS = E, on which the softmax sink family lies. Both fall together from the "
      "double search's models to the MPFR continuation far below double (over so many "
      "decades the bars are mostly shorter than the symbols).";
  f.caption_latex =
      "F2: the certified path (table C1): $1-\\min a_{i0}$ against the worst-case loss $E$, "
      "both certified over the whole content box, log-log. Each point is the geometric middle "
      "of the two enclosures and its error bars are the enclosures; the dashed line is "
      "$1-\\min a_{i0} = E$, on which the softmax sink family lies. Both fall together from the "
      "double search's models to the MPFR continuation far below double (over so many "
      "decades the bars are mostly shorter than the symbols).";
  f.evidence = "CERTIFIED (both axes, error bars = MPFI enclosures)";
  f.columns = {"model",         "n",     "E_lower",    "E_upper", "deficit_lower",
               "deficit_upper", "E_mid", "deficit_mid"};
  for (const auto& r : rows) {
    PrecisionScope scope(kCellBits);
    f.rows.push_back({r.name + " " + r.stage, std::to_string(r.task.n), plot_value(r.loss.lower),
                      plot_value(r.loss.upper), plot_value(r.bos.deficit_lower),
                      plot_value(r.bos.deficit_upper), geometric_mid(r.loss.lower, r.loss.upper),
                      geometric_mid(r.bos.deficit_lower, r.bos.deficit_upper)});
  }
  f.plot = enclosure_plot(EnclosureColumns{7, 8, 3, 4, 5, 6}, "1 - min BOS mass (CERTIFIED)",
                          "1 - min BOS = E (sink family)");
  return f;
}

std::string enclosure_plot(const EnclosureColumns& c, const std::string& y_label,
                           const std::string& line_title) {
  // using x:y:xlow:xhigh:ylow:yhigh, one series per n (column 2)
  const std::string cols = std::to_string(c.x_lo) + ":" + std::to_string(c.x_hi) + ":" +
                           std::to_string(c.y_lo) + ":" + std::to_string(c.y_hi);
  const auto series = [&](int n) {
    return "using " + std::to_string(c.x_mid) + ":($2 == " + std::to_string(n) + " ? $" +
           std::to_string(c.y_mid) + " : 1/0):" + cols;
  };
  return "set logscale xy\nset format x '10^{%T}'\nset format y '10^{%T}'\n"
         "set xlabel 'worst-case loss E (CERTIFIED)'\n"
         "set ylabel '" +
         y_label +
         "'\n"
         "set key top left\nset grid\nset samples 200\n"
         "set offsets graph 0.04, graph 0.04, graph 0.04, graph 0.04\n"
         "plot data " +
         series(5) +
         " with xyerrorbars pt 7 ps 0.8 title 'n = 5, L = 4', \\\n"
         "  '' " +
         series(16) +
         " with xyerrorbars pt 5 ps 0.8 title 'n = L = 16', \\\n"
         "  x with lines dt 2 lc rgb 'gray40' title '" +
         line_title + "'\n";
}

}  // namespace sinkcert::theorems::reports
