// SPDX-License-Identifier: MIT
//
// sinkcert check --weights W.json [--L L] [--trigger-range paper|reference-code]
//                [--seconds S] [--seed S] [--tolerance T] [--sink-bar B]
//                [--out DIR] [--json]
// Everything sinkcert can say about one model within one time budget
// (theorems/reports/model_check.h): whether it solves the task, how badly at
// worst and where, whether and where it sinks, each number with its
// evidence level. L and the trigger convention default to the weight file's
// "task". Prints the summary (with --json, report.json's document instead)
// and writes, as one set, into --out (default runs/check-<UTC time>/; never
// under results/): report.json, report.md, the attention heat map
// (attention_mean_std.dat, .gp, .pdf, .png, rendered by gnuplot) and
// witness.json, the worst input found (`eval --input` re-checks it), by
// theorems/reports/check_files.h, as Python's Model.check(out=DIR) does.
// "Solves" and "sinks" against --tolerance and --sink-bar
// (src/verdict_bars.h). Progress on stderr; --quiet prints the two verdict
// lines only (the files are written all the same). Exit codes: 0 done, 2
// bad input.
#include <iostream>
#include <memory>
#include <sstream>

#include "app/commands.h"
#include "src/input_error.h"
#include "src/limits.h"
#include "src/run_info.h"
#include "src/table_writer.h"
#include "src/verdict_bars.h"
#include "src/weight_file.h"
#include "theorems/reports/check_files.h"
#include "theorems/reports/model_check.h"

namespace sinkcert::cli {

namespace {

struct CheckCliOptions {
  std::string weights, out;
  TaskOptions task;
  double seconds = 60;
  std::uint64_t seed = 0;
  bool json = false;
  VerdictBars bars;
  CLI::Option* weights_option = nullptr;
};

std::string seconds_text(double s) {
  std::ostringstream t;
  t << s << " s";
  return t.str();
}

// runs/check-20261202T084012Z
std::string default_out() {
  std::string t = utc_now();
  std::string compact;
  for (char c : t) {
    if (c != '-' && c != ':') compact += c;
  }
  return "runs/check-" + compact;
}

void run_check(const CheckCliOptions& opt, Context& ctx) {
  require_option(opt.weights_option);
  ctx.activity = "reading " + opt.weights;
  const WeightFile file = read_weight_file(opt.weights);
  const Task task = resolve_task(file, opt.task);
  const std::string out = opt.out.empty() ? default_out() : opt.out;
  theorems::reports::check_report_dir(out, "--out");
  const ProgressSink say = progress_sink(ctx, "check");
  say(describe(file) + " (" + opt.weights + "), " + task_origin(file, opt.task) + ", budget " +
      seconds_text(opt.seconds));
  ctx.activity = "checking the model (--L, --seconds)";
  theorems::reports::CheckOptions options;
  options.seconds = opt.seconds;
  options.seed = opt.seed;
  options.bars = opt.bars;
  options.progress = say;
  const theorems::reports::CheckReport report = theorems::reports::check_model(file, task, options);
  const RunInfo info = make_run_info(ctx.argv, opt.seed, "exact model; double search, mpfi bounds");
  const theorems::reports::CheckFiles files =
      theorems::reports::write_check_files(report, info, out);
  nlohmann::json doc = files.document;
  for (const auto& f : files.failures) {
    std::cerr << "check: NOT rendered: " << f << "; its data and script are written\n";
  }
  if (opt.json) {
    doc["out"] = out;
    std::cout << doc.dump(2) << std::endl;
    return;
  }
  if (ctx.quiet) {
    std::cout << report.solves_text << "\n" << report.sinks_text << "\n";
    return;
  }
  std::cout << report.summary();
  std::cout << "written to " << out << "/: report.json, report.md, "
            << theorems::reports::kCheckFigure << ".png"
            << (report.witness_tokens.size() > 0
                    ? ", witness.json (re-check: sinkcert eval --weights " + opt.weights +
                          " --input " + out + "/witness.json --certify 3)"
                    : std::string())
            << "\n";
}

}  // namespace

void add_check_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<CheckCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "check",
      "everything about one model within one budget: does it solve the task, how badly at "
      "worst, does it sink (report into --out)");
  opt->weights_option = add_text_option(sub, "--weights", &opt->weights, "a file name",
                                        "weight file (sinkcert-weights JSON), required");
  add_task_options(
      sub, &opt->task,
      {std::nullopt, "", kMaxL, "sequence length (default: the weight file's task.L)"});
  add_real_option(sub, "--seconds", &opt->seconds, RealRange{0, true, true, kMaxBoundSeconds},
                  "time budget of the whole check, default 60");
  add_seed_option(sub, &opt->seed, "seed of the attack");
  add_verdict_bar_options(sub, &opt->bars, true, true);
  add_out_option(sub, &opt->out, OutputKind::kFolder,
                 "report folder, default runs/check-<UTC time>/");
  sub->add_flag("--json", opt->json, "print report.json's document on stdout");
  sub->callback([opt, &ctx] { run_check(*opt, ctx); });
}

}  // namespace sinkcert::cli
