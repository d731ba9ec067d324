// SPDX-License-Identifier: MIT
//
// sinkcert appendix [--out results] [--full]: regenerates every appendix
// table and figure and <out>/appendix.tex (theorems/appendix.h); progress on
// stderr.
#include <iostream>
#include <memory>

#include "src/cli/commands.h"
#include "theorems/appendix.h"

namespace sinkcert::cli {

void add_appendix_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<theorems::AppendixOptions>();
  CLI::App* cmd = app.add_subcommand(
      "appendix",
      "regenerate every appendix table (LaTeX, CSV, JSON) and figure, and appendix.tex");
  cmd->add_option("--out", opt->out, "output folder")->capture_default_str();
  cmd->add_flag("--full", opt->full, "paper-size runs (larger branch-and-bound budgets)");
  cmd->callback([opt, &ctx] {
    // before minutes of computation: --out must be writable, its tables/,
    // figures/ and appendix.tex of the right kind
    check_output_set(theorems::appendix_output_set(opt->out), "--out");
    const auto summary = theorems::generate_appendix(
        *opt, ctx.argv, [](const std::string& line) { std::cerr << line << std::endl; });
    std::cout << "appendix: " << summary.tables.size() << " tables, " << summary.figures.size()
              << " figures under " << opt->out << " in " << summary.seconds << " s\n";
  });
}

}  // namespace sinkcert::cli
