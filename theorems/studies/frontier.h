// SPDX-License-Identifier: MIT
//
// The descent path and the loss-sink frontier, as the Theorem 1, Theorem 2
// and normalization studies search them (search/minimax.h):
//
//  - a path start: the least-squares exchange method from an init, seeded
//    with one seed for its active sets and its adversary, run to a target
//    worst case within a round cap (path_minimax_options);
//  - a frontier point at delta: the minimax with the BOS ceiling
//        (BOS statistic of the capped heads) <= 1 - delta
//    on a probe set (FrontierSearch, frontier_minimax_options), warm-started
//    from the best path model with the capped heads' A scaled by the largest
//    gamma in [0, 1] that meets the ceiling (scaled_to_meet: bisection, the
//    path model is saturated, where the ceiling has no gradient);
//  - its record (FrontierRecord): the worst case E_search of the best
//    feasible model, SEARCH(lower bound) on THAT model's E certified at the
//    adversary's witness, and no bound on eps*(delta) (kFrontierPointMeaning).
//
// Each study adds its own statistics and its own progress lines; the
// searches themselves, and hence their results for a seed, are these.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "search/minimax.h"
#include "src/bos_statistics.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert::theorems::studies {

// Halvings of a warm start's bisection on gamma: gamma within 2^-40
// (~9e-13) of the ceiling's crossing, finer than any change of the warm
// start that the minimax's first round can see.
constexpr int kBisectionSteps = 40;

// `base` (a study's shared settings: active-set sizes, LM iterations,
// threads, compressed rows) with `seed` for the active sets and the
// adversary alike.
search::MinimaxOptions seeded_minimax_options(std::uint64_t seed,
                                              const search::MinimaxOptions& base = {});

// A path start: seeded_minimax_options(seed, base), least squares, stopped
// at worst case `target`, after `rounds` rounds or `time_limit` seconds.
search::MinimaxOptions path_minimax_options(std::uint64_t seed, double target, int rounds,
                                            double time_limit,
                                            const search::MinimaxOptions& base = {});

// One frontier point's capped search.
struct FrontierSearch {
  double delta = 0;  // the ceiling is 1 - delta
  // Lawson (the minimax of E under the cap), or least squares when the
  // capped value may reach 0 (one head of several)
  search::Surrogate surrogate = search::Surrogate::kLawson;
  double target_loss = 0;  // 0: no early stop on the worst case
  // the capped head (layer, head); none: every head
  std::optional<std::pair<int, int>> head;
  int rounds = 0;
  double time_limit = 0;  // seconds (a safety limit)
};

// seeded_minimax_options(seed, base) with the search's surrogate, target,
// rounds and time limit, and the ceiling 1 - delta on `ceiling_probes`
// (which must outlive the search).
search::MinimaxOptions frontier_minimax_options(std::uint64_t seed, const FrontierSearch& search,
                                                const ProbeSet& ceiling_probes,
                                                const search::MinimaxOptions& base = {});

// What every study records of a frontier point.
struct FrontierRecord {
  double delta = 0, ceiling = 0;
  // E_search of the best feasible model: SEARCH(lower bound) on that
  // model's E, certified at the witness (not a bound on eps*(delta))
  double eps = 0;
  double eps_double = 0;          // the adversary's double value, NUMERIC(53)
  bool double_disagrees = false;  // eps and eps_double differ in the first digit
  bool feasible = false;
  bool converged = false;
  search::MinimaxResult result;
};

// Sets eps, eps_double and double_disagrees from record.result.worst.
void take_worst_case(FrontierRecord& record);

// The frontier point `record.delta` (its ceiling set to 1 - delta): the
// minimax with options `mo` from `warm`, then the record's fields from its
// result. Exceptions of the minimax pass through (the record then holds
// delta and ceiling only).
void run_frontier_point(const Model<double>& warm, const Task& task,
                        const search::MinimaxOptions& mo, FrontierRecord& record,
                        const search::MinimaxProgress& progress = {});

// m with the A of the capped head (layer, head) multiplied by gamma; none:
// of every head.
Model<double> with_scaled_A(const Model<double>& m, double gamma,
                            std::optional<std::pair<int, int>> head);

// The largest gamma in [0, 1] that `meets`, by bisection: `steps` halvings
// of [lo, hi] = [0, 1], keeping lo met (meets must be monotone: true at 0).
double largest_gamma(int steps, const std::function<bool(double)>& meets);

// m when `meets(m)`; else m with the capped heads' A scaled by
// largest_gamma(kBisectionSteps, ...) of meets(with_scaled_A(m, gamma, head)).
Model<double> scaled_to_meet(const Model<double>& m,
                             const std::function<bool(const Model<double>&)>& meets,
                             std::optional<std::pair<int, int>> head = std::nullopt);

}  // namespace sinkcert::theorems::studies
