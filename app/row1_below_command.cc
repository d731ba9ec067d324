// SPDX-License-Identifier: MIT
//
// sinkcert row1-below [--seed S] [--starts K] [--rounds R] [--start-seconds T]
//                     [--bound-seconds T] [--out DIR] [--force] [--json]
// The Ceres minimax with the row-1 floor at n = 5, L = 4, delta in {0.5,
// 0.2, 0.1}, from the explicit family's model and K seeded perturbations,
// each kept model's row-1 deficit and E certified
// (theorems/studies/row1_below_family.h); the files of
// theorems/reports/row1_below_report.h in --out. With --check DIR: the
// check of such a directory instead (exit 0 when it passes, 3 otherwise).
// Progress on stderr. Exit codes: 0 done, 2 bad input, 3 check failed.
#include <iostream>
#include <memory>
#include <sstream>

#include "app/commands.h"
#include "src/input_error.h"
#include "src/json_reader.h"
#include "src/output_files.h"
#include "src/run_info.h"
#include "theorems/reports/row1_below_report.h"

namespace sinkcert::cli {

namespace {

struct Row1BelowCliOptions {
  theorems::studies::Row1BelowOptions study;
  std::uint64_t seed = 1;
  StudyOut out;
  std::string check;
  std::string deltas;
  double check_seconds = 5;
};

void run_row1_below(const Row1BelowCliOptions& opt, Context& ctx) {
  if (!opt.check.empty()) {
    const theorems::reports::Row1BelowCheck c =
        theorems::reports::check_row1_below_dir(opt.check, opt.check_seconds);
    for (const std::string& l : c.lines) std::cout << l << "\n";
    for (const std::string& l : c.failures) std::cout << "FAILED: " << l << "\n";
    std::cout << "row1-below check: " << (c.ok ? "VERIFIED" : "NOT VERIFIED") << "\n";
    ctx.exit_code = c.ok ? kExitSuccess : kExitNotVerified;
    return;
  }
  theorems::studies::Row1BelowOptions o = opt.study;
  o.seed = opt.seed;
  if (!opt.deltas.empty()) {
    o.deltas.clear();
    std::stringstream s(opt.deltas);
    std::string word;
    while (std::getline(s, word, ',')) {
      try {
        const Rational d = internal::parse_decimal(word);
        if (!(d > 0 && d < 1)) throw std::invalid_argument("range");
      } catch (const std::invalid_argument&) {
        throw InputError(
            "command line", "--deltas",
            "a comma-separated list of decimals in (0, 1), got \"" + opt.deltas + "\"");
      }
      o.deltas.push_back(word);
    }
  }
  auto mute = std::make_unique<StdoutMute>(opt.out.json);
  const std::string out = resolve_study_out(opt.out, "row1-below");
  check_output_dir(out, "--out");
  ctx.activity = "the row-1 search below the explicit family";
  const ProgressSink sink = progress_sink(ctx, "row1-below");
  const auto rows = theorems::studies::row1_below_family(o, [&](const std::string& s) {
    if (sink) sink(s);
  });
  const RunInfo info = make_run_info(ctx.argv, o.seed, "double search; MPFI for CERTIFIED");
  const auto written = theorems::reports::write_row1_below_outputs(rows, o, info, out);
  std::cout << theorems::reports::row1_below_readme(
      theorems::reports::row1_below_summary(rows, o, info));
  std::cout << "wrote " << written.size() << " files to " << out << "\n";
  mute.reset();
  if (opt.out.json) {
    std::cout << theorems::reports::row1_below_summary(rows, o, info).dump(2) << "\n";
  }
  ctx.exit_code = kExitSuccess;
}

}  // namespace

void add_row1_below_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<Row1BelowCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "row1-below",
      "the minimax with the row-1 floor: models below the row-1 frontier's explicit family, "
      "their deficit and E certified");
  add_seed_option(sub, &opt->seed, "seed of the perturbed starts and the adversary");
  add_int_option(sub, "--starts", &opt->study.perturbed_starts, 0, 100,
                 "perturbed starts besides the family's model");
  add_int_option(sub, "--rounds", &opt->study.rounds, 1, 100000, "minimax rounds per start");
  add_real_option(sub, "--start-seconds", &opt->study.start_seconds, RealRange{0, true, false, 0},
                  "minimax time limit per start");
  add_real_option(sub, "--bound-seconds", &opt->study.bound_seconds, RealRange{0, true, false, 0},
                  "time budget of each E bound");
  add_int_option(sub, "--lm-iterations", &opt->study.lm_iterations, 1, 1000,
                 "LM iterations per minimax round");
  add_real_option(sub, "--perturbation", &opt->study.perturbation, RealRange{0, true, false, 0},
                  "standard deviation of the perturbed starts");
  add_real_option(sub, "--reject-factor", &opt->study.reject_factor, RealRange{1, false, true, 10},
                  "the Lawson trust control's factor");
  add_text_option(sub, "--deltas", &opt->deltas, "a comma-separated list of decimals",
                  "the deltas (default 0.5,0.2,0.1)");
  add_study_out_options(sub, &opt->out);
  add_text_option(sub, "--check", &opt->check, "a directory",
                  "check a directory written by this command instead of searching");
  add_real_option(sub, "--check-seconds", &opt->check_seconds, RealRange{0, true, false, 0},
                  "time budget of each E rerun of --check");
  sub->callback([opt, &ctx] { run_row1_below(*opt, ctx); });
}

}  // namespace sinkcert::cli
