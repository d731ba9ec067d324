// SPDX-License-Identifier: MIT
//
// sinkcert eval: a model (weight file) on one input file, or BOS-mass
// statistics and sampled error over a probe set.
//   eval --weights W.json --input X.json [--precision double|BITS] [--json]
//   eval --weights W.json --samples N [--seed S] [--L L]
//        [--trigger-range paper|reference-code] [--trigger J] [--json]
// A NaN or infinity in a floating-point evaluation is printed as such and
// reported on stderr with exit code 5 (main.cc): that precision cannot
// evaluate the model there.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "app/commands.h"
#include "src/bos_statistics.h"
#include "src/certified_eval.h"
#include "src/evaluation.h"
#include "src/evidence.h"
#include "src/input_error.h"
#include "src/input_file.h"
#include "src/limits.h"
#include "src/run_info.h"
#include "src/table_writer.h"
#include "src/weight_file.h"

namespace sinkcert::cli {

namespace {

struct EvalOptions {
  std::string weights, input, precision = "double";
  TaskOptions task;  // --samples: --L and --trigger-range (n is the weight file's)
  int samples = kDefaultProbeCount, fixed_trigger = 0;
  std::uint64_t seed = kDefaultProbeSeed;
  bool json = false;
  int certify = 0;  // --certify DIGITS: 0 = off
  CLI::Option *certify_opt = nullptr, *weights_opt = nullptr;
  CLI::Option *input_opt = nullptr, *samples_opt = nullptr, *seed_opt = nullptr,
              *fixed_opt = nullptr, *fixed_alias_opt = nullptr, *precision_opt = nullptr;
};

// What --precision accepts.
std::string precision_expected() {
  return "\"double\" or a number of bits in [" + std::to_string(kMinPrecisionBits) + ", " +
         std::to_string(kMaxPrecisionBits) + "]";
}

// --precision: nullopt for double, otherwise the MPFR precision in bits
// (decimal digits only).
using MpfrBits = std::optional<int>;
MpfrBits parse_precision(const std::string& text) {
  if (text == "double") return std::nullopt;
  const bool digits =
      !text.empty() && text.size() <= 9 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const long bits = digits ? std::stol(text) : -1;
  if (bits < kMinPrecisionBits || bits > kMaxPrecisionBits) {
    throw InputError("command line", "--precision",
                     "expected " + precision_expected() + ", got '" + text + "'");
  }
  return static_cast<int>(bits);
}

// A statistic for the text report: 17 significant digits, or "NaN",
// "Infinity", "-Infinity" (printf would write "-nan").
std::string real17(double x) { return format_decimal(x, 17); }

// One line on stderr naming a non-finite value; the caller sets exit code 5.
void report_non_finite(const std::string& what, const std::string& value,
                       const std::string& advice) {
  std::cerr << "sinkcert: error: non-finite value in " << what << ": " << value << "; " << advice
            << "\n";
}

// Memory of the dominant arrays (limits.h, kMemoryBudgetBytes). One scalar:
// a double, or an MPFR number of `bits` (its struct and limbs; twice that
// for an MPFI interval).
double scalar_bytes(MpfrBits bits, bool interval) {
  if (!bits) return 8;
  const double one = 32 + 8 * std::ceil(*bits / 64.0);
  return interval ? 2 * one : one;
}
// One forward pass: every A and M, every attention matrix, and the tokens,
// outputs, target and residual stream (L x n each).
double forward_scalars(const WeightFile& w, int L) {
  const double n = w.n, layers = w.num_layers(), heads = w.num_heads();
  return 2 * layers * heads * n * n + layers * heads * double(L) * L + (layers + 4) * double(L) * n;
}

// Work of one forward pass (limits.h, kMaxEvalWork): layers heads L n (L + n)
// operations (scores and mixing), each costing 1 in double and
// 1000 max(1, bits / 2048) in MPFR.
double forward_units(const WeightFile& w, int L) {
  return double(w.num_layers()) * w.num_heads() * L * w.n * (double(L) + w.n);
}
double precision_cost(MpfrBits bits) { return bits ? 1000.0 * std::max(1.0, *bits / 2048.0) : 1.0; }

// InputError unless one forward pass on the input file fits kMaxEvalWork
// and kMemoryBudgetBytes at `bits` (nullopt: double): names the input's
// length in double, --precision with the bits that would fit otherwise.
void check_forward_size(const EvalOptions& o, const WeightFile& w, int L, MpfrBits bits) {
  const double units = forward_units(w, L);
  if (units > kMaxEvalWork) {
    int max_L = kMinL;
    while (max_L < L && forward_units(w, max_L + 1) <= kMaxEvalWork) ++max_L;
    throw InputError(
        o.input, "tokens",
        "at most L = " + std::to_string(max_L) +
            " rows for this model (a forward "
            "pass, layers x heads x L n (L + n) operations, is capped at 4e9, about two "
            "minutes), got " +
            std::to_string(L));
  }
  if (bits && units * precision_cost(bits) > kMaxEvalWork) {
    const double fit = std::floor(2048.0 * kMaxEvalWork / (1000.0 * units));
    const std::string expected = fit >= 2048 ? "\"double\" or a number of bits in [" +
                                                   std::to_string(kMinPrecisionBits) + ", " +
                                                   std::to_string(static_cast<int>(fit)) + "]"
                                             : std::string("\"double\"");
    throw InputError("command line", "--precision",
                     "expected " + expected +
                         " for this model and input (MPFR costs 1000 "
                         "max(1, bits / 2048) times double, capped at about two minutes), got '" +
                         o.precision + "'");
  }
  check_memory("command line", bits ? "--precision" : "--input",
               forward_scalars(w, L) * scalar_bytes(bits, false),
               "a forward pass of this model and input at " +
                   (bits ? std::to_string(*bits) + " bits" : std::string("double precision")));
}

// The target a model kind is compared with (task.h): "residual" or "plain".
const char* target_name(ModelKind kind) {
  return target_kind_of(kind) == TargetKind::kResidual ? "residual" : "plain";
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
void run_on_input(const EvalOptions& o, Context& ctx, const WeightFile& w, const InputFile& in,
                  const std::string& precision_name, int bits) {
  const Model<T> model = to_model<T>(w);
  const Matrix<T> X = in.tokens_as<T>();
  const Evaluation<T> e = evaluate(model, X, in.trigger);
  const std::string label = Evidence::numeric(bits).label();
  const int digits = decimal_digits_for_bits(bits);
  // Printed as NaN / Infinity like every other value, then reported once
  // the report is out.
  const std::optional<NonFiniteValue> bad = find_non_finite(e);
  const auto report = [&] {
    if (!bad) return;
    ctx.exit_code = kExitNonFinite;
    report_non_finite(
        bad->location(), bad->value,
        label + " cannot evaluate this model here, try " +
            (std::is_same_v<T, double> ? std::string("--precision BITS") : "a higher --precision") +
            " or --certify");
  };
  if (o.json) {
    nlohmann::json doc = to_json(e, digits);
    doc["evidence"] = label;
    doc["precision_bits"] = bits;
    doc["weights"] = o.weights;
    doc["input"] = o.input;
    doc["model"] = shape_json(w);
    doc["target_kind"] = target_name(w.kind);
    doc[kProvenanceKey] = to_json(make_run_info(ctx.argv, 0, precision_name));
    if (bad) {
      doc["non_finite"] = {
          {"in", bad->where}, {"row", bad->row}, {"column", bad->col}, {"value", bad->value}};
    }
    std::cout << doc.dump(2) << std::endl;
    report();
    return;
  }
  const int L = static_cast<int>(in.tokens.rows());
  std::cout << "model: " << describe(w) << " (" << o.weights << ")\n"
            << "input: L = " << L << ", trigger at position " << in.trigger << " (" << o.input
            << ")\n"
            << "precision: " << precision_name << "; every number below is " << label << " ("
            << digits << " significant digits)\n";
  print_matrix("output f(X), row i = position i [" + label + "]:", e.result.output, digits);
  print_matrix(std::string("target y (") + target_name(w.kind) + ") [" + label + "]:", e.target,
               digits);
  for (std::size_t l = 0; l < e.result.attention.size(); ++l) {
    for (std::size_t h = 0; h < e.result.attention[l].size(); ++h) {
      print_matrix("attention layer " + std::to_string(l) + " head " + std::to_string(h) +
                       ", row i = a_i0..a_i(L-1) [" + label + "]:",
                   e.result.attention[l][h], digits);
    }
  }
  std::cout << "l_inf error max_{i,d} |f(X) - y| = " << format_decimal(e.error.value, digits)
            << " [" << label << "] at position " << e.error.position << ", coordinate "
            << e.error.coordinate << std::endl;
  report();
}

void print_summary_row(const std::string& name, const BosSummary& s) {
  char buf[64];
  std::cout << "  " << name << ": count " << s.count;
  if (s.count == 0) {
    std::cout << "\n";
    return;
  }
  std::cout << ", min " << real17(s.min) << ", mean " << real17(s.mean) << ", quantiles";
  for (std::size_t q = 0; q < kQuantileLevels.size(); ++q) {
    std::snprintf(buf, sizeof buf, " q%g=", kQuantileLevels[q]);
    std::cout << buf << real17(s.quantiles[q]);
  }
  std::cout << "\n";
}

// The largest --samples for this model and L: the probe set (L x n doubles
// and a little bookkeeping per probe) and the stored BOS masses ((L - 1)
// per layer and head, plus two copies of one head's while summarizing)
// must fit kMemoryBudgetBytes, and the forward passes kMaxEvalWork.
int max_samples(const WeightFile& w, int L) {
  const double per_probe =
      8.0 * L * w.n + 64 + 8.0 * (L - 1) * w.num_layers() * w.num_heads() + 16.0 * L;
  const double memory_fit = std::floor(static_cast<double>(kMemoryBudgetBytes) / per_probe);
  const double work_fit = std::floor(kMaxEvalWork / forward_units(w, L));
  return static_cast<int>(
      std::max(0.0, std::min({static_cast<double>(kMaxSamples), memory_fit, work_fit})));
}

void run_statistics(const EvalOptions& o, Context& ctx, const WeightFile& w) {
  // --L, --samples, --seed and --trigger were range-checked when parsed.
  const Task task = resolve_task(w, o.task);
  std::optional<int> fixed;
  if (o.fixed_opt->count() + o.fixed_alias_opt->count() > 0) {
    if (o.fixed_trigger >= task.L) {
      throw InputError("command line", "--trigger",
                       "expected " + integer_range_text(1, task.L - 1) +
                           " (a 0-indexed position of L = " + std::to_string(task.L) + "), got " +
                           std::to_string(o.fixed_trigger));
    }
    fixed = o.fixed_trigger;
  } else if (task.trigger_positions().empty()) {
    throw InputError("command line", "--L",
                     "no trigger position exists for L = " + std::to_string(task.L) +
                         " under the " + to_string(task.range) + " convention");
  }
  if (const int most = max_samples(w, task.L); o.samples > most) {
    const std::string limits = " (the probe set and BOS masses must fit " +
                               std::to_string(kMemoryBudgetBytes >> 30) +
                               " GiB, the forward passes about two minutes), got ";
    if (most < 1) {
      throw InputError("command line", "--L",
                       "a smaller L for this model: one probe at L = " + std::to_string(task.L) +
                           " is beyond the limits" + limits + std::to_string(task.L));
    }
    throw InputError("command line", "--samples",
                     "expected " + integer_range_text(1, most) + " for this model at L = " +
                         std::to_string(task.L) + limits + std::to_string(o.samples));
  }
  progress_sink(ctx, "eval")(std::to_string(o.samples) + " probe sequences, seed " +
                             std::to_string(o.seed) + "...");
  ctx.activity = "computing the probe set and its statistics (--samples, --L)";
  const ProbeSet probes = make_probe_set(task, o.samples, o.seed, fixed);
  const Model<double> model = to_model<double>(w);
  const BosStatistics st = bos_statistics(model, probes);
  // NaN and infinities propagate into the statistics (bos_statistics.h);
  // name the first one and exit 5.
  std::string bad_what, bad_value;
  if (!std::isfinite(st.error_max)) {
    bad_what = "the output of probe " + std::to_string(st.error_max_sample) + " (trigger " +
               std::to_string(st.error_max_trigger) + ") at position " +
               std::to_string(st.error_max_position) + ", coordinate " +
               std::to_string(st.error_max_coordinate);
    bad_value = non_finite_name(st.error_max);
  }
  for (const auto& layer : st.heads) {
    for (const auto& h : layer) {
      if (bad_what.empty() && h.overall.count > 0 && !std::isfinite(h.overall.mean)) {
        bad_what =
            "the BOS mass of layer " + std::to_string(h.layer) + " head " + std::to_string(h.head);
        bad_value = non_finite_name(h.overall.mean);
      }
    }
  }
  const auto report = [&] {
    if (bad_what.empty()) return;
    ctx.exit_code = kExitNonFinite;
    report_non_finite(bad_what, bad_value,
                      "NUMERIC(53) cannot evaluate this model on these probes; evaluate one "
                      "input with --input X.json --precision BITS or --certify");
  };
  if (o.json) {
    nlohmann::json doc = to_json(st);
    doc["weights"] = o.weights;
    doc[kProvenanceKey] = to_json(make_run_info(ctx.argv, o.seed, "double"));
    std::cout << doc.dump(2) << std::endl;
    report();
    return;
  }
  const std::string label = st.evidence.label();
  std::cout << "model: " << describe(w) << " (" << o.weights << ")\n"
            << "probe set: " << o.samples << " sequences of L = " << task.L << ", seed " << o.seed
            << ", ";
  if (fixed) {
    std::cout << "trigger fixed at position " << *fixed << " (0-indexed)\n";
  } else {
    std::cout << "trigger drawn from the " << to_string(task.range) << " convention (j in "
              << task.trigger_positions().front() << ".." << task.trigger_positions().back()
              << ")\n";
  }
  std::cout << "sampled l_inf error [" << label
            << ", sampled: a lower bound on the worst-case error, not an upper bound]:\n"
            << "  max " << real17(st.error_max) << " (probe " << st.error_max_sample << ", trigger "
            << st.error_max_trigger << ", position " << st.error_max_position << ", coordinate "
            << st.error_max_coordinate << ")\n";
  std::cout << "  mean " << real17(st.error_mean) << "\n";
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
  std::cout.flush();
  report();
}

// --certify DIGITS: MPFI enclosures at adaptive precision (certified_eval.h):
// start 64 bits, +64 while e(X) or a BOS deficit 1 - a_i0 (non-trigger
// i >= 1) certifies fewer than DIGITS relative digits, cap kCertifyMaxBits
// (limits.h).
void run_certified(const EvalOptions& o, Context& ctx, const WeightFile& w, const InputFile& in) {
  // --certify was range-checked when parsed (kMaxCertifyDigits).
  AdaptiveOptions options;
  options.digits = o.certify;
  options.max_bits = kCertifyMaxBits;
  const CertifiedEvaluation e =
      certify_forward(to_model<Rational>(w), in.tokens, in.trigger, options);
  if (!e.reached) ctx.exit_code = kExitUndecided;
  if (const std::string bad = non_finite_name(e.linf_error); !bad.empty()) {
    ctx.exit_code = kExitNonFinite;
    report_non_finite(
        "the enclosure of e(X) at position " + std::to_string(e.error_position) + ", coordinate " +
            std::to_string(e.error_coordinate),
        bad, "MPFI at " + std::to_string(e.bits) + " bits cannot enclose this model's error here");
  }
  if (o.json) {
    nlohmann::json doc = to_json(e);
    doc["weights"] = o.weights;
    doc["input"] = o.input;
    doc[kProvenanceKey] =
        to_json(make_run_info(ctx.argv, 0, "mpfi adaptive, " + std::to_string(e.bits) + " bits"));
    std::cout << doc.dump(2) << "\n";
    return;
  }
  std::cout << "model: " << to_string(w.attention) << ", " << to_string(w.kind) << ", n = " << w.n
            << " (" << o.weights << "); input " << o.input << ", trigger " << in.trigger << "\n"
            << summary_text(e);
}

void run_eval(const EvalOptions& o, Context& ctx) {
  require_option(o.weights_opt);
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
    for (CLI::Option* opt :
         {o.seed_opt, o.task.L_option, o.task.range_option, o.fixed_opt, o.fixed_alias_opt}) {
      if (opt->count() > 0) {
        throw InputError("command line", opt->get_name(),
                         "applies only with --samples (the input file fixes L and the trigger)");
      }
    }
  } else if (o.precision_opt->count() > 0 && o.precision != "double") {
    throw InputError("command line", "--precision",
                     "expected \"double\" with --samples (statistics are computed in double)");
  }
  const MpfrBits bits = parse_precision(o.precision);
  ctx.activity = "reading " + o.weights;
  const WeightFile w = read_weight_file(o.weights);
  if (!on_input) {
    run_statistics(o, ctx, w);
    return;
  }
  ctx.activity = "reading " + o.input;
  const InputFile in = read_input_file(o.input, w.n);
  const int L = static_cast<int>(in.tokens.rows());
  if (o.certify_opt->count() > 0) {
    // One attempt in MPFI costs about 5000 times double (measured: 60 against
    // 3e5 sequences per second at n = L = 16); the attempts at higher
    // precision follow only while digits are missing.
    if (forward_units(w, L) * 5000 > kMaxEvalWork) {
      throw InputError("command line", "--certify",
                       "a smaller model or input: one MPFI pass at L = " + std::to_string(L) +
                           " is beyond the work limit (about two minutes)");
    }
    // MPFI intervals at up to the cap of the adaptive loop
    check_memory("command line", "--certify",
                 forward_scalars(w, L) * scalar_bytes(kCertifyMaxBits, true),
                 "certifying this model and input (MPFI up to " + std::to_string(kCertifyMaxBits) +
                     " bits)");
    ctx.activity = "certifying the forward pass (--certify)";
    run_certified(o, ctx, w, in);
    return;
  }
  check_forward_size(o, w, L, bits);
  ctx.activity = "computing the forward pass (--precision)";
  if (!bits) {
    run_on_input<double>(o, ctx, w, in, "double", 53);
  } else {
    PrecisionScope scope(*bits);
    const int used = PrecisionScope::current_bits();
    run_on_input<Mpfr>(
        o, ctx, w, in,
        "mpfr " + std::to_string(used) + " bits (requested " + std::to_string(*bits) + ")", used);
  }
}

}  // namespace

void add_eval_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<EvalOptions>();
  CLI::App* sub = app.add_subcommand(
      "eval", "evaluate a model on an input file, or BOS-mass statistics on sampled inputs");
  o->weights_opt = add_text_option(sub, "--weights", &o->weights, "a file name",
                                   "weight file (sinkcert-weights JSON), required");
  o->input_opt =
      add_text_option(sub, "--input", &o->input, "a file name", "input file (sinkcert-input JSON)");
  o->precision_opt = add_text_option(sub, "--precision", &o->precision, precision_expected(),
                                     "double (default) or MPFR bits, with --input");
  sub->add_flag("--json", o->json, "print one JSON document on stdout");
  o->certify_opt = add_int_option(
      sub, "--certify", &o->certify, 1, kMaxCertifyDigits,
      "with --input: MPFI enclosures with DIGITS certified digits (adaptive precision)");
  o->samples_opt =
      add_int_option(sub, "--samples", &o->samples, 1, kMaxSamples, "number of probe sequences");
  o->seed_opt = add_seed_option(sub, &o->seed, "probe seed");
  add_task_options(sub, &o->task,
                   {std::nullopt, "", kMaxL,
                    "sequence length for --samples (default: the weight file's task.L)"});
  o->fixed_opt = add_int_option(sub, "--trigger", &o->fixed_trigger, 1, kMaxL - 1,
                                "fix the trigger at this 0-indexed position (paper figure: 7)");
  // the former name, accepted and hidden
  o->fixed_alias_opt = add_int_option(sub, "--fixed-trigger", &o->fixed_trigger, 1, kMaxL - 1,
                                      "deprecated: --trigger");
  o->fixed_alias_opt->group("");
  sub->callback([o, &ctx] { run_eval(*o, ctx); });
}

}  // namespace sinkcert::cli
