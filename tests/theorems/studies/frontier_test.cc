// SPDX-License-Identifier: MIT
#include "theorems/studies/frontier.h"

#include <doctest/doctest.h>

#include "src/constructions.h"

namespace sinkcert::theorems::studies {
namespace {

TEST_CASE("path and frontier options: the seed, the ceiling and the shared settings") {
  search::MinimaxOptions base;
  base.lm_iterations = 5;
  base.max_per_trigger = 7;
  base.compressed_rows = false;
  const search::MinimaxOptions path = path_minimax_options(1001, 1e-9, 17, 30, base);
  CHECK(path.seed == 1001);
  CHECK(path.adversary.seed == 1001);
  CHECK(path.target_loss == 1e-9);
  CHECK(path.max_rounds == 17);
  CHECK(path.time_limit_seconds == 30);
  CHECK(path.surrogate == search::Surrogate::kLeastSquares);
  CHECK_FALSE(path.bos_ceiling.has_value());
  CHECK(path.probes == nullptr);
  // the shared settings pass through
  CHECK(path.lm_iterations == 5);
  CHECK(path.max_per_trigger == 7);
  CHECK_FALSE(path.compressed_rows);

  const Task task{5, 4, TriggerRange::kPaper};
  const ProbeSet probes = make_probe_set(task, 10);
  FrontierSearch fs;
  fs.delta = 0.25;
  fs.rounds = 4;
  fs.time_limit = 60;
  fs.head = std::pair{1, 0};
  fs.surrogate = search::Surrogate::kLeastSquares;
  fs.target_loss = 1e-10;
  const search::MinimaxOptions capped = frontier_minimax_options(3, fs, probes, base);
  CHECK(capped.seed == 3);
  CHECK(capped.adversary.seed == 3);
  REQUIRE(capped.bos_ceiling.has_value());
  CHECK(*capped.bos_ceiling == 0.75);
  CHECK(capped.bos_ceiling_head == std::optional<std::pair<int, int>>(std::pair{1, 0}));
  CHECK(capped.probes == &probes);
  CHECK(capped.max_rounds == 4);
  CHECK(capped.time_limit_seconds == 60);
  CHECK(capped.target_loss == 1e-10);
  CHECK(capped.surrogate == search::Surrogate::kLeastSquares);
  CHECK(capped.lm_iterations == 5);
  // the defaults: Lawson on every head, no early stop
  const search::MinimaxOptions all = frontier_minimax_options(3, FrontierSearch{}, probes);
  CHECK(all.surrogate == search::Surrogate::kLawson);
  CHECK(all.target_loss == 0);
  CHECK_FALSE(all.bos_ceiling_head.has_value());
}

TEST_CASE("the bisection on gamma keeps the largest met value, and scales only the capped head") {
  // met below 0.3: 40 halvings end within 2^-40 below it
  const double g = largest_gamma(40, [](double x) { return x <= 0.3; });
  CHECK(g <= 0.3);
  CHECK(g > 0.3 - 1e-12);
  // never met above 0: gamma 0
  CHECK(largest_gamma(40, [](double x) { return x <= 0; }) == 0);
  // the bisection trusts monotonicity: a rule failing only at 0.5 ends
  // below it (0.5 out, then 0.25 and 0.375 met)
  CHECK(largest_gamma(3, [](double x) { return x != 0.5; }) == 0.375);

  const Model<double> deep = relu_residual_construction<double>(5, 2, 2);
  const Model<double> one = with_scaled_A(deep, 0.5, std::pair{1, 0});
  const Model<double> every = with_scaled_A(deep, 0.5, std::nullopt);
  for (int l = 0; l < 2; ++l) {
    for (int h = 0; h < 2; ++h) {
      const bool capped = l == 1 && h == 0;
      CHECK(one.layers[l][h].A == (capped ? 0.5 : 1.0) * deep.layers[l][h].A);
      CHECK(every.layers[l][h].A == 0.5 * deep.layers[l][h].A);
      CHECK(one.layers[l][h].M == deep.layers[l][h].M);
    }
  }
}

TEST_CASE("the warm start: the model itself when it meets the ceiling, else A scaled down") {
  const Task task{5, 4, TriggerRange::kPaper};
  const ProbeSet probes = make_probe_set(task, 20);
  // the sink family at beta = 6: mean BOS mass close to 1
  const Model<double> m = sink_family<double>(5, 6.0);
  const double bos = search::mean_probe_bos(m, probes);
  const auto below = [&](double ceiling) {
    return [&probes, ceiling](const Model<double>& x) {
      return search::mean_probe_bos(x, probes) <= ceiling;
    };
  };
  const Model<double> same = scaled_to_meet(m, below(1.0));
  CHECK(same.layers[0][0].A == m.layers[0][0].A);
  const Model<double> warm = scaled_to_meet(m, below(0.6));
  CHECK(bos > 0.6);
  const double warm_bos = search::mean_probe_bos(warm, probes);
  CHECK(warm_bos <= 0.6);
  // the largest such gamma: the BOS mass ends just below the ceiling (it
  // moves by far less than 1e-6 over the last interval of 2^-40)
  CHECK(warm_bos > 0.6 - 1e-6);
  CHECK(warm.layers[0][0].M == m.layers[0][0].M);
}

}  // namespace
}  // namespace sinkcert::theorems::studies
