// SPDX-License-Identifier: MIT
//
// sinkcert normalizations --n N --L L [--trigger-range paper|reference-code]
//                         [--seed S] [--out DIR] [--quick] [--attention K1,K2,...]
// Which attention kinds need a sink (theorems/studies/normalization_study.h): per
// kind the descent path, the frontier under a BOS cap with certified upper
// bounds on eps*(delta), a sink-free candidate, and a verdict. Progress on
// stderr; the table on stdout; normalizations.{tex,csv,json}, studies.json
// and sink_free_<kind>.json in --out. Exit codes: 0 every study ran (the
// verdicts are results, whatever they are), 2 bad input.
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "app/commands.h"
#include "src/input_error.h"
#include "src/limits.h"
#include "src/output_files.h"
#include "src/run_info.h"
#include "theorems/studies/normalization_study.h"

namespace sinkcert::cli {

namespace {

struct NormalizationsCliOptions {
  TaskOptions task;
  std::uint64_t seed = 0;
  StudyOut out;
  std::string attention;  // comma-separated; empty: all seven
  bool quick = false;
};

std::vector<AttentionKind> kinds_of(const std::string& text) {
  if (text.empty()) {
    return {AttentionKind::kSoftmax, AttentionKind::kSoftmaxOffByOne, AttentionKind::kSigmoid,
            AttentionKind::kRelu,    AttentionKind::kReluCountAll,    AttentionKind::kSoftpick,
            AttentionKind::kGated};
  }
  std::vector<AttentionKind> out;
  std::stringstream s(text);
  std::string word;
  while (std::getline(s, word, ',')) {
    try {
      out.push_back(parse_attention_kind(word));
    } catch (const std::invalid_argument&) {
      throw InputError(
          "command line", "--attention",
          "a comma-separated list of " + attention_kind_names() + ", got \"" + text + "\"");
    }
  }
  if (out.empty()) {
    throw InputError("command line", "--attention",
                     "a comma-separated list of " + attention_kind_names());
  }
  return out;
}

void run_normalizations(const NormalizationsCliOptions& opt, Context& ctx) {
  const Task task = opt.task.task();
  check_task_options(task);
  const std::vector<AttentionKind> kinds = kinds_of(opt.attention);
  auto mute = std::make_unique<StdoutMute>(opt.out.json);
  const std::string out = resolve_study_out(opt.out, "normalizations");
  check_output_dir(out, "--out");
  ctx.activity = "running the studies (--n, --L)";
  std::cout << "normalizations: n = " << task.n << ", L = " << task.L << ", trigger range "
            << to_string(task.range) << ", seed " << opt.seed << (opt.quick ? " (quick)" : "")
            << "\n";
  std::vector<theorems::studies::NormalizationStudy> studies;
  for (AttentionKind kind : kinds) {
    studies.push_back(theorems::studies::run_normalization_study(
        theorems::studies::normalization_options(task, kind, opt.seed, opt.quick),
        progress_sink(ctx, "normalizations")));
    const auto& st = studies.back();
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", st.seconds);
    std::cout << to_string(kind) << ": " << theorems::studies::to_string(st.verdict) << " ["
              << st.evidence << "] " << st.reason << " (" << secs << " s)\n";
  }
  const RunInfo info = make_run_info(ctx.argv, opt.seed, "double; MPFI for CERTIFIED");
  const auto written = theorems::studies::write_normalization_outputs(studies, info, out);
  std::cout << "wrote " << written.size() << " files to " << out << "\n";
  mute.reset();
  if (opt.out.json) {
    nlohmann::json kinds = nlohmann::json::array();
    for (std::size_t k = 0; k < studies.size(); ++k) {
      kinds.push_back({{"attention", to_string(studies[k].options.attention)},
                       {"verdict", theorems::studies::to_string(studies[k].verdict)},
                       {"evidence", studies[k].evidence},
                       {"reason", studies[k].reason},
                       {"seconds", studies[k].seconds}});
    }
    const nlohmann::json doc = {{"command", "normalizations"},
                                {"studies", kinds},
                                {"out", out},
                                {"files", written},
                                {kProvenanceKey, to_json(info)}};
    std::cout << doc.dump(2) << "\n";
  }
  ctx.exit_code = kExitSuccess;
}

}  // namespace

void add_normalizations_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<NormalizationsCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "normalizations",
      "which attention kinds need a sink: per kind the descent path, the certified frontier, a "
      "sink-free candidate and a verdict");
  opt->task.n = 5;
  opt->task.L = 4;
  add_task_options(
      sub, &opt->task,
      {kMaxTheorem1N, "token dimension, default 5", kMaxTheorem1L, "sequence length, default 4"});
  add_seed_option(sub, &opt->seed, "seed of inits, active sets and adversary");
  add_study_out_options(sub, &opt->out);
  add_text_option(sub, "--attention", &opt->attention, "a comma-separated list of kinds",
                  "kinds to study (default: all seven)");
  sub->add_flag("--quick", opt->quick, "fewer starts, deltas, rounds and boxes");
  sub->callback([opt, &ctx] { run_normalizations(*opt, ctx); });
}

}  // namespace sinkcert::cli
