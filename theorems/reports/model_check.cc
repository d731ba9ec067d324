// SPDX-License-Identifier: MIT
//
// One check of a user's model (model_check.h).
#include "theorems/reports/model_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "src/json_reader.h"
#include "src/limits.h"
#include "theorems/bounds/bos_bound.h"
#include "theorems/bounds/deep_worst_case_bound.h"
#include "theorems/bounds/worst_case_bound.h"
#include "theorems/bounds/worst_case_search.h"
#include "theorems/reports/attention_figures.h"

namespace sinkcert::theorems::reports {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double down_double(const Mpfr& x) { return mpfr_get_d(x.backend().data(), MPFR_RNDD); }
double up_double(const Mpfr& x) { return mpfr_get_d(x.backend().data(), MPFR_RNDU); }

// x rounded to `digits` significant digits in the direction that keeps it a
// bound: down (lower ends) or up (upper ends).
std::string bound_text(double x, bool up, int digits = 4) {
  if (!std::isfinite(x)) return x > 0 ? "inf" : (x < 0 ? "-inf" : "nan");
  const Mpfr m(x);
  return up ? format_up(m, digits) : format_down(m, digits);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

std::string plain(double x, int digits = 4) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

// The trigger of the heat map: 0-indexed 7 (the paper's figure) when the
// convention has it, else the middle trigger position.
int heat_map_trigger(const Task& task) {
  const std::vector<int> positions = task.trigger_positions();
  if (std::find(positions.begin(), positions.end(), kPaperFigureTrigger) != positions.end()) {
    return kPaperFigureTrigger;
  }
  return positions[positions.size() / 2];
}

bool enclosed(Verdict v) { return v == Verdict::kVerified || v == Verdict::kEnclosed; }

// The exact checker ran and applied: its margin is E, exactly. NOT
// APPLICABLE (the scores read the content, ...) and UNDECIDED say nothing
// about E, and must not lend it their EXACT label.
bool relu_applied(const std::optional<exact::ReluCertificate>& relu) {
  return relu && (relu->verdict == Verdict::kVerified || relu->verdict == Verdict::kNotVerified);
}

// The bounds' outcome as an enclosure: no claim, so ENCLOSED (the gap was
// reached) or NOT ENCLOSED (stopped first; the ends still hold).
Enclosure enclosure_of(const bounds::BoxSearchOutcome& outcome, double lower, double upper) {
  Enclosure e;
  e.verdict = enclosed(outcome.verdict) ? Verdict::kEnclosed : Verdict::kNotEnclosed;
  e.evidence = outcome.evidence;
  e.lower = lower;
  e.upper = upper;
  e.why = outcome.stop_reason;
  e.boxes = outcome.boxes;
  e.bits = outcome.bits;
  return e;
}

// A bound that did not start: the budget was spent. Its trivial enclosure
// [lower, upper] holds without computation; no exact computation ran, so it
// is labelled as the bound it stands in for.
Enclosure not_started(double lower, double upper) {
  Enclosure e;
  e.verdict = Verdict::kNotEnclosed;
  e.evidence = Evidence::certified(0);
  e.lower = lower;
  e.upper = upper;
  e.why = "not started: the budget was spent";
  e.started = false;
  return e;
}

Enclosure not_applicable(const std::string& why) {
  Enclosure e;
  e.verdict = Verdict::kNotApplicable;
  e.why = why;
  return e;
}

nlohmann::json enclosure_json(const Enclosure& e) {
  nlohmann::json j{{"verdict", to_string(e.verdict)}};
  if (e.verdict == Verdict::kNotApplicable) {
    j["why"] = e.why;
    return j;
  }
  j["lower"] = e.lower;
  j["upper"] = e.upper;
  j["evidence"] = e.evidence.label();
  j["bits"] = e.bits;
  j["boxes"] = e.boxes;
  j["stop_reason"] = e.why;
  j["started"] = e.started;
  return j;
}

std::string solves_words(CheckReport::Solves s) {
  switch (s) {
    case CheckReport::Solves::kYes:
      return "solves the task";
    case CheckReport::Solves::kNo:
      return "does not solve the task";
    case CheckReport::Solves::kUndecided:
      return "undecided whether it solves the task";
  }
  return "";
}

std::string sinks_words(Decision d) {
  switch (d) {
    case Decision::kYes:
      return "sinks";
    case Decision::kNo:
      return "does not sink";
    case Decision::kUndecided:
      break;
  }
  return "undecided whether it sinks";
}

// Why a bound does not fit: the first of its limits (n <= kMaxBoundN, work
// <= its cap; L itself is limited by the cap alone, as in verify bound) the
// model violates, with its value, and what would fit: the largest --L whose
// work(L) is within the cap (n is the weight file's: beyond kMaxBoundN no
// --L helps).
std::string violated_size_limit(const std::string& bound, int n, int L, double work,
                                const std::string& formula, const std::string& cap_text, double cap,
                                const std::function<double(int)>& work_at) {
  std::ostringstream s;
  s << "beyond " << bound << "'s size limits: ";
  if (n > kMaxBoundN) {
    s << "n = " << n << " > " << kMaxBoundN << " (n is the weight file's: no --L fits)";
    return s.str();
  }
  char value[32];
  std::snprintf(value, sizeof value, "%.3g", work);
  s << formula << " = " << value << " > " << cap_text << " at L = " << L;
  int max_L = kMinL - 1;
  while (max_L < kMaxL && work_at(max_L + 1) <= cap) ++max_L;
  if (max_L >= kMinL) {
    s << "; --L " << max_L << " or less fits";
  } else {
    s << "; no --L fits this model";
  }
  return s.str();
}

}  // namespace

CheckReport check_model(const WeightFile& file, const Task& task, const CheckOptions& options) {
  if (task.n != file.n) {
    throw std::invalid_argument("check_model: task.n = " + std::to_string(task.n) +
                                " but the weight file has n = " + std::to_string(file.n));
  }
  if (task.trigger_positions().empty()) {
    throw std::invalid_argument("check_model: the task has no trigger position");
  }
  const Clock::time_point start = Clock::now();
  const auto left = [&] { return std::max(0.0, options.seconds - since(start)); };
  const auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  CheckReport r;
  r.weights = file.path;
  r.model = describe(file);
  r.shape = shape_json(file);
  if (file.task) {
    r.score_scale = sinkcert::internal::exact_decimal(file.task->score_scale);
    r.source = file.task->source;
  }
  r.task = task;
  r.seconds_budget = options.seconds;
  r.seed = options.seed;
  r.bars = options.bars;
  const Model<double> model = to_model<double>(file);
  const Model<Rational> exact = to_model<Rational>(file);
  const bool single = file.kind == ModelKind::kSingleLayer && file.num_layers() == 1;

  // 1. probe set statistics and the heat map's data, NUMERIC(53)
  {
    const Clock::time_point t = Clock::now();
    say("BOS statistics on " + std::to_string(kDefaultProbeCount) + " probes");
    const ProbeSet probes = make_probe_set(task);
    r.bos = bos_statistics(model, probes);
    // the worst probe, certified: E >= e(X) at that input, whatever runs next
    const Sample& worst = probes.samples[static_cast<std::size_t>(r.bos.error_max_sample)];
    r.probe_witness.trigger = worst.trigger;
    r.probe_witness.content = content_of(task, worst.X);
    r.probe_witness.value = r.bos.error_max;
    search::certify_witness(exact, task, r.probe_witness);
    const int trigger = heat_map_trigger(task);
    const AttentionStatistics stats =
        attention_statistics(model, task, kDefaultProbeCount, kDefaultProbeSeed, trigger);
    r.heat_map = attention_figure(
        "attention", AttentionFigureKind::kMeanStd,
        {FigureModel{to_string(file.attention), r.weights + " (" + r.model + ")", model}}, {stats});
    r.heat_map.png = true;
    r.steps.push_back({"BOS statistics and heat map", 0, since(t), "done"});
  }

  // 2. the exact ReLU checker
  {
    const Clock::time_point t = Clock::now();
    const double work = exact::relu_exact_work(file.num_layers(), file.num_heads(), task.n, task.L);
    if (file.attention != AttentionKind::kRelu && file.attention != AttentionKind::kReluCountAll) {
      r.relu_note = "the exact checker is for ReLU attention (this model's is " +
                    to_string(file.attention) + ")";
    } else if (work > kMaxReluWork) {
      r.relu_note = "beyond the exact checker's cap of 2^30 rational operations at this size";
    } else {
      say("exact ReLU checker");
      r.relu = exact::check_relu_exact(exact, task);
    }
    r.steps.push_back(
        {"exact ReLU checker", 0, since(t), r.relu ? "done" : "NOT APPLICABLE: " + r.relu_note});
  }

  // The deep bound's first pass cannot be interrupted: when it would not fit
  // the bound's share even with all the time after the attack's, it is not
  // started and the attack takes that time instead.
  const double deep_work = single ? 0.0
                                  : double(file.num_layers()) * file.num_heads() * task.L * task.L *
                                        task.L * task.n * task.n;
  // (the attack may overrun its share by a round: kDeepFitShare < 1 - kAttackShare)
  const bool deep_fits =
      deep_work * kDeepFirstPassSecondsPerWork <= kDeepFitShare * options.seconds;

  // 3. the attack
  {
    const Clock::time_point t = Clock::now();
    const double share = (deep_fits ? kAttackShare : kAttackAloneShare) * options.seconds;
    // the limit of `sinkcert attack` (search/attack.h, attack_round_fits)
    if (!search::attack_round_fits(task, file.kind, file.attention, file.num_layers(),
                                   file.num_heads())) {
      const int max_L = search::attack_max_L(task, file.kind, file.attention, file.num_layers(),
                                             file.num_heads());
      const double work = search::attack_round_work(task, file.kind, file.attention,
                                                    file.num_layers(), file.num_heads());
      r.attack_note = "one round at L = " + std::to_string(task.L) +
                      " is beyond the attack's work limit " +
                      search::attack_limit_text(file.kind, file.attention, file.num_layers()) +
                      " (here " + plain(work, 3) + "; src/limits.h); " +
                      (max_L >= kMinL ? "--L " + std::to_string(max_L) + " or less fits"
                                      : "no --L fits this model");
      r.steps.push_back({"attack", share, since(t), "NOT APPLICABLE: " + r.attack_note});
    } else {
      say("attack (" + seconds_text(share) + ")");
      search::AttackOptions o;
      o.seed = options.seed;
      o.seconds = share;
      o.quantity = search::WitnessQuantity::kError;
      // round 0 over the triggers whose parts fit the share (at least the
      // last one): the whole round may take minutes near the work limit
      const std::vector<int> all = task.trigger_positions();
      o.triggers = bounds::attack_triggers(task, file.kind, file.attention, file.num_layers(),
                                           file.num_heads(), all, share);
      if (o.triggers.empty()) o.triggers = {all.back()};
      if (o.triggers.size() < all.size()) {
        r.attack_note = bounds::attack_subset_note(
            task, file.kind, file.attention, file.num_layers(), file.num_heads(), o.triggers.size(),
            all.size(), "the attack's " + seconds_text(share));
      }
      r.attack = search::attack(model, exact, task, o,
                                [&](const std::string& line) { say("attack: " + line); });
      r.witness_tokens = search::witness_tokens(task, r.attack->best);
      r.steps.push_back({"attack", share, since(t), "done"});
    }
  }

  // 4. the certified worst-case bound
  const bool bos_applies = single && file.attention != AttentionKind::kSoftpick;
  {
    const Clock::time_point t = Clock::now();
    const double share = bos_applies ? kBoundShare * left() : left();
    const double deep = single ? 1.0 : double(file.num_layers()) * file.num_heads();
    bounds::WorstCaseOptions o;
    o.relative_gap = kCheckRelativeGap;
    o.max_seconds = std::max(share, 1e-3);
    o.threads = options.threads;
    // several layers: the attack of step 3 has run, so the bound does not
    // run its own round (the enclosure's lower end takes the attack's
    // certified value below)
    o.adversary_witnesses = single;
    o.fit_memory(32.0 * (task.L - 1) * (task.n - 3) + 256 + o.bits / 4.0,
                 static_cast<double>(kMemoryBudgetBytes));
    o.progress = [&](const std::string& line) { say("worst-case bound: " + line); };
    // layers heads L^3 n^2 for several layers: the deep first pass's seconds below
    const double work = deep * task.L * task.L * task.L * task.n * task.n;
    // the uninterrupted work, capped as for verify bound (limits.h, bound_work_cap)
    const auto cap_at = [&](int L) {
      return bound_work_cap(task.n, L, o.bits, file.num_layers(), file.num_heads());
    };
    const BoundWorkCap cap = cap_at(task.L);
    if (file.n > kMaxBoundN || !cap.fits()) {
      r.worst_case = not_applicable(violated_size_limit("the bound", file.n, task.L, cap.work,
                                                        cap.formula, cap.cap_text, cap.cap,
                                                        [&](int L) { return cap_at(L).work; }));
    } else if (share < kMinBoundSeconds) {
      r.worst_case = not_started(0, std::numeric_limits<double>::infinity());
    } else if (!single && (!deep_fits || work * kDeepFirstPassSecondsPerWork > share)) {
      r.worst_case = not_started(0, std::numeric_limits<double>::infinity());
      r.worst_case.why = "not started: its first pass (one box per trigger, about " +
                         seconds_text(work * kDeepFirstPassSecondsPerWork) +
                         " at this size) would overrun its share of " + seconds_text(share);
    } else {
      say("worst-case bound (" + seconds_text(share) + ")");
      try {
        const bounds::WorstCaseBound b = single ? bounds::bound_worst_case(exact, task, o)
                                                : bounds::bound_deep_worst_case(exact, task, o);
        r.worst_case = enclosure_of(b, down_double(b.lower), up_double(b.upper));
        r.worst_case_witness_trigger = b.witness_trigger;
      } catch (const std::invalid_argument& e) {
        r.worst_case = not_applicable(e.what());
      }
    }
    r.steps.push_back({"worst-case bound", share, since(t),
                       r.worst_case.verdict == Verdict::kNotApplicable
                           ? "NOT APPLICABLE: " + r.worst_case.why
                           : to_string(r.worst_case.verdict)});
  }

  // 5. the certified BOS bound
  {
    const Clock::time_point t = Clock::now();
    const double share = left();
    const double c = task.n - 3;
    const auto work_at = [&](int L) { return file.num_heads() * L * (L - 1) / 2.0 * c * c * c; };
    const double work = work_at(task.L);
    if (!single) {
      r.min_bos = not_applicable(
          "check's BOS bound covers single-layer models (its reduction to the query's content "
          "holds for one layer); verify bos certifies a residual model head by head");
    } else if (!bos_applies) {
      r.min_bos = not_applicable("the BOS bound does not cover softpick's minimum");
    } else if (file.n > kMaxBoundN || work > kMaxBosWork) {
      r.min_bos = not_applicable(violated_size_limit("the BOS bound", file.n, task.L, work,
                                                     "H L (L - 1) (n - 3)^3 / 2", "2^25",
                                                     kMaxBosWork, work_at));
    } else if (share < kMinBoundSeconds) {
      r.min_bos = not_started(0, 1);
    } else {
      say("BOS bound (" + seconds_text(share) + ")");
      bounds::BosBoundOptions o;
      o.relative_gap = kCheckRelativeGap;
      o.max_seconds = std::max(share, 1e-3);
      o.fit_memory(24.0 * (task.n - 3) + 256 + o.bits / 4.0,
                   static_cast<double>(kMemoryBudgetBytes));
      try {
        const bounds::BosBound b = bounds::bound_min_bos(exact, task, o);
        // min BOS = 1 - D: [1 - upper(D), 1 - lower(D)]
        Mpfr lo, hi;
        mpfr_ui_sub(lo.backend().data(), 1, b.deficit_upper.backend().data(), MPFR_RNDD);
        mpfr_ui_sub(hi.backend().data(), 1, b.deficit_lower.backend().data(), MPFR_RNDU);
        r.min_bos = enclosure_of(b, down_double(lo), up_double(hi));
        r.deficit_lower = down_double(b.deficit_lower);
        r.deficit_upper = up_double(b.deficit_upper);
        r.min_bos_witness_head = b.witness_head;
        r.min_bos_witness_row = b.witness_row;
        r.min_bos_witness_trigger = b.witness_trigger;
      } catch (const std::invalid_argument& e) {
        r.min_bos = not_applicable(e.what());
      }
    }
    r.steps.push_back({"BOS bound", share, since(t),
                       r.min_bos.verdict == Verdict::kNotApplicable
                           ? "NOT APPLICABLE: " + r.min_bos.why
                           : to_string(r.min_bos.verdict)});
  }

  // Conclusions: the best certified enclosure of E.
  r.e_lower = 0;
  r.e_upper = std::numeric_limits<double>::infinity();
  r.e_lower_source = "E >= 0";
  if (relu_applied(r.relu)) {
    // the checker's conditions held: E is the exact max over the box
    const Rational& m = r.relu->margin;
    const double e = m.convert_to<double>();
    // the double nearest the exact E, moved outward where it rounded inward
    r.e_lower = Rational(e) > m ? std::nextafter(e, -1.0) : e;
    r.e_upper = Rational(e) < m ? std::nextafter(e, 2.0 * e + 1.0) : e;
    r.e_lower_source = "exact";
    r.solves_evidence = "EXACT";
    const BarVerdict v = solves_verdict(m, options.bars);
    r.solves = v.decision;
    r.solves_text = v.text;
  } else {
    if (std::isfinite(r.probe_witness.certified) && r.probe_witness.certified > r.e_lower) {
      r.e_lower = r.probe_witness.certified;
      r.e_lower_source = "probe set's worst input";
    }
    if (r.attack && std::isfinite(r.attack->best.certified) &&
        r.attack->best.certified > r.e_lower) {
      r.e_lower = r.attack->best.certified;
      r.e_lower_source = "attack witness";
    }
    if (r.worst_case.verdict != Verdict::kNotApplicable) {
      if (r.worst_case.lower > r.e_lower) {
        r.e_lower = r.worst_case.lower;
        r.e_lower_source = "bound witness";
      }
      r.e_upper = r.worst_case.upper;
    }
    r.solves_evidence = "CERTIFIED";
    const BarVerdict v =
        solves_verdict(Mpfr(r.e_lower), Mpfr(r.e_upper), "CERTIFIED", options.bars);
    r.solves = v.decision;
    r.solves_text = v.text;
  }
  r.row1 = studies::row1_consequence(file.kind, file.attention, file.num_layers(), file.num_heads(),
                                     task, Mpfr(r.e_upper));
  // sinks: the certified min BOS where it ran, else the probe set
  if (r.min_bos.verdict != Verdict::kNotApplicable && r.min_bos.started) {
    const BarVerdict v = sinks_verdict(Mpfr(r.min_bos.lower), Mpfr(r.min_bos.upper),
                                       "head " + std::to_string(r.min_bos_witness_head) + ", row " +
                                           std::to_string(r.min_bos_witness_row) + ", trigger " +
                                           std::to_string(r.min_bos_witness_trigger),
                                       options.bars);
    r.sinks = v.decision;
    r.sinks_text = v.text;
    r.sinks_evidence = "CERTIFIED";
  } else {
    double largest = -1;
    std::string where = "no head";
    for (const auto& layer : r.bos.heads) {
      for (const auto& h : layer) {
        if (h.overall.count > 0 && h.overall.mean > largest) {
          largest = h.overall.mean;
          where = "layer " + std::to_string(h.layer) + " head " + std::to_string(h.head);
        }
      }
    }
    const std::string why = r.min_bos.verdict == Verdict::kNotApplicable
                                ? "min BOS over the box NOT APPLICABLE: " + r.min_bos.why
                                : "min BOS over the box " + r.min_bos.why;
    const BarVerdict v = probe_sinks_verdict(
        largest < 0 ? std::numeric_limits<double>::quiet_NaN() : largest, where, why, options.bars);
    r.sinks = v.decision;
    r.sinks_text = v.text;
    r.sinks_evidence = "NUMERIC(53)";
  }
  r.seconds = since(start);
  return r;
}

nlohmann::json CheckReport::to_json() const {
  nlohmann::json j;
  j["weights"] = weights;
  j["model"] = shape;
  j["score_scale"] = score_scale;
  j["source"] = source;
  j["task"] = {{"n", task.n}, {"L", task.L}, {"trigger_range", to_string(task.range)}};
  j["budget_seconds"] = seconds_budget;
  j["seconds"] = seconds;
  j["seed"] = seed;
  nlohmann::json steps_json = nlohmann::json::array();
  for (const auto& s : steps) {
    steps_json.push_back({{"name", s.name},
                          {"budget_seconds", s.budget},
                          {"seconds", s.seconds},
                          {"status", s.status}});
  }
  j["steps"] = steps_json;
  j["conclusion"] = {{"solves_task", solves_words(solves)},
                     {"solves_text", solves_text},
                     {"row1", studies::to_json(row1)},
                     {"tolerance", bars.tolerance_text},
                     {"worst_case_lower", e_lower},
                     {"worst_case_upper", std::isfinite(e_upper) ? nlohmann::json(e_upper)
                                                                 : nlohmann::json("Infinity")},
                     {"worst_case_lower_from", e_lower_source},
                     {"evidence", solves_evidence},
                     {"sinks", sinks_words(sinks)},
                     {"sinks_text", sinks_text},
                     {"sink_bar", bars.sink_bar_text},
                     {"sinks_evidence", sinks_evidence}};
  j["bos_statistics"] = sinkcert::to_json(bos);
  if (relu_applied(relu)) {
    nlohmann::json rj{{"verdict", to_string(relu->verdict)},
                      {"evidence", relu->evidence.label()},
                      {"reason", relu->reason},
                      {"max_abs_error", exact::rational_json(relu->margin)}};
    j["relu_exact"] = rj;
  } else if (relu) {  // ran, did not apply: no value, no label
    j["relu_exact"] = {{"verdict", to_string(relu->verdict)}, {"why", relu->reason}};
  } else {
    j["relu_exact"] = {{"verdict", to_string(Verdict::kNotApplicable)}, {"why", relu_note}};
  }
  if (attack) {
    j["attack"] = search::to_json(*attack);
    if (!attack_note.empty()) j["attack"]["note"] = attack_note;
  } else {
    j["attack"] = {{"verdict", to_string(Verdict::kNotApplicable)}, {"why", attack_note}};
  }
  j["worst_case_bound"] = enclosure_json(worst_case);
  if (worst_case.verdict != Verdict::kNotApplicable) {
    j["worst_case_bound"]["witness_trigger"] = worst_case_witness_trigger;
  }
  j["min_bos_bound"] = enclosure_json(min_bos);
  if (min_bos.verdict != Verdict::kNotApplicable) {
    j["min_bos_bound"]["deficit"] = {{"lower", deficit_lower}, {"upper", deficit_upper}};
    j["min_bos_bound"]["witness"] = {{"head", min_bos_witness_head},
                                     {"row", min_bos_witness_row},
                                     {"trigger", min_bos_witness_trigger}};
  }
  j["heat_map"] = heat_map.name + ".png";
  return j;
}

std::string CheckReport::summary() const {
  std::ostringstream s;
  s << "model: " << model << " (" << weights << ")";
  if (score_scale != "1") s << ", score scale " << score_scale;
  s << "\n";
  s << "task: n = " << task.n << ", L = " << task.L << ", trigger range " << to_string(task.range)
    << "\n";
  // E
  s << "worst-case loss E: ";
  if (e_lower_source == "exact") {
    s << "E = " << exact::rational_string(relu->margin) << " [EXACT]";
  } else {
    s << bound_text(e_lower, false) << " <= E <= " << bound_text(e_upper, true)
      << " [CERTIFIED; lower end from the " << e_lower_source << "]";
  }
  s << "\n";
  s << "  -> " << solves_text << "\n";
  if (row1.applies) s << row1_consequence_text(row1) << "\n";
  if (relu) {
    // a verdict that says nothing about E carries no evidence label
    s << "exact ReLU checker: " << to_string(relu->verdict)
      << (relu_applied(relu) ? " [EXACT]" : "") << (relu->reason.empty() ? "" : ": " + relu->reason)
      << "\n";
  }
  if (worst_case.verdict == Verdict::kNotApplicable) {
    s << "worst-case bound: NOT APPLICABLE (" << worst_case.why << ")\n";
  } else if (!worst_case.started) {
    s << "worst-case bound: NOT ENCLOSED (" << worst_case.why << ")\n";
  } else {
    // its lower end is already in the E line above (the best of the witnesses)
    s << "worst-case bound: " << to_string(worst_case.verdict)
      << ", E <= " << bound_text(worst_case.upper, true) << " [CERTIFIED]"
      << (worst_case.verdict == Verdict::kNotEnclosed
              ? " (gap " + plain(kCheckRelativeGap) + " not reached: " + worst_case.why + ")"
              : "")
      << "\n";
  }
  if (attack) {
    const search::Witness& w = attack->best;
    s << "worst input found: e(X) >= " << search::format_certified(*attack, w.certified, 4)
      << " [SEARCH(lower bound), CERTIFIED at its witness] at trigger " << w.trigger << ", row "
      << w.position << ", coordinate " << w.coordinate << "\n";
    if (!attack_note.empty()) s << "attack: " << attack_note << "\n";
  } else {
    s << "attack: NOT APPLICABLE (" << attack_note << ")\n";
  }
  // BOS
  s << "BOS mass a_i0 at non-trigger rows, probe set of " << bos.samples << " [NUMERIC(53)]:\n";
  for (const auto& layer : bos.heads) {
    for (const auto& h : layer) {
      s << "  layer " << h.layer << " head " << h.head << ": mean " << plain(h.overall.mean, 6)
        << ", min " << plain(h.overall.min, 6) << "\n";
    }
  }
  if (min_bos.verdict == Verdict::kNotApplicable) {
    s << "min BOS over the whole box: NOT APPLICABLE (" << min_bos.why << ")\n";
  } else if (!min_bos.started) {
    s << "min BOS over the whole box: NOT ENCLOSED (" << min_bos.why << ")\n";
  } else {
    // 1 - min BOS, the deficit: a sink's min BOS rounds to 1 at four digits
    s << "min BOS over the whole box: " << to_string(min_bos.verdict) << ", 1 - min BOS in ["
      << bound_text(deficit_lower, false) << ", " << bound_text(deficit_upper, true)
      << "] [CERTIFIED] (witness: head " << min_bos_witness_head << ", row " << min_bos_witness_row
      << ", trigger " << min_bos_witness_trigger << ")\n";
  }
  s << "  -> " << sinks_text << "\n";
  s << "time: " << seconds_text(seconds) << " of a " << seconds_text(seconds_budget) << " budget\n";
  return s.str();
}

std::string CheckReport::markdown() const {
  std::ostringstream s;
  s << "# sinkcert check: " << weights << "\n\n";
  s << "No claim was made: the bounds say ENCLOSED or NOT ENCLOSED, never VERIFIED. Every number "
       "carries its evidence level (EXACT, CERTIFIED, NUMERIC(53), SEARCH).\n\n";
  s << "## Summary\n\n```\n" << summary() << "```\n\n";
  s << "## Steps\n\n| step | budget (s) | used (s) | status |\n|---|---|---|---|\n";
  for (const auto& st : steps) {
    s << "| " << st.name << " | " << (st.budget > 0 ? plain(st.budget, 3) : "-") << " | "
      << plain(st.seconds, 3) << " | " << st.status << " |\n";
  }
  s << "\n## BOS mass per position [NUMERIC(53)]\n\n";
  s << "| layer | head | position | mean | min |\n|---|---|---|---|---|\n";
  for (const auto& layer : bos.heads) {
    for (const auto& h : layer) {
      for (std::size_t i = 1; i < h.per_position.size(); ++i) {
        const BosSummary& p = h.per_position[i];
        if (p.count == 0) continue;
        s << "| " << h.layer << " | " << h.head << " | " << i << " | " << plain(p.mean, 6) << " | "
          << plain(p.min, 6) << " |\n";
      }
    }
  }
  s << "\nSampled error on the probe set: max " << plain(bos.error_max, 6) << ", mean "
    << plain(bos.error_mean, 6) << " [NUMERIC(53)].\n";
  s << "\n## Attention\n\n![" << figure_caption(heat_map) << "](" << heat_map.name << ".png)\n\n"
    << figure_caption(heat_map) << "\n";
  return s.str();
}

}  // namespace sinkcert::theorems::reports
