// SPDX-License-Identifier: MIT
//
// The report builders of the precision tables: the typed rows of the
// checkers (theorems/studies/precision_tables.h, theorems/studies/refined_path.h) turned into
// Tables and Figures (src/table_writer.h). Nothing here computes a number;
// every cell is a row's value formatted, with its evidence level in the
// column header or the caption.
//   P1  p1_sink_loss, p1_sink_bos (landscape) and figure F1
//       f1_sink_precision: the sink family in five precisions
//   P2  p2_search_models: the search models, search loss beside certified values
//   P3  p3_relu_certificate: the exact ReLU certificate across (n, L)
//   P4  p4_beyond_double: the sink family's scale path
//   P5  p5_refined_search_path: a search model refined beyond double
//   B1  b1_worst_case_bound: the branch and bound's reach
#pragma once

#include <string>
#include <vector>

#include "src/table_writer.h"
#include "src/task.h"
#include "theorems/studies/precision_tables.h"
#include "theorems/studies/refined_path.h"

namespace sinkcert::theorems::reports {

// "n = 5, L = 4, triggers paper".
std::string task_string(const Task& task);
// "gap reached", "budget exhausted", "precision floor at N bits", ...
std::string bound_status(const bounds::WorstCaseBound& bound);
// An exact rational as a table cell: "0", "3", "1/3" (no denominator 1).
Cell rational_cell(const Rational& r);

Table p1_loss_table(const std::vector<studies::PrecisionRow>& rows, const Task& task);
Table p1_bos_table(const std::vector<studies::PrecisionRow>& rows, const Task& task);
// F1: 1 - min BOS mass against beta, certified and as computed in each
// precision (a computed 0 is missing on the log axis).
Figure p1_figure(const std::vector<studies::PrecisionRow>& rows, const Task& task);
Table p2_table(const std::vector<studies::SearchModelRow>& rows, const std::string& models);
Table p3_table(const std::vector<studies::ReluRow>& rows);
Table p4_table(const std::vector<studies::ScaleRow>& rows, const std::string& model_name,
               const Task& task, double base_beta);
Table p5_table(const studies::RefinedPath& path, const std::string& model_name, const Task& task,
               const studies::RefinedPathOptions& options);
Table b1_table(const std::vector<studies::BoundRow>& rows);

// P5 at the paper's size: one block of rows per start model
// (theorems/studies/refined_path.h). Its column layout: its enclosures as wrapped paragraphs, so
// that it fits a landscape page (also for a copy read back from its JSON, which keeps text only).
inline constexpr const char* kP5PaperSizeAlignment =
    "lp{0.5cm}p{1.1cm}p{1.3cm}p{2.5cm}p{3.2cm}p{3.2cm}p{1.6cm}p{0.9cm}p{0.9cm}";
Table p5_paper_size_table(const std::vector<studies::NamedRefinedPath>& paths, const Task& task,
                          const studies::RefinedPathOptions& options, const std::string& load);

}  // namespace sinkcert::theorems::reports
