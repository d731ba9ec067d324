// SPDX-License-Identifier: MIT
#include "theorems/studies/frontier.h"

namespace sinkcert::theorems::studies {

search::MinimaxOptions seeded_minimax_options(std::uint64_t seed,
                                              const search::MinimaxOptions& base) {
  search::MinimaxOptions mo = base;
  mo.seed = seed;
  mo.adversary.seed = seed;
  return mo;
}

search::MinimaxOptions path_minimax_options(std::uint64_t seed, double target, int rounds,
                                            double time_limit, const search::MinimaxOptions& base) {
  search::MinimaxOptions mo = seeded_minimax_options(seed, base);
  mo.surrogate = search::Surrogate::kLeastSquares;
  mo.target_loss = target;
  mo.max_rounds = rounds;
  mo.time_limit_seconds = time_limit;
  mo.bos_ceiling.reset();
  mo.bos_ceiling_head.reset();
  mo.probes = nullptr;
  return mo;
}

search::MinimaxOptions frontier_minimax_options(std::uint64_t seed, const FrontierSearch& search,
                                                const ProbeSet& ceiling_probes,
                                                const search::MinimaxOptions& base) {
  search::MinimaxOptions mo = seeded_minimax_options(seed, base);
  mo.surrogate = search.surrogate;
  mo.target_loss = search.target_loss;
  mo.bos_ceiling = 1 - search.delta;
  mo.bos_ceiling_head = search.head;
  mo.probes = &ceiling_probes;
  mo.max_rounds = search.rounds;
  mo.time_limit_seconds = search.time_limit;
  return mo;
}

void take_worst_case(FrontierRecord& record) {
  record.eps = record.result.worst.certified;
  record.eps_double = record.result.worst.value;
  record.double_disagrees = record.result.worst.double_disagrees;
}

void run_frontier_point(const Model<double>& warm, const Task& task,
                        const search::MinimaxOptions& mo, FrontierRecord& record,
                        const search::MinimaxProgress& progress) {
  record.ceiling = 1 - record.delta;
  record.result = search::minimax(warm, task, mo, progress);
  record.feasible = record.result.feasible;
  record.converged = record.result.converged;
  take_worst_case(record);
}

Model<double> with_scaled_A(const Model<double>& m, double gamma,
                            std::optional<std::pair<int, int>> head) {
  Model<double> out = m;
  for (int l = 0; l < out.num_layers(); ++l) {
    for (int h = 0; h < out.num_heads(); ++h) {
      if (!head || *head == std::pair{l, h}) out.layers[l][h].A *= gamma;
    }
  }
  return out;
}

double largest_gamma(int steps, const std::function<bool(double)>& meets) {
  double lo = 0, hi = 1;
  for (int k = 0; k < steps; ++k) {
    const double mid = 0.5 * (lo + hi);
    (meets(mid) ? lo : hi) = mid;
  }
  return lo;
}

Model<double> scaled_to_meet(const Model<double>& m,
                             const std::function<bool(const Model<double>&)>& meets,
                             std::optional<std::pair<int, int>> head) {
  if (meets(m)) return m;
  const double gamma =
      largest_gamma(kBisectionSteps, [&](double g) { return meets(with_scaled_A(m, g, head)); });
  return with_scaled_A(m, gamma, head);
}

}  // namespace sinkcert::theorems::studies
