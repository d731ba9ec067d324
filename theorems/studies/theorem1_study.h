// SPDX-License-Identifier: MIT
//
// Theorem 1 (single-layer softmax), studied by search: as the worst-case
// loss E(theta) -> 0, the BOS mass at every non-trigger position -> 1.
//
// Three parts, all for single-layer single-head softmax in (A, M)
// (search/minimax.h, kParametrization):
//  1. Descent path. From `starts` initializations (start 0: the paper's,
//     i.i.d. normal std 0.02; start s > 0: normal std 0.02 * 5^s), the
//     least-squares exchange method (minimax.h) runs to `path_target`. Every
//     round records the worst case E_search (SEARCH, lower bound on that
//     model's E: the adversary's witness re-evaluated in MPFI, lower end
//     rounded down; adversary.h), the sampled l_inf (max and mean over the
//     probe set) and the BOS mass (mean, min over the probe set): NUMERIC(53).
//     Where the adversary's double value differs from the certified one in
//     the first significant digit, the reports say so.
//  2. Frontier. For each delta, minimize E subject to
//        mean_{probes, non-trigger i >= 1} a_i0 <= 1 - delta
//     (Lawson surrogate, penalty for the ceiling), started from the best path
//     model with A scaled down (bisection) until it meets the ceiling: the
//     path model is saturated, and there the ceiling has no gradient.
//     Each frontier point records E_search of the best feasible model found
//     at delta (the field `eps`): a SEARCH lower bound on THAT model's E,
//     and no bound at all on eps*(delta) (docs/definitions.md, Definitions 4: a search value on one
//     model's E bounds nothing about eps*). The model becomes a witness of
//     an upper bound on eps*(delta) only once its E is certified from above
//     and its BOS cap over the whole box. The log-log slope of these points
//     against delta is fitted by least squares; its uncertainty here is the
//     fit's standard error (the spread across seeds needs several runs).
//  3. "With high probability" (docs/definitions.md, Definitions 4): for the path model and the
//     frontier models, BOS mass against content scale t: probes with the
//     content multiplied by t in [0, 1]. Inputs with small content need no
//     sink: a capped model spends its BOS deficit there.
//  4. Final certification (Theorem1Options::attack): the attack
//     (search/attack.h, round 0: gradient adversary and vertex search, seed
//     `seed`) re-measures the worst case of every reported model (the best
//     model of each path start, every frontier model), certified on the
//     exact model. The reported worst case is the larger certified value
//        E_reported = max(E_minimax, E_attack)   (still SEARCH, lower bound),
//     with its witness and the adversary that found it (ties: the
//     minimax's). The path's best start, from which the frontier starts, is
//     chosen before, by the minimax's own value, as the search chose it.
// Threads (Theorem1Options::threads): the path starts, then the frontier
// points, then the final certifications are independent tasks, each with
// its own seed, run on up to `threads` threads (src/parallel_tasks.h) and
// gathered in a fixed order: the study is the same for every thread count.
// Verdict:
//   COUNTEREXAMPLE CANDIDATE  some feasible frontier model has E_search below
//                             kCandidateLoss (a tiny loss without a sink;
//                             still only a candidate until certified)
//   CONSISTENT                every frontier point is at least kCandidateLoss
//                             and eps is non-decreasing in delta up to
//                             kMonotoneSlack, and the path reached a low loss
//                             with a sink
//   INCONCLUSIVE              otherwise (e.g. the search did not converge)
//   NOT APPLICABLE            no non-trigger position exists (L = 2)
#pragma once

#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "search/adversary.h"
#include "search/minimax.h"
#include "src/bos_statistics.h"
#include "src/run_info.h"
#include "src/task.h"
#include "theorems/studies/frontier.h"

namespace sinkcert::theorems::studies {

// A feasible frontier model below this worst case would have a tiny loss
// without a sink: a counterexample candidate. 1e-6 is far below every
// frontier point seen (>= 1e-3 at delta = 0.005) and far above double's
// resolution of the loss.
constexpr double kCandidateLoss = 1e-6;
// eps(delta) may exceed eps(delta') for delta < delta' by this relative
// amount before the frontier counts as non-monotone (search noise).
constexpr double kMonotoneSlack = 0.25;

// Init scale of start s: the paper's std 0.02 times kInitGrowth^s.
constexpr double kPaperInitStd = 0.02;
constexpr double kInitGrowth = 5.0;
// The path must end with a sink: mean non-trigger BOS mass at least this
// (the acceptance's 1 - 1e-5) for the verdict CONSISTENT.
constexpr double kPathSinkMass = 1 - 1e-5;
// ... and a worst case (search) at most this.
constexpr double kPathLowLoss = 1e-6;

// The verdict of a study (the rule in the header comment).
enum class StudyVerdict { kConsistent, kCounterexampleCandidate, kInconclusive, kNotApplicable };
// "CONSISTENT", "COUNTEREXAMPLE CANDIDATE", "INCONCLUSIVE", "NOT APPLICABLE".
std::string to_string(StudyVerdict verdict);
// The inverse of to_string; throws std::invalid_argument on any other text.
StudyVerdict study_verdict_from_string(const std::string& text);

// What a frontier point's worst case is (JSON field description, CSV note,
// figure caption).
inline constexpr const char* kFrontierPointMeaning =
    "worst case of the frontier model at delta: SEARCH(lower bound) on that model's E, certified "
    "at the adversary's witness; no bound on eps*(delta), for which the model witnesses an upper "
    "bound only once its E is certified from above and its BOS cap over the whole box";

struct Theorem1Options {
  Task task;
  std::uint64_t seed = 0;
  // Attention kind of every model searched (its initializations); the
  // study as described is Theorem 1's softmax. Any kind the minimax covers
  // (not gated).
  AttentionKind attention = AttentionKind::kSoftmax;
  int starts = 3;
  double path_target = 1e-10;
  int path_rounds = 60;
  // Safety limits only: a run that hits one is no longer reproducible from
  // its seed (the round count then depends on the machine); the JSON says so
  // in each stop_reason.
  double path_time_limit = 600;  // seconds per start
  std::vector<double> deltas = {0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005};
  int frontier_rounds = 12;
  double frontier_time_limit = 600;  // seconds per point (safety, see above)
  int probe_count = kDefaultProbeCount;
  std::vector<double> content_scales = {0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0};
  int nuance_samples = 100;  // probes per content scale
  // Threads for the independent tasks (header); the result does not depend on it.
  int threads = 1;
  // Part 4: re-measure the reported models' worst cases with the attack.
  bool attack = true;
  // The minimax's compressed least-squares block (MinimaxOptions::compressed_rows).
  bool compressed_rows = true;
};

// The options of `sinkcert theorem1 --quick`: fewer starts and rounds.
Theorem1Options quick_options(const Task& task, std::uint64_t seed);

struct PathPoint {
  int start = 0, round = 0;
  std::string event;
  double elapsed = 0;
  double worst_case = 0;                     // SEARCH(lower bound), certified at the witness
  double worst_case_double = 0;              // the adversary's double value, NUMERIC(53)
  bool double_disagrees = false;             // the two differ in the first digit
  double sampled_max = 0, sampled_mean = 0;  // NUMERIC(53)
  double bos_mean = 0, bos_min = 0;          // NUMERIC(53)
  int active_size = 0;
  double max_abs_A = 0;
};

// Part 4 of the header on one reported model. The model's result.worst
// becomes the larger certified worst case; this keeps both values.
struct FinalCertification {
  bool attacked = false;                                                // the attack ran
  double minimax_worst_case = 0;                                        // SEARCH(lower bound)
  double attack_worst_case = std::numeric_limits<double>::quiet_NaN();  // SEARCH(lower bound)
  // "minimax adversary", "attack: gradient adversary", "attack: vertex search"
  std::string found_by = "minimax adversary";
  double seconds = 0;  // CPU seconds of the attack
};

struct PathRun {
  int start = 0;
  double init_std = 0;
  search::MinimaxResult result;
  BosStatistics stats;  // of the best model, on the probe set
  // Smallest non-trigger BOS mass the adversary finds on the best model:
  // SEARCH(upper bound) on the infimum over all inputs.
  search::AdversaryResult min_bos;
  FinalCertification final_certification;  // result.worst is the reported worst case
};

// A frontier point (theorems/studies/frontier.h: delta, ceiling, eps,
// feasibility, the search's result) and what this study adds.
struct FrontierPoint : FrontierRecord {
  double bos_mean = 0;                     // its mean non-trigger BOS mass (NUMERIC(53))
  FinalCertification final_certification;  // eps = result.worst.certified after it
};

struct NuancePoint {
  std::string model;  // "path", "frontier delta=..."
  double scale = 0;   // content multiplied by this
  double bos_mean = 0, bos_min = 0, error_max = 0;
};

// CPU seconds of one task of the study (its thread's CPU time; wall time
// is meaningless on a shared machine), for the profile.
struct TaskTime {
  std::string phase;  // "path", "frontier", "nuance", "final certification"
  std::string task;   // "start 0", "delta 0.5", ...
  double cpu_seconds = 0;
};

struct Theorem1Study {
  Theorem1Options options;
  std::vector<PathRun> runs;
  std::vector<PathPoint> path;
  std::vector<FrontierPoint> frontier;
  // log eps = a + slope log delta over the feasible frontier points (a fit
  // of per-model SEARCH lower bounds, not of eps*(delta))
  double slope = 0, slope_stderr = 0;
  std::vector<NuancePoint> nuance;
  StudyVerdict verdict = StudyVerdict::kInconclusive;
  std::string reason;
  double seconds = 0;             // wall time of the whole study
  std::vector<TaskTime> profile;  // per task, in the study's fixed order
  std::vector<std::pair<std::string, double>> phase_seconds;  // wall time per phase
};

// The path's init of a start: a single-head model of `kind` with A, then M,
// row by row, i.i.d. normal(0, std) drawn from mt19937_64(seed).
Model<double> normal_init(AttentionKind kind, int n, double std, std::uint64_t seed);
// The frontier's warm start: m with A scaled by the largest gamma in [0, 1]
// (bisection, kBisectionSteps halvings) whose mean probe BOS mass is
// <= ceiling; m itself when it already meets the ceiling.
Model<double> scaled_to_ceiling(const Model<double>& m, const ProbeSet& probes, double ceiling);
// m with the first head's A multiplied by gamma (with_scaled_A of
// theorems/studies/frontier.h on head (0, 0)).
Model<double> with_scaled_A(const Model<double>& m, double gamma);

// A double as "%.17g": enough digits to read back the same double.
std::string format_double(double v);
// " (the double value 3.33e-16 differs in the first digit)" when
// `disagrees`, else "" (a certified value's note in progress lines).
std::string double_note(bool disagrees, double double_value);

// A SEARCH value for printing with `digits` significant digits, rounded in
// its bound's direction (down for a lower bound, up for an upper bound), so
// that the printed number is still a bound: "6.372e-17". NaN prints "nan".
std::string format_bound(double value, bool lower_bound, int digits);

// Part 4 of the header on one model: the attack (seed `seed`) on m,
// certified on m's exact value; where its certified worst case exceeds
// worst.certified, `worst` becomes the attack's witness. `worst` must be
// certified already.
FinalCertification recertify_worst_case(const Model<double>& m, const Task& task,
                                        std::uint64_t seed, search::Witness& worst);

// Progress lines; with several threads, called from any of them, one
// line at a time.
using StudyProgress = std::function<void(const std::string&)>;

Theorem1Study run_theorem1_study(const Theorem1Options& options,
                                 const StudyProgress& progress = {});

// Sets study.verdict and study.reason from its frontier and path (the rule
// in the header comment); exposed so that tests can feed it made-up studies.
void decide_verdict(Theorem1Study& study);

// The study as JSON (theorem1.json): options, path, frontier, fit, the
// BOS mass against content, verdict and reason, stamped with `info`.
nlohmann::json to_json(const Theorem1Study& study, const RunInfo& info);

// j without the keys that measure time or the run (any key containing
// "seconds", "elapsed", "provenance" or the former "run_info"), at every depth: what two runs of
// the same study must agree on, whatever the thread count or the machine's load.
nlohmann::json without_time_keys(const nlohmann::json& j);

// Its report (CSV tables, figures, weight files) is theorems/reports/theorem1_report.h.

}  // namespace sinkcert::theorems::studies
