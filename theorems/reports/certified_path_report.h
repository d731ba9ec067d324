// SPDX-License-Identifier: MIT
//
// C1, the certified path: for every model on the Theorem 1 descent path and
// its MPFR continuation beyond double, both quantities of Theorem 1
// CERTIFIED over the whole content box, side by side:
//   E(theta)       = sup_X e(X)          in [E_lo, E_hi]   (worst_case_bound.h)
//   1 - B(theta)   = 1 - min_X a_i0      in [D_lo, D_hi]   (bos_bound.h)
// (max over triggers, non-trigger rows i >= 1, heads; X over the whole box).
// E_lo and D_lo are certified values at witness inputs, E_hi and D_hi come
// from the two branch and bounds; the relative gaps (hi - lo) / lo say how
// tight each enclosure is. Theorem 1 says E -> 0 forces D -> 0; along the
// path both fall together, certified, far below double (the P5 rows).
// Figure F2 plots D against E on log-log axes with the enclosures as error
// bars, beside the line D = E on which the sink family lies (both are
// (L-1) / (e^beta + L-1) there).
#pragma once

#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "src/model.h"
#include "src/table_writer.h"
#include "src/task.h"
#include "theorems/bounds/bos_bound.h"
#include "theorems/bounds/worst_case_bound.h"
#include "theorems/studies/precision_tables.h"

namespace sinkcert::theorems::reports {

struct CertifiedPathModel {
  std::string name;   // e.g. "theorem1/path_start0"
  std::string stage;  // e.g. "search (double)", "MPFR continuation, s = 2"
  Task task;
  // the exact model of a weight file, or a model refined in MPFR
  std::variant<Model<Rational>, Model<Mpfr>> model;
  // E already enclosed over the whole box (the P5 rows); none = run the
  // branch and bound here
  std::optional<bounds::WorstCaseBound> loss;
};

// Budgets in boxes, not seconds, so that a rerun prints the same table.
struct CertifiedPathOptions {
  // branch-and-bound budget for E per model, by its task (a box of n = L = 16
  // costs about 80 times one of n = 5, L = 4)
  std::function<long(const Task&)> loss_boxes = [](const Task& t) {
    return t.n * t.L <= 64 ? 3200L : 40L;
  };
  double loss_gap = 0.1;
  long bos_boxes = 12000;  // budget for min BOS, per model
  double bos_gap = 0.01;
};

struct CertifiedPathRow {
  std::string name, stage;
  Task task;
  bounds::WorstCaseBound loss;  // CERTIFIED over the whole box
  bounds::BosBound bos;         // CERTIFIED over the whole box
};

// Throws std::invalid_argument for a model the bounds refuse (not
// single-layer, n != task.n).
std::vector<CertifiedPathRow> certified_path_rows(const std::vector<CertifiedPathModel>& models,
                                                  const CertifiedPathOptions& options,
                                                  const studies::Progress& progress = {});

Table certified_path_table(const std::vector<CertifiedPathRow>& rows);
// F2: D against E, log-log, with the enclosures as error bars.
Figure certified_path_figure(const std::vector<CertifiedPathRow>& rows);

// A log axis's value of an enclosure end (6 digits, nearest), "?" (gnuplot's
// missing value) when it is not positive, infinite or below 1e-300; and the
// point between two ends on a log axis, sqrt(lo hi) (hi alone when lo is
// not positive). F2 and F3 plot these.
std::string plot_value(const Mpfr& x);
std::string geometric_mid(const Mpfr& lo, const Mpfr& hi);

// The gnuplot script of F2 and F3: E (x) against a BOS deficit (y), log-log,
// each point at its geometric middles with the enclosures as error bars, one
// series per n (column 2: 5 and 16), and the dashed line y = x titled
// `line_title`. Columns are 1-based in the figure's data.
struct EnclosureColumns {
  int x_mid, y_mid, x_lo, x_hi, y_lo, y_hi;
};
std::string enclosure_plot(const EnclosureColumns& columns, const std::string& y_label,
                           const std::string& line_title);

}  // namespace sinkcert::theorems::reports
