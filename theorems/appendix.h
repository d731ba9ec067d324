// SPDX-License-Identifier: MIT
//
// The appendix: every table (P1 sink family in five precisions beside MPFI
// enclosures, P2 search models, P3 ReLU certificates, P4 beyond double, P5
// beyond double for a search model, B1 branch-and-bound reach) in LaTeX, CSV
// and JSON, the figures, and the standalone document <out>/appendix.tex that
// \input's them. Each artifact is stamped with a RunInfo. The generated set
// (<out>/tables/, <out>/figures/ and <out>/appendix.tex) is replaced as a
// whole (replace_output_set, src/output_files.h): it is written into a
// staging folder and swapped in at the end, so a failed or killed run leaves
// the previous set; <out>/theorem1/, the appendix's input, and anything else
// in <out> are never touched. Default size: under five minutes on two cores;
// `full`: larger branch-and-bound budgets and the P5 path to s = 12 in
// 1024-bit MPFR.
#pragma once

#include <string>
#include <vector>

#include "src/output_files.h"
#include "theorems/precision_tables.h"

namespace sinkcert::theorems {

struct AppendixOptions {
  std::string out = "results";
  bool full = false;
  double p2_bound_seconds = 8.0;  // per n = 5, L = 4 model; keeps the default run < 5 min
};

struct AppendixSummary {
  std::vector<std::string> tables;   // stems relative to out, e.g. tables/p1_sink_loss
  std::vector<std::string> figures;  // relative to out
  double seconds = 0.0;
};

// The entries of `out` the appendix owns: tables/, figures/, appendix.tex.
OutputSet appendix_output_set(const std::string& out);

// Regenerates everything under opt.out; `argv` is recorded as the command
// line of every artifact; `progress` receives one line per step. Files the
// user put in <out>/figures (other than F1's) are carried into the new set.
AppendixSummary generate_appendix(const AppendixOptions& opt, const std::vector<std::string>& argv,
                                  const Progress& progress = {});

}  // namespace sinkcert::theorems
