// SPDX-License-Identifier: MIT
#include "theorems/reports/theorem2_certified_report.h"

#include <chrono>
#include <limits>
#include <sstream>

#include "src/elapsed.h"
#include "theorems/bounds/deep_bos_bound.h"
#include "theorems/bounds/deep_worst_case_bound.h"
#include "theorems/reports/certified_path_report.h"
#include "theorems/reports/precision_report.h"

namespace sinkcert::theorems::reports {

namespace {

// Enough bits to hold either end of any enclosure here exactly.
constexpr int kCellBits = 1100;

// 1 - x rounded down / up.
Mpfr one_minus(const Mpfr& x, mpfr_rnd_t rnd) {
  Mpfr r;
  mpfr_ui_sub(r.backend().data(), 1, x.backend().data(), rnd);
  return r;
}

// "[lo, hi]" (LaTeX with a shared power of ten), "inf" for an infinite end,
// and the reason a bound stopped short after it.
Cell enclosure_cell(const Mpfr& lo, const Mpfr& hi, const std::string& remark) {
  constexpr int kDigits = 4;
  Cell c;
  if (bmp::isinf(hi) || bmp::isnan(hi) || bmp::isinf(lo) || bmp::isnan(lo)) {
    const std::string l = bmp::isinf(lo) || bmp::isnan(lo) ? "-inf" : format_down(lo, kDigits);
    const std::string u = bmp::isinf(hi) || bmp::isnan(hi) ? "inf" : format_up(hi, kDigits);
    c = Cell("[" + l + ", " + u + "]", "[" + latex_escape(l) + ", " + latex_escape(u) + "]");
  } else {
    c = interval_cell(Mpfi(lo, hi), kDigits);
  }
  if (remark.empty() || remark == "gap reached") return c;
  return Cell(c.text + " (" + remark + ")", "\\begin{tabular}[t]{@{}r@{}}" + c.latex +
                                                "\\\\ {\\footnotesize " + latex_escape(remark) +
                                                "}\\end{tabular}");
}

std::string seconds_text(double s) {
  std::ostringstream o;
  o.precision(3);
  o << s;
  return o.str();
}

}  // namespace

std::string head_sink_status(const Theorem2CertifiedHead& h) {
  PrecisionScope scope(kCellBits);
  if (!bmp::isinf(h.min.deficit_upper) &&
      one_minus(h.min.deficit_upper, MPFR_RNDD) >= Mpfr(kStudySinkBosMass)) {
    return "sink";
  }
  if (!bmp::isinf(h.max.mass_upper) && h.max.mass_upper <= Mpfr(kStudyNoSinkBosMass))
    return "no sink";
  if (h.min.witness_trigger != 0 &&
      one_minus(h.min.deficit_lower, MPFR_RNDU) < Mpfr(kStudySinkBosMass)) {
    return "not a sink everywhere";
  }
  return "undecided";
}

std::vector<Theorem2CertifiedRow> theorem2_certified_rows(
    const std::vector<Theorem2CertifiedModel>& models, const Theorem2CertifiedOptions& options,
    const studies::Progress& progress) {
  std::vector<Theorem2CertifiedRow> rows;
  for (const Theorem2CertifiedModel& m : models) {
    const auto t0 = std::chrono::steady_clock::now();
    Theorem2CertifiedRow row;
    row.name = m.name;
    row.task = m.task;
    row.layers = m.model.num_layers();
    row.heads = m.model.num_heads();
    for (int l = 0; l < row.layers; ++l) {
      for (int h = 0; h < row.heads; ++h) {
        bounds::DeepBosOptions o;
        o.layer = l;
        o.head = h;
        o.relative_gap = options.bos_gap;
        o.max_boxes = options.bos_boxes(m.task, l);
        o.max_seconds = options.bos_seconds;
        Theorem2CertifiedHead head{l, h, bounds::bound_deep_min_bos(m.model, m.task, o),
                                   bounds::bound_deep_max_bos(m.model, m.task, o)};
        if (progress) {
          std::ostringstream msg;
          msg << "T2c " << m.name << " layer " << l << " head " << h << ": "
              << bounds::min_bos_text(head.min) << ", " << bounds::max_bos_text(head.max) << " ("
              << head_sink_status(head) << ")";
          progress(msg.str());
        }
        row.per_head.push_back(std::move(head));
      }
    }
    bounds::WorstCaseOptions lo;
    lo.relative_gap = options.loss_gap;
    lo.max_boxes = options.loss_boxes(m.task);
    lo.max_seconds = options.loss_seconds;
    row.loss = bounds::bound_deep_worst_case(m.model, m.task, lo);
    if (progress) {
      std::ostringstream msg;
      msg << "T2c " << m.name << ": E in [" << row.loss.lower.convert_to<double>() << ", "
          << row.loss.upper.convert_to<double>() << "] (" << bound_status(row.loss) << ")";
      progress(msg.str());
    }
    row.seconds = seconds_since(t0);
    rows.push_back(std::move(row));
  }
  return rows;
}

Table theorem2_certified_table(const std::vector<Theorem2CertifiedRow>& rows,
                               const Theorem2CertifiedOptions& options) {
  Table t;
  t.name = "t2c_theorem2_certified";
  t.landscape = true;
  t.caption =
      "T2c: Theorem 2 certified. For each committed deep model of the Theorem 2 studies (residual "
      "softmax: the descent path models at n = L = 16, the eps_one models at n = 5, L = 4), per "
      "layer and head, the BOS mass a_i0 over the whole "
      "content box (every trigger position, every non-trigger row i >= 1, every content in "
      "[-1, 1]) enclosed at both ends, shown as 1 - min BOS and 1 - max BOS, and the model's "
      "worst-case loss E, all CERTIFIED.";
  t.caption_latex =
      "T2c: Theorem 2 certified. For each committed deep model of the Theorem 2 studies (residual "
      "softmax: the descent path models at $n = L = 16$, the $\\varepsilon_{\\mathrm{one}}$ "
      "models at $n = 5$, $L = 4$), per layer and head, the BOS mass $a^{l,h}_{i0}$ over "
      "the whole content box (every trigger position, every non-trigger row $i\\ge 1$, every "
      "content in $[-1, 1]$) enclosed at both ends, shown as $1-\\min a_{i0}$ and "
      "$1-\\max a_{i0}$, and the model's worst-case loss $E$, all CERTIFIED.";
  t.columns = {"model",
               Cell("E CERTIFIED", "$E$ CERTIFIED"),
               "layer",
               "head",
               Cell("1 - min BOS CERTIFIED", "$1-\\min a_{i0}$ CERTIFIED"),
               Cell("1 - max BOS CERTIFIED", "$1-\\max a_{i0}$ CERTIFIED"),
               "head sinks",
               "seconds"};
  t.alignment = "lrrrrrlr";
  for (const Theorem2CertifiedRow& r : rows) {
    PrecisionScope scope(kCellBits);
    bool first = true;
    for (const Theorem2CertifiedHead& h : r.per_head) {
      const Mpfr min_lo = h.min.witness_trigger == 0
                              ? Mpfr(-std::numeric_limits<double>::infinity())
                              : h.min.deficit_lower;
      // 1 - max a_i0 in [1 - U_hi, 1 - U_lo], rounded outward
      const Mpfr max_lo = one_minus(h.max.mass_upper, MPFR_RNDD);
      const Mpfr max_hi = h.max.witness_trigger == 0 ? std::numeric_limits<Mpfr>::infinity()
                                                     : one_minus(h.max.mass_lower, MPFR_RNDU);
      t.rows.push_back(
          {first ? Cell(r.name) : Cell(""),
           first ? enclosure_cell(r.loss.lower, r.loss.upper, bound_status(r.loss)) : Cell(""),
           Cell(std::to_string(h.layer)), Cell(std::to_string(h.head)),
           enclosure_cell(min_lo, h.min.deficit_upper,
                          bounds::stop_status(h.min, !bmp::isinf(h.min.deficit_upper))),
           enclosure_cell(max_lo, max_hi,
                          bounds::stop_status(h.max, !bmp::isinf(h.max.mass_upper))),
           Cell(head_sink_status(h)), first ? Cell(seconds_text(r.seconds)) : Cell("")});
      first = false;
    }
  }
  std::ostringstream budget;
  budget << "Budgets: " << options.boxes_text << ", to the relative gaps " << options.bos_gap
         << " (BOS) and " << options.loss_gap << " (E); time guards " << options.bos_seconds
         << " s per head and extreme, " << options.loss_seconds
         << " s for E. A bound whose budget ran out says so under its cell (its enclosure is "
            "still certified; one stopped by its time guard depends on the machine's speed). "
            "seconds: the model's whole row (every head, both extremes, E).";
  std::ostringstream bars;
  bars << "head sinks: sink when the certified min BOS is at least " << kStudySinkBosMass
       << " (the sink bar of the studies); no sink when the certified max BOS is at most "
       << kStudyNoSinkBosMass
       << "; not a sink everywhere when a witness input has its BOS mass below the sink bar. "
          "Theorem 2 asks for a sink in some head of some layer of a low-loss model, not in "
          "every head.";
  t.notes = {
      "CERTIFIED: outward-rounded MPFI. BOS: the deep BOS branch and bound "
      "(theorems/bounds/deep_bos_bound.h): interval forward pass through the layers below the "
      "head, its input intersected with the range of symbolic first-order forms (one symbol "
      "per content variable; heads of a layer whose attention nearly agrees fused), then the "
      "centred form of a_i0 computed from score differences, branching over the content of "
      "positions 1..i per (row i, trigger j); lower ends at witness inputs. E: the deep "
      "worst-case bound (theorems/bounds/deep_worst_case_bound.h: the same symbolic forms "
      "through every layer), lower end a witness input. sinkcert verify bos and sinkcert "
      "verify bound re-derive every enclosure from the weight file.",
      budget.str(), bars.str()};
  return t;
}

int sinking_head(const Theorem2CertifiedRow& row) {
  int best = -1;
  for (int k = 0; k < static_cast<int>(row.per_head.size()); ++k) {
    if (best < 0) {
      best = k;
      continue;
    }
    const bounds::BosBound& a = row.per_head[k].min;
    const bounds::BosBound& b = row.per_head[best].min;
    // smallest upper end; among infinite upper ends, smallest lower end
    const bool a_finite = !bmp::isinf(a.deficit_upper), b_finite = !bmp::isinf(b.deficit_upper);
    if (a_finite != b_finite) {
      if (a_finite) best = k;
    } else if (a_finite ? a.deficit_upper < b.deficit_upper : a.deficit_lower < b.deficit_lower) {
      best = k;
    }
  }
  return best;
}

Figure theorem2_certified_figure(const std::vector<Theorem2CertifiedRow>& rows) {
  Figure f;
  f.name = "f3_theorem2_certified";
  f.caption =
      "F3: Theorem 2 certified (table T2c), the deep counterpart of F2: for each committed deep "
      "model, its worst-case loss E against 1 - min BOS mass of its sinking head (the head whose "
      "certified 1 - min BOS is smallest, named in the data), both certified over the whole "
      "content box, log-log. Each point is the geometric middle of the two enclosures and its "
      "error bars are the enclosures (a wide bar is a bound that did not close within its "
      "budget); the dashed line is 1 - min BOS = E, for orientation. Theorem 2 says that as E "
      "falls, some head's 1 - min BOS falls with it.";
  f.caption_latex =
      "F3: Theorem 2 certified (table T2c), the deep counterpart of F2: for each committed deep "
      "model, its worst-case loss $E$ against $1-\\min a^{l,h}_{i0}$ of its sinking head (the "
      "head whose certified $1-\\min a_{i0}$ is smallest, named in the data), both certified "
      "over the whole content box, log-log. Each point is the geometric middle of the two "
      "enclosures and its error bars are the enclosures (a wide bar is a bound that did not "
      "close within its budget); the dashed line is $1-\\min a_{i0} = E$, for orientation. "
      "Theorem 2 says that as $E$ falls, some head's $1-\\min a_{i0}$ falls with it.";
  f.evidence = "CERTIFIED (both axes, error bars = MPFI enclosures)";
  f.columns = {"model",   "n",          "layer",         "head",
               "E_lower", "E_upper",    "deficit_lower", "deficit_upper",
               "E_mid",   "deficit_mid"};
  bool any_point = false;
  for (const Theorem2CertifiedRow& r : rows) {
    const int k = sinking_head(r);
    if (k < 0) continue;
    const Theorem2CertifiedHead& h = r.per_head[k];
    PrecisionScope scope(kCellBits);
    f.rows.push_back({r.name, std::to_string(r.task.n), std::to_string(h.layer),
                      std::to_string(h.head), plot_value(r.loss.lower), plot_value(r.loss.upper),
                      plot_value(h.min.deficit_lower), plot_value(h.min.deficit_upper),
                      geometric_mid(r.loss.lower, r.loss.upper),
                      geometric_mid(h.min.deficit_lower, h.min.deficit_upper)});
    any_point = any_point || (f.rows.back()[8] != "?" && f.rows.back()[9] != "?");
  }
  // no point to plot (every bound stopped with an infinite end, as in a
  // quick run): fixed axes, so that the empty frame still renders
  const std::string empty =
      any_point ? ""
                : "set xrange [1e-12:1]\nset yrange [1e-12:1]\n"
                  "set label 1 'no enclosure closed within its budget' at graph 0.5, 0.5 "
                  "center\n";
  f.plot =
      empty + enclosure_plot(EnclosureColumns{9, 10, 5, 6, 7, 8},
                             "1 - min BOS mass of the sinking head (CERTIFIED)", "1 - min BOS = E");
  return f;
}

}  // namespace sinkcert::theorems::reports
