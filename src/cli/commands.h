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
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/task.h"

namespace sinkcert::cli {

struct Context {
  std::vector<std::string> argv;  // for provenance (RunInfo)
  int exit_code = 0;
  // What the command is computing, named in the message if memory runs out
  // anyway (std::bad_alloc; main.cc), e.g. "the probe set (--samples, --L)".
  std::string activity;
};

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
CLI::Option* add_seed_option(CLI::App* app, std::uint64_t* target, const std::string& help);
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

// The task options shared by verify relu, verify bound, theorem1 and eval
// --samples: --n in [3, max_n], --L in [2, max_L] (limits.h per command),
// --trigger-range paper|reference-code.
CLI::Option* add_n_option(CLI::App* app, int* n, int max_n, const std::string& help);
CLI::Option* add_L_option(CLI::App* app, int* L, int max_L, const std::string& help);
CLI::Option* add_trigger_range_option(CLI::App* app, TriggerRange* range, const std::string& help);
// --trigger-range text as a TriggerRange; InputError naming the option otherwise.
TriggerRange trigger_range_option(const std::string& text);
// InputError unless n >= 3, L >= 2 and the task has a trigger position.
void check_task_options(const Task& task);

// InputError(file, field, "<what> needs about X GiB, more than the 4 GiB
// limit") if the estimate exceeds kMemoryBudgetBytes (limits.h).
void check_memory(const std::string& file, const std::string& field, double bytes,
                  const std::string& what);

void add_eval_command(CLI::App& app, Context& ctx);
void add_verify_command(CLI::App& app, Context& ctx);
void add_theorem1_command(CLI::App& app, Context& ctx);
void add_appendix_command(CLI::App& app, Context& ctx);

}  // namespace sinkcert::cli
