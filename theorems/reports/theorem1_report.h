// SPDX-License-Identifier: MIT
//
// The report of a Theorem 1 study (theorems/studies/theorem1_study.h): the study's
// typed result turned into data tables, figures and weight files, all
// written through src/table_writer.h.
//   path.csv      one row per optimizer round and start: worst case
//                 SEARCH(lower bound), sampled loss and BOS mass NUMERIC(53)
//   frontier.csv  one row per delta: worst case of the frontier model
//                 SEARCH(lower bound), mean BOS mass NUMERIC(53)
//   nuance.csv    BOS mass against content scale t, NUMERIC(53)
//   path, frontier, nuance figures (.dat, .gp, .pdf, .png)
//   theorem1.json, and one weight file per path start and feasible frontier
//   point, with the certified worst case and its witness in the metadata.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/output_files.h"
#include "src/run_info.h"
#include "src/table_writer.h"
#include "theorems/studies/theorem1_study.h"

namespace sinkcert::theorems::reports {

Table path_table(const studies::Theorem1Study& study);
Table frontier_table(const studies::Theorem1Study& study);
Table nuance_table(const studies::Theorem1Study& study);

// The figures; their captions depend only on the task (the appendix uses
// them for the committed study's figures).
Figure path_figure(const studies::Theorem1Study& study);
Figure frontier_figure(const studies::Theorem1Study& study);
Figure nuance_figure(const studies::Theorem1Study& study);
// What the BOS mass against content scale shows, for the nuance figure's
// caption: per model, the mean and min BOS mass at the smallest and the
// largest content scale, and whether the mean is lower at small content (a
// model spending its BOS deficit there) or hardly depends on it.
std::string nuance_summary(const std::vector<studies::NuancePoint>& points);
// The BOS mass against content points of a theorem1.json
// (with_high_probability.points); an InputError naming the file and the
// field when it is missing or malformed.
std::vector<studies::NuancePoint> read_nuance_points(const std::string& json_path);
// The study figure `name` ("path", "frontier", "nuance") of a study on
// `task` without its data: name, caption and evidence level (the figures
// above start from it); throws std::invalid_argument for any other name.
Figure theorem1_figure_frame(const std::string& name, const Task& task);

// The hypothesis-edge table: one row per (n, L, trigger range) of a study
// run at the edges of the theorems' hypotheses, read from that run's
// theorem1.json (the numbers the study wrote; nothing is recomputed).
struct EdgeRun {
  Task task;
  bool has_trigger = true;     // false: the task has no trigger position (rejected, no run)
  double path_worst_case = 0;  // smallest over the path starts, SEARCH(lower bound)
  bool has_bos = false;        // false: no non-trigger position
  double path_mean_bos = 0;    // of that start's model, NUMERIC(53)
  std::vector<std::pair<double, double>> eps;  // (delta, eps) of feasible frontier points
  studies::StudyVerdict verdict = studies::StudyVerdict::kInconclusive;
};
// Reads `json_path` (a theorem1.json) as the run on `task`; an InputError
// naming the file and field when it is missing or malformed. A task without
// trigger positions is not read (has_trigger = false).
EdgeRun read_edge_run(const Task& task, const std::string& json_path);
// "t1_hypothesis_edges": n, L, trigger range, path worst case (2 digits),
// path mean BOS (10 decimals), eps at delta 0.5, 0.05, 0.005 (3 digits), verdict.
Table edges_table(const std::vector<EdgeRun>& runs);

// The adversary's witness input: {"trigger": j, "content": rows} (exact
// doubles), as the weight files' metadata stores it.
nlohmann::json witness_json(const search::Witness& witness);

// The weight file of a study's model: `meta` with the parametrization, n, L,
// trigger range and run info added.
std::string study_weight_file_text(const Model<double>& model, nlohmann::json meta,
                                   const std::string& parametrization, const Task& task,
                                   const RunInfo& info);

// The output set of `dir` made of the files whose names `owns` accepts and
// the temporaries of a run killed while writing them (NAME.tmp.PID, and
// .STEM.tmp.EXT of the figures).
OutputSet owned_files_set(const std::string& dir,
                          const std::function<bool(const std::string&)>& owns);

// The files of `dir` a study owns (the names write_theorem1_outputs writes,
// any path_start*/frontier_delta_* weight file, and temporaries of those
// names); everything else in `dir` (edges/, seeds/, notes) is left alone.
OutputSet theorem1_output_set(const std::string& dir);

// Writes theorem1.json, path.csv, frontier.csv, nuance.csv, the weight files
// of the path and frontier models, and the three figures (data, gnuplot
// script, PDF and PNG if gnuplot runs) into `dir`, replacing the previous
// study's files as a whole (replace_output_set, src/output_files.h): `dir`
// ends up with the old set or the new one, never a mix. Returns the paths
// written; figures that gnuplot did not render are listed in `skipped` with
// the reason.
std::vector<std::string> write_theorem1_outputs(const studies::Theorem1Study& study,
                                                const RunInfo& info, const std::string& dir,
                                                std::vector<std::string>* skipped = nullptr);

}  // namespace sinkcert::theorems::reports
