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
//   sigma      the sink score (docs/definitions.md, Definitions 4)
//                sigma(theta) = max_{l, h, i non-trigger} mean_probes a^{l,h}_{i0},
//              the per-position mean taken over the probes in which i is not
//              the trigger, with the (l, h, i) where it is attained,
//   per head   mean and min of a^{l,h}_{i0} over every non-trigger
//              position of every probe,
//   sampled    max and mean of e(X) over the probe set,
// all but E_search NUMERIC(53). Theorem 2 predicts sigma -> 1 as E -> 0.
// Frontiers. For each delta, the minimax (Lawson surrogate, penalty for the
// ceiling; search/minimax.h) with the per-position probe mean of the BOS mass
//   b^{l,h}_i = mean over the probes whose trigger is not i of a^{l,h}_{i0}
// held at or below 1 - delta
//   eps_all(delta): for EVERY head of EVERY layer (sigma <= 1 - delta);
//                   Theorem 2 predicts it stays away from 0,
//   eps_one(delta): for one chosen head only (the head where the best path
//                   model attains sigma); Theorem 2 allows it to reach 0,
// each from several starts that do not depend on the capped head's path
// weights, the best feasible result kept (CapStart; eps_one tries
// construction, sink, warm, dead, fresh in that order, and its descent
// starts dead and fresh only when no earlier start reached
// kTheorem2LowLoss, cap_descent_when_needed; eps_all tries warm, and fresh
// when cap_fresh_all):
//   warm   the best path model with the capped heads' A scaled by the
//          largest gamma in [0, 1] that meets the ceiling (bisection);
//   fresh  a fresh residual_normal_init, the ceiling enforced from round 1
//          (as the single-layer frontier does);
//   dead   (eps_one only) the best path model with the capped head's A and M
//          set to 0: the other heads sink, the capped head attends uniformly
//          (a_i0 = 1/(i+1) <= 1/2, so every ceiling 1 - delta >= 1/2 is met)
//          and adds nothing; the descent then retrains every head under the cap;
//   sink   (eps_one only) a construction: the softmax sink family at
//          inverse temperature kSinkStartBeta (src/constructions.h, worst
//          case about (L-1) e^-beta) as the first head other than the capped
//          one, every other head zero (the capped head attends uniformly, as
//          in dead): a model in which another head sinks, then polished by
//          the same descent;
//   construction (eps_one only) the sink start itself, no descent: its
//          capped head attends uniformly, so its BOS mass is 1/(i+1) <= 1/2
//          exactly (the cap of delta <= 1/2 holds over the whole box, not
//          only on the probes), at worst case about (L-1) e^-beta.
// Certification (certify_boxes > 0; eps_one points only): the feasible
// models of the starts with E_search <= kTheorem2LowLoss, best first, are
// given to the deep bounds (theorems/bounds/deep_worst_case_bound.h,
// deep_bos_bound.h) with two claims over the whole content box,
//   E <= kTheorem2LowLoss     and   max a^{l,h}_i0 <= 1 - delta (the capped head),
// each VERIFIED / NOT VERIFIED / UNDECIDED (CERTIFIED); the first model with
// both VERIFIED is kept (its E_search may be above the search's best).
// Then eps_one(delta) <= kTheorem2LowLoss is a CERTIFIED statement about
// that model: the cap over the box implies the probe-mean cap the search
// enforced. Budgets in boxes (reproducible), a time limit for safety.
// Worst cases of kept models: the minimax's adversary searches the inputs
// the descent is fitted against, and a model polished against one
// adversary can hide larger errors from it (the path model of seed 0 at
// n = L = 16: 9.7e-11 by that adversary, 3.0e-9 by the attack). So every
// path start's model and every feasible capped start's model is also given
// to the attack (search/attack.h, round 0 with the study's seed:
// reproducible, about 5 - 15 s at n = L = 16, 2 x 2), and its E_search is
// the larger of the two certified values, with that search's witness; the
// adversary's own value is kept beside it (adversary_worst_case,
// adversary_eps). Both are SEARCH lower bounds on the model's E.
// Budgets in rounds (reproducible from the seed). Each point is E_search of
// the best feasible model found: SEARCH(lower bound) on that model's E, no
// bound on the frontier itself (theorem1_study.h, kFrontierPointMeaning);
// converged says the stopping rule was met (eps_one: the target loss);
// witness_capped_bos is the capped heads' largest a^{l,h}_{i0} at the worst
// case's witness input (i >= 1, i != trigger) enclosed in MPFI, upper end
// rounded up (CERTIFIED at that input, nothing about other inputs).
// Necessity (docs/definitions.md, Definitions 4): head (l, h) is necessary for a model
// when setting its M^{l,h} to 0 raises the worst case at least
// kNecessityFactor-fold; a layer when setting every M of it to 0 does. Both
// worst cases are found by the same adversary (search/adversary.h,
// maximize_error, same options and seed): SEARCH lower bounds, so the ratio
// is a SEARCH value too. A dead head (M = 0) is never necessary.
// Every-head question (a counterexample search to "every head must sink"):
// a model with E_search <= kEveryHeadLoss and a necessary head whose BOS
// mass is <= kNoSinkScore at every non-trigger position of the probe set
// (every probe, not only the mean); likewise a necessary layer none of whose
// heads sinks in that sense. Candidates: for each head in turn, the
// targeted search (the minimax with only that head capped at kNoSinkScore,
// least squares to path_target, from a fresh init with the cap enforced for
// the whole descent and from the sink start, the best kept), and every
// model the study produced; the first hit is kept with its weight file.
// For every head of every candidate with E_search <= kEveryHeadLoss: its
// necessity and its BOS profile on the probe set (HeadProfile: max, mean,
// and the fraction of (position, probe) pairs with a_i0 <= kNoSinkScore),
// NUMERIC(53).
// Found or not found, SEARCH: a hit is re-checkable by `sinkcert eval` (its
// E_search is a lower bound: a certified upper bound on its E is what would
// make it a counterexample); "not found" only reports the budget spent.
// Verdict (the rule of the Theorem 1 study, theorems/studies/theorem1_study.h, on
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
#include <optional>
#include <string>
#include <vector>

#include "search/minimax.h"
#include "src/bos_statistics.h"
#include "src/evidence.h"
#include "src/run_info.h"
#include "src/task.h"
#include "theorems/studies/theorem1_study.h"

namespace sinkcert::theorems::studies {

// A path model reaching E_search <= kTheorem2LowLoss with sigma >=
// kTheorem2SinkScore makes the verdict CONSISTENT (the Theorem 1 study's
// thresholds: worst case 1e-6, BOS mass 1 - 1e-5).
constexpr double kTheorem2LowLoss = 1e-6;
constexpr double kTheorem2SinkScore = 1 - 1e-5;
// No head's mean BOS mass above this at any non-trigger position: "no sink"
// for the counterexample rule (the largest delta of the frontier, 0.5).
constexpr double kNoSinkScore = 0.5;
// Necessity: ablating the head (or layer) raises the worst case at least
// this factor (docs/definitions.md, Definitions 4).
constexpr double kNecessityFactor = 100;
// The every-head question asks for a model at most this worst case.
constexpr double kEveryHeadLoss = 1e-4;
// The sink start's inverse temperature: its worst case, about (L-1) e^-beta,
// is below 1e-6 up to L = 16 when beta >= ln(15e6) ~ 16.5; 20 leaves a
// margin of e^3.5 ~ 33.
constexpr double kSinkStartBeta = 20;

struct Theorem2Options {
  Task task;
  int layers = 2, heads = 2;
  std::uint64_t seed = 0;
  std::vector<double> init_stds = {0.02, 0.1, 0.5};
  double path_target = 1e-10;
  // At n = L = 16, 2 x 2 a round takes 20-60 s on 2 cores, so the default
  // rounds end the whole study in about an hour (57 min measured) and the
  // time limits below stay safety limits.
  int path_rounds = 20;
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
  // Threads of each least-squares solve's sums (MinimaxOptions::deep_threads:
  // the compressed block's parts); the result does not depend on it.
  int threads = 1;
  // The dense kernels of each least-squares solve (MinimaxOptions::dense_isa:
  // the baseline, the same bits on every x86-64 CPU, or AVX2, about half
  // their time at 4 x 4 heads; recorded in the JSON's options).
  search::DenseIsa dense_isa = search::DenseIsa::kBaseline;
  int probe_count = kDefaultProbeCount;
  // The frontiers eps_all and eps_one (empty: not run).
  std::vector<double> deltas = {0.5, 0.2, 0.1, 0.05, 0.02};
  // Probes of the ceiling in the capped searches (the first of the probe
  // set's stream): each violated ceiling residual costs one reverse pass per
  // probe, so the search caps a smaller set; statistics use the full set.
  int ceiling_probe_count = 100;
  int frontier_rounds = 5;
  double frontier_time_limit = 1200;  // seconds per point (safety, as above)
  // The every-head search: at most this many heads capped in turn (0: none).
  // (eps_one's search at delta = 1 - kNoSinkScore counts as the first)
  int every_head_searches = 2;
  int every_head_rounds = 8;
  double every_head_time_limit = 1200;  // seconds per head (safety, as above)
  // The capped searches' extra starts (CapStart) and their budget: the
  // fresh and dead starts descend from far away, so they get a descent's
  // rounds, cap_descent_rounds, rather than frontier_rounds (the targeted
  // every-head searches too).
  bool cap_fresh_start = true;
  bool cap_dead_start = true;
  bool cap_sink_start = true;
  // The fresh start for eps_all too. Off by default: at n = L = 16, 2 x 2
  // (seed 0) it lost to the warm start at every delta (worst cases 1.5 -
  // 1.8 against 0.60 - 0.94) and took about 750 s of each point's 880 s.
  bool cap_fresh_all = false;
  // An eps_one point's descent starts (dead, fresh) run only when none of
  // its cheap starts (construction, sink, warm) reached kTheorem2LowLoss;
  // a skipped start is recorded with the reason. false: every start runs.
  bool cap_descent_when_needed = true;
  double cap_fresh_std = 0.02;
  int cap_descent_rounds = 20;
  // Certification of the eps_one points (header comment): boxes per bound
  // (0: none) and a safety limit in seconds per bound.
  long certify_boxes = 0;
  double certify_seconds = 600;
  // Ranks that share every search's work (search/rank_group.h; the result
  // does not depend on their count). Null: this process alone.
  const search::RankGroup* ranks = nullptr;
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
  search::MinimaxResult result;     // result.worst: the larger of the two searches (header)
  double adversary_worst_case = 0;  // the minimax's own adversary's, before the attack
  BosStatistics stats;              // of the best model, on the probe set
  SinkScore sink;
};

// Which heads a frontier point caps: all of them, or one (layer, head).
enum class CapScope { kAll, kOne };
std::string to_string(CapScope scope);  // "all", "one"

// Where a capped search starts (header comment).
enum class CapStart { kWarm, kFresh, kDead, kSink, kConstruction };
// "warm", "fresh", "dead", "sink", "construction"
std::string to_string(CapStart start);

// One start of a capped search and what it reached.
struct CapStartRecord {
  CapStart start = CapStart::kWarm;
  double eps = 0;  // SEARCH(lower bound) on that model's E (the larger of the two searches)
  double adversary_eps = 0;  // the minimax's own adversary's, before the attack
  bool feasible = false, converged = false;
  int rounds = 0;
  double seconds = 0;
  std::string stop_reason;
  std::string skipped;  // why the start did not run ("" if it ran)
};

// A model's two claims over the whole content box (header comment,
// Certification), decided by the deep bounds, CERTIFIED.
struct FrontierCertificate {
  bool attempted = false;
  Verdict loss = Verdict::kUndecided;  // E <= kTheorem2LowLoss
  double loss_upper = 0;               // the bound's upper end on E, rounded up
  Verdict cap = Verdict::kUndecided;   // the capped head's max a_i0 <= ceiling
  double cap_upper = 0;                // the bound's upper end on that maximum, rounded up
  int bits = 0;                        // the larger of the two bounds' final precisions
  int models_tried = 0;                // candidates given to the bounds
  bool certified() const { return loss == Verdict::kVerified && cap == Verdict::kVerified; }
};
// Its JSON (the claims with their verdicts and upper ends, the evidence),
// null when not attempted: theorem2.json's and the eps_one weight files'.
nlohmann::json certificate_json(const FrontierCertificate& c, double ceiling);
// Both claims on one model, each bound within `boxes` boxes and `seconds`.
FrontierCertificate certify_capped_model(const Model<double>& model, const Task& task, int layer,
                                         int head, double ceiling, long boxes, double seconds);

// A frontier point (theorems/studies/frontier.h: delta, ceiling, eps,
// feasibility, the search's result; eps bounds nothing about the frontier
// itself) and what this study adds.
struct Theorem2FrontierPoint : FrontierRecord {
  // every start tried, and the one whose model is kept
  std::vector<CapStartRecord> starts;
  CapStart start = CapStart::kWarm;
  // the capped heads' largest a^{l,h}_{i0} at the witness of eps (header
  // comment), CERTIFIED at that input; NaN when no feasible model
  double witness_capped_bos = 0;
  // the kept model's certification (header comment; eps_one only)
  FrontierCertificate certificate;
  CapScope scope = CapScope::kAll;
  int layer = 0, head = 0;  // the capped head (kOne)
  // the ceiling's statistic of that model: the largest b^{l,h}_i over the
  // capped heads on the ceiling's probes (ceiling_probe_count), NUMERIC(53)
  double capped_bos = 0;
  SinkScore sink;       // over every head, NUMERIC(53)
  std::string not_run;  // why the minimax refused the point ("" if it ran)
};

// Necessity of one head (head >= 0) or of a whole layer (head = -1).
struct Necessity {
  int layer = 0, head = -1;
  double worst_case = 0;          // the model's, SEARCH(lower bound)
  double ablated_worst_case = 0;  // with M^{l,h} (or every M^{l,.}) = 0, SEARCH(lower bound)
  double ratio = 0;               // ablated / model (inf when the model's is 0)
  bool necessary = false;         // ratio >= kNecessityFactor
};

// The attack's round 0 (search/attack.h, seed `seed`) on result.model
// (header comment, worst cases of kept models): result.worst becomes the
// attack's best witness when that certifies larger (or the adversary's is
// NaN). Returns the adversary's certified value, as it was.
double attack_kept_model(search::MinimaxResult& result, const Task& task, std::uint64_t seed);

// The model with M^{layer,head} = 0 (head = -1: every head of the layer).
Model<double> ablated(const Model<double>& model, int layer, int head);
// The model with A^{layer,head} = M^{layer,head} = 0 (the dead start).
Model<double> killed(const Model<double>& model, int layer, int head);
// The sink start of a layers x heads residual model with (layer, head)
// capped: every head zero but the first other one, the sink family at beta.
// Throws std::invalid_argument for a model of one head.
Model<double> sink_start(int n, int layers, int heads, int layer, int head, double beta);
// The largest a^{l,h}_{i0} over the heads in `capped` ((layer, head) pairs)
// and positions i >= 1, i != trigger, of the input X(trigger, content),
// enclosed in MPFI: the upper end rounded up (CERTIFIED at that input).
double certified_capped_bos_at(const Model<double>& model, const Task& task, int trigger,
                               const Matrix<double>& content,
                               const std::vector<std::pair<int, int>>& capped);
// Necessity of (layer, head) (head = -1: the layer) by the adversary with
// `adversary` options on the model and on its ablation. `model_worst_case`,
// when given, is that adversary's value on the model itself (the same
// options give the same value, so a caller that has it saves one search).
Necessity necessity(const Model<double>& model, const Task& task, int layer, int head,
                    const search::AdversaryOptions& adversary = {},
                    std::optional<double> model_worst_case = std::nullopt);

// The largest BOS mass a^{l,h}_{i0} over every probe and non-trigger
// position i >= 1 (the 1-quantile of each head's overall summary).
double max_probe_bos(const BosStatistics& stats, int layer, int head);

// A head's BOS profile on the probe set, over every (probe, non-trigger
// position i >= 1) pair: max and mean of a^{l,h}_{i0}, and the fraction of
// pairs with a^{l,h}_{i0} <= kNoSinkScore. NUMERIC(53).
struct HeadProfile {
  double max = 0, mean = 0, low_fraction = 0;
};
// Per head, index l * heads + h.
std::vector<HeadProfile> head_profiles(const Model<double>& model, const ProbeSet& probes);

// One candidate of the every-head question and what was checked on it.
struct EveryHeadCandidate {
  std::string source;     // "path start 0", "eps_one delta 0.5 (l0 h1)", "cap l1 h0"
  double worst_case = 0;  // E_search, SEARCH(lower bound)
  std::vector<Necessity> heads, layers;
  std::vector<double> head_max_bos;   // per head, l * heads + h: max_probe_bos
  std::vector<HeadProfile> profiles;  // per head, l * heads + h
  // the targeted search's capped head; -1 for the other candidates
  int capped_layer = -1, capped_head = -1;
  Model<double> model;
};
// Whether a head answers the every-head question (header comment): its
// model's worst case <= kEveryHeadLoss, the head necessary, and its largest
// BOS mass over the probes <= kNoSinkScore.
bool answers_every_head(double worst_case, bool necessary, double max_bos);
// What a head of a low-loss candidate is, in words: "not necessary";
// "necessary, no sink" (max BOS <= kNoSinkScore: the every-head question's
// hit); "necessary but not sinking on average" (mean <= kNoSinkScore, max
// above); "necessary, sinks" (mean above).
std::string head_role(const Necessity& necessity, const HeadProfile& profile);
struct EveryHeadAnswer {
  bool head_found = false, layer_found = false;
  // the hits (index into candidates, and the head or layer); -1 if none
  int head_candidate = -1, head_layer = -1, head_head = -1;
  int layer_candidate = -1, layer_layer = -1;
  std::vector<EveryHeadCandidate> candidates;
  // the targeted searches' candidates (index into candidates), in head order
  std::vector<int> targeted;
  int searches = 0;     // capped minimax runs made for it
  double seconds = 0;   // spent on those runs and the ablations
  std::string summary;  // found / not found, in words
};
// Fills found/not found and the summary from the candidates (the rule in
// the header comment); exposed so that tests can feed made-up candidates.
void decide_every_head(EveryHeadAnswer& answer, int heads);

struct Theorem2Study {
  Theorem2Options options;
  std::vector<Theorem2Run> runs;
  std::vector<Theorem2PathPoint> path;
  std::vector<Theorem2FrontierPoint> frontier;  // eps_all then eps_one, decreasing delta
  EveryHeadAnswer every_head;
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

}  // namespace sinkcert::theorems::studies
