// SPDX-License-Identifier: MIT
//
// recipe_benchmark: training steps per second of the paper's recipe
// (search/paper_recipe.h: Adam, batch 128, MSE, n = L = 16) for the batched
// kernel against the generic reverse pass (forward_tape / forward_vjp per
// sample) in the same process (a program, not a ctest test).
//
//   recipe_benchmark [--seconds S] [--repeats K] [--train SECONDS] [--stop-linf X] [--seed N]
//
// Rate: one run of the recipe with no stopping criterion (stop_linf = 0) and
// a time limit of S seconds (default 2); rate = steps / seconds, K runs
// (default 3) per configuration, reported as median [min, max]. Ratios are
// medians over the generic path's median (1 thread). The batched kernel is
// measured in each compilation this build and CPU have (search/recipe_kernel.h:
// baseline, and avx2+fma where available); --train uses the recipe's default
// (avx2+fma where available). Beside them, the
// paper's PyTorch code at 2 x 2 on this machine kind (47 steps/s, measured
// once, outside this program) is quoted, not measured. The load average
// (/proc/loadavg) is printed before and after: the machine may be shared.
// Also printed: the largest relative difference between the batched and the
// generic gradients on one batch (each configuration).
// --train T (instead of the rates): the 2 x 2 recipe for up to T seconds (2
// threads) with a progress line every 10 s, then its batch l_inf and, per
// head, the minimum BOS mass over the non-trigger positions of 1000 probe
// sequences (src/bos_statistics.h, NUMERIC(53)).
// --stop-linf X (with --train): stop at a batch l_inf below X instead of the
// recipe's 5e-3. After training, the model's worst case is searched by the
// attack (search/attack.h, seed 0, one round; SEARCH, lower bound, certified
// at the witness), which the batch criterion is not.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "search/attack.h"
#include "search/paper_recipe.h"
#include "src/bos_statistics.h"

using namespace sinkcert;
using namespace sinkcert::search;

namespace {

constexpr double kPaperPytorchStepsPerSecond = 47;  // 2 x 2, n = L = 16, batch 128
// The recipe's own stop (PaperRecipeOptions::stop_linf).
const double kRecipeStop = PaperRecipeOptions().stop_linf;

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Rate {
  double median = 0, low = 0, high = 0;  // steps per wall-clock second
  double cpu_median = 0;                 // steps per second of process CPU time
};

Rate measure(const Task& task, int layers, int heads, bool generic, int threads, double seconds,
             int repeats, RecipeIsa isa = RecipeIsa::kBaseline) {
  std::vector<double> rates, cpu_rates;
  for (int k = 0; k < repeats; ++k) {
    const double c0 = cpu_seconds();
    PaperRecipeOptions o = paper_recipe_options(layers, heads);
    o.stop_linf = 0;
    o.time_limit_seconds = seconds;
    o.generic_gradient = generic;
    o.threads = threads;
    o.isa = isa;
    const PaperRecipeResult r = train_paper_recipe(task, o);
    cpu_rates.push_back(r.steps / (cpu_seconds() - c0));
    rates.push_back(r.steps / r.seconds);
  }
  std::sort(rates.begin(), rates.end());
  std::sort(cpu_rates.begin(), cpu_rates.end());
  return Rate{rates[rates.size() / 2], rates.front(), rates.back(),
              cpu_rates[cpu_rates.size() / 2]};
}

// max |batched - generic| / max |generic| over every head's dA and dM.
double gradient_difference(const Task& task, int layers, int heads, RecipeIsa isa) {
  const PaperRecipeOptions o = paper_recipe_options(layers, heads);
  const RecipeFactors f =
      init_factors(o.kind, o.attention, task.n, layers, heads, /*init_std=*/0.3, 1);
  const Model<double> m = model_of(f);
  TaskSampler sampler(task, 2);
  std::vector<Sample> batch;
  for (int s = 0; s < o.batch; ++s) batch.push_back(sampler.next());
  HeadGradients a, b;
  mse_and_gradient(m, batch, &a);
  mse_and_gradient_batched(m, batch, &b, nullptr, 2, isa);
  double diff = 0, scale = 0;
  for (int l = 0; l < layers; ++l) {
    for (int h = 0; h < heads; ++h) {
      diff = std::max({diff, (a[l][h].A - b[l][h].A).cwiseAbs().maxCoeff(),
                       (a[l][h].M - b[l][h].M).cwiseAbs().maxCoeff()});
      scale = std::max({scale, a[l][h].A.cwiseAbs().maxCoeff(), a[l][h].M.cwiseAbs().maxCoeff()});
    }
  }
  return diff / scale;
}

void train_run(const Task& task, double seconds, double stop_linf, std::uint64_t seed) {
  PaperRecipeOptions o = paper_recipe_options(2, 2);
  o.seed = seed;
  o.stop_linf = stop_linf;
  o.threads = 2;
  o.time_limit_seconds = seconds;
  o.progress = [](const PaperRecipeProgress& p) {
    std::printf("   step %ld, %.0f s: batch l_inf %.3e, batch MSE %.3e NUMERIC(53)\n", p.steps,
                p.seconds, p.batch_linf, p.batch_mse);
    std::fflush(stdout);
  };
  std::printf(
      "training 2 x 2, n = L = %d, lr %g, betas (%g, %g), batch %d, seed %llu, %.0f s, stop at "
      "batch l_inf < %g\n",
      task.n, o.lr, o.beta1, o.beta2, o.batch, static_cast<unsigned long long>(seed), seconds,
      stop_linf);
  const PaperRecipeResult r = train_paper_recipe(task, o);
  std::printf(
      "   %s after %ld steps, %.1f s (kernel %s): batch l_inf %.3e, batch MSE %.3e NUMERIC(53)\n",
      r.stop_reason.c_str(), r.steps, r.seconds, r.kernel.c_str(), r.final_batch_linf,
      r.final_batch_mse);
  const BosStatistics s = bos_statistics(r.model, make_probe_set(task));
  std::printf("   min BOS mass over non-trigger positions, 1000 probes, per head:");
  for (const auto& layer : s.heads) {
    for (const HeadBosStatistics& h : layer) {
      std::printf(" L%dH%d %.3f", h.layer, h.head, h.overall.min);
    }
  }
  std::printf(" NUMERIC(53); sampled l_inf max %.3e\n", s.error_max);
  // the batch criterion is not a worst case: the attack's
  const AttackResult a = attack(r.model, r.model.cast<Rational>(), task, AttackOptions{});
  std::printf("   worst case (attack, seed 0, one round): %s SEARCH(lower bound)\n",
              format_certified(a, a.best.certified, 4).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2, train_seconds = 0, stop_linf = kRecipeStop;
  int repeats = 3;
  std::uint64_t seed = 0;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--seconds")) seconds = std::stod(argv[a + 1]);
    if (!std::strcmp(argv[a], "--repeats")) repeats = std::stoi(argv[a + 1]);
    if (!std::strcmp(argv[a], "--train")) train_seconds = std::stod(argv[a + 1]);
    if (!std::strcmp(argv[a], "--seed")) seed = std::stoull(argv[a + 1]);
    if (!std::strcmp(argv[a], "--stop-linf")) stop_linf = std::stod(argv[a + 1]);
  }
  const Task task{16, 16, TriggerRange::kPaper};
  std::printf("load average before: %s\n", load_average().c_str());
  if (train_seconds > 0) {
    train_run(task, train_seconds, stop_linf, seed);
    std::printf("load average after: %s\n", load_average().c_str());
    return 0;
  }
  std::printf(
      "steps/s, n = L = 16, batch 128, %d runs of %.1f s each: median [min, max]; ratio = median "
      "/ generic median; PyTorch reference %.0f steps/s (2 x 2, quoted)\n",
      repeats, seconds, kPaperPytorchStepsPerSecond);
  // the batched kernel's compilations (search/recipe_kernel.h) this build and CPU run
  std::vector<RecipeIsa> isas{RecipeIsa::kBaseline};
  if (avx2_kernel_available()) isas.push_back(RecipeIsa::kAvx2);
  std::printf("batched kernels:");
  for (RecipeIsa isa : isas) std::printf(" %s", to_string(isa).c_str());
  std::printf("%s\n", avx2_kernel_available() ? "" : " (avx2+fma not built or not on this CPU)");
  for (const auto& [layers, heads] : {std::pair{1, 1}, std::pair{2, 2}}) {
    std::printf("%d x %d (batched vs generic gradient, max relative difference:", layers, heads);
    for (RecipeIsa isa : isas) {
      std::printf(" %s %.1e", to_string(isa).c_str(),
                  gradient_difference(task, layers, heads, isa));
    }
    std::printf(")\n");
    const Rate generic = measure(task, layers, heads, true, 1, seconds, repeats);
    std::printf(
        "   generic            1 thread : %8.1f [%8.1f, %8.1f]  ratio  1.0  per CPU s %8.1f\n",
        generic.median, generic.low, generic.high, generic.cpu_median);
    for (RecipeIsa isa : isas) {
      for (int threads : {1, 2}) {
        const Rate r = measure(task, layers, heads, false, threads, seconds, repeats, isa);
        std::printf(
            "   batched %-9s  %d thread%s: %8.1f [%8.1f, %8.1f]  ratio %4.1f  per CPU s %8.1f",
            to_string(isa).c_str(), threads, threads == 1 ? " " : "s", r.median, r.low, r.high,
            r.median / generic.median, r.cpu_median);
        if (layers == 2) std::printf("  (%.1fx PyTorch)", r.median / kPaperPytorchStepsPerSecond);
        std::printf("\n");
      }
    }
    std::fflush(stdout);
  }
  std::printf("load average after: %s\n", load_average().c_str());
  return 0;
}
