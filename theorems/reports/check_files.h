// SPDX-License-Identifier: MIT
//
// The report folder of `sinkcert check --out DIR` and of the Python
// package's Model.check(out=DIR), written by one function so that both give
// the same files:
//   report.json   CheckReport::to_json with the run's provenance
//   report.md     CheckReport::markdown
//   witness.json  the worst input the attack found (when it found one);
//                 `sinkcert eval --input` re-checks it
//   attention_mean_std.dat, .gp, .pdf, .png   the attention heat map,
//                 rendered by gnuplot (a render that fails is reported,
//                 its data and script stay)
// The files are one set (src/output_files.h, replace_output_set): a run that
// fails leaves the folder's previous report whole. The folder must lie
// outside results/ of the working directory (the committed artifacts).
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "src/run_info.h"
#include "theorems/reports/model_check.h"

namespace sinkcert::theorems::reports {

// The heat map's base name (attention_mean_std.png, ...).
inline constexpr const char* kCheckFigure = "attention_mean_std";

// Every name the set may hold.
std::set<std::string> check_file_names();

// Throws InputError(option) unless `out` can take the set: outside results/,
// a writable folder (or creatable), its existing entries of the right kind.
// Call it before the check runs.
void check_report_dir(const std::string& out, const std::string& option);

struct CheckFiles {
  nlohmann::json document;            // report.json's document (with "provenance")
  std::vector<std::string> written;   // names written, in writing order
  std::vector<std::string> failures;  // renders gnuplot could not make
};

// Writes the set into `out` (replacing the previous set as a whole).
CheckFiles write_check_files(const CheckReport& report, const RunInfo& info,
                             const std::string& out);

}  // namespace sinkcert::theorems::reports
