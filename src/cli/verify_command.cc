// SPDX-License-Identifier: MIT
//
// sinkcert verify relu --n N --L L [--trigger-range paper|reference-code]
//                      [--weights W.json] [--out FILE]
// Theorem 3's exact certificate (theorems/relu_exact_checker.h) for the ReLU
// construction of SPEC section 4, or for a single-layer ReLU weight file.
// Prints the summary; writes the JSON certificate atomically to --out.
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
  if (task.trigger_positions().empty()) {
    throw InputError(cli, "--L",
                     "L >= 3 under the reference-code convention (L = " + std::to_string(task.L) +
                         " has no trigger position, nothing to verify)");
  }
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
}

}  // namespace sinkcert::cli
