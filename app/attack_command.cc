// SPDX-License-Identifier: MIT
//
// sinkcert attack --weights W.json --L L [--trigger-range paper|reference-code]
//                 [--seed S] [--seconds T] [--out witness.json] [--json] [--bos]
// The strongest search for bad inputs of one model (search/attack.h): the
// largest l_inf error found (SEARCH, lower bound on the worst case), or with
// --bos the smallest non-trigger BOS mass found (SEARCH, upper bound), each
// certified at its witness on the exact model; the witness is written to
// --out as an input file that `eval --input` re-checks. Progress on stderr.
// Exit codes: 0 done, 2 bad input, 5 a double evaluation at the witness
// was NaN or infinite.
#include <cmath>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "search/attack.h"
#include "src/evaluation.h"
#include "src/input_error.h"
#include "src/input_file.h"
#include "src/limits.h"
#include "src/output_files.h"
#include "src/run_info.h"
#include "src/weight_file.h"

namespace sinkcert::cli {

namespace {

struct AttackCliOptions {
  std::string weights, out;
  TaskOptions task;  // --L required, n from the weight file
  std::uint64_t seed = 0;
  double seconds = 0;
  bool json = false, bos = false;
  CLI::Option *weights_option = nullptr, *seconds_option = nullptr;
};

void run_attack(const AttackCliOptions& opt, Context& ctx) {
  // Every value was range-checked when parsed (add_*_option, limits.h).
  require_option(opt.weights_option);
  ctx.activity = "reading " + opt.weights;
  const WeightFile w = read_weight_file(opt.weights);
  const Task task = resolve_task(w, opt.task);
  if (!search::attack_round_fits(task, w.kind, w.attention, w.num_layers(), w.num_heads())) {
    const int max_L =
        search::attack_max_L(task, w.kind, w.attention, w.num_layers(), w.num_heads());
    const std::string limit = " (n = " + std::to_string(w.n) + "; one round, " +
                              search::attack_limit_text(w.kind, w.attention, w.num_layers()) +
                              ", takes minutes at the limit, src/limits.h)";
    throw InputError(
        "command line", "--L",
        (max_L >= kMinL ? "expected " + integer_range_text(kMinL, max_L) + " for this model" + limit
                        : "no L fits this model" + limit) +
            ", got " + std::to_string(task.L));
  }
  if (!opt.out.empty()) check_output_file(opt.out, "--out");
  ctx.activity = "running the attack (--L)";
  const Model<double> model = to_model<double>(w);
  const Model<Rational> exact = to_model<Rational>(w);
  search::AttackOptions o;
  o.seed = opt.seed;
  o.seconds = opt.seconds;
  o.quantity = opt.bos ? search::WitnessQuantity::kBosMass : search::WitnessQuantity::kError;
  if (!opt.json) {
    std::cout << "attack: " << describe(w) << " (" << opt.weights << "), L = " << task.L
              << ", trigger range " << to_string(task.range) << ", seed " << opt.seed
              << (opt.seconds > 0 ? ", time budget " + format_decimal(opt.seconds, 6) + " s" : "")
              << "\n";
  }
  const search::AttackResult r =
      search::attack(model, exact, task, o, progress_sink(ctx, "attack"));
  if (!opt.out.empty()) write_input_file(opt.out, search::witness_tokens(task, r.best));
  if (opt.json) {
    nlohmann::json doc = search::to_json(r);
    doc["weights"] = opt.weights;
    doc["model"] = shape_json(w);
    doc["L"] = task.L;
    doc["trigger_range"] = to_string(task.range);
    doc["seed"] = opt.seed;
    doc["time_budget_seconds"] = opt.seconds;
    doc["witness_file"] = opt.out.empty() ? nlohmann::json(nullptr) : nlohmann::json(opt.out);
    doc[kProvenanceKey] =
        to_json(make_run_info(ctx.argv, opt.seed, "double search, mpfi certification"));
    std::cout << doc.dump(2) << std::endl;
  } else {
    std::cout << search::summary_text(r);
    if (!opt.out.empty()) {
      std::cout << "witness written to " << opt.out << "; re-check: sinkcert eval --weights "
                << opt.weights << " --input " << opt.out << "\n";
    }
    std::cout.flush();
  }
  if (!std::isfinite(r.best.value)) {
    std::cerr << "sinkcert: error: non-finite value in the double evaluation at the witness; "
                 "evaluate it with eval --input X.json --certify\n";
    ctx.exit_code = kExitNonFinite;
  }
}

}  // namespace

void add_attack_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<AttackCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "attack", "search for the worst input of a model (or its smallest BOS mass, --bos)");
  opt->weights_option = add_text_option(sub, "--weights", &opt->weights, "a file name",
                                        "weight file (sinkcert-weights JSON), required");
  add_task_options(
      sub, &opt->task,
      {std::nullopt, "", kMaxL, "sequence length (default: the weight file's task.L)"});
  add_seed_option(sub, &opt->seed, "seed of the search");
  opt->seconds_option = add_real_option(
      sub, "--seconds", &opt->seconds, RealRange{0, true, true, kMaxBoundSeconds},
      "time budget: more rounds until it is spent (the result then depends on the machine's "
      "speed); default none, one reproducible round");
  add_out_option(sub, &opt->out, OutputKind::kFile, "witness input file (sinkcert-input JSON)");
  sub->add_flag("--json", opt->json, "print one JSON document on stdout");
  sub->add_flag("--bos", opt->bos, "minimize the non-trigger BOS mass a_i0 instead of the error");
  sub->callback([opt, &ctx] { run_attack(*opt, ctx); });
}

}  // namespace sinkcert::cli
