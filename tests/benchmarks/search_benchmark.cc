// SPDX-License-Identifier: MIT
//
// search_benchmark: how fast the minimax drives the worst case down, against
// the paper's training recipe (a program, not a ctest test).
//
//   search_benchmark [--seed S] [--skip-large]
//
// 1. From the paper's init (normal std 0.02) at n = L = 16: wall time until
//    the worst case (SEARCH, lower bound) first reaches 5e-3, 1e-4, 1e-6,
//    1e-10 (least-squares exchange method, search/minimax.h).
// 2. Baseline: the paper's recipe (search/paper_recipe.h: Adam lr 1e-3,
//    batch 128, MSE, stop when one batch has l_inf < 5e-3); then the same
//    adversary measures the trained model's worst case.
// 3. Cost of one Jacobian evaluation of a residual row block (n residuals),
//    analytic vs Jets (ceres::DynamicAutoDiffCostFunction, stride 16).
// 4. Time of one joint LM round (round 2 of the exchange method, one input
//    per trigger position) as n and L grow; cases whose dense Jacobian would
//    exceed kMaxJacobianBytes are skipped and say so.
// Single thread throughout.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "search/adversary.h"
#include "search/minimax.h"
#include "search/paper_recipe.h"
#include "src/table_writer.h"
#include "tests/test_util.h"

using namespace sinkcert;
using namespace sinkcert::search;

namespace {

// A certified SEARCH lower bound printed rounded down (4 digits), so the
// printed number is still a lower bound.
std::string lower_bound_text(double x) {
  PrecisionScope scope(64);
  return format_down(Mpfr(x), 4);
}

// Dense Jacobians beyond this are not attempted (the machine is shared).
constexpr double kMaxJacobianBytes = 1.0e9;

void thresholds(std::uint64_t seed) {
  const Task task{16, 16, TriggerRange::kPaper};
  const Model<double> init = testing::random_model(16, AttentionKind::kSoftmax, 0.02, seed);
  MinimaxOptions o;
  o.seed = seed;
  o.adversary.seed = seed;
  o.target_loss = 1e-10;
  o.time_limit_seconds = 600;
  const double levels[] = {5e-3, 1e-4, 1e-6, 1e-10};
  double reached[4] = {-1, -1, -1, -1};
  const MinimaxResult r =
      minimax(init, task, o, [&](const MinimaxRecord& rec, const Model<double>&) {
        std::fprintf(stderr, "  minimax round %d: worst case %.3e, active set %d, %.1f s\n",
                     rec.round, rec.worst_case, rec.active_size, rec.elapsed);
        for (int k = 0; k < 4; ++k) {
          if (reached[k] < 0 && rec.worst_case <= levels[k]) reached[k] = rec.elapsed;
        }
      });
  std::printf("1. minimax (least squares + adversary), n = L = 16, paper init, seed %llu\n",
              static_cast<unsigned long long>(seed));
  for (int k = 0; k < 4; ++k) {
    if (reached[k] >= 0) {
      std::printf("   worst case (SEARCH, lower bound) <= %-7g after %7.1f s\n", levels[k],
                  reached[k]);
    } else {
      std::printf("   worst case (SEARCH, lower bound) <= %-7g not reached (%s)\n", levels[k],
                  r.stop_reason.c_str());
    }
  }
  std::printf("   final worst case %s SEARCH(lower bound), %zu rounds, %.1f s\n",
              lower_bound_text(r.worst.certified).c_str(), r.history.size(), r.seconds);

  PaperRecipeOptions p;
  p.seed = seed;
  const PaperRecipeResult b = train_paper_recipe(task, p);
  AdversaryOptions a;
  a.seed = seed;
  const AdversaryResult w = maximize_error(b.model, task, a);
  std::printf("2. paper recipe (Adam lr 1e-3, batch 128, MSE, stop at batch l_inf < 5e-3)\n");
  std::printf("   %s after %ld steps, %.1f s: batch l_inf %.3e, batch MSE %.3e NUMERIC(53)\n",
              b.reached ? "stopped" : "did NOT reach the criterion", b.steps, b.seconds,
              b.final_batch_linf, b.final_batch_mse);
  std::printf("   its worst case, same adversary: %s SEARCH(lower bound) (trigger %d, row %d)\n",
              lower_bound_text(w.best.certified).c_str(), w.best.trigger, w.best.position);
}

void jacobian_cost() {
  std::printf("3. one Jacobian evaluation of a row block (n residuals, 2 n^2 parameters)\n");
  for (int n : {8, 16, 32}) {
    const Task task{n, 16, TriggerRange::kPaper};
    const Model<double> m = testing::random_model(n, AttentionKind::kSoftmax, 0.5, 1);
    const JacobianTiming t = time_row_jacobian(m, task, n >= 32 ? 20 : 200);
    std::printf(
        "   n = %2d: analytic %8.2f us (%.3f us per residual), Jets %9.2f us (%.2f us per "
        "residual), ratio %.0fx, max |difference| %.1e\n",
        n, t.analytic_seconds * 1e6, t.analytic_seconds * 1e6 / n, t.jet_seconds * 1e6,
        t.jet_seconds * 1e6 / n, t.jet_seconds / t.analytic_seconds, t.max_difference);
  }
}

void scaling(bool skip_large) {
  std::printf("4. one joint LM round (8 LM iterations, one input per trigger position)\n");
  const std::pair<int, int> cases[] = {{8, 16}, {16, 16}, {32, 16}, {16, 8}, {16, 32}, {16, 64}};
  for (const auto& [n, L] : cases) {
    const double residuals = static_cast<double>(L - 1) * L * n;
    const double bytes = residuals * 2.0 * n * n * 8;
    if (bytes > kMaxJacobianBytes || (skip_large && (n > 16 || L > 32))) {
      std::printf("   n = %2d, L = %2d: skipped (dense Jacobian %.0f MB)\n", n, L, bytes / 1e6);
      continue;
    }
    const Task task{n, L, TriggerRange::kPaper};
    MinimaxOptions o;
    o.initial_per_trigger = 1;
    o.max_rounds = 2;
    o.max_per_trigger = 1;
    double t1 = 0, t2 = 0;
    minimax(testing::random_model(n, AttentionKind::kSoftmax, 0.02, 0), task, o,
            [&](const MinimaxRecord& rec, const Model<double>&) {
              (rec.round == 1 ? t1 : t2) = rec.elapsed;
            });
    std::printf("   n = %2d, L = %2d: %6.0f residuals x %4d parameters, round %.2f s\n", n, L,
                residuals, 2 * n * n, t2 - t1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seed = 0;
  bool skip_large = false;
  for (int k = 1; k < argc; ++k) {
    if (!std::strcmp(argv[k], "--seed") && k + 1 < argc) seed = std::stoull(argv[++k]);
    if (!std::strcmp(argv[k], "--skip-large")) skip_large = true;
  }
  thresholds(seed);
  jacobian_cost();
  scaling(skip_large);
  return 0;
}
