// SPDX-License-Identifier: MIT
//
// sinkcert verify relu --n N --L L [--trigger-range paper|reference-code]
//                      [--weights W.json | --layers N --heads H [--write-weights F]]
//                      [--out FILE] [--coq FILE.v] [--json]
// Theorem 3's exact certificate (theorems/exact/relu_exact_checker.h) for the ReLU
// construction of docs/definitions.md, Definitions 4 (or its residual version with
// --layers/--heads, src/constructions.h), or for a ReLU weight file.
// Prints the summary; writes the JSON certificate atomically to --out, and
// the result as a Coq proof to --coq (theorems/exact/coq_export.h).
// sinkcert verify bound --weights W.json --L L [--trigger-range ...]
//                       [--claim E] [--gap G] [--seconds S] [--boxes N] [--bits B]
//                       [--tolerance T] [--json] [--out WITNESS.json]
// The certified worst-case loss of a single-layer weight file over the whole
// content box (theorems/bounds/worst_case_bound.h), or of a residual weight file of
// several layers (theorems/bounds/deep_worst_case_bound.h): lower <= E <= upper to a
// relative gap G, or, with --claim, whether E <= claim holds.
// sinkcert verify bos --weights W.json --L L [--trigger-range ...]
//                     [--max] [--claim B] [--layer L --head H] [--gap G] [--seconds S]
//                     [--boxes N] [--bits B] [--sink-bar B] [--json] [--out WITNESS.json]
// The certified minimum BOS mass of a single-layer weight file over the whole
// content box (theorems/bounds/bos_bound.h): 1 - min BOS enclosed to a relative gap
// G, or, with --claim, whether min BOS >= claim holds; with --max the
// maximum non-trigger BOS mass (a BOS cap) enclosed, or whether max BOS <=
// claim holds. A residual weight file (any layers and heads;
// theorems/bounds/deep_bos_bound.h): each (layer, head)'s min (--max: max) BOS
// enclosed, or with --layer L --head H --claim B that head's claim.
// A bound without --claim answers ENCLOSED (the gap reached) or NOT
// ENCLOSED (the enclosure printed is still certified), never VERIFIED, and
// says under it what it means for the task ("meaning:", against --tolerance
// or --sink-bar, src/verdict_bars.h); a claim answers VERIFIED, NOT
// VERIFIED (with a witness) or UNDECIDED. verify relu on a model its exact
// argument does not cover answers NOT APPLICABLE and why.
// Exit codes: 0 VERIFIED or ENCLOSED, 3 NOT VERIFIED, 4 UNDECIDED or NOT
// ENCLOSED, 2 bad input or NOT APPLICABLE. --quiet: the verdict and meaning
// lines only.
// verify bound and verify bos under `mpirun -np K` (a build with Open MPI):
// every rank runs the bound, the first pass split by trigger (bound) or by
// (head, row, trigger) case (bos), and the softmax vertex bound's caps by
// trigger (BoxSearchOptions::ranks); every rank holds one process's result
// bit for bit, and only rank 0 prints and writes; residual models are split
// the same way. --seconds is the same budget on
// every rank, from its own start.
#include <algorithm>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "app/commands.h"
#include "search/mpi_rank_group.h"
#include "src/constructions.h"
#include "src/input_error.h"
#include "src/input_file.h"
#include "src/limits.h"
#include "src/output_files.h"
#include "src/parallel_tasks.h"
#include "src/run_info.h"
#include "src/verdict_bars.h"
#include "src/weight_file.h"
#include "theorems/bounds/bos_bound.h"
#include "theorems/bounds/deep_bos_bound.h"
#include "theorems/bounds/deep_worst_case_bound.h"
#include "theorems/bounds/worst_case_bound.h"
#include "theorems/exact/coq_export.h"
#include "theorems/exact/relu_exact_checker.h"
#include "theorems/studies/row1_frontier.h"

namespace sinkcert::cli {

namespace {

// --quiet: of a report, only its verdict lines ("verdict: ..." and the
// plain-words "meaning: ..." under it).
std::string verdict_lines(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.rfind("verdict: ", 0) == 0 || line.rfind("meaning: ", 0) == 0) out += line + "\n";
  }
  return out;
}

struct VerifyReluOptions {
  TaskOptions task;
  std::string weights;
  std::string out;
  std::string coq;
  bool coq_force = false;     // debug: theorem3 even when not VERIFIED
  bool json = false;          // the certificate as one JSON object on stdout
  int layers = 1, heads = 1;  // the construction's shape (without --weights)
  CLI::Option* layers_option = nullptr;
  CLI::Option* heads_option = nullptr;
  std::string write_weights;  // write the construction as a weight file
};

void run_verify_relu(const VerifyReluOptions& opt, Context& ctx) {
  const std::string cli = "command line";
  Task task = opt.task.task();
  std::optional<WeightFile> file;
  if (!opt.weights.empty()) {
    ctx.activity = "reading " + opt.weights;
    file = read_weight_file(opt.weights);
  }
  // options that contradict each other first, then the task the file gives
  if (file && (opt.layers_option->count() > 0 || opt.heads_option->count() > 0 ||
               !opt.write_weights.empty())) {
    throw InputError(cli, opt.write_weights.empty() ? "--layers/--heads" : "--write-weights",
                     "expected no --weights (they choose and write the construction)");
  }
  if (file) {
    if (opt.task.n_option->count() > 0 && task.n != file->n) {
      throw InputError(cli, "--n",
                       "the weight file's n = " + std::to_string(file->n) + " (or omit --n), got " +
                           std::to_string(task.n));
    }
    task = resolve_task(*file, opt.task);
  }
  check_task_options(task);
  // exact operations (limits.h, kMaxReluWork; theorems/exact/relu_exact_checker.h)
  const int heads = file ? std::max(1, file->num_heads()) : opt.heads;
  const int layers = file ? std::max(1, file->num_layers()) : opt.layers;
  const auto relu_work = [&](int L) {
    return theorems::exact::relu_exact_work(layers, heads, task.n, L);
  };
  if (relu_work(task.L) > kMaxReluWork) {
    int max_L = kMinL;
    while (relu_work(max_L + 1) <= kMaxReluWork) ++max_L;
    const std::string shape = std::to_string(layers) + " layer(s) x " + std::to_string(heads) +
                              " heads at n = " + std::to_string(task.n);
    if (relu_work(kMinL) > kMaxReluWork) {
      throw InputError(cli, "--L",
                       "expected a smaller model: the exact check of " + shape +
                           " exceeds its cap of 2^30 operations at every L");
    }
    throw InputError(cli, "--L",
                     "expected " + integer_range_text(kMinL, max_L) + " for a model of " +
                         (layers == 1 ? std::to_string(heads) + " heads (the exact check's H L^3"
                                      : shape + " (the exact check's") +
                         " operations are capped at 2^30, about a minute), got " +
                         std::to_string(task.L));
  }
  if (!opt.write_weights.empty()) check_output_file(opt.write_weights, "--write-weights");
  if (!opt.out.empty()) check_output_file(opt.out, "--out");
  if (!opt.coq.empty()) {
    theorems::exact::check_coq_file_name(opt.coq, "--coq");
    check_output_file(opt.coq, "--coq");
  } else if (opt.coq_force) {
    throw InputError(cli, "--coq-force-theorem", "expected --coq FILE.v as well");
  }
  ctx.activity = "computing the exact certificate (--n, --L)";
  const bool deep = opt.layers > 1 || opt.heads > 1;
  const Model<Rational> model =
      file   ? to_model<Rational>(*file)
      : deep ? relu_residual_construction<Rational>(task.n, opt.layers, opt.heads)
             : relu_construction<Rational>(task.n);
  // with --json, stdout holds the one JSON object only
  std::ostringstream skipped;
  std::ostream& text = opt.json || ctx.quiet ? static_cast<std::ostream&>(skipped) : std::cout;
  if (file) {
    text << "weights: " << opt.weights << " (entries read as exact rationals)\n";
  } else if (deep) {
    text << "model: the residual ReLU construction of Theorem 3 (docs/definitions.md, Definitions "
            "4; "
         << opt.layers << " layer(s) x " << opt.heads << " head(s), src/constructions.h)\n";
  } else {
    text << "model: the ReLU construction of docs/definitions.md, Definitions 4 (score x_i[1] * "
            "(x_k[n-1] + x_k[1]), W_V = W_O = I)\n";
  }
  if (!opt.write_weights.empty()) {
    const RunInfo info = make_run_info(ctx.argv, 0, "exact");
    write_weight_file(opt.write_weights, weight_file_from_model(model, to_json(info)));
    text << "weights written to " << opt.write_weights << "\n";
  }
  const int total = static_cast<int>(task.trigger_positions().size());
  const int step = total >= 20 ? total / 10 : total + 1;
  const ProgressSink say = progress_sink(ctx, "verify relu");
  const auto progress = [step, say](int done, int all) {
    if (done % step == 0 || (done == all && all > step)) {
      say(std::to_string(done) + "/" + std::to_string(all) + " trigger positions");
    }
  };
  const theorems::exact::ReluCertificate cert =
      theorems::exact::check_relu_exact(model, task, progress);
  text << theorems::exact::summary_text(cert);
  if (ctx.quiet && !opt.json) std::cout << verdict_lines(theorems::exact::summary_text(cert));
  std::ostringstream time;
  time << std::fixed << std::setprecision(3) << cert.seconds;
  text << "time: " << time.str() << " s\n";
  if (opt.json) {
    nlohmann::json doc = theorems::exact::to_json(cert, make_run_info(ctx.argv, 0, "exact"));
    doc["weights"] = opt.weights.empty() ? nlohmann::json(nullptr) : nlohmann::json(opt.weights);
    doc["certificate_file"] = opt.out.empty() ? nlohmann::json(nullptr) : nlohmann::json(opt.out);
    std::cout << doc.dump(2) << "\n";
  }
  if (!opt.out.empty()) {
    const RunInfo info = make_run_info(ctx.argv, 0, "exact");
    write_file_atomically(opt.out, theorems::exact::to_json(cert, info).dump(2) + "\n");
    text << "certificate written to " << opt.out << "\n";
  }
  if (!opt.coq.empty()) {
    std::string why = theorems::exact::coq_unsupported_reason(model);
    if (why.empty() &&
        (cert.verdict == Verdict::kUndecided || cert.verdict == Verdict::kNotApplicable) &&
        !opt.coq_force) {
      why = "the verdict is " + to_string(cert.verdict);
    }
    if (!why.empty()) {
      text << "Coq certificate: not written (" << why << ")\n";
    } else {
      const RunInfo info = make_run_info(ctx.argv, 0, "exact");
      const theorems::exact::CoqCertificate coq = theorems::exact::coq_certificate(
          model, cert, info, opt.coq_force,
          // a scaled file's theorem is about the scaled A, M
          file && !(file->task && file->task->score_scale != 1) ? &*file : nullptr);
      write_file_atomically(opt.coq, coq.text);
      text << "Coq certificate (theorem " << coq.theorem << ") written to " << opt.coq
           << "; check it with: coqc " << opt.coq << "\n";
    }
  }
  ctx.exit_code = exit_code_for(cert.verdict);
}

// The options of the two box checkers, verify bound and verify bos.
struct VerifyBoxOptions {
  std::string weights;
  TaskOptions task;  // --L required, n from the weight file
  // --claim: its range is checked when parsed (as a double); its value is
  // taken as written, an exact decimal (claim_as_written)
  CLI::Option* claim_option = nullptr;
  RealRange claim_range;
  double gap = 0.01;
  double seconds = 60.0;
  int boxes = 200000;  // BoxSearchOptions' default budget
  int bits = 128;
  bool json = false;  // one JSON object on stdout instead of the report
  std::string out;    // write the witness here as an input file
  CLI::Option* weights_option = nullptr;
  int layer = -1, head = -1;  // verify bos: one head (0-based); -1: every one
  VerdictBars bars;           // --tolerance (bound), --sink-bar (bos)
};

// The ranks of a box run under mpirun/srun (null for one process): every
// rank runs the bound, its first pass and its box phase split by them
// (BoxSearchOptions::ranks), and only rank 0 prints and writes; the others'
// progress is off. The threads of a rank (the softmax vertex bound's and
// the box phase's) are the hardware's divided
// by the ranks on its node, so that the ranks of a node do not oversubscribe
// its cores.
struct BoxRunRanks {
  std::unique_ptr<search::RankGroup> group;
  bool root = true;
  int threads = 0;  // 0: the hardware's (one process)
};
BoxRunRanks box_run_ranks(Context& ctx) {
  BoxRunRanks r;
  try {
    r.group = search::mpi_rank_group();
  } catch (const std::runtime_error& e) {
    throw InputError("command line", "mpirun", e.what());
  }
  if (r.group) {
    r.root = r.group->rank() == 0;
    r.threads = std::max(1, default_thread_count() / search::launcher_local_ranks());
  }
  if (!r.root) ctx.quiet = true;
  return r;
}

// Prints the report, or with --json its JSON form stamped with the
// provenance; writes the witness input to --out. Under several ranks, only
// rank 0 (root) prints and writes.
void finish_box_run(const VerifyBoxOptions& opt, Context& ctx, const std::string& text,
                    nlohmann::json json, const std::optional<Matrix<double>>& witness,
                    Verdict verdict, bool root = true) {
  ctx.exit_code = exit_code_for(verdict);
  if (!root) return;
  std::string written;
  if (!opt.out.empty()) {
    if (witness) {
      write_input_file(opt.out, *witness);
      written = "witness written to " + opt.out + " (check it with: sinkcert eval --weights " +
                opt.weights + " --input " + opt.out + " --certify 20)";
    } else {
      written = "no witness to write to " + opt.out + " (no point had a finite enclosure)";
    }
  }
  if (opt.json) {
    json["weights"] = opt.weights;
    json["witness_file"] = witness && !opt.out.empty() ? nlohmann::json(opt.out) : nullptr;
    json[kProvenanceKey] =
        to_json(make_run_info(ctx.argv, 0, "mpfi " + std::to_string(opt.bits) + " bits"));
    std::cout << json.dump(2) << "\n";
  } else if (ctx.quiet) {
    std::cout << verdict_lines(text);
  } else {
    std::cout << "weights: " << opt.weights << "\n" << text;
    if (!written.empty()) std::cout << written << "\n";
  }
}

// What a box checker reads: a single-layer weight file of n <= kMaxBoundN
// and the task of --L, whose first pass (the budget is checked between and
// inside boxes, but one box's plain interval pass is not interrupted) costs
// work(file, L) <= max_work. checker names the bound in the kind error,
// n_note explains the n limit, work_note(file) the L limit (after
// "for n = N").
struct BoxInput {
  WeightFile file;
  Task task;
};
BoxInput read_box_input(const VerifyBoxOptions& opt, Context& ctx, const std::string& checker,
                        const std::string& n_note,
                        const std::function<double(const WeightFile&, int)>& work, double max_work,
                        const std::function<std::string(const WeightFile&)>& work_note,
                        bool residual_layers = false, bool any_residual = false) {
  // Every value was range-checked when parsed (add_*_option, limits.h).
  require_option(opt.weights_option);
  if (!opt.out.empty()) check_output_file(opt.out, "--out");
  ctx.activity = "reading " + opt.weights;
  BoxInput in{read_weight_file(opt.weights), opt.task.task()};
  in.task = resolve_task(in.file, opt.task);
  const WeightFile& file = in.file;
  // residual_layers: a residual file of several layers is accepted too
  // any_residual: a residual file of any number of layers
  const bool deep = file.kind == ModelKind::kResidual &&
                    ((residual_layers && file.num_layers() > 1) || any_residual);
  if (!deep && (file.kind != ModelKind::kSingleLayer || file.num_layers() != 1)) {
    throw InputError(opt.weights, "kind",
                     any_residual ? "single-layer or residual (" + checker +
                                        " handles those, any layers, heads and attention)"
                     : residual_layers
                         ? "single-layer, or residual with several layers (" + checker +
                               " handles those, any heads and attention)"
                         : "single-layer (" + checker +
                               " handles single-layer models, any heads and attention)");
  }
  if (file.n > kMaxBoundN) {
    throw InputError(
        opt.weights, "n",
        "at most " + std::to_string(kMaxBoundN) + n_note + ", got " + std::to_string(file.n));
  }
  in.task.n = file.n;
  check_task_options(in.task);
  if (work(file, in.task.L) > max_work) {
    int max_L = kMinL;
    while (work(file, max_L + 1) <= max_work) ++max_L;
    throw InputError("command line", "--L",
                     "expected " + integer_range_text(kMinL, max_L) +
                         " for n = " + std::to_string(file.n) + work_note(file) + ", got " +
                         std::to_string(in.task.L));
  }
  return in;
}

// The options verify bound and verify bos share: --weights, the task
// options, --claim (in claim_range), --gap, --seconds and --bits, with each
// subcommand's own help texts.
std::shared_ptr<VerifyBoxOptions> add_box_options(CLI::App* sub, RealRange claim_range,
                                                  const std::string& claim_help,
                                                  const std::string& gap_help,
                                                  const std::string& bits_help) {
  auto opt = std::make_shared<VerifyBoxOptions>();
  opt->weights_option = add_text_option(
      sub, "--weights", &opt->weights, "a file name",
      "a weight file (required): single-layer, or residual of any layers and heads");
  add_task_options(
      sub, &opt->task,
      {std::nullopt, "", kMaxL, "sequence length (default: the weight file's task.L)"});
  opt->claim_range = claim_range;
  opt->claim_option = add_real_option(
      sub, "--claim", [](double) {}, claim_range, claim_help);
  add_real_option(sub, "--gap", &opt->gap, RealRange{0, true}, gap_help);
  add_real_option(sub, "--seconds", &opt->seconds, RealRange{0, true, true, kMaxBoundSeconds},
                  "time budget, default 60");
  // a box budget reproduces a run, whatever the load (10^9 boxes: days)
  add_int_option(sub, "--boxes", &opt->boxes, 1, 1000000000,
                 "budget of evaluated boxes, default 200000 (lowered to fit memory)");
  add_int_option(sub, "--bits", &opt->bits, kMinBoundBits, kMaxBoundBits, bits_help);
  sub->add_flag("--json", opt->json, "print one JSON object on stdout instead of the report");
  add_out_option(sub, &opt->out, OutputKind::kFile,
                 "write the witness of the lower end as an input file (eval --input reads it)");
  return opt;
}

// The budget options both bounds share, with the box budget lowered so that
// every live box (of box_bytes) fits kMemoryBudgetBytes (limits.h).
void set_box_options(const VerifyBoxOptions& opt, double box_bytes,
                     theorems::bounds::BoxSearchOptions& options) {
  options.relative_gap = opt.gap;
  options.max_seconds = opt.seconds;
  options.max_boxes = opt.boxes;
  options.bits = opt.bits;
  options.fit_memory(box_bytes, static_cast<double>(kMemoryBudgetBytes));
  options.bars = opt.bars;
}

// --claim as written: the exact rational of its decimal (theorems/bounds/claim.h),
// in its range exactly (the double the option was checked as may round into
// the range); none without --claim.
std::optional<theorems::bounds::Claim> claim_as_written(const VerifyBoxOptions& opt) {
  if (opt.claim_option == nullptr || opt.claim_option->count() == 0) return std::nullopt;
  const std::string text = opt.claim_option->results().back();
  const RealRange& range = opt.claim_range;
  const auto fail = [&] {
    throw InputError("command line", "--claim",
                     "expected " + range.text() + ", got '" + text + "'");
  };
  theorems::bounds::Claim c;
  try {
    c = theorems::bounds::Claim::parse(text);
  } catch (const std::invalid_argument&) {
    fail();
  }
  const Rational lo = theorems::bounds::Claim(range.lo).value;
  if (range.lo_open ? !(c.value > lo) : !(c.value >= lo)) fail();
  if (range.has_hi && !(c.value <= theorems::bounds::Claim(range.hi).value)) fail();
  return c;
}

// What the row-1 frontier theorem gives this model from the certified upper
// end of its E (theorems/studies/row1_frontier.h): a line before the verdict
// and "row1" in the JSON.
void with_row1_consequence(const WeightFile& file, const Task& task, const Mpfr& e_upper,
                           std::string& text, nlohmann::json& json) {
  const theorems::studies::Row1Consequence c = theorems::studies::row1_consequence(
      file.kind, file.attention, file.num_layers(), file.num_heads(), task, e_upper);
  json["row1"] = theorems::studies::to_json(c);
  if (!c.applies) return;  // the JSON says why; the report stays as it was
  const std::size_t at = text.find("\nverdict:");
  text.insert(at == std::string::npos ? text.size() : at + 1,
              theorems::studies::row1_consequence_text(c) + "\n");
}

void run_verify_bound(const VerifyBoxOptions& opt, Context& ctx) {
  // One box's evaluation is not interrupted by the budget, nor a deep
  // model's first pass: their work is capped (limits.h, bound_work_cap).
  // Work is measured in units of its cap, so one comparison serves both.
  const auto cap_of = [&](const WeightFile& file, int L) {
    return bound_work_cap(file.n, L, opt.bits, file.num_layers(), file.num_heads());
  };
  const auto bound_work = [&](const WeightFile& file, int L) {
    const BoundWorkCap c = cap_of(file, L);
    return c.work / c.cap;
  };
  const BoxInput in = read_box_input(
      opt, ctx, "the bound", " for verify bound (its interval forward passes grow as L^3 n)",
      bound_work, 1.0,
      [&](const WeightFile& file) {
        const BoundWorkCap c = cap_of(file, kMinL);
        return " at --bits " + std::to_string(opt.bits) +
               (file.num_layers() > 1 ? " and " + std::to_string(file.num_layers()) + " layers x " +
                                            std::to_string(file.num_heads()) + " heads"
                                      : std::string()) +
               " (" + c.formula + " <= " + c.cap_text + ", takes about a minute at the limit" +
               (opt.bits > c.bits_from ? std::string("; fewer --bits fit a larger L")
                                       : std::string()) +
               ")";
      },
      true);
  const WeightFile& file = in.file;
  const Task& task = in.task;
  // under mpirun: after the input checks, which every rank makes alike
  const BoxRunRanks ranks = box_run_ranks(ctx);
  ctx.activity = "running the branch and bound (--L, --bits)";
  theorems::bounds::WorstCaseOptions options;
  options.ranks = ranks.group.get();
  options.threads = ranks.threads;
  // a box: its bounds, vertex and weights, 4 V doubles (V = (L - 1)(n - 3)
  // content variables), plus two MPFR numbers. The summary says when the
  // budget ran out.
  set_box_options(opt, 32.0 * (task.L - 1) * (task.n - 3) + 256 + opt.bits / 4.0, options);
  options.progress = progress_sink(ctx, "verify bound");
  // the exact model the file denotes (factored heads multiplied out exactly)
  const Model<Rational> model = to_model<Rational>(file);
  const bool deep = file.num_layers() > 1;  // residual, several layers
  if (const std::optional<theorems::bounds::Claim> claim = claim_as_written(opt)) {
    const theorems::bounds::UpperBoundCheck check =
        deep ? theorems::bounds::check_deep_upper_bound(model, task, *claim, options)
             : theorems::bounds::check_upper_bound(model, task, *claim, options);
    nlohmann::json json = theorems::bounds::to_json(check, task);
    std::string text = deep ? theorems::bounds::deep_summary_text(model, check, task)
                            : theorems::bounds::summary_text(check, task);
    if (!deep) with_row1_consequence(file, task, check.bound.upper, text, json);
    finish_box_run(opt, ctx, text, json, theorems::bounds::witness_input(check.bound, task),
                   check.verdict, ranks.root);
  } else {
    const theorems::bounds::WorstCaseBound bound =
        deep ? theorems::bounds::bound_deep_worst_case(model, task, options)
             : theorems::bounds::bound_worst_case(model, task, options);
    nlohmann::json json = theorems::bounds::to_json(bound, task, opt.gap);
    std::string text = deep ? theorems::bounds::deep_summary_text(model, bound, task, opt.gap)
                            : theorems::bounds::summary_text(bound, task, opt.gap);
    if (!deep) with_row1_consequence(file, task, bound.upper, text, json);
    // without a claim: ENCLOSED or NOT ENCLOSED, never VERIFIED
    finish_box_run(opt, ctx, text, json, theorems::bounds::witness_input(bound, task),
                   bound.verdict == Verdict::kEnclosed ? Verdict::kEnclosed : Verdict::kNotEnclosed,
                   ranks.root);
  }
}

void run_verify_bos(const VerifyBoxOptions& opt, bool max_mode, Context& ctx) {
  // Single-layer: the first pass, H L^2 (n - 3)^3 / 2. Residual: one box
  // (the budget is checked between boxes) is an interval forward and reverse
  // pass, layers x heads x L n (L + n) max(1, bits / 1024), capped like
  // verify bound's first pass.
  const auto bos_work = [&](const WeightFile& file, int L) {
    if (file.kind == ModelKind::kResidual) {
      return static_cast<double>(file.num_layers()) * file.num_heads() * L * file.n * (L + file.n) *
             std::max(1.0, opt.bits / 1024.0) * (kMaxBosWork / kMaxBoundWork);
    }
    const double c = file.n - 3;
    return file.num_heads() * L * (L - 1) / 2.0 * c * c * c;
  };
  const BoxInput in = read_box_input(
      opt, ctx, "the BOS bound", " for verify bos", bos_work, kMaxBosWork,
      [](const WeightFile& file) {
        if (file.kind == ModelKind::kResidual) {
          return " and " + std::to_string(file.num_layers()) + " layer(s) x " +
                 std::to_string(file.num_heads()) +
                 " heads (one box, layers x heads x L n (L + n) max(1, bits / 1024) <= 2^24)";
        }
        return " and " + std::to_string(file.num_heads()) +
               " heads (the first pass, H L^2 (n - 3)^3 / 2 <= 2^25, takes about a minute at the "
               "limit)";
      },
      false, true);
  const WeightFile& file = in.file;
  const Task& task = in.task;
  const bool deep = file.kind == ModelKind::kResidual;
  const std::string cli = "command line";
  const std::optional<theorems::bounds::Claim> claim = claim_as_written(opt);
  if (opt.layer >= std::max(1, file.num_layers())) {
    throw InputError(cli, "--layer",
                     "expected a layer of the model, 0 to " +
                         std::to_string(std::max(1, file.num_layers()) - 1) + ", got " +
                         std::to_string(opt.layer));
  }
  if (opt.head >= std::max(1, file.num_heads())) {
    throw InputError(cli, "--head",
                     "expected a head of the model, 0 to " +
                         std::to_string(std::max(1, file.num_heads()) - 1) + ", got " +
                         std::to_string(opt.head));
  }
  if (deep && claim && (opt.layer < 0 || opt.head < 0)) {
    throw InputError(cli, "--claim",
                     "--layer L and --head H as well (on a residual model a claim is about one "
                     "head; without a claim every head is enclosed)");
  }
  const BoxRunRanks ranks = box_run_ranks(ctx);
  ctx.activity = "running the BOS branch and bound (--L, --bits)";
  theorems::bounds::DeepBosOptions options;
  options.ranks = ranks.group.get();
  options.threads = ranks.threads;
  // a box: 3 (n - 3) doubles and two MPFR numbers; residual: 3 (L - 1)(n - 3)
  set_box_options(opt, 24.0 * (deep ? task.L - 1 : 1) * (task.n - 3) + 256 + opt.bits / 4.0,
                  options);
  options.progress = progress_sink(ctx, "verify bos");
  options.head = opt.head;
  options.layer = opt.layer;
  const Model<Rational> model = to_model<Rational>(file);
  const theorems::bounds::BosMode mode =
      max_mode ? theorems::bounds::BosMode::kMax : theorems::bounds::BosMode::kMin;
  const theorems::bounds::BosReport report =
      deep ? theorems::bounds::deep_bos_report(model, task, mode, claim, options)
           : theorems::bounds::bos_report(model, task, mode, claim, options);
  // with each head's own enclosure, for several heads
  finish_box_run(opt, ctx, report.text, report.json, report.witness, report.verdict, ranks.root);
}

}  // namespace

void add_verify_command(CLI::App& app, Context& ctx) {
  CLI::App* verify = app.add_subcommand("verify", "run a theorem checker");
  verify->require_subcommand(1);
  CLI::App* relu = verify->add_subcommand(
      "relu",
      "Theorem 3, exactly: the ReLU model (one layer, or residual) has zero error over the whole "
      "content "
      "box and zero BOS attention (exit 0 VERIFIED, 3 NOT VERIFIED, 2 NOT APPLICABLE: the model's "
      "scores read the content or its attention is not ReLU)");
  auto opt = std::make_shared<VerifyReluOptions>();
  add_task_options(
      relu, &opt->task,
      {kMaxReluN, "token dimension (default 16; from the weight file if given)", kMaxReluL,
       "sequence length (default 16 for the construction; a weight file's task.L)"});
  add_text_option(relu, "--weights", &opt->weights, "a file name",
                  "a ReLU weight file, one layer or residual (default: the construction)");
  add_out_option(relu, &opt->out, OutputKind::kFile,
                 "write the JSON certificate here (atomically)");
  add_text_option(relu, "--coq", &opt->coq, "a file name",
                  "also write the result as a Coq 8.16 proof to FILE.v (check it with: coqc "
                  "FILE.v); for a NOT VERIFIED model, the witness");
  opt->layers_option = add_int_option(
      relu, "--layers", &opt->layers, 1, kMaxLayers,
      "without --weights: the residual construction of this many layers (default 1)");
  opt->heads_option = add_int_option(
      relu, "--heads", &opt->heads, 1, kMaxHeads,
      "without --weights: the residual construction of this many heads per layer (default 1; "
      "--layers 1 --heads 1 is the single-layer construction)");
  add_text_option(relu, "--write-weights", &opt->write_weights, "a file name",
                  "without --weights: also write the construction as a weight file");
  relu->add_flag("--coq-force-theorem", opt->coq_force,
                 "debug: with --coq, write the Theorem 3 statement and proof even when the check "
                 "fails (coqc then rejects the proof)");
  relu->add_flag("--json", opt->json,
                 "print the certificate as one JSON object on stdout instead of the report");
  relu->callback([opt, &ctx]() { run_verify_relu(*opt, ctx); });

  CLI::App* bound = verify->add_subcommand(
      "bound",
      "certified worst-case loss of a single-layer weight file, or of a residual one of several "
      "layers, over the whole content box by interval branch and bound: lower <= E <= upper, or "
      "with --claim whether E <= claim "
      "(exit 0 ENCLOSED or VERIFIED, 4 NOT ENCLOSED or UNDECIDED, 3 NOT VERIFIED)");
  // E >= 0 always, so a claim must be >= 0; a claim of 0 is allowed: NOT
  // VERIFIED then certifies E > 0 (outward rounding rarely proves E = 0
  // exactly; verify relu does that for ReLU models).
  const auto bopt = add_box_options(
      bound, RealRange{0, false}, "check E <= CLAIM instead of enclosing E to --gap",
      "stop at upper <= lower (1 + gap), default 0.01", "MPFI precision, default 128");
  add_verdict_bar_options(bound, &bopt->bars, true, false);
  bound->callback([bopt, &ctx]() { run_verify_bound(*bopt, ctx); });

  CLI::App* bos = verify->add_subcommand(
      "bos",
      "certified minimum BOS mass of a single-layer weight file over the whole content box by "
      "interval branch and bound: 1 - min BOS enclosed, or with --claim whether min BOS >= claim; "
      "with --max the maximum; a residual file: every (layer, head) enclosed, or with --layer "
      "--head --claim that head's claim (exit 0 ENCLOSED or VERIFIED, 4 NOT ENCLOSED or "
      "UNDECIDED, 3 NOT VERIFIED)");
  const auto sopt = add_box_options(
      bos, RealRange{0, false, true, 1}, "check min BOS >= CLAIM instead of enclosing it to --gap",
      "stop at 1 - min BOS enclosed to relative gap GAP, default 0.01",
      "MPFI precision to start with, default 128");
  add_verdict_bar_options(bos, &sopt->bars, false, true);
  auto max_mode = std::make_shared<bool>(false);
  bos->add_flag("--max", *max_mode,
                "the certified maximum non-trigger BOS mass instead (a BOS cap): max BOS "
                "enclosed, or with --claim whether max BOS <= claim");
  add_int_option(bos, "--layer", &sopt->layer, 0, kMaxLayers - 1,
                 "only this layer's heads (0-based); with --head and --claim, that head's claim");
  add_int_option(bos, "--head", &sopt->head, 0, kMaxHeads - 1,
                 "only this head (0-based) of each layer, or of --layer");
  bos->callback([sopt, max_mode, &ctx]() { run_verify_bos(*sopt, *max_mode, ctx); });
}

}  // namespace sinkcert::cli
