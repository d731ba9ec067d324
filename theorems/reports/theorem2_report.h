// SPDX-License-Identifier: MIT
//
// The report of a Theorem 2 study (theorems/studies/theorem2_study.h), written
// through src/table_writer.h:
//   path.csv     one row per optimizer round and start: worst case
//                SEARCH(lower bound), sampled loss, sink score sigma with
//                its (layer, head, position), mean BOS mass of every head
//                (NUMERIC(53))
//   heads.csv    one row per start and head of the best path model: mean
//                and min non-trigger BOS mass, the largest per-position mean
//                and its position (NUMERIC(53))
//   frontier.csv one row per capped scope (all heads / one head) and delta:
//                worst case of the capped model SEARCH(lower bound)
//   every_head.csv  per candidate model and head (or layer): worst case
//                with and without it (SEARCH, lower bounds), necessity,
//                largest BOS mass (NUMERIC(53))
//   every_head_targeted.csv  T2b: per targeted search (one head capped at
//                BOS <= 1/2 for the whole descent): FOUND / NOT FOUND, the
//                head's necessity and BOS profile, its weight file
//   path figure  worst case and 1 - sigma against round (.dat, .gp, .pdf,
//                .png); frontier figure eps_all and eps_one against delta
//   theorem2.json, one weight file per path start with the certified worst
//   case and its witness in the metadata (re-checkable by `eval`), and the
//   every-head hits (every_head_hit, every_layer_hit) when found, each
//   targeted search's model (targeted_l<l>h<h>) and each feasible eps_one
//   model (eps_one_delta<delta>), its witness and capped BOS in the metadata.
#pragma once

#include <string>
#include <vector>

#include "src/output_files.h"
#include "src/run_info.h"
#include "src/table_writer.h"
#include "theorems/studies/theorem2_study.h"

namespace sinkcert::theorems::reports {

Table theorem2_path_table(const studies::Theorem2Study& study);
Table theorem2_heads_table(const studies::Theorem2Study& study);
Table theorem2_frontier_table(const studies::Theorem2Study& study);
Table theorem2_every_head_table(const studies::Theorem2Study& study);
// T2b: one row per targeted every-head search (EveryHeadAnswer::targeted):
// FOUND / NOT FOUND, the head's role, necessity, BOS profile, weight file.
Table theorem2_targeted_table(const studies::Theorem2Study& study);
// The study figure `name` ("path", "frontier") of a layers x heads study on
// `task` without its data: name, caption and evidence level (the appendix
// uses them for the committed study's figures).
Figure theorem2_figure_frame(const std::string& name, const Task& task, int layers, int heads);
Figure theorem2_path_figure(const studies::Theorem2Study& study);
// Empty rows when no frontier point is feasible (then not written).
Figure theorem2_frontier_figure(const studies::Theorem2Study& study);

// The appendix's summary of a committed study: the theorem2.json at
// `json_path` read back (nothing recomputed): verdict, each path start's
// worst case and sink score, the frontier points, and the every-head answer,
// each with its evidence label. When the file does not exist the table says
// so in one row (the study was not run); an InputError naming the file and
// field when it exists but is malformed.
Table theorem2_appendix_table(const std::string& json_path);
// T2b, the every-head question read back from the same file: every head of
// each path model and the capped head of each targeted search, with its
// answer (FOUND, or its role), worst case, necessity ratio and BOS profile;
// the same file handling as theorem2_appendix_table.
Table theorem2_every_head_appendix_table(const std::string& json_path);

// The files of `dir` a study owns (the names write_theorem2_outputs writes,
// any path_start*.weights.json, and temporaries of those names); everything
// else in `dir` is left alone.
OutputSet theorem2_output_set(const std::string& dir);

// Writes theorem2.json, path.csv, heads.csv, the path weight files and the
// figure into `dir`, replacing the previous study's files as a whole
// (replace_output_set, src/output_files.h). Returns the paths written;
// renders gnuplot could not make are listed in `skipped`.
std::vector<std::string> write_theorem2_outputs(const studies::Theorem2Study& study,
                                                const RunInfo& info, const std::string& dir,
                                                std::vector<std::string>* skipped = nullptr);

}  // namespace sinkcert::theorems::reports
