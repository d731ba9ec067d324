// SPDX-License-Identifier: MIT
//
// The appendix: every table and figure, registered in one list
// (appendix_registry), each built from a checker's typed result by a report
// builder (theorems/reports/precision_report.h, theorems/reports/theorem1_report.h) and
// written through src/table_writer.h; then the standalone document
// <out>/appendix.tex that \input's every table and includes every figure
// with its caption, in the order of the list.
//   tables/<name>.{tex,csv,json}     one file set per table
//   figures/<name>.{dat,gp,pdf}      one per figure computed here (F1)
//   figures/<name>.pdf               the committed Theorem 1 study's figures,
//                                    copied from the models folder
//   figures/attention_*.{dat,gp,pdf,png}  the attention figures
//                                    (theorems/reports/attention_figures.h)
//   tables/p5_refined_s*.weights.json  the refined models of P5
//   tables/q1_row1_*.weights.json     the row-1 frontier's upper models of Q1
//                                    (theorems/studies/row1_frontier.h)
// Inputs: the committed search models, study runs and trained figure models
// under the models folder (--models, default: results/ of the current
// directory), never under
// <out>: so `appendix --out EMPTY_DIR` writes everything. Every input is
// checked before any computation, and a missing one is an InputError naming
// it (exit code 2): no table is ever skipped.
// The generated set (<out>/tables/, <out>/figures/ and <out>/appendix.tex) is
// replaced as a whole (replace_output_set, src/output_files.h); anything else
// in <out> is never touched, and files the user put in <out>/figures are
// carried into the new set.
// Parallel: the entries are grouped into jobs (entries sharing a computation
// form one job) and the jobs run in worker processes, `threads` at a time,
// longest first; every budget is a count of boxes, rounds or steps, so the
// files are the same for any count (T2c's seconds are guards per bound that
// a run on an ordinary machine does not reach). Progress: at most one line a
// second (and one every ten seconds while the jobs are silent): entries done
// of the total, the time so far, and each running job's seconds and latest
// line.
// Sizes: default under four minutes on two cores; `full`: larger
// branch-and-bound budgets and the P5 path to s = 12 in 1024-bit MPFR;
// `quick`: every table and figure on small configurations (tests).
#pragma once

#include <string>
#include <vector>

#include "src/output_files.h"
#include "src/parallel_tasks.h"
#include "src/run_info.h"
#include "theorems/studies/precision_tables.h"

namespace sinkcert::theorems::reports {

// Where the committed search models are by default: "results", the
// results/ folder of the current directory (the repository root when run
// from there); nothing is compiled in.
std::string default_models_dir();

struct AppendixOptions {
  std::string out = "results";
  std::string models = default_models_dir();
  studies::RunSize size = studies::RunSize::kDefault;
  long p2_bound_boxes = 3200;  // per n = 5, L = 4 model (about 8 s); keeps the default run < 5 min
  // T2c's budgets (theorems/reports/theorem2_certified_report.h): seconds per
  // head and BOS extreme, and per model for E; 0 = the size's default.
  double t2c_bos_seconds = 0.0;
  double t2c_loss_seconds = 0.0;
  // Worker processes computing independent tables and figures at once
  // (src/worker_processes.h); 1: everything in this process, one after the
  // other. The files are the same for every count.
  int threads = default_thread_count();
  // Retrain the attention figures' recipe models (attention_figures.h) and
  // write them under <models>/figure_models/ before the figures read them.
  bool retrain = false;
  // Non-empty: compute only these tables and figures of the registry
  // (comma-separated names) and write their files into <out>/tables/ and
  // <out>/figures/ (the rest of <out>, appendix.tex included, untouched).
  std::string only;
};

enum class ArtifactKind { kTable, kFigure };

// One table or figure of the appendix.
struct AppendixArtifact {
  std::string name;  // file stem under tables/ or figures/
  ArtifactKind kind = ArtifactKind::kTable;
  std::vector<std::string> inputs;  // the files it reads, relative to the models folder
  // Its job: the entries sharing a computation (P1's, P5 with C1 and F2, T2c
  // with F3) have one, built by one process; every other entry is its own.
  std::string job;
};

// Every table and figure at this size, in document order.
std::vector<AppendixArtifact> appendix_registry(studies::RunSize size);

// Throws InputError(path, "file", ...) for the first input of the registry
// that is not a regular file under opt.models.
void check_appendix_inputs(const AppendixOptions& opt);

struct AppendixSummary {
  std::vector<std::string> tables;        // stems relative to out, e.g. tables/p1_sink_loss
  std::vector<std::string> figures;       // PDFs relative to out
  std::vector<std::string> not_rendered;  // figures gnuplot did not render, with the reason
  double seconds = 0.0;
};

// The entries of `out` the appendix owns: tables/, figures/, appendix.tex.
OutputSet appendix_output_set(const std::string& out);

// The standalone LaTeX document: \input of every table (stems, relative to
// the document's folder) and every figure with its caption (a figure not
// rendered is a framed note saying so); compiles from the document's folder
// and from its parent (\input@path, \graphicspath).
struct DocumentFigure {
  std::string path;     // relative to the document's folder; empty = not rendered
  std::string name;     // label fig:<name>
  std::string caption;  // plain text, with its evidence level
  std::string missing;  // why it was not rendered
  // the caption in LaTeX (raw, with its evidence level); empty = escape `caption`
  std::string caption_latex;
};
std::string appendix_document(const std::vector<std::string>& table_stems,
                              const std::vector<DocumentFigure>& figures, const RunInfo& info,
                              const std::string& folder_name);

// Checks the inputs, then regenerates everything under opt.out (with
// opt.only, those tables' and figures' files alone); `argv` is recorded as
// the command line of every artifact; `progress` receives one line per step.
// Throws InputError when opt.only names something not in the registry.
AppendixSummary generate_appendix(const AppendixOptions& opt, const std::vector<std::string>& argv,
                                  const studies::Progress& progress = {});

}  // namespace sinkcert::theorems::reports
