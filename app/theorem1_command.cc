// SPDX-License-Identifier: MIT
//
// sinkcert theorem1 --n N --L L [--trigger-range paper|reference-code]
//                   [--seed S] [--out DIR] [--quick] [--threads T] [--no-attack]
// Theorem 1 studied by search (theorems/studies/theorem1_study.h): descent path,
// frontier eps*(delta), BOS mass against content, the final certification
// by the attack, and a verdict; the same result for every --threads.
// Progress on stderr; summary on stdout; JSON, CSV, weight files and
// figures in --out.
// Exit codes: 0 CONSISTENT, 3 COUNTEREXAMPLE CANDIDATE, 4 INCONCLUSIVE or
// NOT APPLICABLE (L = 2),
// 2 bad input.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "search/minimax.h"
#include "src/input_error.h"
#include "src/limits.h"
#include "src/parallel_tasks.h"
#include "src/run_info.h"
#include "theorems/reports/theorem1_report.h"
#include "theorems/studies/theorem1_study.h"

namespace sinkcert::cli {

namespace {

// The study has at most starts + deltas (11 by default) tasks at once; more
// threads idle. The cap only rejects nonsense.
constexpr int kMaxTheorem1Threads = 64;

struct Theorem1CliOptions {
  TaskOptions task;
  std::uint64_t seed = 0;
  StudyOut out;
  bool quick = false;
  int threads = default_thread_count();
  bool no_attack = false;
};

void run_theorem1(const Theorem1CliOptions& opt, Context& ctx) {
  const Task task = opt.task.task();
  check_task_options(task);
  theorems::studies::Theorem1Options o;
  if (opt.quick) {
    o = theorems::studies::quick_options(task, opt.seed);
  } else {
    o.task = task;
    o.seed = opt.seed;
  }
  o.threads = opt.threads;
  o.attack = !opt.no_attack;
  // The searches running at once must fit the memory budget (limits.h):
  // each is a single-head minimax whose compressed least-squares block
  // holds P x P matrices, P = 2 n^2 (search/minimax.h,
  // single_head_minimax_bytes: about 8 x 6.5 P^2 bytes, independent of L
  // but for the active set); the path starts run at once, then the frontier
  // points and the nuance scan, each phase on up to --threads threads.
  const double search_bytes = search::single_head_minimax_bytes(task, kTheorem1MaxInputsPerTrigger);
  const int at_once =
      std::min(o.threads, std::max(o.starts, static_cast<int>(o.deltas.size()) + 1));
  if (at_once * search_bytes > static_cast<double>(kMemoryBudgetBytes)) {
    const int fit = static_cast<int>(static_cast<double>(kMemoryBudgetBytes) / search_bytes);
    const std::string why =
        " at --n " + std::to_string(task.n) + " (each search's P x P matrices, P = 2 n^2, about " +
        std::to_string(static_cast<long long>(search_bytes / 1e6)) +
        " MB, times the searches at once must fit " + std::to_string(kMemoryBudgetBytes >> 30) +
        " GiB; a smaller --n fits more), got ";
    throw InputError("command line", "--threads",
                     (fit >= 1 ? "expected " + integer_range_text(1, fit) : "no --threads fits") +
                         why + std::to_string(opt.threads));
  }
  // before minutes of search: --out must be a writable folder whose study
  // files are regular files
  auto mute = std::make_unique<StdoutMute>(opt.out.json);
  const std::string out = resolve_study_out(opt.out, "theorem1");
  check_output_set(theorems::reports::theorem1_output_set(out), "--out");
  ctx.activity = "running the search (--n, --L)";
  std::cout << "theorem1: n = " << task.n << ", L = " << task.L << ", trigger range "
            << to_string(task.range) << ", seed " << opt.seed << (opt.quick ? " (quick)" : "")
            << "\n";
  std::cout << "parametrization: " << search::kParametrization << "\n";
  const theorems::studies::Theorem1Study st =
      theorems::studies::run_theorem1_study(o, progress_sink(ctx, "theorem1"));
  // SEARCH values are the certified ones (adversary.h, certify_witness);
  // where the search's double value differs in the first digit, say so
  const auto double_note = [](const search::Witness& w) {
    char note[96] = "";
    if (w.double_disagrees) {
      std::snprintf(note, sizeof note, " (the double value %.3e differs in the first digit)",
                    w.value);
    }
    return std::string(note);
  };
  // which adversary found the reported worst case, and the other's value
  const auto found_by = [](const theorems::studies::FinalCertification& fc) {
    if (!fc.attacked) return std::string();
    const bool attack_won = fc.found_by != "minimax adversary";
    return " (" + fc.found_by + "; " + (attack_won ? "minimax adversary " : "attack ") +
           theorems::studies::format_bound(
               attack_won ? fc.minimax_worst_case : fc.attack_worst_case, true, 4) +
           ")";
  };
  char buf[512];
  for (const auto& r : st.runs) {
    char min_bos[160] = "none (no non-trigger position)";
    if (r.min_bos.best.value <= 1) {
      std::snprintf(min_bos, sizeof min_bos, "%s %s%s",
                    theorems::studies::format_bound(r.min_bos.best.certified, false, 13).c_str(),
                    r.min_bos.evidence.label().c_str(), double_note(r.min_bos.best).c_str());
    }
    std::snprintf(buf, sizeof buf,
                  "path start %d (normal std %g): worst case %s %s%s%s, mean BOS "
                  "%.12f %s, smallest BOS found %s, %s, %.1f s\n",
                  r.start, r.init_std,
                  theorems::studies::format_bound(r.result.worst.certified, true, 4).c_str(),
                  r.result.evidence.label().c_str(), double_note(r.result.worst).c_str(),
                  found_by(r.final_certification).c_str(), r.stats.heads[0][0].overall.mean,
                  r.stats.evidence.label().c_str(), min_bos, r.result.stop_reason.c_str(),
                  r.result.seconds);
    std::cout << buf;
  }
  std::cout << "frontier: worst case of the frontier model at each delta (SEARCH, lower bound on "
               "that model's E; no bound on eps*(delta), for which the model witnesses an upper "
               "bound only once certified); mean BOS NUMERIC(53):\n";
  for (const auto& p : st.frontier) {
    std::snprintf(buf, sizeof buf, "  delta %-6g worst case %s%s%s  mean BOS %.6f  %s%s\n", p.delta,
                  theorems::studies::format_bound(p.eps, true, 5).c_str(),
                  double_note(p.result.worst).c_str(), found_by(p.final_certification).c_str(),
                  p.bos_mean, p.feasible ? "feasible" : "NO FEASIBLE MODEL",
                  p.converged ? "" : " (not converged)");
    std::cout << buf;
  }
  std::snprintf(buf, sizeof buf,
                "log-log slope of the frontier models' worst cases against delta: %.3f +- %.3f "
                "(fit standard error; SEARCH lower bounds, not eps*(delta))\n",
                st.slope, st.slope_stderr);
  std::cout << buf;
  mute.reset();  // the summary below is the one output
  finish_study(
      "theorem1", st.verdict, st.reason, st.seconds, opt.seed, out, opt.out.json,
      [&](const RunInfo& info, std::vector<std::string>* skipped) {
        return theorems::reports::write_theorem1_outputs(st, info, out, skipped);
      },
      ctx);
}

}  // namespace

int exit_code_for(theorems::studies::StudyVerdict v) {
  switch (v) {
    case theorems::studies::StudyVerdict::kConsistent:
      return kExitSuccess;
    case theorems::studies::StudyVerdict::kCounterexampleCandidate:
      return kExitNotVerified;
    case theorems::studies::StudyVerdict::kInconclusive:
    case theorems::studies::StudyVerdict::kNotApplicable:
      return kExitUndecided;
  }
  return kExitInternal;
}

void finish_study(const std::string& command, theorems::studies::StudyVerdict verdict,
                  const std::string& reason, double seconds, std::uint64_t seed,
                  const std::string& out, bool json, const StudyWriter& write, Context& ctx) {
  const RunInfo info = make_run_info(ctx.argv, seed, "double");
  std::vector<std::string> skipped;
  ctx.exit_code = exit_code_for(verdict);
  if (json) {
    const auto written = write(info, &skipped);
    const nlohmann::json doc = {{"command", command},
                                {"verdict", theorems::studies::to_string(verdict)},
                                {"reason", reason},
                                {"seconds", seconds},
                                {"seed", seed},
                                {"out", out},
                                {"files", written},
                                {"figures_not_rendered", skipped},
                                {kProvenanceKey, to_json(info)}};
    std::cout << doc.dump(2) << "\n";
    return;
  }
  std::cout << "verdict: " << theorems::studies::to_string(verdict) << "\n  " << reason << "\n";
  const auto written = write(info, &skipped);
  std::cout << "wrote " << written.size() << " files to " << out << "\n";
  for (const auto& s : skipped) std::cout << "  figure not rendered: " << s << "\n";
  char buf[64];
  std::snprintf(buf, sizeof buf, "time: %.1f s\n", seconds);
  std::cout << buf;
}

void add_theorem1_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<Theorem1CliOptions>();
  CLI::App* sub = app.add_subcommand(
      "theorem1", "Theorem 1 by adversarial search: descent path, frontier eps*(delta), verdict");
  add_task_options(
      sub, &opt->task,
      {kMaxTheorem1N, "token dimension, default 16", kMaxTheorem1L, "sequence length, default 16"});
  add_seed_option(sub, &opt->seed, "seed of inits, active sets and adversary");
  add_study_out_options(sub, &opt->out);
  sub->add_flag("--quick", opt->quick, "fewer starts and rounds (e.g. with --n 8 --L 8)");
  add_int_option(sub, "--threads", &opt->threads, 1, kMaxTheorem1Threads,
                 "threads for the independent path starts, frontier points and final "
                 "certifications (same result for any count), default: the hardware's");
  sub->add_flag("--no-attack", opt->no_attack,
                "final worst cases from the minimax's adversary alone, without the attack");
  sub->callback([opt, &ctx] { run_theorem1(*opt, ctx); });
}

}  // namespace sinkcert::cli
