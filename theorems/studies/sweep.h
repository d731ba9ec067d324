// SPDX-License-Identifier: MIT
//
// `sinkcert sweep`: a grid of studies, run in one process or over MPI ranks,
// each configuration's result kept in its own file, merged into one table.
//
// Grid. A grid file names a study and lists values for each axis; the set of
// configurations is the Cartesian product
//   configs = attention x n x L x trigger_range x seed
// (each axis a list of distinct values), every configuration run with the
// grid's study options (the same for all). A configuration's key is
//   <study>-<attention>-n<n>-L<L>-<trigger_range>-s<seed>
// and configurations are ordered by (attention name, n, L, trigger range
// name, seed), numbers compared as numbers: that order is the merged
// table's row order, whatever ran where and when.
//
// Studies. A study is one entry of a registry (sweep_studies()): its name,
// the options its grid may set, its summary columns, a check of each
// configuration (before anything runs) and a function that runs one
// configuration and returns its JSON result and its summary cells. Studies
// must be deterministic functions of (configuration, options): budgets in
// rounds or boxes, never in seconds, so the numbers do not depend on load.
//
// Files, in the folder --out DIR:
//   configs/<key>.json   one per configuration, written atomically (rename)
//                        when it finishes: format "sinkcert-sweep-result",
//                        the key, the configuration, the grid's digest, the
//                        summary cells, the study's JSON, the rank and the
//                        wall time.
//   sweep.json/.csv/.tex the merged table: one row per configuration in key
//                        order, the configuration's axes then the study's
//                        summary columns; no wall time; provenance header.
//   sweep_times.csv      wall seconds and rank per configuration (these
//                        vary from run to run, so they stay out of the table).
// The digest is FNV-1a (64 bits) of the grid's canonical JSON (study, axes,
// options; keys sorted, no spaces), so a result is reused only by the same
// grid.
//
// Rerun. Temporaries <key>.json.tmp.PID of a killed run are removed first
// (remove_stale_temporaries). A configuration whose result file exists, parses and carries the
// same key, configuration, grid digest and summary columns is skipped; a
// file that does not parse as a result (cut short by hand) is run again; a
// complete result of another configuration or grid is an error (InputError
// naming the file), never silently reused. A killed process loses only the
// configuration it was running.
//
// Scheduling. One process runs the configurations in key order. Started by
// mpirun or srun (and built with MPI, SINKCERT_HAVE_MPI), rank 0 checks the
// grid and the existing results, then hands out the missing configurations
// one at a time to ranks 1..K-1 as they become free (dynamic scheduling;
// with K = 1, rank 0 runs them itself); each rank writes its own result
// files (DIR must be on a file system every rank sees), and rank 0 merges
// when all are done. The merged table is the same for every K.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/model.h"
#include "src/run_info.h"
#include "src/table_writer.h"
#include "src/task.h"

namespace sinkcert::theorems::studies {

// At most this many configurations per grid (a typo in an axis should not
// start a million studies).
inline constexpr std::size_t kMaxSweepConfigs = 10000;

// One point of the grid.
struct SweepConfig {
  std::string study;
  AttentionKind attention = AttentionKind::kSoftmax;
  Task task;
  std::uint64_t seed = 0;
};

// "<study>-<attention>-n<n>-L<L>-<trigger_range>-s<seed>", e.g.
// "theorem1-softmax-n5-L4-paper-s0".
std::string config_key(const SweepConfig& config);
// The order of the merged table (header comment).
bool config_before(const SweepConfig& a, const SweepConfig& b);
// {"study", "attention", "n", "L", "trigger_range", "seed"}.
nlohmann::json to_json(const SweepConfig& config);

// What a study returns for one configuration.
struct SweepStudyResult {
  nlohmann::json result;      // the study's own JSON (its to_json)
  std::vector<Cell> summary;  // one cell per SweepStudy::summary_columns
};

// A study the sweep can run: one registry entry.
struct SweepStudy {
  std::string name;
  // Keys the grid's "options" object may hold (each checked by check).
  std::vector<std::string> option_names;
  // The study's columns of the merged table (after the axes), each naming
  // its evidence level, e.g. "path worst case SEARCH(lower bound)".
  std::vector<std::string> summary_columns;
  // Throws InputError(grid_file, field, expected) if the study cannot run
  // this configuration with these options (field e.g. "axes.attention" or
  // "options.path_rounds"). Called for every configuration before anything
  // runs.
  std::function<void(const SweepConfig&, const nlohmann::json& options,
                     const std::string& grid_file)>
      check;
  // Runs one configuration (deterministic; round or box budgets only);
  // `info` is this process's provenance for the study's JSON; `progress`
  // receives the study's own progress lines.
  std::function<SweepStudyResult(const SweepConfig&, const nlohmann::json& options,
                                 const RunInfo& info,
                                 const std::function<void(const std::string&)>& progress)>
      run;
};

// The registry: every study the sweep knows, by name.
const std::vector<SweepStudy>& sweep_studies();
// The entry named `name`; nullptr if none.
const SweepStudy* find_sweep_study(const std::string& name);
// The Theorem 1 study (theorems/studies/theorem1_study.h) as a registry entry.
// Options: "quick" (bool, quick_options), "starts", "path_rounds",
// "frontier_rounds" (integers), "deltas" (numbers in (0, 1)); its time
// limits are switched off (rounds bound the work). Attention kinds: every
// kind the minimax covers (not gated).
SweepStudy theorem1_sweep_study();
// The normalization study (theorems/studies/normalization_study.h:
// run_normalization_entry) as a registry entry. Option: "quick" (bool).
// Every attention kind (gated gives its inconclusive row); n, L as for
// theorem1.
SweepStudy normalization_sweep_study();
// The Theorem 2 study (theorems/studies/theorem2_study.h, residual softmax) as a
// registry entry. Options: "quick" (bool, theorem2_quick_options), "layers"
// and "heads" (1, 2 or 4; default 2 each); its time limit is switched off.
// Attention: softmax only.
SweepStudy theorem2_sweep_study();

// A parsed and checked grid.
struct SweepGrid {
  std::string file;  // as given, for messages
  std::string study;
  nlohmann::json axes;     // canonical: every axis present, values as given
  nlohmann::json options;  // the study options ({} if none)
  // Optional "caption": a sentence appended to the merged table's caption
  // (what the grid is for, its evidence level); not part of the digest.
  std::string caption;
  std::vector<SweepConfig> configs;  // the product, in key order
  std::string digest;                // 16 hex digits (header comment)
};

// Parses the grid file `path` (format "sinkcert-sweep-grid", version 1;
// docs/commands.md, sweep) and checks every configuration with its study's check.
// Every error is an InputError naming the file, the field and what was
// expected.
SweepGrid read_sweep_grid(const std::string& path);
// The same from text (`file` names it in messages).
SweepGrid parse_sweep_grid(const std::string& text, const std::string& file);

// FNV-1a 64-bit of `text` as 16 lowercase hex digits.
std::string fnv1a_hex(const std::string& text);

// DIR/configs/<key>.json
std::string result_path(const std::string& out_dir, const SweepConfig& config);
// The result file's JSON for `config` of `grid`.
nlohmann::json result_json(const SweepGrid& grid, const SweepConfig& config,
                           const SweepStudyResult& result, int rank, double wall_seconds);

// Removes the temporaries NAME.tmp.PID (write_file_atomically) that killed
// runs left beside a result file or the merged table in `out_dir`: every
// temporary of a configuration in `pending` (indices into grid.configs; the
// caller is about to run them, so no live writer of this run has one), and
// any other whose PID is not a live process on this machine. Returns the
// paths removed. (A temporary of a finished configuration whose PID is
// alive is left: it may be another run's write in flight.)
std::vector<std::string> remove_stale_temporaries(const SweepGrid& grid, const std::string& out_dir,
                                                  const std::vector<std::size_t>& pending);

// What an existing result file is.
enum class ResultState { kMissing, kIncomplete, kComplete };
// kMissing if `path` does not exist; kIncomplete if it does not parse as a
// sweep result (with the reason in *why); kComplete if it is the result of
// `config` of `grid`. A complete result of another configuration or grid,
// or a path that is not a regular file, is an InputError naming the path.
ResultState check_result_file(const std::string& path, const SweepGrid& grid,
                              const SweepConfig& config, std::string* why = nullptr);

// The merged table (columns: study, attention, n, L, trigger_range, seed,
// then the study's summary columns) from the result files, rows in key
// order; InputError naming the file if one is missing or not complete.
Table merged_table(const SweepGrid& grid, const std::string& out_dir);
// Writes it as DIR/sweep.json, .csv, .tex (provenance `info`; the grid's
// seeds in a note, and in sweep.json the grid itself) and DIR/sweep_times.csv;
// returns the paths written.
std::vector<std::string> write_merged_table(const SweepGrid& grid, const std::string& out_dir,
                                            const RunInfo& info);

// Progress lines on stderr (which configuration, which rank, done/total).
using SweepProgress = std::function<void(const std::string&)>;

struct SweepOutcome {
  int rank = 0, ranks = 1;
  bool root = true;                 // rank 0 (or the single process): prints, merges
  int total = 0;                    // configurations in the grid
  int skipped = 0;                  // finished by an earlier run
  int ran = 0;                      // run now (by any rank)
  std::vector<std::string> failed;  // keys whose study threw
  bool merged = false;
  // A worker whose rank 0 failed before scheduling: exit with this code,
  // printing nothing (rank 0 printed the error).
  int quiet_exit_code = 0;
};

// Runs `grid_file` into `out_dir` (the header comment): checks, skips the
// finished configurations, runs the others (here or over MPI ranks), writes
// the merged table with provenance from `argv` (precision "double", seed the
// grid's smallest). Throws InputError on a bad grid or a mismatched result
// file (on rank 0; the other ranks then return with quiet_exit_code 2).
SweepOutcome run_sweep(const std::string& grid_file, const std::string& out_dir,
                       const std::vector<std::string>& argv, const SweepProgress& progress);

// Whether this process was started by mpirun/srun (Open MPI, PMIx or PMI
// environment variables) and how many processes that launcher started
// (1 if not started by one).
int launcher_size();

}  // namespace sinkcert::theorems::studies
