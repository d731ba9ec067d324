// SPDX-License-Identifier: MIT
//
// Each subcommand registers itself on the CLI11 app. A command's callback
// calls into the libraries, prints, and sets ctx.exit_code; bad input is
// reported by throwing sinkcert::InputError (exit code 2).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace sinkcert::cli {

struct Context {
  std::vector<std::string> argv;  // for provenance (RunInfo)
  int exit_code = 0;
};

void add_eval_command(CLI::App& app, Context& ctx);
void add_verify_command(CLI::App& app, Context& ctx);
void add_theorem1_command(CLI::App& app, Context& ctx);
void add_appendix_command(CLI::App& app, Context& ctx);

}  // namespace sinkcert::cli
