// SPDX-License-Identifier: MIT
//
// sinkcert appendix [--out results] [--models results] [--full | --quick]:
// regenerates every appendix table and figure and <out>/appendix.tex
// (theorems/reports/appendix.h) from the committed search models under --models;
// progress on stderr. By design it replaces the committed results/ of the
// current directory unless --out names another folder, and says so first.
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "theorems/reports/appendix.h"

namespace sinkcert::cli {

void add_appendix_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<theorems::AppendixOptions>();
  CLI::App* cmd = app.add_subcommand(
      "appendix",
      "regenerate every appendix table (LaTeX, CSV, JSON) and figure, and appendix.tex; by "
      "design this REPLACES results/tables, results/figures and results/appendix.tex of the "
      "current directory unless --out names another folder");
  add_out_option(cmd, &opt->out, OutputKind::kFolder, "output folder");
  cmd->add_option("--models", opt->models,
                  "folder of the committed search models (holds theorem1/); default results/ of "
                  "the current directory")
      ->capture_default_str();
  auto full = std::make_shared<bool>(false), quick = std::make_shared<bool>(false);
  auto* full_flag =
      cmd->add_flag("--full", *full, "paper-size runs (larger branch-and-bound budgets)");
  cmd->add_flag("--quick", *quick, "every table and figure on small configurations (seconds)")
      ->excludes(full_flag);
  cmd->callback([opt, full, quick, &ctx] {
    opt->size = *full    ? theorems::RunSize::kFull
                : *quick ? theorems::RunSize::kQuick
                         : theorems::RunSize::kDefault;
    // before minutes of computation: every input present
    theorems::check_appendix_inputs(*opt);
    // before minutes of computation: --out must be writable, its tables/,
    // figures/ and appendix.tex of the right kind
    check_output_set(theorems::appendix_output_set(opt->out), "--out");
    // the first line of the output, once the run can start
    std::cout << "appendix: regenerating tables/, figures/ and appendix.tex in " << opt->out
              << "/ (replaced as a whole), from the models in " << opt->models << "/" << std::endl;
    const auto summary = theorems::generate_appendix(*opt, ctx.argv, progress_sink(ctx, ""));
    std::cout << "appendix: " << summary.tables.size() << " tables, " << summary.figures.size()
              << " figures under " << opt->out << " in " << summary.seconds << " s\n";
  });
}

}  // namespace sinkcert::cli
