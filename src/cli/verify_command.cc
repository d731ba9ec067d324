// SPDX-License-Identifier: MIT
//
// sinkcert verify relu --n N --L L [--trigger-range paper|reference-code]
//                      [--weights W.json] [--out FILE]
// Theorem 3's exact certificate (theorems/relu_exact_checker.h) for the ReLU
// construction of SPEC section 4, or for a single-layer ReLU weight file.
// Prints the summary; writes the JSON certificate atomically to --out.
// sinkcert verify bound --weights W.json --L L [--trigger-range ...]
//                       [--claim E] [--gap G] [--seconds S] [--bits B]
// The certified worst-case loss of a single-layer weight file over the whole
// content box (search/worst_case_bound.h): lower <= E <= upper to a relative
// gap G, or, with --claim, whether E <= claim holds.
// Exit codes: 0 VERIFIED, 3 NOT VERIFIED, 4 UNDECIDED, 2 bad input.
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "src/cli/commands.h"
#include "src/constructions.h"
#include "src/input_error.h"
#include "src/run_info.h"
#include "src/weight_file.h"
#include "search/worst_case_bound.h"
#include "theorems/relu_exact_checker.h"

namespace sinkcert::cli {

namespace {

struct VerifyReluOptions {
  int n = 16;
  int L = 16;
  std::string trigger_range = "paper";
  std::string weights;
  std::string out;
  CLI::Option* n_option = nullptr;
};

int exit_code_for(Verdict v) {
  switch (v) {
    case Verdict::kVerified:
      return 0;
    case Verdict::kNotVerified:
      return 3;
    case Verdict::kUndecided:
      return 4;
  }
  return 1;
}

void run_verify_relu(const VerifyReluOptions& opt, Context& ctx) {
  const std::string cli = "command line";
  Task task;
  task.range = trigger_range_option(opt.trigger_range);
  std::optional<WeightFile> file;
  if (!opt.weights.empty()) file = read_weight_file(opt.weights);
  task.n = opt.n;
  if (file) {
    if (opt.n_option->count() > 0 && opt.n != file->n) {
      throw InputError(cli, "--n",
                       "the weight file's n = " + std::to_string(file->n) + " (or omit --n), got " +
                           std::to_string(opt.n));
    }
    task.n = file->n;
  }
  task.L = opt.L;
  check_task_options(task);
  const Model<Rational> model =
      file ? to_model<Rational>(*file) : relu_construction<Rational>(task.n);
  if (file) {
    std::cout << "weights: " << opt.weights << " (entries read as exact rationals)\n";
  } else {
    std::cout << "model: the ReLU construction of SPEC section 4 (score x_i[1] * (x_k[n-1] + "
                 "x_k[1]), W_V = W_O = I)\n";
  }
  const int total = static_cast<int>(task.trigger_positions().size());
  const int step = total >= 20 ? total / 10 : total + 1;
  const auto progress = [step](int done, int all) {
    if (done % step == 0 || (done == all && all > step)) {
      std::cerr << "verify relu: " << done << "/" << all << " trigger positions\n";
    }
  };
  const theorems::ReluCertificate cert = theorems::check_relu_exact(model, task, progress);
  std::cout << theorems::summary_text(cert);
  std::ostringstream time;
  time << std::fixed << std::setprecision(3) << cert.seconds;
  std::cout << "time: " << time.str() << " s\n";
  if (!opt.out.empty()) {
    const RunInfo info = make_run_info(ctx.argv, 0, "exact");
    write_file_atomically(opt.out, theorems::to_json(cert, info).dump(2) + "\n");
    std::cout << "certificate written to " << opt.out << "\n";
  }
  ctx.exit_code = exit_code_for(cert.verdict);
}

struct VerifyBoundOptions {
  std::string weights;
  int L = 0;
  std::string trigger_range = "paper";
  std::optional<double> claim;
  double gap = 0.01;
  double seconds = 60.0;
  int bits = 128;
};

void run_verify_bound(const VerifyBoundOptions& opt, Context& ctx) {
  const std::string cli = "command line";
  if (!(opt.gap > 0)) throw InputError(cli, "--gap", "a relative gap > 0");
  if (!(opt.seconds > 0)) throw InputError(cli, "--seconds", "a time budget > 0");
  if (opt.bits < 53) throw InputError(cli, "--bits", "an MPFI precision >= 53 bits");
  const WeightFile file = read_weight_file(opt.weights);
  if (file.kind != ModelKind::kSingleLayer || file.num_layers() != 1) {
    throw InputError(opt.weights, "kind",
                     "single-layer (the bound handles single-layer models, any heads and "
                     "attention)");
  }
  Task task;
  task.n = file.n;
  task.L = opt.L;
  task.range = trigger_range_option(opt.trigger_range);
  check_task_options(task);
  search::WorstCaseOptions options;
  options.relative_gap = opt.gap;
  options.max_seconds = opt.seconds;
  options.bits = opt.bits;
  options.progress = [](long boxes, double lower, double upper) {
    std::cerr << "verify bound: " << boxes << " boxes, " << lower << " <= E <= " << upper << "\n";
  };
  const Model<double> model = to_model<double>(file);
  std::cout << "weights: " << opt.weights << "\n";
  if (opt.claim) {
    const search::UpperBoundCheck check =
        search::check_upper_bound(model, task, *opt.claim, options);
    std::cout << search::summary_text(check, task);
    ctx.exit_code = exit_code_for(check.verdict);
  } else {
    const search::WorstCaseBound bound = search::bound_worst_case(model, task, options);
    std::cout << search::summary_text(bound, task, opt.gap);
    ctx.exit_code = exit_code_for(bound.verdict);
  }
}

}  // namespace

void add_verify_command(CLI::App& app, Context& ctx) {
  CLI::App* verify = app.add_subcommand("verify", "run a theorem checker");
  verify->require_subcommand(1);
  CLI::App* relu = verify->add_subcommand(
      "relu",
      "Theorem 3, exactly: the single-layer ReLU model has zero error over the whole content "
      "box and zero BOS attention (exit 0 VERIFIED, 3 NOT VERIFIED, 4 UNDECIDED)");
  auto opt = std::make_shared<VerifyReluOptions>();
  opt->n_option = relu->add_option("--n", opt->n,
                                   "token dimension (default 16; from the weight file if given)");
  relu->add_option("--L", opt->L, "sequence length")->capture_default_str();
  relu->add_option("--trigger-range", opt->trigger_range,
                   "paper (j in 1..L-1) or reference-code (j in 2..L-1)")
      ->capture_default_str();
  relu->add_option("--weights", opt->weights,
                   "a single-layer ReLU weight file (default: the construction)");
  relu->add_option("--out", opt->out, "write the JSON certificate here (atomically)");
  relu->callback([opt, &ctx]() { run_verify_relu(*opt, ctx); });

  CLI::App* bound = verify->add_subcommand(
      "bound",
      "certified worst-case loss of a single-layer weight file over the whole content box by "
      "interval branch and bound: lower <= E <= upper, or with --claim whether E <= claim "
      "(exit 0 VERIFIED, 3 NOT VERIFIED, 4 UNDECIDED)");
  auto bopt = std::make_shared<VerifyBoundOptions>();
  bound->add_option("--weights", bopt->weights, "a single-layer weight file")->required();
  bound->add_option("--L", bopt->L, "sequence length")->required();
  bound->add_option("--trigger-range", bopt->trigger_range,
                    "paper (j in 1..L-1) or reference-code (j in 2..L-1)")
      ->capture_default_str();
  bound->add_option_function<double>(
      "--claim", [bopt](const double& c) { bopt->claim = c; },
      "check E <= CLAIM instead of enclosing E to --gap");
  bound->add_option("--gap", bopt->gap, "stop at upper <= lower (1 + gap)")->capture_default_str();
  bound->add_option("--seconds", bopt->seconds, "time budget")->capture_default_str();
  bound->add_option("--bits", bopt->bits, "MPFI precision")->capture_default_str();
  bound->callback([bopt, &ctx]() { run_verify_bound(*bopt, ctx); });
}

}  // namespace sinkcert::cli
