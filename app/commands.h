// SPDX-License-Identifier: MIT
//
// Each subcommand registers itself on the CLI11 app. A command's callback
// calls into the libraries, prints, and sets ctx.exit_code; bad input is
// reported by throwing sinkcert::InputError (exit code 2).
//
// Every option value is parsed by sinkcert, not by CLI11: the add_*_option
// functions below (task_options.cc) register an option whose text is checked
// against its range (src/limits.h) as soon as it is read, so a bad value is
// one line naming the option, the valid range and the value given.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "src/evidence.h"
#include "src/task.h"

namespace sinkcert {
struct RunInfo;
struct VerdictBars;
struct WeightFile;
namespace theorems::studies {
enum class StudyVerdict;
}  // namespace theorems::studies
}  // namespace sinkcert

namespace sinkcert::cli {

// The process's exit codes (main.cc).
// done (a checker: VERIFIED or ENCLOSED, theorem1: CONSISTENT)
constexpr int kExitSuccess = 0;
constexpr int kExitInternal = 1;  // internal failure
// bad file, field, option or size; memory exhausted; a checker that does not
// apply to the model (NOT APPLICABLE)
constexpr int kExitBadInput = 2;
constexpr int kExitNotVerified = 3;  // NOT VERIFIED (theorem1: COUNTEREXAMPLE CANDIDATE)
// UNDECIDED or NOT ENCLOSED (theorem1: INCONCLUSIVE, NOT APPLICABLE)
constexpr int kExitUndecided = 4;
constexpr int kExitNonFinite = 5;  // a floating-point evaluation gave NaN or infinity
// VERIFIED and ENCLOSED 0, NOT VERIFIED 3, UNDECIDED and NOT ENCLOSED 4,
// NOT APPLICABLE 2.
int exit_code_for(Verdict verdict);
// A study's verdict: CONSISTENT 0, COUNTEREXAMPLE CANDIDATE 3, INCONCLUSIVE
// and NOT APPLICABLE 4 (theorem1_command.cc).
int exit_code_for(theorems::studies::StudyVerdict verdict);

struct Context {
  std::vector<std::string> argv;  // for provenance (RunInfo)
  int exit_code = 0;
  // What the command is computing, named in the message if memory runs out
  // anyway (std::bad_alloc; main.cc), e.g. "the probe set (--samples, --L)".
  std::string activity;
  bool quiet = false;  // --quiet: no progress on stderr (progress_sink)
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

// Where every command reports progress (progress.cc): one line on stderr,
// "[  12.3 s] <command>: <message>" (seconds since the start), nothing with
// --quiet. Errors are not progress: they go to stderr whatever --quiet says.
using ProgressSink = std::function<void(const std::string&)>;
ProgressSink progress_sink(const Context& ctx, const std::string& command);

// Writes a study's files, stamped with `info`; returns the paths written and
// adds the figures gnuplot did not render to `skipped`.
using StudyWriter =
    std::function<std::vector<std::string>(const RunInfo& info, std::vector<std::string>* skipped)>;
// The end of a study command (theorem1, theorem2): prints the verdict and
// its reason, writes the files into `out` through `write`, lists what was
// written and not rendered, prints the time and sets the exit code.
// With `json`, one JSON object instead (command, verdict, reason, seconds,
// seed, out, files, figures not rendered, provenance).
void finish_study(const std::string& command, theorems::studies::StudyVerdict verdict,
                  const std::string& reason, double seconds, std::uint64_t seed,
                  const std::string& out, bool json, const StudyWriter& write, Context& ctx);

// --- Values -----------------------------------------------------------------
// "an integer in [lo, hi]"
std::string integer_range_text(long long lo, long long hi);
// Decimal digits (and a leading '-') only, in [lo, hi]; InputError otherwise.
long long parse_integer(const std::string& option, const std::string& text, long long lo,
                        long long hi);
// Decimal digits only, in [0, 2^64 - 1] (no sign, no wrap-around).
std::uint64_t parse_seed(const std::string& option, const std::string& text);
// A finite real in (lo, hi] or [lo, hi] (no upper end unless has_hi).
struct RealRange {
  double lo = 0;
  bool lo_open = true;  // x > lo (true) or x >= lo (false)
  bool has_hi = false;
  double hi = 0;
  std::string text() const;  // "a finite number > 0", "a number in (0, 1000000]"
};
double parse_real(const std::string& option, const std::string& text, const RealRange& range);

// --- Options ----------------------------------------------------------------
// Each appends its range to `help` and checks the value when it is parsed.
CLI::Option* add_int_option(CLI::App* app, const std::string& name, int* target, int lo, int hi,
                            const std::string& help);
CLI::Option* add_real_option(CLI::App* app, const std::string& name, double* target,
                             const RealRange& range, const std::string& help);
CLI::Option* add_real_option(CLI::App* app, const std::string& name,
                             std::function<void(double)> set, const RealRange& range,
                             const std::string& help);
// A word or file name (`expected` says which, for the missing-value message).
CLI::Option* add_text_option(CLI::App* app, const std::string& name, std::string* target,
                             const std::string& expected, const std::string& help);
// What a registered option expects ("an integer in [2, 1024]"); null if the
// option was not registered by the functions above.
const std::string* expected_value(const CLI::Option* option);
// InputError "OPTION: required: expected ..." unless the option was given.
void require_option(const CLI::Option* option);

// --- Options shared by several commands --------------------------------------
// Every command registers these through the functions below, never by hand.
//
// What "solves the task" and "sinks" mean (src/verdict_bars.h): --tolerance
// (when `tolerance`) and --sink-bar (when `sink_bar`), exact decimals, each
// checked when parsed and kept as written in *bars.
void add_verdict_bar_options(CLI::App* app, VerdictBars* bars, bool tolerance, bool sink_bar);
//
// The task: --n in [3, max_n] (unless the weight file fixes n), --L in
// [2, max_L] (limits.h, per command), --trigger-range paper|reference-code.
struct TaskOptions {
  int n = 16;
  int L = 16;
  TriggerRange range = TriggerRange::kPaper;
  CLI::Option *n_option = nullptr, *L_option = nullptr, *range_option = nullptr;
  Task task() const { return Task{n, L, range}; }
};
struct TaskOptionSpec {
  std::optional<int> max_n;  // none: no --n (n is the weight file's)
  std::string n_help;        // e.g. "token dimension, default 16"
  int max_L = 0;
  std::string L_help;  // e.g. "sequence length (required)"
};
void add_task_options(CLI::App* app, TaskOptions* task, const TaskOptionSpec& spec);
// --trigger-range text as a TriggerRange; InputError naming the option otherwise.
TriggerRange trigger_range_option(const std::string& text);
// InputError unless n >= 3, L >= 2 and the task has a trigger position.
void check_task_options(const Task& task);
// The task of a command that reads the weight file `file`: n is the file's;
// L is --L, else the file's "task" L (weight_file.h), and with neither the
// command refuses (there is no default L); the trigger convention is
// --trigger-range, else the file's, else paper (the task's documented
// default). An option that disagrees with the file is refused, naming both
// values, with the hint to drop the option. Then check_task_options.
Task resolve_task(const WeightFile& file, const TaskOptions& options);
// Where resolve_task took L and the convention from, for the printed
// header: "L = 16 (from the weight file), trigger range paper (default)".
std::string task_origin(const WeightFile& file, const TaskOptions& options);

// --seed in [0, 2^64 - 1]; --help shows `help` and the default *target.
CLI::Option* add_seed_option(CLI::App* app, std::uint64_t* target, const std::string& help);

// --out: where the command writes, a file or a folder (default shown in
// --help when `out` is not empty).
enum class OutputKind { kFile, kFolder };
CLI::Option* add_out_option(CLI::App* app, std::string* out, OutputKind kind,
                            const std::string& help);

// --out and --force of a study command (study_output.cc): the folder is
// --out when given (refused when it already holds files, unless --force),
// else a new runs/<command>-<UTC YYYYmmdd-HHMMSS>, printed.
struct StudyOut {
  std::string out;
  bool force = false;
  bool json = false;  // --json: one JSON summary on stdout (StdoutMute, finish_study)
  CLI::Option* out_option = nullptr;
};
// While alive and `on`, what the command writes to std::cout goes nowhere
// (its text summary, under --json); the JSON is printed after it ends.
class StdoutMute {
 public:
  explicit StdoutMute(bool on);
  ~StdoutMute();
  StdoutMute(const StdoutMute&) = delete;
  StdoutMute& operator=(const StdoutMute&) = delete;

 private:
  std::streambuf* saved_ = nullptr;
  std::stringbuf sink_;
};
void add_study_out_options(CLI::App* app, StudyOut* out);
// "runs/<command>-<UTC YYYYmmdd-HHMMSS>"
std::string default_run_folder(const std::string& command);
std::string resolve_study_out(const StudyOut& out, const std::string& command);

// InputError(file, field, "<what> needs about X GiB, more than the 4 GiB
// limit") if the estimate exceeds kMemoryBudgetBytes (limits.h).
void check_memory(const std::string& file, const std::string& field, double bytes,
                  const std::string& what);

void add_eval_command(CLI::App& app, Context& ctx);
void add_verify_command(CLI::App& app, Context& ctx);
void add_theorem1_command(CLI::App& app, Context& ctx);
void add_theorem2_command(CLI::App& app, Context& ctx);
void add_appendix_command(CLI::App& app, Context& ctx);
void add_attack_command(CLI::App& app, Context& ctx);
void add_sweep_command(CLI::App& app, Context& ctx);
void add_figures_command(CLI::App& app, Context& ctx);
void add_normalizations_command(CLI::App& app, Context& ctx);
void add_row1_below_command(CLI::App& app, Context& ctx);
void add_check_command(CLI::App& app, Context& ctx);
void add_completion_command(CLI::App& app, Context& ctx);
// The bash completion script of `root` (completion_command.cc): every
// command path's subcommands and visible options, walked from the root.
std::string bash_completion_script(const CLI::App& root);

}  // namespace sinkcert::cli
