// SPDX-License-Identifier: MIT
//
// sinkcert sweep --grid GRID.json --out DIR
// Runs a grid of studies (theorems/studies/sweep.h): one process by default, or
// over MPI ranks when started by mpirun/srun (rank 0 schedules, the others
// run configurations). Each configuration's result goes to
// DIR/configs/<key>.json as it finishes; a rerun skips the finished ones;
// the merged table is DIR/sweep.json, .csv, .tex. Progress on stderr,
// summary on stdout (rank 0). Exit codes: 0 every configuration done and
// merged, 1 a configuration's study failed (the others are kept), 2 bad
// input (grid file, --out, a result file of another grid).
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "theorems/studies/sweep.h"

namespace sinkcert::cli {

namespace {

struct SweepCliOptions {
  std::string grid;
  std::string out;
  CLI::Option *grid_option = nullptr, *out_option = nullptr;
};

void run_sweep_command(const SweepCliOptions& opt, Context& ctx) {
  require_option(opt.grid_option);
  require_option(opt.out_option);
  ctx.activity = "running the sweep (--grid)";
  const theorems::studies::SweepOutcome o =
      theorems::studies::run_sweep(opt.grid, opt.out, ctx.argv, progress_sink(ctx, "sweep"));
  if (o.quiet_exit_code != 0) {
    ctx.exit_code = o.quiet_exit_code;
    return;
  }
  if (!o.root) return;
  std::cout << "sweep: " << o.total << " configurations: " << o.skipped
            << " finished earlier (skipped), " << o.ran << " run now on " << o.ranks
            << " rank(s)\n";
  std::cout << "wrote " << opt.out << "/sweep.json, sweep.csv, sweep.tex, sweep_times.csv\n";
  ctx.exit_code = kExitSuccess;
}

}  // namespace

void add_sweep_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<SweepCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "sweep", "run a grid of studies (one process, or over MPI ranks under mpirun/srun)");
  opt->grid_option =
      add_text_option(sub, "--grid", &opt->grid, "a grid file (JSON)",
                      "grid file (required): study, axes, options (docs/commands.md, sweep)");
  opt->out_option =
      add_out_option(sub, &opt->out, OutputKind::kFolder,
                     "output folder: configs/<key>.json, sweep.json/.csv/.tex (required)");
  sub->callback([opt, &ctx] { run_sweep_command(*opt, ctx); });
}

}  // namespace sinkcert::cli
