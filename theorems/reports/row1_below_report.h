// SPDX-License-Identifier: MIT
//
// The files of the search below the explicit family
// (theorems/studies/row1_below_family.h), in one directory:
//   summary.json                      every row (to_json), each model file's
//                                     SHA-256, the options and provenance
//   n<N>_L<L>_delta<d>.weights.json   the kept model of each delta (exact
//                                     doubles), metadata: search, start seed,
//                                     provenance (command, revision, seed)
//   README.md                         row1_below_readme(summary), generated
// and the check of such a directory against a recomputation:
//  - README.md is exactly row1_below_readme(summary.json);
//  - each model file's SHA-256 is the one summary.json records;
//  - its row-1 deficit enclosure, recomputed from the file (the same cells
//    and bits), equals the recorded one, and lower(D) >= delta is re-decided;
//  - E: bound_worst_case rerun within `bound_seconds` gives an enclosure
//    that meets the recorded one (recomputed lower <= recorded upper and
//    recorded lower <= recomputed upper; a recorded upper below the model's
//    true E is caught once the rerun's lower end passes it), and the
//    recorded verdict "below U" equals (recorded upper_exact < U exactly and
//    the deficit verdict VERIFIED).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/run_info.h"
#include "theorems/studies/row1_below_family.h"

namespace sinkcert::theorems::reports {

nlohmann::json row1_below_summary(const std::vector<studies::Row1BelowRow>& rows,
                                  const studies::Row1BelowOptions& o, const RunInfo& info);
// The README's text from the summary alone (numbers as the summary has them).
std::string row1_below_readme(const nlohmann::json& summary);
// Writes the files; returns their names.
std::vector<std::string> write_row1_below_outputs(const std::vector<studies::Row1BelowRow>& rows,
                                                  const studies::Row1BelowOptions& o,
                                                  const RunInfo& info, const std::string& dir);

struct Row1BelowCheck {
  bool ok = true;
  std::vector<std::string> failures;  // one line each
  std::vector<std::string> lines;     // what was checked, one line each
};
Row1BelowCheck check_row1_below_dir(const std::string& dir, double bound_seconds);

}  // namespace sinkcert::theorems::reports
