// SPDX-License-Identifier: MIT
//
// sinkcert theorem2 [--layers 1|2|4] [--heads 1|2|4] --n N --L L
//                   [--trigger-range paper|reference-code] [--seed S]
//                   [--out DIR] [--quick] [--seconds SECONDS]
//                   [--active-per-trigger K] [--threads T] [--rounds R]
//                   [--certify-boxes B] [--init-stds S1,S2,...]
//                   [--every-head-searches K] [--cap-fresh-all]
//                   [--dense-kernels baseline|avx2|auto]
// Theorem 2 studied by search (theorems/studies/theorem2_study.h): the descent path
// of a residual softmax model, its sink score sigma and each head's BOS
// mass, the frontiers eps_all(delta) and eps_one(delta), the every-head
// question, and a verdict. Progress on stderr; summary on stdout; JSON, CSV,
// weight files and the figure in --out.
// Exit codes: 0 CONSISTENT, 3 COUNTEREXAMPLE CANDIDATE, 4 INCONCLUSIVE or
// NOT APPLICABLE (L = 2), 2 bad input.
// Under `mpirun -np K` (a build with Open MPI) every rank runs the same
// study in lockstep, sharing the least-squares sums and the adversary's
// refinements (search/rank_group.h); the results are those of one process,
// bit for bit. Only rank 0 prints and writes files.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "app/commands.h"
#include "search/minimax.h"
#include "search/mpi_rank_group.h"
#include "src/input_error.h"
#include "src/limits.h"
#include "src/parallel_tasks.h"
#include "src/run_info.h"
#include "theorems/reports/theorem2_report.h"
#include "theorems/studies/theorem2_study.h"

namespace sinkcert::cli {

namespace {

// Each least-squares solve's sums have two parts (search/compressed_rows_cost.h);
// more threads idle. The cap only rejects nonsense.
constexpr int kMaxTheorem2Threads = 64;

struct Theorem2CliOptions {
  TaskOptions task;
  int layers = 2, heads = 2;
  std::uint64_t seed = 0;
  StudyOut out;
  bool quick = false;
  double time_limit = 0;       // 0: the study's default
  int active_per_trigger = 0;  // 0: the study's default
  int threads = default_thread_count();
  int rounds = 0;         // 0: the study's budgets; else every search's rounds capped at this
  int certify_boxes = 0;  // 0: no certification of the eps_one points
  std::string init_stds;  // "": the study's; else comma-separated stds, one path start each
  int every_head_searches = -1;  // -1: the study's
  bool cap_fresh_all = false;
  std::string dense_kernels = "baseline";
};

// "0.02,0.1" -> {0.02, 0.1}, each a number in (0, 10]
std::vector<double> parse_init_stds(const std::string& text) {
  std::vector<double> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    out.push_back(
        parse_real("--init-stds", text.substr(begin, end - begin), RealRange{0, true, true, 10}));
    begin = end + 1;
  }
  return out;
}

void run_theorem2(const Theorem2CliOptions& opt, Context& ctx) {
  const Task task = opt.task.task();
  check_task_options(task);
  for (auto [name, value] : {std::pair{"--layers", opt.layers}, std::pair{"--heads", opt.heads}}) {
    if (value != 1 && value != 2 && value != 4) {
      throw InputError("command line", name, "expected 1, 2 or 4, got " + std::to_string(value));
    }
  }
  theorems::studies::Theorem2Options o;
  if (opt.quick) {
    o = theorems::studies::theorem2_quick_options(task, opt.layers, opt.heads, opt.seed);
  } else {
    o.task = task;
    o.layers = opt.layers;
    o.heads = opt.heads;
    o.seed = opt.seed;
  }
  if (opt.time_limit > 0) o.path_time_limit = opt.time_limit;
  o.threads = opt.threads;
  try {
    o.dense_isa = search::resolve_dense_isa(search::parse_dense_isa(opt.dense_kernels));
  } catch (const std::invalid_argument& e) {
    throw InputError("command line", "--dense-kernels", e.what());
  }
  if (opt.rounds > 0) {
    // every search's round budget capped (reproducible, unlike --seconds)
    for (int* r : {&o.path_rounds, &o.frontier_rounds, &o.every_head_rounds, &o.cap_descent_rounds})
      *r = std::min(*r, opt.rounds);
  }
  o.certify_boxes = opt.certify_boxes;
  if (!opt.init_stds.empty()) o.init_stds = parse_init_stds(opt.init_stds);
  if (opt.every_head_searches >= 0) o.every_head_searches = opt.every_head_searches;
  if (opt.cap_fresh_all) o.cap_fresh_all = true;
  if (opt.active_per_trigger > 0) {
    // at least one place per trigger for the adversary's witnesses
    o.max_per_trigger = opt.active_per_trigger;
    o.initial_per_trigger = std::min(o.initial_per_trigger, opt.active_per_trigger - 1);
  }
  // The least-squares solve over P = 2 n^2 layers heads parameters, its
  // rows summed into one compressed block (search/minimax.h,
  // deep_minimax_bytes: nine P x P matrices and the parts' row chunks).
  check_memory("command line", "--layers", search::deep_minimax_bytes(task, opt.layers * opt.heads),
               "the least-squares solve (nine P x P matrices, P = 2 n^2 layers heads)");
  // under mpirun: every rank runs the study, rank 0 alone prints and writes
  std::unique_ptr<search::RankGroup> ranks;
  try {
    ranks = search::mpi_rank_group();
  } catch (const std::runtime_error& e) {
    throw InputError("command line", "mpirun", e.what());
  }
  const bool root = !ranks || ranks->rank() == 0;
  o.ranks = ranks.get();
  if (!root) ctx.quiet = true;
  auto mute = std::make_unique<StdoutMute>(opt.out.json || !root);
  const std::string out = resolve_study_out(opt.out, "theorem2");
  check_output_set(theorems::reports::theorem2_output_set(out), "--out");
  ctx.activity = "running the search (--n, --L, --layers, --heads)";
  std::cout << "theorem2: residual softmax " << opt.layers << " x " << opt.heads
            << ", n = " << task.n << ", L = " << task.L << ", trigger range "
            << to_string(task.range) << ", seed " << opt.seed << (opt.quick ? " (quick)" : "")
            << "\n";
  std::cout << "parametrization: " << search::kDeepParametrization << "\n";
  const theorems::studies::Theorem2Study st =
      theorems::studies::run_theorem2_study(o, progress_sink(ctx, "theorem2"));
  char buf[640];
  for (const auto& r : st.runs) {
    std::snprintf(buf, sizeof buf,
                  "path start %d (normal std %g): worst case %s %s, sink score %.12f NUMERIC(53) "
                  "(layer %d, head %d, position %d), %s, %d rounds, %.1f s\n",
                  r.start, r.init_std,
                  theorems::studies::format_bound(r.result.worst.certified, true, 4).c_str(),
                  r.result.evidence.label().c_str(), r.sink.sigma, r.sink.layer, r.sink.head,
                  r.sink.position, r.result.stop_reason.c_str(),
                  static_cast<int>(r.result.history.size()), r.result.seconds);
    std::cout << buf;
    for (const auto& layer : r.stats.heads) {
      for (const auto& h : layer) {
        std::snprintf(buf, sizeof buf,
                      "  layer %d head %d: mean BOS %.9f, min BOS %.9f (NUMERIC(53), probe set)\n",
                      h.layer, h.head, h.overall.mean, h.overall.min);
        std::cout << buf;
      }
    }
  }
  std::cout << "frontiers: worst case of the capped model at each delta (SEARCH, lower bound on "
               "that model's E; no bound on the frontier itself); capped BOS and sink score "
               "NUMERIC(53):\n";
  for (const auto& p : st.frontier) {
    const std::string capped =
        p.scope == theorems::studies::CapScope::kAll
            ? std::string("every head")
            : "layer " + std::to_string(p.layer) + " head " + std::to_string(p.head);
    if (!p.not_run.empty()) {
      std::cout << "  eps_" << theorems::studies::to_string(p.scope) << " delta " << p.delta
                << ": not run (" << p.not_run << ")\n";
      continue;
    }
    std::snprintf(buf, sizeof buf,
                  "  eps_%s (%s) delta %-5g worst case %s  capped BOS %.6f (at the witness "
                  "%.6f CERTIFIED)  sink score %.6f  from %s  %s%s\n",
                  theorems::studies::to_string(p.scope).c_str(), capped.c_str(), p.delta,
                  theorems::studies::format_bound(p.eps, true, 5).c_str(), p.capped_bos,
                  p.witness_capped_bos, p.sink.sigma, theorems::studies::to_string(p.start).c_str(),
                  p.feasible ? "feasible" : "NO FEASIBLE MODEL",
                  p.converged ? ", converged" : " (not converged)");
    std::cout << buf;
    if (p.certificate.attempted) {
      std::snprintf(buf, sizeof buf,
                    "    certified over the box: E <= %g %s (E <= %.4e), max BOS of the capped "
                    "head <= %g %s (<= %.9f)  [%s]\n",
                    theorems::studies::kTheorem2LowLoss, to_string(p.certificate.loss).c_str(),
                    p.certificate.loss_upper, p.ceiling, to_string(p.certificate.cap).c_str(),
                    p.certificate.cap_upper,
                    Evidence::certified(p.certificate.bits).label().c_str());
      std::cout << buf;
    }
  }
  std::cout << "every head must sink? " << st.every_head.summary << "\n";
  const Table t2b = theorems::reports::theorem2_targeted_table(st);
  if (!t2b.rows.empty()) {
    std::cout << "targeted searches (T2b; worst cases SEARCH lower bounds, BOS NUMERIC(53)):\n";
    for (const auto& row : t2b.rows) {
      std::cout << "  layer " << row[0].text << " head " << row[1].text << ": " << row[2].text
                << " (" << row[3].text << "), worst case " << row[4].text << ", ablated "
                << row[5].text << ", ratio " << row[6].text << ", max BOS " << row[8].text
                << ", mean BOS " << row[9].text << ", share <= 0.5 " << row[10].text << "\n";
    }
  }
  if (!root) {
    ctx.exit_code = exit_code_for(st.verdict);
    return;
  }
  mute.reset();  // the summary below is the one output
  finish_study(
      "theorem2", st.verdict, st.reason, st.seconds, opt.seed, out, opt.out.json,
      [&](const RunInfo& info, std::vector<std::string>* skipped) {
        return theorems::reports::write_theorem2_outputs(st, info, out, skipped);
      },
      ctx);
}

}  // namespace

void add_theorem2_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<Theorem2CliOptions>();
  CLI::App* sub = app.add_subcommand(
      "theorem2",
      "Theorem 2 by adversarial search in residual models: descent path, sink score, verdict");
  add_task_options(
      sub, &opt->task,
      {kMaxTheorem1N, "token dimension, default 16", kMaxTheorem1L, "sequence length, default 16"});
  add_int_option(sub, "--layers", &opt->layers, 1, 4, "layers: 1, 2 or 4 (default 2)");
  add_int_option(sub, "--heads", &opt->heads, 1, 4, "heads per layer: 1, 2 or 4 (default 2)");
  add_seed_option(sub, &opt->seed, "seed of inits, active sets and adversary");
  add_study_out_options(sub, &opt->out);
  sub->add_flag("--quick", opt->quick, "the paper's init only, fewer rounds (e.g. --n 5 --L 4)");
  add_real_option(sub, "--seconds", &opt->time_limit, RealRange{0, true, true, 1e6},
                  "seconds per path start after which no new round starts (default 1800; a run "
                  "that hits it depends on the machine's speed)");
  // the former name, accepted and hidden
  add_real_option(sub, "--time-limit", &opt->time_limit, RealRange{0, true, true, 1e6},
                  "deprecated: --seconds")
      ->group("");
  add_int_option(sub, "--active-per-trigger", &opt->active_per_trigger, 2, 10,
                 "active-set inputs per trigger position (default 10; fewer: less memory and "
                 "time per round, a weaker exchange)");
  add_int_option(sub, "--threads", &opt->threads, 1, kMaxTheorem2Threads,
                 "threads of each least-squares solve's sums (same result for any count), "
                 "default: the hardware's");
  add_int_option(sub, "--rounds", &opt->rounds, 1, 1000,
                 "cap every search's rounds (path, frontiers, every-head) at this: a smaller "
                 "budget that stays reproducible");
  add_int_option(sub, "--certify-boxes", &opt->certify_boxes, 0, 1000000,
                 "certify the eps_one points over the whole box (E <= 1e-6 and the capped "
                 "head's BOS cap, deep bounds) with this many boxes per bound (default 0: "
                 "not attempted; the deep bounds close at small sizes such as --n 5 --L 4)");
  add_text_option(sub, "--init-stds", &opt->init_stds, "comma-separated numbers in (0, 10]",
                  "the path starts' init stds, one start each (default 0.02,0.1,0.5)");
  add_int_option(sub, "--every-head-searches", &opt->every_head_searches, 0, 16,
                 "targeted every-head searches, one capped head each (default 2)");
  sub->add_flag("--cap-fresh-all", opt->cap_fresh_all,
                "eps_all from a fresh init too (default: warm start only; the fresh start lost "
                "at every delta at n = L = 16 and took most of the time)");
  add_text_option(sub, "--dense-kernels", &opt->dense_kernels, "baseline, avx2 or auto",
                  "the least-squares solves' dense kernels: baseline (default; the same bits on "
                  "every x86-64 CPU) or avx2 (AVX2 + FMA, about half their time; other bits)");
  sub->callback([opt, &ctx] { run_theorem2(*opt, ctx); });
}

}  // namespace sinkcert::cli
