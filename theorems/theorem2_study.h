// SPDX-License-Identifier: MIT
//
// Theorem 2 (residual multi-layer multi-head softmax), studied by search: a
// model whose worst-case loss E(theta) vanishes has a sink in at least one
// layer, at some position, not necessarily in every head.
//
// Descent path. From one initialization per entry of `init_stds` (i.i.d.
// normal entries of every A^{l,h} and M^{l,h}; the paper's std is 0.02), the
// least-squares exchange method (search/minimax.h, residual target, theta =
// (A, M) of every head) runs to `path_target`. Every round records
//   E_search   the worst case (SEARCH, lower bound on that model's E: the
//              adversary's witness re-evaluated in MPFI, lower end rounded
//              down),
//   sigma      the sink score (README, Definitions 4)
//                sigma(theta) = max_{l, h, i non-trigger} mean_probes a^{l,h}_{i0},
//              the per-position mean taken over the probes in which i is not
//              the trigger, with the (l, h, i) where it is attained,
//   per head   mean and min of a^{l,h}_{i0} over every non-trigger
//              position of every probe,
//   sampled    max and mean of e(X) over the probe set,
// all but E_search NUMERIC(53). Theorem 2 predicts sigma -> 1 as E -> 0.
// Verdict (the rule of the Theorem 1 study, theorems/theorem1_study.h, on
// the path):
//   COUNTEREXAMPLE CANDIDATE  an accepted path model has E_search below
//                             kCandidateLoss and sigma <= kNoSinkScore (a
//                             tiny loss with no head sinking anywhere;
//                             still only a candidate until certified)
//   CONSISTENT                the best path model has E_search <=
//                             kTheorem2LowLoss and sigma >= kTheorem2SinkScore
//   INCONCLUSIVE              otherwise (e.g. the search did not get there
//                             within its budget)
//   NOT APPLICABLE            no non-trigger position exists (L = 2)
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "search/minimax.h"
#include "src/bos_statistics.h"
#include "src/run_info.h"
#include "src/task.h"
#include "theorems/theorem1_study.h"

namespace sinkcert::theorems {

// A path model reaching E_search <= kTheorem2LowLoss with sigma >=
// kTheorem2SinkScore makes the verdict CONSISTENT (the Theorem 1 study's
// thresholds: worst case 1e-6, BOS mass 1 - 1e-5).
constexpr double kTheorem2LowLoss = 1e-6;
constexpr double kTheorem2SinkScore = 1 - 1e-5;
// No head's mean BOS mass above this at any non-trigger position: "no sink"
// for the counterexample rule (the largest delta of the frontier, 0.5).
constexpr double kNoSinkScore = 0.5;

struct Theorem2Options {
  Task task;
  int layers = 2, heads = 2;
  std::uint64_t seed = 0;
  std::vector<double> init_stds = {0.02, 0.1, 0.5};
  double path_target = 1e-10;
  int path_rounds = 60;
  // Safety limit only: a run that hits it is no longer reproducible from its
  // seed (the round count then depends on the machine); the JSON says so in
  // each stop_reason.
  double path_time_limit = 1800;  // seconds per start
  // Active-set inputs per trigger position: initial vertices and at most
  // max_per_trigger in all (the dense Jacobian has up to max_per_trigger
  // (L-1) L n rows and 2 n^2 layers heads columns).
  int initial_per_trigger = 3;
  int max_per_trigger = 10;
  int lm_iterations = 8;
  int probe_count = kDefaultProbeCount;
};

// The options of `sinkcert theorem2 --quick`: the paper's init only, fewer
// rounds, a smaller probe set.
Theorem2Options theorem2_quick_options(const Task& task, int layers, int heads, std::uint64_t seed);

// sigma(theta) and where it is attained, from a model's BOS statistics.
struct SinkScore {
  double sigma = 0;  // NaN when a statistic is NaN
  int layer = 0, head = 0, position = 0;
  bool defined = false;  // false: no non-trigger position (L = 2)
};
// max over (l, h) and positions i >= 1 with count > 0 of per_position[i].mean.
SinkScore sink_score(const BosStatistics& stats);

struct Theorem2PathPoint {
  int start = 0, round = 0;
  std::string event;
  bool accepted = true;
  double elapsed = 0;
  double worst_case = 0;         // SEARCH(lower bound), certified at the witness
  double worst_case_double = 0;  // the adversary's double value, NUMERIC(53)
  bool double_disagrees = false;
  double sampled_max = 0, sampled_mean = 0;  // NUMERIC(53)
  SinkScore sink;                            // NUMERIC(53)
  // per head, index l * heads + h: mean and min non-trigger BOS mass
  std::vector<double> head_mean, head_min;
  int active_size = 0;
  double max_abs_A = 0;
};

struct Theorem2Run {
  int start = 0;
  double init_std = 0;
  search::MinimaxResult result;
  BosStatistics stats;  // of the best model, on the probe set
  SinkScore sink;
};

struct Theorem2Study {
  Theorem2Options options;
  std::vector<Theorem2Run> runs;
  std::vector<Theorem2PathPoint> path;
  StudyVerdict verdict = StudyVerdict::kInconclusive;
  std::string reason;
  double seconds = 0;
};

// A residual softmax model of `layers` x `heads` with i.i.d. normal(0, std)
// entries, drawn from std::mt19937_64(seed) head by head, A then M, each
// row-major.
Model<double> residual_normal_init(int n, int layers, int heads, double std, std::uint64_t seed);

Theorem2Study run_theorem2_study(const Theorem2Options& options,
                                 const StudyProgress& progress = {});

// Sets study.verdict and study.reason from its path (the rule in the header
// comment); exposed so that tests can feed it made-up studies.
void decide_theorem2_verdict(Theorem2Study& study);

// The study as JSON (theorem2.json), stamped with `info`.
nlohmann::json to_json(const Theorem2Study& study, const RunInfo& info);

}  // namespace sinkcert::theorems
