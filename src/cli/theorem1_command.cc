// SPDX-License-Identifier: MIT
//
// sinkcert theorem1 --n N --L L [--trigger-range paper|reference-code]
//                   [--seed S] [--out DIR] [--quick]
// Theorem 1 studied by search (theorems/theorem1_study.h): descent path,
// frontier eps*(delta), BOS mass against content, and a verdict. Progress on
// stderr; summary on stdout; JSON, CSV, weight files and figures in --out.
// Exit codes: 0 CONSISTENT, 3 COUNTEREXAMPLE CANDIDATE, 4 INCONCLUSIVE or
// NOT APPLICABLE (L = 2),
// 2 bad input.
#include <cstdio>
#include <iostream>
#include <memory>

#include "src/cli/commands.h"
#include "src/run_info.h"
#include "theorems/theorem1_study.h"

namespace sinkcert::cli {

namespace {

struct Theorem1CliOptions {
  int n = 16;
  int L = 16;
  std::string trigger_range = "paper";
  std::uint64_t seed = 0;
  std::string out = "results/theorem1";
  bool quick = false;
};

void run_theorem1(const Theorem1CliOptions& opt, Context& ctx) {
  Task task;
  task.range = trigger_range_option(opt.trigger_range);
  task.n = opt.n;
  task.L = opt.L;
  check_task_options(task);
  theorems::Theorem1Options o;
  if (opt.quick) {
    o = theorems::quick_options(task, opt.seed);
  } else {
    o.task = task;
    o.seed = opt.seed;
  }
  std::cout << "theorem1: n = " << task.n << ", L = " << task.L << ", trigger range "
            << to_string(task.range) << ", seed " << opt.seed << (opt.quick ? " (quick)" : "")
            << "\n";
  std::cout << "parametrization: " << search::kParametrization << "\n";
  const theorems::Theorem1Study st = theorems::run_theorem1_study(
      o, [](const std::string& line) { std::cerr << "theorem1: " << line << "\n"; });
  char buf[256];
  for (const auto& r : st.runs) {
    char min_bos[64] = "none (no non-trigger position)";
    if (r.min_bos.best.value <= 1) {
      std::snprintf(min_bos, sizeof min_bos, "%.12f SEARCH(upper bound)", r.min_bos.best.value);
    }
    std::snprintf(buf, sizeof buf,
                  "path start %d (normal std %g): worst case %.3e SEARCH(lower bound), mean BOS "
                  "%.12f NUMERIC(53), smallest BOS found %s, %s, %.1f s\n",
                  r.start, r.init_std, r.result.worst.value, r.stats.heads[0][0].overall.mean,
                  min_bos, r.result.stop_reason.c_str(), r.result.seconds);
    std::cout << buf;
  }
  std::cout
      << "frontier (eps: SEARCH lower bound on the model's worst case; mean BOS NUMERIC(53)):\n";
  for (const auto& p : st.frontier) {
    std::snprintf(buf, sizeof buf, "  delta %-6g eps %.4e  mean BOS %.6f  %s%s\n", p.delta, p.eps,
                  p.bos_mean, p.feasible ? "feasible" : "NO FEASIBLE MODEL",
                  p.converged ? "" : " (not converged)");
    std::cout << buf;
  }
  std::snprintf(buf, sizeof buf, "log-log slope of eps(delta): %.3f +- %.3f (fit standard error)\n",
                st.slope, st.slope_stderr);
  std::cout << buf;
  std::cout << "verdict: " << st.verdict << "\n  " << st.reason << "\n";
  const RunInfo info = make_run_info(ctx.argv, opt.seed, "double");
  std::vector<std::string> skipped;
  const auto written = theorems::write_theorem1_outputs(st, info, opt.out, &skipped);
  std::cout << "wrote " << written.size() << " files to " << opt.out << "\n";
  for (const auto& s : skipped)
    std::cout << "  figure not rendered (gnuplot failed): " << s << "\n";
  std::snprintf(buf, sizeof buf, "time: %.1f s\n", st.seconds);
  std::cout << buf;
  ctx.exit_code = st.verdict == "CONSISTENT" ? 0 : st.verdict == "COUNTEREXAMPLE CANDIDATE" ? 3 : 4;
}

}  // namespace

void add_theorem1_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<Theorem1CliOptions>();
  CLI::App* sub = app.add_subcommand(
      "theorem1", "Theorem 1 by adversarial search: descent path, frontier eps*(delta), verdict");
  sub->add_option("--n", opt->n, "token dimension")->capture_default_str();
  sub->add_option("--L", opt->L, "sequence length")->capture_default_str();
  sub->add_option("--trigger-range", opt->trigger_range, "paper (default) or reference-code");
  sub->add_option("--seed", opt->seed, "seed of inits, active sets and adversary")
      ->capture_default_str();
  sub->add_option("--out", opt->out, "output directory")->capture_default_str();
  sub->add_flag("--quick", opt->quick, "fewer starts and rounds (e.g. with --n 8 --L 8)");
  sub->callback([opt, &ctx] { run_theorem1(*opt, ctx); });
}

}  // namespace sinkcert::cli
