// SPDX-License-Identifier: MIT
//
// Which normalizations force a sink: the Theorem 1 study run per attention
// kind (softmax, softmax-off-by-one, sigmoid, relu, relu-count-all, softpick,
// gated; src/model.h), single layer, single head, parametrized by (A, M).
//
// Per kind:
//  1. Descent path. From the Theorem 1 study's inits (start s: A then M,
//     i.i.d. normal std 0.02 * 5^s, seed 1000 seed + s; theorem1_study.h),
//     the least-squares minimax (search/minimax.h) runs to path_target.
//     Reported: the lowest worst case reached, E_search (SEARCH, lower bound
//     on that model's E), and the BOS mass there over the probe set
//     (NUMERIC(53)).
//  2. Frontier. For each delta, the Lawson minimax with the BOS ceiling
//        mean over the probe set of a_i0 <= 1 - delta
//     (the minimax caps the mean; the search does not see a max-type cap),
//     started from the best path model with A scaled down to meet it. Its
//     E_search is a SEARCH lower bound on that model's E only.
//  3. Certification (when options.certify_frontier; normalization_options
//     turns it on where the branch and bound reaches, n <= kCertifyMaxN and
//     L <= kCertifyMaxL): the cap at EVERY non-trigger
//     position over the whole box,
//        U(theta) = max_{j, i >= 1, i != j, C} a_i0(X(j, C)) <= 1 - delta,
//     is checked by the certified maximum BOS mass (bos_bound.h, max mode);
//     if the frontier model fails it, A is scaled by gamma in [0, 1]
//     (bisection, cap_steps certified checks; gamma = 0 is the last resort)
//     to the largest gamma found whose cap is VERIFIED. That model's worst
//     case is then bounded from above (worst_case_bound.h). Both certified:
//        eps*(delta) <= E(theta_gamma) <= worst_upper     CERTIFIED
//     for the max-type cap, and so for the mean-type cap too (a cap on
//     every a_i0 caps their mean). A point whose bounds do not close within
//     their box budgets says "not certified" and why; no number is implied.
//     A point whose model equals the previous point's (unscaled), with that
//     certified max BOS under the new, larger cap, keeps its certificate.
//  4. Sink-free candidates: a model of this kind built by hand, written as a
//     weight file and certified the same way (worst case <= kSinkFreeLoss,
//     max BOS <= kSinkFreeBos), or, for relu, Theorem 3's construction
//     proved EXACT (theorems/exact/relu_exact_checker.h). The constructions (flags
//     only, so the bounds are exact up to rounding on the first box):
//       relu, relu-count-all: s_ik = x_i[1] (x_k[n-1] + x_k[1]), M = I
//       softpick: the same scores (non-trigger rows: every score 0, all
//         weights 0 by the 0/0 := 0 rule; trigger row uniform on 1..j)
//       softmax-off-by-one, sigmoid: s_ik = b (x_i[1] (x_k[1] + x_k[n-1] - x_k[0])
//         - x_i[n-1]), b = kConstructionBeta, M = I - e_0 e_0^T (every
//         non-trigger score -b: off-by-one puts its mass on the zero logit,
//         sigmoid on nothing)
//       gated: the relu scores times b, M = I - e_0 e_0^T, gate
//         W_g x_i = b (x_i[1] - x_i[n-1]) on every coordinate (non-trigger
//         rows attend uniformly, a_i0 = 1/(i+1) <= 1/2, and are gated off)
//     softmax: none (Theorem 1). A frontier point with delta >= 1/2 whose
//     certified bounds meet both thresholds is a candidate too (VERIFIED by
//     step 3).
// Verdict, in this order:
//   sink-free solution  a candidate VERIFIED: certified worst case <= 1e-6
//                       and certified max BOS <= 0.5 (EXACT for relu)
//   sink needed         the path reached E_search <= 1e-6 with mean BOS
//                       >= 1 - 1e-5 (as in Theorem 1), every frontier point is
//                       feasible with E_search >= kCandidateLoss, and
//                       E_search does not fall as delta grows (up to
//                       kMonotoneSlack): SEARCH evidence
//   inconclusive        otherwise, with the reasons (kinds the search or the
//                       bounds do not cover say which part refused)
// Budgets are rounds and boxes, never seconds, so a rerun with the same
// options reproduces every number.
#pragma once

#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/evidence.h"
#include "src/model.h"
#include "src/run_info.h"
#include "src/table_writer.h"
#include "src/task.h"
#include "src/weight_file.h"
#include "theorems/studies/theorem1_study.h"

namespace sinkcert::theorems::studies {

// A sink-free solution: certified worst case at most this ...
constexpr double kSinkFreeLoss = 1e-6;
// ... and certified BOS mass at most this at every non-trigger position.
constexpr double kSinkFreeBos = 0.5;
// The inverse temperature of the hand-built candidates: their error is of
// order L e^(-20) ~ 1e-8, below kSinkFreeLoss at the sizes of this study.
constexpr double kConstructionBeta = 20;

enum class NormalizationVerdict { kSinkNeeded, kSinkFreeSolution, kInconclusive };
// "sink needed", "sink-free solution", "inconclusive".
std::string to_string(NormalizationVerdict verdict);

struct NormalizationOptions {
  Task task;
  AttentionKind attention = AttentionKind::kSoftmax;
  std::uint64_t seed = 0;
  bool quick = false;
  int starts = 3;
  double path_target = 1e-10;
  int path_rounds = 60;
  std::vector<double> deltas = {0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005};
  int frontier_rounds = 12;
  int probe_count = kDefaultProbeCount;
  // Certification of the frontier (step 3; the candidates of step 4 are
  // always certified: their bounds are exact on the first boxes); budgets in
  // boxes.
  bool certify_frontier = true;
  long worst_case_boxes = 20000;
  double worst_case_gap = 0.05;  // relative gap at which a frontier bound stops
  long bos_boxes = 5000;
  int cap_steps = 6;  // bisection steps on gamma
};

// The frontier is certified up to this size (a frontier model's worst-case
// bound at n = L = 16 needs far more boxes than any budget here).
constexpr int kCertifyMaxN = 6;
constexpr int kCertifyMaxL = 6;

// The study's options: the Theorem 1 study's deltas, starts and rounds;
// quick: 2 starts, 3 deltas (0.5, 0.2, 0.05), fewer rounds and boxes;
// certify_frontier for n <= kCertifyMaxN and L <= kCertifyMaxL.
NormalizationOptions normalization_options(const Task& task, AttentionKind attention,
                                           std::uint64_t seed, bool quick);

// The certified bounds of one model (steps 3 and 4).
struct ModelCertificate {
  bool attempted = false;
  std::string refused;  // why a bound could not run (unsupported kind), else ""
  // lower <= E <= upper, CERTIFIED (rounded outward to double); upper = inf
  // when no finite bound was reached
  double worst_lower = 0, worst_upper = std::numeric_limits<double>::infinity();
  std::string worst_status;
  long worst_boxes = 0;
  // max BOS <= cap: VERIFIED / NOT VERIFIED / UNDECIDED, and the enclosure
  double cap = 0;
  Verdict cap_verdict = Verdict::kUndecided;
  double bos_lower = 0, bos_upper = std::numeric_limits<double>::infinity();
  std::string bos_status;
  long bos_boxes = 0;
  int bits = 0;
  // The worst case's upper end is finite and the cap VERIFIED.
  bool certified() const {
    return refused.empty() && cap_verdict == Verdict::kVerified && worst_upper < INFINITY;
  }
};

struct NormPathRun {
  int start = 0;
  double init_std = 0;
  double worst_case = 0;             // SEARCH(lower bound) on this model's E
  double bos_mean = 0, bos_min = 0;  // NUMERIC(53), probe set
  std::string stop_reason;
  int rounds = 0;
};

struct NormFrontierPoint {
  double delta = 0, ceiling = 0;
  double eps_search = 0;  // SEARCH(lower bound) on the frontier model's E
  double mean_bos = 0;    // NUMERIC(53)
  bool feasible = false, converged = false;
  int rounds = 0;
  double gamma = 1;       // A scaled by gamma for the certified cap
  ModelCertificate cert;  // of the scaled model
  Model<double> model;    // the scaled model
};

struct SinkFreeCandidate {
  std::string name;
  Model<double> model;  // entries exact in double (integers and b)
  Verdict verdict = Verdict::kUndecided;
  std::string evidence;  // "EXACT", "CERTIFIED", or "none"
  std::string reason;
  ModelCertificate cert;  // the certified route (not for the exact relu proof)
};

struct NormalizationStudy {
  NormalizationOptions options;
  std::string search_refused;  // non-empty: the minimax refused the kind (why)
  std::vector<NormPathRun> path;
  int best_start = -1;
  std::vector<NormFrontierPoint> frontier;  // by decreasing delta
  std::vector<SinkFreeCandidate> candidates;
  NormalizationVerdict verdict = NormalizationVerdict::kInconclusive;
  std::string evidence;  // of the verdict
  std::string reason;
  double seconds = 0;
};

NormalizationStudy run_normalization_study(const NormalizationOptions& options,
                                           const StudyProgress& progress = {});

// The certified bounds of `model` with the BOS cap `cap` (budgets from
// options; a bound that refuses the kind leaves `refused`).
ModelCertificate certify_model(const Model<double>& model, const Task& task, double cap,
                               const NormalizationOptions& options, double worst_claim = -1);

// A model claimed sink-free, checked: VERIFIED iff its certified worst case
// is <= kSinkFreeLoss and its certified max BOS <= kSinkFreeBos; NOT
// VERIFIED when a certified lower end refutes either; UNDECIDED otherwise
// (budget, or a bound that refuses the kind). relu models whose scores read
// the flags only are proved EXACT instead.
SinkFreeCandidate check_sink_free(const std::string& name, const Model<double>& model,
                                  const Task& task, const NormalizationOptions& options);

// The hand-built candidate of a kind (header), none for softmax.
std::optional<SinkFreeCandidate> construction_for(AttentionKind attention, int n);

// Sets verdict, evidence and reason from the rest (the header's rule);
// exposed so that tests can feed made-up studies.
void decide_normalization_verdict(NormalizationStudy& study);

nlohmann::json to_json(const NormalizationStudy& study, const RunInfo& info);

// The one-row summary: columns, and one study's row.
std::vector<Cell> normalization_columns();
std::vector<Cell> normalization_row(const NormalizationStudy& study);
// The per-kind table (one row per study).
Table normalization_table(const std::vector<NormalizationStudy>& studies);

// The per-kind table of a sweep of this study (theorems/studies/sweep.h): the merged
// sweep.json at `path` (one task and seed; a row per kind) laid out as
// normalization_table, named `name`, its caption naming the task, seed and
// options and ending with the grid's caption; *info (if given) is the
// sweep's provenance. InputError naming the file and the field unless it is
// the merged table of a normalization sweep over one task and seed.
Table normalization_table_from_sweep(const std::string& path, const std::string& name,
                                     RunInfo* info = nullptr);

// One configuration for a sweep (theorems/studies/sweep.h: SweepStudyResult): the
// study's JSON (with run_info, and the weight file of a sink-free solution
// under "sink_free_weights") and its summary, the row without the attention
// cell (the sweep prints its axes itself), one cell per
// normalization_summary_columns(). Every attention kind is accepted (gated
// gives its inconclusive row).
struct NormalizationEntry {
  nlohmann::json result;
  std::vector<Cell> row;
};
std::vector<std::string> normalization_summary_columns();
NormalizationEntry run_normalization_entry(AttentionKind attention, const Task& task,
                                           std::uint64_t seed, bool quick, const RunInfo& info,
                                           const StudyProgress& progress = {});

// The weight file of the study's sink-free solution, if any (metadata says
// what was certified and how to re-check it).
std::optional<WeightFile> sink_free_weights(const NormalizationStudy& study);

// Writes normalizations.{tex,csv,json} (the table), studies.json (every
// study) and sink_free_<kind>.json (weight files) into dir, each
// atomically; returns the paths.
std::vector<std::string> write_normalization_outputs(const std::vector<NormalizationStudy>& studies,
                                                     const RunInfo& info, const std::string& dir);

}  // namespace sinkcert::theorems::studies
