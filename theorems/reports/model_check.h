// SPDX-License-Identifier: MIT
//
// One check of a user's model on the task T(n, L): everything sinkcert can
// say about one weight file within one time budget, as one report.
//
// Steps, in this order (each is the library call the single-purpose
// commands make):
//   1. BOS statistics on the probe set (src/bos_statistics.h: 1000 probes,
//      seed kDefaultProbeSeed, triggers from the convention), NUMERIC(53):
//      per layer and head the mean and min non-trigger BOS mass a_i0, and
//      the sampled error; and the attention heat map (mean and std over
//      1000 probes with the trigger fixed at 0-indexed 7, or at L / 2 when
//      L <= 7; theorems/reports/attention_figures.h).
//   2. ReLU files only: the exact checker (theorems/exact/relu_exact_checker.h),
//      EXACT. Not timed: its work is capped (kMaxReluWork); beyond the cap,
//      or for another attention, NOT APPLICABLE.
//   3. The attack (search/attack.h) for the largest error: round 0, then
//      more rounds while its share lasts. SEARCH(lower bound), certified at
//      its witness on the exact model (MPFI).
//   4. The certified worst-case bound over the whole content box
//      (theorems/bounds/worst_case_bound.h; for a residual model of several
//      layers theorems/bounds/deep_worst_case_bound.h), enclosing E to a
//      relative gap of 1 %: ENCLOSED [lo, hi] or NOT ENCLOSED (the budget
//      ran out first; [lo, hi] still holds), CERTIFIED.
//   5. The certified minimum BOS mass over the whole box
//      (theorems/bounds/bos_bound.h), single-layer models only; NOT
//      APPLICABLE (with the reason) for several layers or an attention it
//      does not cover.
// Budget: S = options.seconds is split over the timed steps 3 to 5 by
// what is left when each starts, so time a step does not use passes on:
//   attack:          kAttackShare of S; it runs wherever `sinkcert attack`
//                    accepts the size (search/attack.h, attack_round_fits).
//                    Its round 0 is not interruptible (about 1 s at
//                    n = L = 16 for one head, minutes near the work limit),
//                    so when the whole round is expected to take more than
//                    the share it runs on as many triggers as fit it,
//                    evenly spaced, at least the last one
//                    (theorems/bounds/worst_case_search.h,
//                    attack_triggers; a trigger's part of the round costs
//                    1 / (the number of triggers) of it), and the report
//                    says how many;
//   worst-case bound: kBoundShare of what is left then (all of it when the
//                    BOS bound does not apply);
//   BOS bound:       what is left then.
// Steps 1 and 2 and the certification of the attack's witnesses take what
// they take (well under a second at n = L = 16) and count against S. The
// attack finishes the round it started when its share ends (a round is
// about 1 s at n = L = 16 for one head, 10 s for 2 x 2 heads under load).
// The bounds' first passes (the softmax vertex bound's caps, the deep
// bound's first boxes) check the clock only between their own steps, so a
// model at the size limits can overrun S by the length of one such step;
// the deep bound is not started when its first pass would not fit
// (kDeepFirstPassSecondsPerWork), and the attack then has kAttackAloneShare
// of S.
//
// Conclusions (no claim is made, so no VERIFIED), against options.bars
// (src/verdict_bars.h: one definition for check, verify bound, verify bos
// and Python; docs/definitions.md, Definitions 7):
//   solves the task: E <= tolerance (default 5e-3, the paper's training
//     target), decided by EXACT (ReLU checker) or by the CERTIFIED upper end
//     of the enclosure; "does not solve the task": a certified lower bound on
//     E (the attack's witness or the bound's) above it; otherwise undecided.
//   sinks: where the certified min BOS over the box ran (step 5), "sinks on
//     every input" when its lower end reaches the sink bar (default 0.5),
//     "does not sink on every input" when its witness stays below it,
//     CERTIFIED; otherwise (several layers, softpick, beyond its limits, not
//     started) the probe set: "sinks on the probe set" when some head's mean
//     non-trigger BOS mass reaches the bar, NUMERIC(53), and says so.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "search/attack.h"
#include "src/bos_statistics.h"
#include "src/evidence.h"
#include "src/table_writer.h"
#include "src/task.h"
#include "src/verdict_bars.h"
#include "src/weight_file.h"
#include "theorems/exact/relu_exact_checker.h"
#include "theorems/studies/row1_frontier.h"

namespace sinkcert::theorems::reports {

// Budget shares (header).
constexpr double kAttackShare = 0.25;
constexpr double kBoundShare = 0.7;
// The attack's share when the deep bound will not start (see below): the
// rest covers its last round's overrun and the certification.
constexpr double kAttackAloneShare = 0.8;
// The deep bound starts only if its first pass is estimated to fit this
// share of S (what the attack leaves, less a round of its overrun).
constexpr double kDeepFitShare = 0.6;
// A bound whose share is below this does not start (NOT ENCLOSED, with the
// trivial enclosure E >= 0, or min BOS in [0, 1]): its first pass alone
// would overrun the budget.
constexpr double kMinBoundSeconds = 0.5;
// The deep bound's first pass (one box per trigger, each through every layer
// and head) is not interruptible: measured at n = L = 16, 2 layers x 2
// heads (work layers heads L^3 n^2 = 4.2e6) at 280 s on the shared 2-core
// machine under a load of 15, about 6.7e-5 s per unit. With a tenth of that
// (an unloaded machine) as the estimate, a model whose first pass would
// not fit the bound's share is not started (NOT ENCLOSED, E >= 0 only);
// n = 5, L = 4 at 2 x 2 (6400 units, 0.06 s) runs.
constexpr double kDeepFirstPassSecondsPerWork = 1e-5;
// The relative gap the worst-case and BOS bounds aim at.
constexpr double kCheckRelativeGap = 0.01;

struct CheckOptions {
  double seconds = 60;
  std::uint64_t seed = 0;  // the attack's seed
  int threads = 0;         // the softmax vertex bound's threads (0: the hardware's)
  std::function<void(const std::string&)> progress;  // one line per step, and the bounds' progress
  VerdictBars bars;  // what "solves" and "sinks" mean (src/verdict_bars.h)
};

// One step's time against its share.
struct CheckStep {
  std::string name;
  double budget = 0;   // seconds allotted (0: not timed)
  double seconds = 0;  // seconds used
  std::string status;  // "done", "NOT APPLICABLE: ...", "stopped: ..."
};

// A certified enclosure lower <= x <= upper (each end rounded outward to
// double), with where it came from.
struct Enclosure {
  Verdict verdict = Verdict::kNotApplicable;  // kEnclosed, kNotEnclosed, kNotApplicable
  Evidence evidence = Evidence::certified(0);
  double lower = 0, upper = 0;
  std::string why;      // NOT APPLICABLE: why; NOT ENCLOSED: the stop reason
  bool started = true;  // false: the budget left no room to start it (trivial ends)
  long boxes = 0;
  int bits = 0;
};

struct CheckReport {
  // What was checked.
  std::string weights;  // the file's path
  std::string model;    // describe(file)
  nlohmann::json shape;
  std::string score_scale = "1";  // the file's task.score_scale (exact decimal)
  std::string source;             // the file's task.source
  Task task;
  double seconds_budget = 0, seconds = 0;
  std::uint64_t seed = 0;
  std::vector<CheckStep> steps;

  // 1. probe set (NUMERIC(53)) and the heat map's data
  BosStatistics bos;
  // the probe with the largest sampled error, certified on the exact model
  // (adversary.h, certify_witness): a CERTIFIED lower end of E even when
  // neither the attack nor the bound fits the model's size
  search::Witness probe_witness;
  Figure heat_map;  // png = true; written by the caller (write_figure)
  // 2. exact ReLU checker (ReLU attention only)
  std::optional<exact::ReluCertificate> relu;
  std::string relu_note;  // why not run, if not
  // 3. attack (SEARCH(lower bound), certified at its witness)
  std::optional<search::AttackResult> attack;
  // why it did not run; or, when it ran on some of the triggers only (the
  // whole round 0 would not fit its share), how many
  std::string attack_note;
  Matrix<double> witness_tokens;  // L x n, the attack's best input (empty if none)
  // 4. worst-case loss E, 5. min BOS mass over the box
  Enclosure worst_case;
  int worst_case_witness_trigger = 0;  // of the bound's lower end (0: none)
  Enclosure min_bos;
  // 1 - min BOS enclosed (outward-rounded from the bound's MPFR ends)
  double deficit_lower = 0, deficit_upper = 1;
  int min_bos_witness_head = 0, min_bos_witness_row = 0, min_bos_witness_trigger = 0;

  // Conclusions (header).
  VerdictBars bars;
  using Solves = Decision;  // the decision of solves_verdict (verdict_bars.h)
  Solves solves = Solves::kUndecided;
  std::string solves_evidence;      // e.g. "CERTIFIED", "EXACT"
  std::string solves_text;          // the verdict line (verdict_bars.h, solves_verdict)
  double e_lower = 0, e_upper = 0;  // the best certified enclosure of E overall
  // "probe set's worst input", "attack witness", "bound witness", "exact", or
  // "E >= 0" (no input evaluated)
  std::string e_lower_source;
  Decision sinks = Decision::kUndecided;
  std::string sinks_evidence;  // "CERTIFIED" (min BOS bound) or "NUMERIC(53)" (probe set)
  std::string sinks_text;      // the verdict line (sinks_verdict or probe_sinks_verdict)
  // What the row-1 frontier theorem gives from e_upper (single-layer,
  // single-head softmax, paper convention; theorems/studies/row1_frontier.h)
  studies::Row1Consequence row1;

  nlohmann::json to_json() const;
  // One screen: the model, E with evidence labels, the worst input, the
  // sink per layer and head, the budget.
  std::string summary() const;
  // The same with every number, the steps' times and the heat map
  // (![...](<heat_map.name>.png)).
  std::string markdown() const;
};

// Runs the steps of the header on the model `file` denotes, on `task`
// (task.n must be file.n). Throws std::invalid_argument on a mismatch.
CheckReport check_model(const WeightFile& file, const Task& task, const CheckOptions& options);

}  // namespace sinkcert::theorems::reports
