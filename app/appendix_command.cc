// SPDX-License-Identifier: MIT
//
// sinkcert appendix [--out results] [--models results] [--full | --quick] [--only NAMES]
//                   [--threads T] [--retrain] [--t2c-bos-seconds S] [--t2c-loss-seconds S]:
// regenerates every appendix table and figure and <out>/appendix.tex
// (theorems/reports/appendix.h) from the committed search models under --models;
// progress on stderr. By design it replaces the committed results/ of the
// current directory unless --out names another folder, and says so first.
// --only NAMES computes those tables and figures (comma-separated) and writes
// their files into <out>/tables/ and <out>/figures/ alone (nothing else is
// replaced). --threads T: T worker processes build independent tables and
// figures at once (default: the hardware's; the same files for every T).
// --retrain: first retrain the attention figures' models by the paper's
// recipe into <models>/figure_models/ (replacing the committed ones).
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "theorems/reports/appendix.h"

namespace sinkcert::cli {

namespace {

// The appendix has 19 jobs at the default size (theorems/reports/appendix.h);
// more workers idle. The cap only rejects nonsense.
constexpr int kMaxAppendixThreads = 64;

}  // namespace

void add_appendix_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<theorems::reports::AppendixOptions>();
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
  cmd->add_option("--only", opt->only,
                  "compute only these tables and figures, comma-separated (e.g. "
                  "t2c_theorem2_certified,f3_theorem2_certified, which share their computation), "
                  "and write their files into <out>/tables and <out>/figures, leaving everything "
                  "else in <out> as it is");
  add_int_option(cmd, "--threads", &opt->threads, 1, kMaxAppendixThreads,
                 "worker processes building independent tables and figures at once (the same "
                 "files for any count), default: the hardware's");
  cmd->add_flag("--retrain", opt->retrain,
                "first retrain the attention figures' models by the paper's recipe (minutes; "
                "deterministic) into <models>/figure_models/, replacing the committed ones, "
                "then read them");
  add_real_option(cmd, "--t2c-bos-seconds", &opt->t2c_bos_seconds, RealRange{0, true},
                  "T2c's time guard per head and BOS extreme, in seconds (default: by size)");
  add_real_option(
      cmd, "--t2c-loss-seconds", &opt->t2c_loss_seconds, RealRange{0, true},
      "T2c's time guard for each model's worst-case loss, in seconds (default: by size)");
  cmd->callback([opt, full, quick, &ctx] {
    opt->size = *full    ? theorems::studies::RunSize::kFull
                : *quick ? theorems::studies::RunSize::kQuick
                         : theorems::studies::RunSize::kDefault;
    // before minutes of computation: every input present
    theorems::reports::check_appendix_inputs(*opt);
    if (!opt->only.empty()) {
      std::cout << "appendix: computing " << opt->only << " alone into " << opt->out
                << "/, from the models in " << opt->models << "/" << std::endl;
      const auto summary =
          theorems::reports::generate_appendix(*opt, ctx.argv, progress_sink(ctx, ""));
      std::cout << "appendix: " << opt->only << " written in " << summary.seconds << " s\n";
      return;
    }
    // before minutes of computation: --out must be writable, its tables/,
    // figures/ and appendix.tex of the right kind
    check_output_set(theorems::reports::appendix_output_set(opt->out), "--out");
    // the first line of the output, once the run can start
    std::cout << "appendix: regenerating tables/, figures/ and appendix.tex in " << opt->out
              << "/ (replaced as a whole), from the models in " << opt->models << "/" << std::endl;
    const auto summary =
        theorems::reports::generate_appendix(*opt, ctx.argv, progress_sink(ctx, ""));
    std::cout << "appendix: " << summary.tables.size() << " tables, " << summary.figures.size()
              << " figures under " << opt->out << " in " << summary.seconds << " s\n";
  });
}

}  // namespace sinkcert::cli
