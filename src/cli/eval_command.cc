// SPDX-License-Identifier: MIT
//
// sinkcert eval: a model (weight file) on one input file, or BOS-mass
// statistics and sampled error over a probe set.
//   eval --weights W.json --input X.json [--precision double|BITS] [--json]
//   eval --weights W.json --samples N [--seed S] [--L L]
//        [--trigger-range paper|reference-code] [--fixed-trigger J] [--json]
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "src/bos_statistics.h"
#include "src/certified_eval.h"
#include "src/cli/commands.h"
#include "src/evaluation.h"
#include "src/evidence.h"
#include "src/input_error.h"
#include "src/input_file.h"
#include "src/run_info.h"
#include "src/table_writer.h"
#include "src/weight_file.h"

namespace sinkcert::cli {

namespace {

// Working precisions accepted by --precision BITS (MPFR's limits are far
// wider; beyond this the printout alone would be megabytes).
constexpr int kMinBits = 2;
constexpr int kMaxBits = 1 << 16;

struct EvalOptions {
  std::string weights, input, precision = "double", trigger_range = "paper";
  int samples = kDefaultProbeCount, L = 16, fixed_trigger = 0;
  std::uint64_t seed = kDefaultProbeSeed;
  bool json = false;
  int certify = 0;  // --certify DIGITS (helper D): 0 = off
  CLI::Option* certify_opt = nullptr;
  CLI::Option *input_opt = nullptr, *samples_opt = nullptr, *seed_opt = nullptr, *L_opt = nullptr,
              *range_opt = nullptr, *fixed_opt = nullptr, *precision_opt = nullptr;
};

// 0 means double; otherwise the MPFR precision in bits.
int parse_precision(const std::string& text) {
  if (text == "double") return 0;
  const std::string expected = "expected \"double\" or a number of bits in [" +
                               std::to_string(kMinBits) + ", " + std::to_string(kMaxBits) + "]";
  std::size_t used = 0;
  int bits = 0;
  try {
    bits = std::stoi(text, &used);
  } catch (const std::exception&) {
    throw InputError("command line", "--precision", expected + ", got \"" + text + "\"");
  }
  if (used != text.size() || bits < kMinBits || bits > kMaxBits) {
    throw InputError("command line", "--precision", expected + ", got \"" + text + "\"");
  }
  return bits;
}

template <class T>
void print_matrix(const std::string& title, const Matrix<T>& m, int digits) {
  std::cout << title << "\n";
  for (int i = 0; i < m.rows(); ++i) {
    std::cout << "  " << i << ":";
    for (int k = 0; k < m.cols(); ++k) std::cout << " " << format_decimal(m(i, k), digits);
    std::cout << "\n";
  }
}

template <class T>
void run_on_input(const EvalOptions& o, const Context& ctx, const WeightFile& w,
                  const InputFile& in, const std::string& precision_name, int bits) {
  const Model<T> model = to_model<T>(w);
  const Matrix<T> X = in.tokens.unaryExpr([](double x) { return T(x); });
  const Evaluation<T> e = evaluate(model, X, in.trigger);
  const std::string label = Evidence::numeric(bits).label();
  const int digits = decimal_digits_for_bits(bits);
  if (o.json) {
    nlohmann::json doc = to_json(e, digits);
    doc["evidence"] = label;
    doc["precision_bits"] = bits;
    doc["weights"] = o.weights;
    doc["input"] = o.input;
    doc["model"] = {{"kind", to_string(w.kind)},
                    {"attention", to_string(w.attention)},
                    {"n", w.n},
                    {"layers", w.num_layers()},
                    {"heads", w.num_heads()}};
    doc["target_kind"] = w.kind == ModelKind::kResidual ? "residual" : "plain";
    doc["run"] = to_json(make_run_info(ctx.argv, 0, precision_name));
    std::cout << doc.dump(2) << "\n";
    return;
  }
  const int L = static_cast<int>(in.tokens.rows());
  std::cout << "model: " << to_string(w.attention) << ", " << to_string(w.kind) << ", n = " << w.n
            << ", " << w.num_layers() << " layer(s) x " << w.num_heads() << " head(s) ("
            << o.weights << ")\n"
            << "input: L = " << L << ", trigger at position " << in.trigger << " (" << o.input
            << ")\n"
            << "precision: " << precision_name << "; every number below is " << label << " ("
            << digits << " significant digits)\n";
  print_matrix("output f(X), row i = position i [" + label + "]:", e.result.output, digits);
  print_matrix(std::string("target y (") + (w.kind == ModelKind::kResidual ? "residual" : "plain") +
                   ") [" + label + "]:",
               e.target, digits);
  for (std::size_t l = 0; l < e.result.attention.size(); ++l) {
    for (std::size_t h = 0; h < e.result.attention[l].size(); ++h) {
      print_matrix("attention layer " + std::to_string(l) + " head " + std::to_string(h) +
                       ", row i = a_i0..a_i(L-1) [" + label + "]:",
                   e.result.attention[l][h], digits);
    }
  }
  std::cout << "l_inf error max_{i,d} |f(X) - y| = " << format_decimal(e.error.value, digits)
            << " [" << label << "] at position " << e.error.position << ", coordinate "
            << e.error.coordinate << "\n";
}

void print_summary_row(const std::string& name, const BosSummary& s) {
  char buf[64];
  std::cout << "  " << name << ": count " << s.count;
  if (s.count == 0) {
    std::cout << "\n";
    return;
  }
  std::snprintf(buf, sizeof buf, "%.17g", s.min);
  std::cout << ", min " << buf;
  std::snprintf(buf, sizeof buf, "%.17g", s.mean);
  std::cout << ", mean " << buf << ", quantiles";
  for (std::size_t q = 0; q < kQuantileLevels.size(); ++q) {
    std::snprintf(buf, sizeof buf, " q%g=%.17g", kQuantileLevels[q], s.quantiles[q]);
    std::cout << buf;
  }
  std::cout << "\n";
}

void run_statistics(const EvalOptions& o, const Context& ctx, const WeightFile& w) {
  Task task{w.n, o.L, TriggerRange::kPaper};
  try {
    task.range = parse_trigger_range(o.trigger_range);
  } catch (const std::invalid_argument& e) {
    throw InputError("command line", "--trigger-range", e.what());
  }
  if (o.L < 2) throw InputError("command line", "--L", "expected an integer >= 2");
  if (o.samples < 1) throw InputError("command line", "--samples", "expected an integer >= 1");
  std::optional<int> fixed;
  if (o.fixed_opt->count() > 0) {
    if (o.fixed_trigger < 1 || o.fixed_trigger >= o.L) {
      throw InputError("command line", "--fixed-trigger",
                       "expected a position in 1.." + std::to_string(o.L - 1) + " (0-indexed)");
    }
    fixed = o.fixed_trigger;
  } else if (task.trigger_positions().empty()) {
    throw InputError("command line", "--L",
                     "no trigger position exists for L = " + std::to_string(o.L) + " under the " +
                         to_string(task.range) + " convention");
  }
  std::cerr << "sinkcert eval: " << o.samples << " probe sequences, seed " << o.seed << "...\n";
  const ProbeSet probes = make_probe_set(task, o.samples, o.seed, fixed);
  const Model<double> model = to_model<double>(w);
  const BosStatistics st = bos_statistics(model, probes);
  if (o.json) {
    nlohmann::json doc = to_json(st);
    doc["weights"] = o.weights;
    doc["run"] = to_json(make_run_info(ctx.argv, o.seed, "double"));
    std::cout << doc.dump(2) << "\n";
    return;
  }
  const std::string label = st.evidence.label();
  char buf[64];
  std::cout << "model: " << to_string(w.attention) << ", " << to_string(w.kind) << ", n = " << w.n
            << ", " << w.num_layers() << " layer(s) x " << w.num_heads() << " head(s) ("
            << o.weights << ")\n"
            << "probe set: " << o.samples << " sequences of L = " << o.L << ", seed " << o.seed
            << ", ";
  if (fixed) {
    std::cout << "trigger fixed at position " << *fixed << " (0-indexed)\n";
  } else {
    std::cout << "trigger drawn from the " << to_string(task.range) << " convention (j in "
              << task.trigger_positions().front() << ".." << task.trigger_positions().back()
              << ")\n";
  }
  std::snprintf(buf, sizeof buf, "%.17g", st.error_max);
  std::cout << "sampled l_inf error [" << label
            << ", sampled: a lower bound on the worst-case error, not an upper bound]:\n"
            << "  max " << buf << " (probe " << st.error_max_sample << ", trigger "
            << st.error_max_trigger << ", position " << st.error_max_position << ", coordinate "
            << st.error_max_coordinate << ")\n";
  std::snprintf(buf, sizeof buf, "%.17g", st.error_mean);
  std::cout << "  mean " << buf << "\n";
  std::cout << "BOS mass a_i0 at non-trigger positions i >= 1 [" << label
            << "], quantiles numpy 'linear':\n";
  for (const auto& layer : st.heads) {
    for (const auto& h : layer) {
      std::cout << "layer " << h.layer << " head " << h.head << "\n";
      print_summary_row("all positions", h.overall);
      for (std::size_t i = 1; i < h.per_position.size(); ++i) {
        print_summary_row("position " + std::to_string(i), h.per_position[i]);
      }
    }
  }
}

// --certify DIGITS: MPFI enclosures at adaptive precision (certified_eval.h):
// start 64 bits, +64 while e(X) or a BOS deficit 1 - a_i0 (non-trigger
// i >= 1) certifies fewer than DIGITS relative digits, cap kCertifyMaxBits.
constexpr int kCertifyMaxBits = 8192;

void run_certified(const EvalOptions& o, Context& ctx, const WeightFile& w, const InputFile& in) {
  if (o.certify < 1 || o.certify > 1000) {
    throw InputError("command line", "--certify", "expected a number of digits in [1, 1000]");
  }
  AdaptiveOptions options;
  options.digits = o.certify;
  options.max_bits = kCertifyMaxBits;
  const CertifiedEvaluation e = certify_forward(to_model<double>(w), in.tokens, in.trigger, options);
  const std::string label = e.reached ? "CERTIFIED" : "CERTIFIED (fewer digits than requested)";
  const int shown = std::min(o.certify + 2, 60);
  if (!e.reached) ctx.exit_code = 4;
  if (o.json) {
    nlohmann::json doc;
    doc["evidence"] = "CERTIFIED";
    doc["digits_requested"] = o.certify;
    doc["digits_certified"] = e.digits;
    doc["reached"] = e.reached;
    doc["precision_bits"] = e.bits;
    doc["linf_error"] = format_interval(e.linf_error, shown);
    doc["error_position"] = e.error_position;
    doc["error_coordinate"] = e.error_coordinate;
    nlohmann::json deficits = nlohmann::json::array();
    for (std::size_t l = 0; l < e.bos_deficit.size(); ++l) {
      for (std::size_t h = 0; h < e.bos_deficit[l].size(); ++h) {
        nlohmann::json per;
        for (const Mpfi& d : e.bos_deficit[l][h]) per.push_back(format_interval(d, shown));
        deficits.push_back({{"layer", l}, {"head", h}, {"one_minus_bos", per},
                            {"max_over_non_trigger", format_interval(e.max_bos_deficit[l][h], shown)}});
      }
    }
    doc["bos_deficit"] = deficits;
    doc["weights"] = o.weights;
    doc["input"] = o.input;
    doc["run"] = to_json(make_run_info(ctx.argv, 0, "mpfi adaptive, " + std::to_string(e.bits) + " bits"));
    std::cout << doc.dump(2) << "\n";
    return;
  }
  std::cout << "model: " << to_string(w.attention) << ", " << to_string(w.kind) << ", n = " << w.n
            << " (" << o.weights << "); input " << o.input << ", trigger " << in.trigger << "\n"
            << "precision: mpfi, adaptive from 64 bits (+64): " << e.bits << " bits needed for "
            << o.certify << " digits; " << e.digits << " certified"
            << (e.reached ? "" : " (cap reached: UNDECIDED)") << "\n";
  std::cout << "l_inf error e(X) in " << format_interval(e.linf_error, shown) << " [" << label
            << "] at position " << e.error_position << ", coordinate " << e.error_coordinate
            << "\n";
  for (std::size_t l = 0; l < e.bos_deficit.size(); ++l) {
    for (std::size_t h = 0; h < e.bos_deficit[l].size(); ++h) {
      std::cout << "layer " << l << " head " << h << ": 1 - a_i0 [" << label << "]\n";
      for (std::size_t i = 1; i < e.bos_deficit[l][h].size(); ++i) {
        std::cout << "  position " << i << (static_cast<int>(i) == in.trigger ? " (trigger)" : "")
                  << ": " << format_interval(e.bos_deficit[l][h][i], shown) << "\n";
      }
      std::cout << "  max over non-trigger positions (1 - min BOS mass): "
                << format_interval(e.max_bos_deficit[l][h], shown) << "\n";
    }
  }
}

void run_eval(const EvalOptions& o, Context& ctx) {
  const bool on_input = o.input_opt->count() > 0;
  const bool sampled = o.samples_opt->count() > 0;
  if (sampled && o.certify_opt->count() > 0) {
    throw InputError("command line", "--certify", "applies only with --input");
  }
  if (on_input == sampled) {
    throw InputError("command line", on_input ? "--samples" : "--input",
                     "expected exactly one of --input X.json or --samples N");
  }
  if (on_input) {
    for (CLI::Option* opt : {o.seed_opt, o.L_opt, o.range_opt, o.fixed_opt}) {
      if (opt->count() > 0) {
        throw InputError("command line", opt->get_name(),
                         "applies only with --samples (the input file fixes L and the trigger)");
      }
    }
  } else if (o.precision_opt->count() > 0 && o.precision != "double") {
    throw InputError("command line", "--precision",
                     "expected \"double\" with --samples (statistics are computed in double)");
  }
  const int bits = parse_precision(o.precision);
  const WeightFile w = read_weight_file(o.weights);
  if (!on_input) {
    run_statistics(o, ctx, w);
    return;
  }
  const InputFile in = read_input_file(o.input, w.n);
  if (o.certify_opt->count() > 0) {
    run_certified(o, ctx, w, in);
    return;
  }
  if (bits == 0) {
    run_on_input<double>(o, ctx, w, in, "double", 53);
  } else {
    PrecisionScope scope(bits);
    const int used = PrecisionScope::current_bits();
    run_on_input<Mpfr>(
        o, ctx, w, in,
        "mpfr " + std::to_string(used) + " bits (requested " + std::to_string(bits) + ")", used);
  }
}

}  // namespace

void add_eval_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<EvalOptions>();
  CLI::App* sub = app.add_subcommand(
      "eval", "evaluate a model on an input file, or BOS-mass statistics on sampled inputs");
  sub->add_option("--weights", o->weights, "weight file (sinkcert-weights JSON)")->required();
  o->input_opt = sub->add_option("--input", o->input, "input file (sinkcert-input JSON)");
  o->precision_opt =
      sub->add_option("--precision", o->precision, "double (default) or MPFR bits, with --input");
  sub->add_flag("--json", o->json, "print one JSON document on stdout");
  o->certify_opt = sub->add_option(
      "--certify", o->certify,
      "with --input: MPFI enclosures with DIGITS certified digits (adaptive precision)");
  o->samples_opt = sub->add_option("--samples", o->samples, "number of probe sequences");
  o->seed_opt = sub->add_option("--seed", o->seed, "probe seed (default 20260311)");
  o->L_opt = sub->add_option("--L", o->L, "sequence length for --samples (default 16)");
  o->range_opt =
      sub->add_option("--trigger-range", o->trigger_range, "paper (default) or reference-code");
  o->fixed_opt = sub->add_option("--fixed-trigger", o->fixed_trigger,
                                 "fix the trigger at this 0-indexed position (paper figure: 7)");
  sub->callback([o, &ctx] { run_eval(*o, ctx); });
}

}  // namespace sinkcert::cli
