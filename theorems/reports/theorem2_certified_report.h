// SPDX-License-Identifier: MIT
//
// T2c, Theorem 2 certified: for each committed low-loss deep model (the
// Theorem 2 studies' descent path models at n = L = 16 and eps_one models
// at n = 5, L = 4, residual softmax), per (layer l,
// head h), the BOS mass a^{l,h}_i0 over the whole content box (every trigger
// position, every non-trigger row i >= 1, every content in [-1, 1]) enclosed
// at both ends, and the model's worst-case loss E enclosed:
//   1 - min a^{l,h}_i0 in [D_lo, D_hi]   (deep_bos_bound.h, minimum mode)
//   1 - max a^{l,h}_i0 in [1 - U_hi, 1 - U_lo]   (maximum mode)
//   E in [E_lo, E_hi]                    (deep_worst_case_bound.h)
// all CERTIFIED (outward-rounded MPFI; lower ends at witness inputs). The
// BOS columns are shown as 1 - a_i0 so that a mass near 1 keeps its digits.
// Theorem 2 says a low-loss model has a sink in some head of some layer; a
// head sinks (certified) when 1 - D_hi >= kStudySinkBosMass.
// Budgets: seconds and boxes per bound (a rerun under another load may
// print wider or narrower enclosures; every one printed is certified, and
// a cell whose budget ran out says so).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/model.h"
#include "src/table_writer.h"
#include "src/task.h"
#include "theorems/bounds/bos_bound.h"
#include "theorems/bounds/worst_case_bound.h"
#include "theorems/studies/precision_tables.h"

namespace sinkcert::theorems::reports {

// The study's own bars, named in its table's note ("the sink bar of the
// studies"): a head sinks when its certified min BOS is at least
// kStudySinkBosMass, 1 - 1e-5 (Theorem 2 is about BOS mass tending to 1, so
// the study asks far more than the default sink bar 0.5 of
// docs/definitions.md, Definitions 7, that check and verify bos use); it has
// no sink when its certified max BOS is at most kStudyNoSinkBosMass (0.5: BOS
// holds at most half the attention).
constexpr double kStudySinkBosMass = 1 - 1e-5;
constexpr double kStudyNoSinkBosMass = 0.5;

struct Theorem2CertifiedModel {
  std::string name;  // e.g. "theorem2/path_start0"
  Task task;
  Model<Rational> model;  // the exact model of its weight file (residual)
};

// The budgets of the bounds. The boxes decide where a bound stops, so the
// table is the same on any machine; the seconds are a guard that a run on
// an ordinary machine never reaches (where it does, the cell says
// "budget exhausted" and its enclosure depends on the machine's speed).
struct Theorem2CertifiedOptions {
  double bos_seconds = 120.0;  // guard, per head and mode
  // per head and mode, by the task and the head's layer
  std::function<long(const Task&, int)> bos_boxes = [](const Task&, int) { return 20000L; };
  double bos_gap = 0.01;
  double loss_seconds = 300.0;  // guard, per model
  // per model, by its task
  std::function<long(const Task&)> loss_boxes = [](const Task&) { return 2000L; };
  double loss_gap = 0.1;
  // the box budgets in words, for the table's note
  std::string boxes_text = "20000 boxes per head and extreme, 2000 for E";
};

struct Theorem2CertifiedHead {
  int layer = 0, head = 0;
  bounds::BosBound min;     // 1 - min BOS, CERTIFIED
  bounds::MaxBosBound max;  // max BOS, CERTIFIED
};

struct Theorem2CertifiedRow {
  std::string name;
  Task task;
  int layers = 0, heads = 0;
  bounds::WorstCaseBound loss;  // E, CERTIFIED
  std::vector<Theorem2CertifiedHead> per_head;
  double seconds = 0.0;  // the whole row
};

// Throws std::invalid_argument for a model the bounds refuse.
std::vector<Theorem2CertifiedRow> theorem2_certified_rows(
    const std::vector<Theorem2CertifiedModel>& models, const Theorem2CertifiedOptions& options,
    const studies::Progress& progress = {});

// The table "t2c_theorem2_certified": one line per (model, layer, head);
// the model's E on its first line.
Table theorem2_certified_table(const std::vector<Theorem2CertifiedRow>& rows,
                               const Theorem2CertifiedOptions& options);

// Figure F3, "f3_theorem2_certified", the deep counterpart of F2: per row,
// its E enclosure against the 1 - min BOS enclosure of its sinking head,
// the head with the smallest certified 1 - min BOS upper end (ties: the
// first; none finite: the smallest lower end), log-log, each point at the
// geometric middles with the enclosures as error bars. Theorem 2 says a
// low-loss model has such a head with 1 - min BOS small.
Figure theorem2_certified_figure(const std::vector<Theorem2CertifiedRow>& rows);
// Which of row.per_head that is (its index; -1 when the row has none).
int sinking_head(const Theorem2CertifiedRow& row);

// What a head's enclosures say, in a table cell's words: "sink" (min BOS
// certified >= kStudySinkBosMass), "no sink" (max BOS certified <=
// kStudyNoSinkBosMass),
// "not a sink everywhere" (a witness below the sink bar), else "undecided".
std::string head_sink_status(const Theorem2CertifiedHead& head);

}  // namespace sinkcert::theorems::reports
