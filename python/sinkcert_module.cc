// SPDX-License-Identifier: MIT
//
// sinkcert._sinkcert: the library calls the CLI makes, for Python.
//
// One class, WeightFile (src/weight_file.h), read from a file or from the
// text sinkcert.convert writes, with the calls of `sinkcert eval --input`,
// `attack`, `verify bound`, `verify bos` and `verify relu`:
//   eval(X)            evaluate<double> (src/evaluation.h)        NUMERIC(53)
//   eval_certified(X, digits)  certify_forward (src/certified_eval.h, as
//                      `eval --certify`)                          CERTIFIED
//   verify_relu(...)   check_relu_exact (theorems/exact/)          EXACT
//   probe(...)         bos_statistics on a probe set (src/bos_statistics.h, as
//                      `eval --samples`)                          NUMERIC(53)
//   attack(...)        search::attack (search/attack.h)           SEARCH, certified at the witness
//   bound(...)         bound_worst_case / check_upper_bound, or the deep versions for a
//                      residual model of several layers (theorems/bounds/)       CERTIFIED
//   bos_bound(...)     bound_min_bos / check_min_bos, bound_max_bos / check_max_bos, or
//                      the deep versions for a residual model (deep_bos_bound.h), one
//                      (layer, head) or every selected head as `verify bos` does    CERTIFIED
// Each returns a dict that python/sinkcert/__init__.py turns into a typed
// result; matrices are numpy arrays (float64). Long calls release the GIL
// and report progress through an optional callable (binding_util.h).
// Certified ends are given twice: as doubles rounded outward (a lower end
// down, an upper end up, so [lo, hi] still encloses) and as the exact
// decimal expansion of the MPFR number the checker computed.
#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include "python/binding_util.h"
#include "search/attack.h"
#include "src/bos_statistics.h"
#include "src/certified_eval.h"
#include "src/evaluation.h"
#include "src/input_error.h"
#include "src/json_reader.h"
#include "src/limits.h"
#include "src/task.h"
#include "src/verdict_bars.h"
#include "src/weight_file.h"
#include "theorems/bounds/bos_bound.h"
#include "theorems/bounds/deep_bos_bound.h"
#include "theorems/bounds/deep_worst_case_bound.h"
#include "theorems/bounds/worst_case_bound.h"
#include "theorems/exact/relu_exact_checker.h"

namespace sinkcert::python {

// Defined in model_check_binding.cc when theorems/reports/model_check.h
// exists; below otherwise.
void bind_check(py::module_& m);

Task make_task(const WeightFile& w, int L, const std::string& trigger_range) {
  Task task;
  task.n = w.n;
  task.L = L;
  task.range = parse_trigger_range(trigger_range);
  task.validate();
  if (L > kMaxL) {
    throw std::invalid_argument("L: expected at most " + std::to_string(kMaxL) + ", got " +
                                std::to_string(L));
  }
  if (task.trigger_positions().empty()) {
    throw std::invalid_argument("L: no trigger position exists for L = " + std::to_string(L) +
                                " under the " + trigger_range + " convention");
  }
  return task;
}

namespace {

// x rounded to a double toward -inf (down) or +inf (up), exactly: the
// double nearest the rational, moved one step if it lies on the wrong side.
double round_rational(const Rational& x, bool up) {
  double d = x.convert_to<double>();
  const Rational back(d);
  if (up && back < x) d = std::nextafter(d, std::numeric_limits<double>::infinity());
  if (!up && back > x) d = std::nextafter(d, -std::numeric_limits<double>::infinity());
  return d;
}

// A certified end: {"value": rounded outward, "exact": its exact decimal}.
// NaN and infinities have no decimal: "NaN", "Infinity", "-Infinity".
py::dict certified_end(const Rational& x, bool up) {
  py::dict d;
  d["value"] = round_rational(x, up);
  d["exact"] = internal::exact_decimal(x);
  return d;
}
py::dict certified_end(const Mpfr& x, bool up) {
  if (const std::string bad = non_finite_name(x); !bad.empty()) {
    py::dict d;
    d["value"] = x.convert_to<double>();
    d["exact"] = bad;
    return d;
  }
  return certified_end(scalar_cast<Rational>(x), up);
}

// The task input X(j, C), L x n, of a flattened content vector.
Matrix<double> witness_input(const Task& task, int trigger, const std::vector<double>& content) {
  if (trigger <= 0 || static_cast<int>(content.size()) != content_variables(task)) {
    return Matrix<double>();
  }
  return make_input(task, trigger, unflatten_content(task, content));
}

py::object optional_matrix(const Matrix<double>& m) {
  if (m.size() == 0) return py::none();
  return py::cast(m);
}

// --- eval ------------------------------------------------------------------

// A weight entry beyond the double range (a file entry such as 1e400 is an
// exact rational, but infinite in double): ValueError naming the entry, as
// the CLI's `eval` reports a non-finite value (exit code 5).
void check_finite_weights(const Model<double>& model) {
  for (int l = 0; l < model.num_layers(); ++l) {
    for (int h = 0; h < model.num_heads(); ++h) {
      const Head<double>& head = model.layers[l][h];
      for (const auto& [name, m] : {std::pair<const char*, const Matrix<double>*>{"A", &head.A},
                                    {"M", &head.M},
                                    {"gate", &head.G}}) {
        for (Eigen::Index i = 0; i < m->rows(); ++i) {
          for (Eigen::Index k = 0; k < m->cols(); ++k) {
            if (const std::string bad = non_finite_name((*m)(i, k)); !bad.empty()) {
              throw std::invalid_argument(
                  "weights: layer " + std::to_string(l) + " head " + std::to_string(h) + " " +
                  name + "[" + std::to_string(i) + "][" + std::to_string(k) + "] is " + bad +
                  " in double (NUMERIC(53) cannot evaluate this model; eval(X, "
                  "certify=DIGITS) evaluates it in MPFI)");
            }
          }
        }
      }
    }
  }
}

py::dict eval_input(const WeightFile& w, const Matrix<double>& X) {
  int trigger = 0;
  try {
    trigger = validate_input(X, w.n);
  } catch (const InvalidInput& e) {
    throw std::invalid_argument(std::string("X: ") + e.what());
  }
  const Model<double> model = to_model<double>(w);
  check_finite_weights(model);
  const Evaluation<double> e = evaluate(model, X, trigger);
  if (const auto bad = find_non_finite(e)) {
    throw std::invalid_argument("eval: " + bad->location() + " is " + bad->value +
                                " in double (NUMERIC(53) cannot evaluate this model on this input; "
                                "eval(X, certify=DIGITS) evaluates it in MPFI)");
  }
  py::dict d;
  d["output"] = e.result.output;
  d["target"] = e.target;
  py::list layers;
  for (const auto& layer : e.result.attention) {
    py::list heads;
    for (const auto& a : layer) heads.append(py::cast(a));
    layers.append(heads);
  }
  d["attention"] = layers;
  d["trigger"] = trigger;
  d["error"] = e.error.value;
  d["error_position"] = e.error.position;
  d["error_coordinate"] = e.error.coordinate;
  d["target_kind"] = target_kind_of(w.kind) == TargetKind::kResidual ? "residual" : "plain";
  d["evidence"] = Evidence::numeric(53).label();
  return d;
}

// eval --certify DIGITS: MPFI enclosures of f(X), e(X) and every BOS deficit
// 1 - a_i0 at the lowest multiple-of-64 precision at which e(X) and every
// non-trigger deficit certify DIGITS relative digits (src/certified_eval.h).
// The JSON document of `eval --certify --json` (enclosures as "[lo, hi]"
// strings), plus the outputs' and e(X)'s ends as doubles rounded outward.
py::dict eval_certified(const WeightFile& w, const Matrix<double>& X, int digits) {
  int trigger = 0;
  try {
    trigger = validate_input(X, w.n);
  } catch (const InvalidInput& e) {
    throw std::invalid_argument(std::string("X: ") + e.what());
  }
  if (digits < 1 || digits > kMaxCertifyDigits) {
    throw std::invalid_argument("certify: expected digits in 1.." +
                                std::to_string(kMaxCertifyDigits) + ", got " +
                                std::to_string(digits));
  }
  AdaptiveOptions options;
  options.digits = digits;
  options.max_bits = kCertifyMaxBits;
  CertifiedEvaluation e;
  {
    py::gil_scoped_release release;
    e = certify_forward(to_model<Rational>(w), X, trigger, options);
  }
  const auto end = [](const Mpfi& x, bool up) {
    return up ? mpfr_get_d(boost::multiprecision::upper(x).backend().data(), MPFR_RNDU)
              : mpfr_get_d(boost::multiprecision::lower(x).backend().data(), MPFR_RNDD);
  };
  Matrix<double> lo(e.output.rows(), e.output.cols()), hi(e.output.rows(), e.output.cols());
  for (Eigen::Index i = 0; i < e.output.rows(); ++i) {
    for (Eigen::Index d = 0; d < e.output.cols(); ++d) {
      lo(i, d) = end(e.output(i, d), false);
      hi(i, d) = end(e.output(i, d), true);
    }
  }
  py::dict d;
  d["json"] = to_python(to_json(e));
  d["output_lo"] = lo;
  d["output_hi"] = hi;
  d["error_lo"] = end(e.linf_error, false);
  d["error_hi"] = end(e.linf_error, true);
  d["error_position"] = e.error_position;
  d["error_coordinate"] = e.error_coordinate;
  d["trigger"] = trigger;
  d["bits"] = e.bits;
  d["digits"] = e.digits;
  d["reached"] = e.reached;
  d["evidence"] = evidence_label(e);
  d["summary"] = summary_text(e);
  return d;
}

// --- verify relu -----------------------------------------------------------

// Theorem 3's exact checker (theorems/exact/relu_exact_checker.h) on the file's
// exact model: VERIFIED (E = 0 and zero BOS attention over the whole box),
// NOT VERIFIED with an exact witness, or NOT APPLICABLE (not ReLU
// attention), EXACT. The work cap is the CLI's (limits.h, kMaxReluWork).
py::dict run_verify_relu(const WeightFile& w, int L, const std::string& trigger_range) {
  const Task task = make_task(w, L, trigger_range);
  if (theorems::exact::relu_exact_work(std::max(1, w.num_layers()), std::max(1, w.num_heads()),
                                       task.n, task.L) > kMaxReluWork) {
    throw std::invalid_argument("L: the exact check of this model at L = " + std::to_string(L) +
                                " exceeds its cap of 2^30 exact operations");
  }
  theorems::exact::ReluCertificate cert;
  {
    py::gil_scoped_release release;
    cert = theorems::exact::check_relu_exact(to_model<Rational>(w), task);
  }
  py::dict d;
  d["verdict"] = to_string(cert.verdict);
  d["evidence"] = cert.evidence.label();
  d["reason"] = cert.reason;
  d["margin"] = theorems::exact::rational_string(cert.margin);
  d["margin_value"] = cert.margin.convert_to<double>();
  d["witness"] = cert.witness ? optional_matrix(cert.witness->X.unaryExpr(
                                    [](const Rational& x) { return x.convert_to<double>(); }))
                              : py::none();
  d["seconds"] = cert.seconds;
  d["summary"] = theorems::exact::summary_text(cert);
  d["json"] = to_python(
      theorems::exact::to_json(cert, make_run_info({"python: Model.verify_relu"}, 0, "exact")));
  return d;
}

// --- probe set -------------------------------------------------------------

py::dict run_probe(const WeightFile& w, int L, const std::string& trigger_range, int samples,
                   std::uint64_t seed, std::optional<int> fixed_trigger) {
  const Task task = make_task(w, L, trigger_range);
  if (samples < 1 || samples > kMaxSamples) {
    throw std::invalid_argument("samples: expected an integer in [1, " +
                                std::to_string(kMaxSamples) + "]");
  }
  if (fixed_trigger && (*fixed_trigger < 1 || *fixed_trigger >= L)) {
    throw std::invalid_argument("fixed_trigger: expected a 0-indexed position in [1, " +
                                std::to_string(L - 1) + "]");
  }
  BosStatistics st;
  {
    py::gil_scoped_release release;
    st = bos_statistics(to_model<double>(w), make_probe_set(task, samples, seed, fixed_trigger));
  }
  py::dict d;
  d["json"] = to_python(to_json(st));
  d["evidence"] = st.evidence.label();
  return d;
}

// --- attack ----------------------------------------------------------------

py::dict witness_dict(const Task& task, const search::Witness& w) {
  py::dict d;
  d["trigger"] = w.trigger;
  d["value"] = w.certified;
  d["value_double"] = w.value;
  d["position"] = w.position;
  d["coordinate"] = w.coordinate;
  d["layer"] = w.layer;
  d["certified_bits"] = w.certified_bits;
  d["double_disagrees"] = w.double_disagrees;
  d["X"] = w.trigger > 0 ? py::cast(search::witness_tokens(task, w)) : py::none();
  return d;
}

py::dict run_attack(const WeightFile& w, int L, const std::string& trigger_range,
                    std::uint64_t seed, double seconds, bool bos, py::object progress) {
  const Task task = make_task(w, L, trigger_range);
  if (!search::attack_round_fits(task, w.kind, w.attention, w.num_layers(), w.num_heads())) {
    const int max_L =
        search::attack_max_L(task, w.kind, w.attention, w.num_layers(), w.num_heads());
    throw std::invalid_argument(
        "L: one attack round on this model at L = " + std::to_string(L) +
        " exceeds the work limit (" +
        search::attack_limit_text(w.kind, w.attention, w.num_layers()) + ", src/limits.h); " +
        (max_L >= kMinL ? "L <= " + std::to_string(max_L) + " fits" : "no L fits this model"));
  }
  if (!(seconds >= 0) || seconds > kMaxBoundSeconds) {
    throw std::invalid_argument("seconds: expected a number in [0, 1e6]");
  }
  const Progress report(progress);
  search::AttackOptions o;
  o.seed = seed;
  o.seconds = seconds;
  o.quantity = bos ? search::WitnessQuantity::kBosMass : search::WitnessQuantity::kError;
  search::AttackResult r;
  {
    const auto line = report.function();
    py::gil_scoped_release release;
    r = search::attack(to_model<double>(w), to_model<Rational>(w), task, o, line);
  }
  report.rethrow();
  py::dict d;
  d["quantity"] = bos ? "min BOS mass" : "error";
  d["evidence"] = r.evidence.label();
  d["best"] = witness_dict(task, r.best);
  py::list per;
  for (const auto& wt : r.per_trigger) per.append(witness_dict(task, wt));
  d["per_trigger"] = per;
  d["evaluations"] = r.evaluations;
  d["rounds"] = r.rounds;
  d["seconds"] = r.seconds;
  d["summary"] = search::summary_text(r);
  d["json"] = to_python(search::to_json(r));
  return d;
}

// --- bounds ----------------------------------------------------------------

struct BoxArgs {
  double gap = 0.01, seconds = 60;
  long boxes = 200000;
  int bits = 128;
  VerdictBars bars;  // tolerance= / sink_bar= (src/verdict_bars.h)
};

void check_box_args(const BoxArgs& a) {
  if (!(a.gap > 0) || !std::isfinite(a.gap)) {
    throw std::invalid_argument("gap: expected a finite number > 0");
  }
  if (!(a.seconds > 0) || a.seconds > kMaxBoundSeconds) {
    throw std::invalid_argument("seconds: expected a number in (0, 1e6]");
  }
  if (a.boxes < 1) throw std::invalid_argument("boxes: expected an integer >= 1");
  if (a.bits < kMinBoundBits || a.bits > kMaxBoundBits) {
    throw std::invalid_argument("bits: expected an integer in [" + std::to_string(kMinBoundBits) +
                                ", " + std::to_string(kMaxBoundBits) + "]");
  }
}

void set_box_options(const BoxArgs& a, double box_bytes, theorems::bounds::BoxSearchOptions& o) {
  o.relative_gap = a.gap;
  o.max_seconds = a.seconds;
  o.max_boxes = a.boxes;
  o.bits = a.bits;
  o.fit_memory(box_bytes, static_cast<double>(kMemoryBudgetBytes));
  o.bars = a.bars;
}

// A bound without a claim answers with its enclosure: ENCLOSED when the
// requested gap was reached, NOT ENCLOSED otherwise (the checkers of this
// tree say VERIFIED / UNDECIDED there; both spellings map here).
std::string enclosure_verdict(Verdict v) {
  return to_string(v == Verdict::kVerified || v == Verdict::kEnclosed ? Verdict::kEnclosed
                                                                      : Verdict::kNotEnclosed);
}

void outcome_fields(py::dict& d, const theorems::bounds::BoxSearchOutcome& b) {
  d["evidence"] = b.evidence.label();
  d["boxes"] = b.boxes;
  d["seconds"] = b.seconds;
  d["stop_reason"] = b.stop_reason;
  d["bits"] = b.bits;
  d["budget_exhausted"] = b.budget_exhausted;
  d["precision_floor"] = b.precision_floor;
}

py::dict worst_case_dict(const Task& task, const theorems::bounds::WorstCaseBound& b) {
  py::dict d;
  outcome_fields(d, b);
  d["quantity"] = "worst-case error E";
  d["lo"] = certified_end(b.lower, false);
  d["hi"] = certified_end(b.upper, true);
  d["relative_gap"] = b.relative_gap;
  d["witness_trigger"] = b.witness_trigger;
  d["witness"] = optional_matrix(witness_input(task, b.witness_trigger, b.witness_content));
  d["note"] = b.note;
  d["meaning"] = theorems::bounds::task_meaning(b);
  return d;
}

// A claim as Python passes it: None, a str (an exact decimal, kept as
// written) or a number (the shortest decimal that reads back as its float,
// as Python's repr writes it); theorems/bounds/claim.h.
std::optional<theorems::bounds::Claim> claim_of(const py::object& claim) {
  if (claim.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(claim))
    return theorems::bounds::Claim::parse(claim.cast<std::string>());
  return theorems::bounds::Claim(claim.cast<double>());
}

py::dict run_bound(const WeightFile& w, int L, const std::string& trigger_range,
                   const std::optional<theorems::bounds::Claim>& claim, const BoxArgs& args,
                   py::object progress) {
  check_box_args(args);
  const bool deep = w.kind == ModelKind::kResidual && w.num_layers() > 1;
  if (!deep && (w.kind != ModelKind::kSingleLayer || w.num_layers() != 1)) {
    throw std::invalid_argument(
        "kind: the bound handles single-layer models, or residual ones of several layers");
  }
  if (w.n > kMaxBoundN) {
    throw std::invalid_argument("n: the bound handles n <= " + std::to_string(kMaxBoundN));
  }
  const Task task = make_task(w, L, trigger_range);
  // the uninterrupted work, capped as for verify bound (limits.h)
  const BoundWorkCap cap = bound_work_cap(w.n, L, args.bits, w.num_layers(), w.num_heads());
  if (!cap.fits()) {
    throw std::invalid_argument("L: the bound at L = " + std::to_string(L) +
                                " exceeds its work limit (" + cap.formula + " <= " + cap.cap_text +
                                "; a smaller L or fewer bits may fit)");
  }
  if (claim && !(claim->value >= 0)) {
    throw std::invalid_argument("claim: expected a finite number >= 0, got " + claim->text);
  }
  const Progress report(progress);
  theorems::bounds::WorstCaseOptions o;
  set_box_options(args, 32.0 * (task.L - 1) * (task.n - 3) + 256 + args.bits / 4.0, o);
  if (report.active()) {
    o.progress = [report](const std::string& line) { report(line); };
  }
  const Model<Rational> model = to_model<Rational>(w);
  py::dict d;
  if (claim) {
    theorems::bounds::UpperBoundCheck c;
    std::string text;
    {
      py::gil_scoped_release release;
      c = deep ? theorems::bounds::check_deep_upper_bound(model, task, *claim, o)
               : theorems::bounds::check_upper_bound(model, task, *claim, o);
      text = deep ? theorems::bounds::deep_summary_text(model, c, task)
                  : theorems::bounds::summary_text(c, task);
    }
    report.rethrow();
    d = worst_case_dict(task, c.bound);
    d["verdict"] = to_string(c.verdict);
    d["evidence"] = c.evidence.label();
    d["claim"] = c.claimed.text;
    d["margin"] = c.margin;
    d["summary"] = text;
  } else {
    theorems::bounds::WorstCaseBound b;
    std::string text;
    {
      py::gil_scoped_release release;
      b = deep ? theorems::bounds::bound_deep_worst_case(model, task, o)
               : theorems::bounds::bound_worst_case(model, task, o);
      text = deep ? theorems::bounds::deep_summary_text(model, b, task, args.gap)
                  : theorems::bounds::summary_text(b, task, args.gap);
    }
    report.rethrow();
    d = worst_case_dict(task, b);
    d["verdict"] = enclosure_verdict(b.verdict);
    d["claim"] = py::none();
    d["margin"] = py::none();
    d["summary"] = text;
  }
  return d;
}

// min mode: the enclosure of min a_i0 = 1 - D from the deficit D's.
template <class B>
py::dict bos_dict(const Task& task, const B& b, const Mpfr& lo, const Mpfr& hi, bool deficit,
                  const Mpfi& witness_value) {
  py::dict d;
  outcome_fields(d, b);
  if (deficit) {
    d["quantity"] = "min BOS mass";
    // min BOS = 1 - D, exactly: [1 - D_hi, 1 - D_lo]
    const bool finite = non_finite_name(lo).empty() && non_finite_name(hi).empty();
    d["lo"] = finite ? certified_end(Rational(1) - scalar_cast<Rational>(hi), false)
                     : certified_end(hi, false);
    d["hi"] = finite ? certified_end(Rational(1) - scalar_cast<Rational>(lo), true)
                     : certified_end(lo, true);
    d["deficit_lo"] = certified_end(lo, false);
    d["deficit_hi"] = certified_end(hi, true);
  } else {
    d["quantity"] = "max BOS mass";
    d["lo"] = certified_end(lo, false);
    d["hi"] = certified_end(hi, true);
  }
  d["relative_gap"] = b.relative_gap;
  d["witness_trigger"] = b.witness_trigger;
  d["witness_head"] = b.witness_head;
  d["witness_row"] = b.witness_row;
  d["witness"] = optional_matrix(witness_input(task, b.witness_trigger, b.witness_content));
  d["witness_value"] =
      py::make_tuple(boost::multiprecision::lower(witness_value).convert_to<double>(),
                     boost::multiprecision::upper(witness_value).convert_to<double>());
  d["meaning"] = theorems::bounds::task_meaning(b);
  return d;
}

// Refuses a claim outside [0, 1] and work beyond the CLI's limit (the one
// of `verify bos`, limits.h).
void check_bos_work(const WeightFile& w, const Task& task, const BoxArgs& args, bool deep) {
  const int L = task.L;
  if (deep) {
    // one box of every (layer, head) at once: layers x heads x L n (L + n) max(1, bits / 1024)
    const double work = double(w.num_layers()) * w.num_heads() * L * w.n * (double(L) + w.n) *
                        std::max(1.0, args.bits / 1024.0) * (kMaxBosWork / kMaxBoundWork);
    if (work > kMaxBosWork) {
      throw std::invalid_argument(
          "L: the residual BOS bound at L = " + std::to_string(L) +
          " exceeds its work limit (layers x heads x L n (L + n) max(1, bits / 1024) <= 2^24)");
    }
    return;
  }
  const double c = w.n - 3;
  if (w.num_heads() * L * (L - 1) / 2.0 * c * c * c > kMaxBosWork) {
    throw std::invalid_argument("L: the BOS bound's first pass at L = " + std::to_string(L) +
                                " exceeds its work limit (H L^2 (n - 3)^3 / 2 <= 2^25)");
  }
}

// One BOS enclosure's ends as exact rationals ([lo, hi] of the quantity:
// min BOS = 1 - D).
std::pair<Rational, Rational> bos_ends(const theorems::bounds::BosBound& b) {
  return {Rational(1) - scalar_cast<Rational>(b.deficit_upper),
          Rational(1) - scalar_cast<Rational>(b.deficit_lower)};
}
std::pair<Rational, Rational> bos_ends(const theorems::bounds::MaxBosBound& b) {
  return {scalar_cast<Rational>(b.mass_lower), scalar_cast<Rational>(b.mass_upper)};
}
py::dict bos_dict_of(const Task& task, const theorems::bounds::BosBound& b) {
  return bos_dict(task, b, b.deficit_lower, b.deficit_upper, true, b.witness_deficit);
}
py::dict bos_dict_of(const Task& task, const theorems::bounds::MaxBosBound& b) {
  return bos_dict(task, b, b.mass_lower, b.mass_upper, false, b.witness_mass);
}
bool finite_ends(const theorems::bounds::BosBound& b) {
  return non_finite_name(b.deficit_lower).empty() && non_finite_name(b.deficit_upper).empty();
}
bool finite_ends(const theorems::bounds::MaxBosBound& b) {
  return non_finite_name(b.mass_lower).empty() && non_finite_name(b.mass_upper).empty();
}

// A residual model, every selected (layer, head) (-1: all) enclosed to the
// gap, sharing the budget as `verify bos` does (deep_bos_report). The
// quantity over the selected heads: min BOS = min_h B^h, enclosed by
// [min_h lo_h, min_h hi_h] (max mode: [max_h lo_h, max_h hi_h]), with the
// witness of the head giving the hi end (max mode: the lo end); "heads"
// holds every head's own enclosure. ENCLOSED when every head reached the
// gap (relative_gap: the largest of theirs).
template <class B, class Run>
py::dict deep_every_head(const WeightFile& w, const Task& task, const BoxArgs& args, bool max_mode,
                         int layer, int head, const theorems::bounds::DeepBosOptions& options,
                         const Run& run) {
  std::vector<std::pair<int, int>> selected;
  for (int l = 0; l < w.num_layers(); ++l) {
    for (int h = 0; h < w.num_heads(); ++h) {
      if ((layer < 0 || layer == l) && (head < 0 || head == h)) selected.emplace_back(l, h);
    }
  }
  std::vector<B> bounds;
  {
    py::gil_scoped_release release;
    theorems::bounds::DeepBosOptions shared = options;
    shared.deadline = options.run_deadline();
    for (std::size_t k = 0; k < selected.size(); ++k) {
      theorems::bounds::DeepBosOptions one = shared;
      one.layer = selected[k].first;
      one.head = selected[k].second;
      one.deadline = shared.deadline.or_after(shared.deadline.remaining() /
                                              static_cast<double>(selected.size() - k));
      bounds.push_back(run(one));
    }
  }
  py::list heads;
  std::size_t pick = 0;
  bool all_enclosed = true, finite = true;
  double worst_gap = 0;
  int bits = args.bits;
  std::optional<Rational> lo, hi;
  std::ostringstream text;
  for (std::size_t k = 0; k < bounds.size(); ++k) {
    const B& b = bounds[k];
    py::dict one = bos_dict_of(task, b);
    one["layer"] = selected[k].first;
    one["head"] = selected[k].second;
    one["verdict"] = enclosure_verdict(b.verdict);
    one["summary"] = theorems::bounds::summary_text(b, task, args.gap);
    heads.append(one);
    text << "layer " << selected[k].first << ", head " << selected[k].second << ":\n"
         << theorems::bounds::summary_text(b, task, args.gap);
    all_enclosed = all_enclosed && b.verdict == Verdict::kEnclosed;
    worst_gap = std::max(worst_gap, b.relative_gap);
    bits = std::max(bits, b.bits);
    if (!finite_ends(b)) {
      finite = false;
      continue;
    }
    const auto [l_end, h_end] = bos_ends(b);
    if (!lo) {
      lo = l_end, hi = h_end, pick = k;
    } else if (max_mode) {
      if (l_end > *lo) pick = k;
      lo = std::max(*lo, l_end), hi = std::max(*hi, h_end);
    } else {
      if (h_end < *hi) pick = k;
      lo = std::min(*lo, l_end), hi = std::min(*hi, h_end);
    }
  }
  const B& chosen = bounds[pick];
  py::dict d = bos_dict_of(task, chosen);
  if (finite && lo) {
    d["lo"] = certified_end(*lo, false);
    d["hi"] = certified_end(*hi, true);
  } else {
    // a head without a finite enclosure: the quantity is not enclosed
    d["lo"] = certified_end(Mpfr(0), false);
    d["hi"] = certified_end(Mpfr(1), true);
    all_enclosed = false;
  }
  d["quantity"] = max_mode ? "max BOS mass" : "min BOS mass";
  d["witness_layer"] = selected[pick].first;
  d["relative_gap"] = worst_gap;
  d["bits"] = bits;
  d["evidence"] = Evidence::certified(bits).label();
  d["verdict"] = to_string(all_enclosed ? Verdict::kEnclosed : Verdict::kNotEnclosed);
  d["heads"] = heads;
  text << "verdict: " << to_string(all_enclosed ? Verdict::kEnclosed : Verdict::kNotEnclosed)
       << " (" << selected.size() << " head(s), " << (max_mode ? "max" : "min")
       << " BOS, each to relative gap " << args.gap << ")\n";
  d["summary"] = text.str();
  return d;
}

py::dict run_bos_bound(const WeightFile& w, int L, const std::string& trigger_range,
                       const std::optional<theorems::bounds::Claim>& claim, bool max_mode,
                       int layer, int head, const BoxArgs& args, py::object progress) {
  check_box_args(args);
  const bool deep = w.kind == ModelKind::kResidual;
  if (!deep && (w.kind != ModelKind::kSingleLayer || w.num_layers() != 1)) {
    throw std::invalid_argument("kind: the BOS bound handles single-layer and residual models");
  }
  if (w.n > kMaxBoundN) {
    throw std::invalid_argument("n: the BOS bound handles n <= " + std::to_string(kMaxBoundN));
  }
  if (head < -1 || head >= w.num_heads()) {
    throw std::invalid_argument("head: expected -1 (every head) or 0.." +
                                std::to_string(w.num_heads() - 1));
  }
  if (layer < -1 || layer >= w.num_layers()) {
    throw std::invalid_argument("layer: expected -1 (every layer) or 0.." +
                                std::to_string(w.num_layers() - 1));
  }
  if (!deep && layer > 0) {
    throw std::invalid_argument("layer: a single-layer model has layer 0 only");
  }
  const Task task = make_task(w, L, trigger_range);
  check_bos_work(w, task, args, deep);
  if (claim && !(claim->value >= 0 && claim->value <= 1)) {
    throw std::invalid_argument("claim: expected a BOS mass in [0, 1], got " + claim->text);
  }
  const bool one_head = layer >= 0 && head >= 0;
  if (deep && claim && !one_head) {
    throw std::invalid_argument(
        "claim: on a residual model a claim is about one head; give layer= and head= as well "
        "(without a claim every head is enclosed)");
  }
  const Progress report(progress);
  theorems::bounds::DeepBosOptions o;
  // a box: 3 (n - 3) doubles and two MPFR numbers; residual: 3 (L - 1)(n - 3)
  set_box_options(args, 24.0 * (deep ? task.L - 1 : 1) * (task.n - 3) + 256 + args.bits / 4.0, o);
  o.head = head;
  o.layer = layer;
  if (report.active()) {
    o.progress = [report](const std::string& line) { report(line); };
  }
  const Model<Rational> model = to_model<Rational>(w);
  py::dict d;
  if (deep && !one_head) {
    if (max_mode) {
      d = deep_every_head<theorems::bounds::MaxBosBound>(
          w, task, args, true, layer, head, o, [&](const theorems::bounds::DeepBosOptions& one) {
            return theorems::bounds::bound_deep_max_bos(model, task, one);
          });
    } else {
      d = deep_every_head<theorems::bounds::BosBound>(
          w, task, args, false, layer, head, o, [&](const theorems::bounds::DeepBosOptions& one) {
            return theorems::bounds::bound_deep_min_bos(model, task, one);
          });
    }
    report.rethrow();
    d["claim"] = py::none();
    d["margin"] = py::none();
    return d;
  }
  std::string text;
  if (max_mode) {
    theorems::bounds::MaxBosClaimCheck check;
    theorems::bounds::MaxBosBound b;
    {
      py::gil_scoped_release release;
      if (claim) {
        check = deep ? theorems::bounds::check_deep_max_bos(model, task, *claim, o)
                     : theorems::bounds::check_max_bos(model, task, *claim, o);
        b = check.bound;
        text = theorems::bounds::summary_text(check, task);
      } else {
        b = deep ? theorems::bounds::bound_deep_max_bos(model, task, o)
                 : theorems::bounds::bound_max_bos(model, task, o);
        text = theorems::bounds::summary_text(b, task, args.gap);
      }
    }
    d = bos_dict(task, b, b.mass_lower, b.mass_upper, false, b.witness_mass);
    d["verdict"] = claim ? to_string(check.verdict) : enclosure_verdict(b.verdict);
    if (claim) d["evidence"] = check.evidence.label();
    d["margin"] = claim ? py::cast(check.margin) : py::none();
  } else {
    theorems::bounds::BosClaimCheck check;
    theorems::bounds::BosBound b;
    {
      py::gil_scoped_release release;
      if (claim) {
        check = deep ? theorems::bounds::check_deep_min_bos(model, task, *claim, o)
                     : theorems::bounds::check_min_bos(model, task, *claim, o);
        b = check.bound;
        text = theorems::bounds::summary_text(check, task);
      } else {
        b = deep ? theorems::bounds::bound_deep_min_bos(model, task, o)
                 : theorems::bounds::bound_min_bos(model, task, o);
        text = theorems::bounds::summary_text(b, task, args.gap);
      }
    }
    d = bos_dict(task, b, b.deficit_lower, b.deficit_upper, true, b.witness_deficit);
    d["verdict"] = claim ? to_string(check.verdict) : enclosure_verdict(b.verdict);
    if (claim) d["evidence"] = check.evidence.label();
    d["margin"] = claim ? py::cast(check.margin) : py::none();
  }
  report.rethrow();
  if (deep) {
    d["witness_layer"] = layer;
    text = "residual model, layer " + std::to_string(layer) + ", head " + std::to_string(head) +
           ":\n" + text;
  }
  d["claim"] = claim ? py::cast(claim->text) : py::none();
  d["summary"] = text;
  return d;
}

}  // namespace

#ifndef SINKCERT_HAVE_MODEL_CHECK
void bind_check(py::module_& m) {
  // Model.check raises NotImplementedError (python/sinkcert/__init__.py)
  m.attr("HAVE_CHECK") = false;
}
#endif

}  // namespace sinkcert::python

PYBIND11_MODULE(_sinkcert, m) {
  namespace py = pybind11;
  using namespace sinkcert;
  using namespace sinkcert::python;
  m.doc() = "sinkcert's C++ library (use the package sinkcert, not this module)";
  // Bad input is a ValueError whose text names the file, the field and what
  // was expected (InputError); std::invalid_argument maps to ValueError too.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  py::class_<WeightFile>(m, "WeightFile")
      .def_static("read", &read_weight_file, py::arg("path"))
      .def_static(
          "from_text",
          [](const std::string& text, const std::string& name) {
            return weight_file_from_document(internal::parse_json_document(text, name));
          },
          py::arg("text"), py::arg("name"))
      .def_property_readonly("kind", [](const WeightFile& w) { return to_string(w.kind); })
      .def_property_readonly("attention",
                             [](const WeightFile& w) { return to_string(w.attention); })
      .def_readonly("n", &WeightFile::n)
      .def_property_readonly("layers", &WeightFile::num_layers)
      .def_property_readonly("heads", &WeightFile::num_heads)
      .def_readonly("path", &WeightFile::path)
      .def_property_readonly("metadata", [](const WeightFile& w) { return to_python(w.metadata); })
      .def_property_readonly("task",
                             [](const WeightFile& w) -> py::object {
                               // the file's "task" (L, trigger_range), None without one
                               if (!w.task) return py::none();
                               py::dict d;
                               if (w.task->L) d["L"] = *w.task->L;
                               if (w.task->range) d["trigger_range"] = to_string(*w.task->range);
                               return d;
                             })
      .def("text", &weight_file_text)
      .def("describe", [](const WeightFile& w) { return describe(w); })
      .def("eval", &eval_input, py::arg("X"))
      .def("eval_certified", &eval_certified, py::arg("X"), py::arg("digits"))
      .def("verify_relu", &run_verify_relu, py::arg("L"), py::arg("trigger_range"))
      .def("probe", &run_probe, py::arg("L"), py::arg("trigger_range"), py::arg("samples"),
           py::arg("seed"), py::arg("fixed_trigger"))
      .def_property_readonly_static("default_probe_seed",
                                    [](py::object) { return kDefaultProbeSeed; })
      .def("attack", &run_attack, py::arg("L"), py::arg("trigger_range"), py::arg("seed"),
           py::arg("seconds"), py::arg("bos"), py::arg("progress"))
      .def(
          "bound",
          [](const WeightFile& w, int L, const std::string& range, py::object claim, double gap,
             double seconds, long boxes, int bits, const std::string& tolerance,
             py::object progress) {
            return run_bound(
                w, L, range, claim_of(claim),
                BoxArgs{gap, seconds, boxes, bits, VerdictBars(tolerance, kDefaultSinkBar)},
                progress);
          },
          py::arg("L"), py::arg("trigger_range"), py::arg("claim"), py::arg("gap"),
          py::arg("seconds"), py::arg("boxes"), py::arg("bits"), py::arg("tolerance"),
          py::arg("progress"))
      .def(
          "bos_bound",
          [](const WeightFile& w, int L, const std::string& range, py::object claim, bool max_mode,
             int layer, int head, double gap, double seconds, long boxes, int bits,
             const std::string& sink_bar, py::object progress) {
            return run_bos_bound(
                w, L, range, claim_of(claim), max_mode, layer, head,
                BoxArgs{gap, seconds, boxes, bits, VerdictBars(kDefaultTolerance, sink_bar)},
                progress);
          },
          py::arg("L"), py::arg("trigger_range"), py::arg("claim"), py::arg("max"),
          py::arg("layer"), py::arg("head"), py::arg("gap"), py::arg("seconds"), py::arg("boxes"),
          py::arg("bits"), py::arg("sink_bar"), py::arg("progress"));
  bind_check(m);
}
