// SPDX-License-Identifier: MIT
//
// Each subcommand registers itself on the CLI11 app. A command's callback
// calls into the libraries, prints, and sets ctx.exit_code; bad input is
// reported by throwing sinkcert::InputError (exit code 2).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "src/task.h"

namespace sinkcert::cli {

struct Context {
  std::vector<std::string> argv;  // for provenance (RunInfo)
  int exit_code = 0;
};

// --trigger-range as a TriggerRange; InputError naming the option otherwise.
TriggerRange trigger_range_option(const std::string& text);
// InputError unless --n >= 3, --L >= 2 and the task has a trigger position.
void check_task_options(const Task& task);

void add_eval_command(CLI::App& app, Context& ctx);
void add_verify_command(CLI::App& app, Context& ctx);
void add_theorem1_command(CLI::App& app, Context& ctx);
void add_appendix_command(CLI::App& app, Context& ctx);

}  // namespace sinkcert::cli
