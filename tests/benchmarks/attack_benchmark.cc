// SPDX-License-Identifier: MIT
//
// attack_benchmark: the attack (search/attack.h: gradient adversary, then
// vertex search) against a plain projected-gradient baseline (a program, not
// a ctest test).
//
//   attack_benchmark [--seed S] [--range paper|reference-code|both]
//                    [--recipe-steps N] [--starts K] [--steps S]
//   attack_benchmark --bound-check [--seed S] [--boxes B]
//   attack_benchmark --bound16 [--seconds T] [--gap G]
//
// Models (n = L = 16): results/theorem1/path_start{0,1,2}.weights.json (the
// minimax's descent-path models; run from the source folder), and
// single-layer single-head softmax models trained by the paper's recipe
// (search/paper_recipe.h) with seeds 0..4 (stop at batch l_inf < 5e-3, at
// most --recipe-steps steps).
//
// PGD baseline, per trigger position j: K random starts C uniform in the box
// (the task's documented doubles), S steps of projected sign-gradient ascent
// on the currently worst term phi = sigma (f_{i,d} - y_{i,d}) (sigma its sign):
//   C <- clamp(C + eta_s sign(dphi/dC), -1, 1),  eta_s = 0.1 (1 - s/S) + 0.002,
// keeping the best iterate by its l_inf error (double). Its best witness is
// certified like the attack's (adversary.h, certify_witness), so the two
// columns compare certified SEARCH lower bounds.
// Printed per model: PGD worst case and time, the gradient adversary alone
// (the theorem1 study's adversary, defaults) and time, the attack and time,
// and the ratio attack / PGD. Single thread.
//
// --bound-check: the attack against the certified upper bound of the
// branch and bound (theorems/bounds/worst_case_bound.h) on the n = 5, L = 4 models
// of the committed hypothesis-edge runs (results/theorem1/edges/n5_L4_*),
// where the bound closes. Since attack <= E <= upper, the ratio
//   attack / upper  (<= 1)
// is a certified lower bound on how much of the true worst case the attack
// finds; the goal is >= 0.99. The bound runs to a relative gap of 0.2 % or
// B boxes (default 200000), whichever comes first.
//
// --bound16: the certified bound at the paper's size, n = L = 16, paper
// triggers: the three path models and the recipe's single-layer softmax and
// ReLU models of seed 0, each enclosed to a relative gap G (default 0.05)
// within T seconds (default 600) by bound_worst_case (its lower bound from
// the attack's witnesses). Printed per model: lower, upper (CERTIFIED), the
// relative gap, boxes, wall and CPU seconds, and the trigger whose own
// enclosure is widest (where the gap is).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "search/adversary.h"
#include "search/attack.h"
#include "search/paper_recipe.h"
#include "src/table_writer.h"
#include "src/weight_file.h"
#include "theorems/bounds/worst_case_bound.h"

using namespace sinkcert;
using namespace sinkcert::search;
using namespace sinkcert::theorems::bounds;

namespace {

// The recipe models are trained by the kernel's baseline compilation
// (search/recipe_kernel.h): the same models, bit for bit, on any x86-64, so
// the committed tables are reproducible everywhere.
constexpr RecipeIsa kBenchmarkModelKernel = RecipeIsa::kBaseline;

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A certified SEARCH lower bound printed rounded down (4 digits).
std::string lower_text(double x) {
  if (std::isnan(x)) return "nan";
  PrecisionScope scope(64);
  return format_down(Mpfr(x), 4);
}

double unit_double(std::mt19937_64& eng) { return static_cast<double>(eng() >> 11) * 0x1.0p-53; }

struct PgdOptions {
  int starts = 64;
  int steps = 200;
  std::uint64_t seed = 0;
};

// The baseline of the header; returns its best witness, certified.
Witness pgd(const Model<double>& model, const Task& task, const PgdOptions& o) {
  std::mt19937_64 eng(o.seed);
  const int rows = task.L - 1, cols = task.content_dim();
  Witness best;
  best.value = -1;
  for (int j : task.trigger_positions()) {
    for (int s0 = 0; s0 < o.starts; ++s0) {
      Matrix<double> C(rows, cols);
      for (int k = 0; k < rows; ++k)
        for (int c = 0; c < cols; ++c) C(k, c) = 2.0 * unit_double(eng) - 1.0;
      for (int s = 0; s <= o.steps; ++s) {
        const Witness w = score_error(model, task, j, C);
        if (w.value > best.value) best = w;
        if (s == o.steps) break;
        // the currently worst term and its sign
        RefinedTerm term{TermKind::kError, j, w.position, w.coordinate, 0, 1.0};
        Matrix<double> G;
        const double phi = term_value_and_gradient(model, task, term, C, nullptr);
        if (phi < 0) term.sign = -1.0;
        term_value_and_gradient(model, task, term, C, &G);
        const double eta = 0.1 * (1.0 - double(s) / o.steps) + 0.002;
        for (int k = 0; k < rows; ++k)
          for (int c = 0; c < cols; ++c) {
            const double g = G(k, c);
            const double step = g > 0 ? eta : (g < 0 ? -eta : 0.0);
            C(k, c) = std::clamp(C(k, c) + step, -1.0, 1.0);
          }
      }
    }
  }
  certify_witness(model, task, best);
  return best;
}

struct NamedModel {
  std::string name;
  Model<double> model;
};

void run_model(const NamedModel& m, const Task& task, const PgdOptions& po, std::uint64_t seed) {
  Clock::time_point t0 = Clock::now();
  const Witness p = pgd(m.model, task, po);
  const double pgd_s = since(t0);
  t0 = Clock::now();
  AdversaryOptions ao;
  ao.seed = seed;
  const AdversaryResult adv = maximize_error(m.model, task, ao);
  const double adv_s = since(t0);
  t0 = Clock::now();
  AttackOptions o;
  o.seed = seed;
  const AttackResult a = attack(m.model, m.model.cast<Rational>(), task, o);
  const double att_s = since(t0);
  std::printf(
      "%-16s %-14s PGD %10s %6.1f s | adversary %10s %6.1f s | attack %10s %6.1f s (j = %2d, "
      "%s) | attack/PGD %.3f\n",
      m.name.c_str(), to_string(task.range).c_str(), lower_text(p.certified).c_str(), pgd_s,
      lower_text(adv.best.certified).c_str(), adv_s, lower_text(a.best.certified).c_str(), att_s,
      a.best.trigger,
      to_string(
          a.found_by[std::find_if(a.per_trigger.begin(), a.per_trigger.end(),
                                  [&](const Witness& w) { return w.trigger == a.best.trigger; }) -
                     a.per_trigger.begin()])
          .c_str(),
      a.best.certified / p.certified);
  std::fflush(stdout);
}

// One row of --bound-check; returns attack / upper (rounded down).
double bound_check(const std::string& path, const Task& task, std::uint64_t seed, long boxes) {
  const WeightFile w = read_weight_file(path);
  const Model<Rational> exact = to_model<Rational>(w);
  const Model<double> model = to_model<double>(w);
  Clock::time_point t0 = Clock::now();
  AttackOptions o;
  o.seed = seed;
  const AttackResult a = attack(model, exact, task, o);
  const double att_s = since(t0);
  t0 = Clock::now();
  WorstCaseOptions bo;
  bo.relative_gap = 0.002;
  bo.max_boxes = boxes;
  bo.max_seconds = kNoTimeLimit;
  const WorstCaseBound b = bound_worst_case(exact, task, bo);
  const double bound_s = since(t0);
  // attack / upper, rounded down: a certified lower bound on attack / E
  const double ratio = (Mpfr(a.best.certified) / b.upper).convert_to<double>() * (1 - 1e-15);
  std::printf(
      "%-58s attack %10s %5.1f s | E in [%s, %s] CERTIFIED, gap %.1e, %6ld boxes %6.1f s | "
      "attack/upper %.4f%s\n",
      path.c_str(), lower_text(a.best.certified).c_str(), att_s, format_down(b.lower, 4).c_str(),
      format_up(b.upper, 4).c_str(), b.relative_gap, b.boxes, bound_s, ratio,
      ratio >= 0.99 ? "" : "  < 0.99");
  std::fflush(stdout);
  return ratio;
}

int run_bound_check(std::uint64_t seed, long boxes) {
  std::printf(
      "attack: SEARCH(lower bound), certified at the witness, rounded down; seed %llu\n"
      "E: branch and bound to a relative gap of 0.2 %% or %ld boxes\n",
      static_cast<unsigned long long>(seed), boxes);
  double worst = 1;
  for (const TriggerRange range : {TriggerRange::kPaper, TriggerRange::kReferenceCode}) {
    const std::string dir = "results/theorem1/edges/n5_L4_" + to_string(range) + "/";
    std::vector<std::string> names = {"path_start0", "path_start1", "path_start2"};
    for (const char* d : {"0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.3", "0.5"}) {
      names.push_back(std::string("frontier_delta_") + d);
    }
    for (const std::string& name : names) {
      worst = std::min(worst,
                       bound_check(dir + name + ".weights.json", Task{5, 4, range}, seed, boxes));
    }
  }
  std::printf("smallest attack/upper: %.4f (goal >= 0.99)\n", worst);
  return 0;
}

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

void bound16_row(const NamedModel& m, const Task& task, double seconds, double gap) {
  const Clock::time_point t0 = Clock::now();
  const double c0 = cpu_seconds();
  WorstCaseOptions bo;
  bo.relative_gap = gap;
  bo.max_seconds = seconds;
  bo.max_boxes = 1000000000;
  const WorstCaseBound b = bound_worst_case(m.model, task, bo);
  const double wall = since(t0), cpu = cpu_seconds() - c0;
  // the trigger whose own enclosure is widest relative to the overall lower bound
  const TriggerBound* widest = nullptr;
  for (const TriggerBound& t : b.per_trigger) {
    if (!widest || t.upper - t.lower > widest->upper - widest->lower) widest = &t;
  }
  std::printf("%-16s E in [%s, %s] CERTIFIED, gap %.2e, %7ld boxes, %6.1f s wall %6.1f s CPU",
              m.name.c_str(), format_down(b.lower, 4).c_str(), format_up(b.upper, 4).c_str(),
              b.relative_gap, b.boxes, wall, cpu);
  if (widest) {
    std::printf(" | widest: j = %d [%s, %s]", widest->trigger,
                format_down(widest->lower, 4).c_str(), format_up(widest->upper, 4).c_str());
  }
  std::printf(" | %s\n", b.stop_reason.c_str());
  std::fflush(stdout);
}

int run_bound16(double seconds, double gap) {
  const Task task{16, 16, TriggerRange::kPaper};
  std::vector<NamedModel> models;
  for (int s = 0; s < 3; ++s) {
    const std::string path = "results/theorem1/path_start" + std::to_string(s) + ".weights.json";
    models.push_back({"path_start" + std::to_string(s), to_model<double>(read_weight_file(path))});
  }
  for (const AttentionKind kind : {AttentionKind::kSoftmax, AttentionKind::kRelu}) {
    PaperRecipeOptions p;
    p.attention = kind;
    p.isa = kBenchmarkModelKernel;
    const PaperRecipeResult r = train_paper_recipe(task, p);
    std::printf("recipe %s seed 0: %s after %ld steps, batch l_inf %.3e NUMERIC(53)\n",
                to_string(kind).c_str(), r.reached ? "stopped" : "did NOT reach the stop", r.steps,
                r.final_batch_linf);
    models.push_back({"recipe_" + to_string(kind) + "0", r.model});
  }
  std::printf(
      "bound_worst_case, n = L = 16, paper triggers, to a relative gap of %g or %g s, "
      "branch and bound on one thread (the softmax vertex bound on all)\n",
      gap, seconds);
  for (const NamedModel& m : models) bound16_row(m, task, seconds, gap);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seed = 0;
  long recipe_steps = 200000;
  std::string ranges = "both";
  PgdOptions po;
  bool bound_mode = false, bound16_mode = false;
  long boxes = 200000;
  double seconds = 600, gap = 0.05;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--bound-check")) bound_mode = true;
    if (!std::strcmp(argv[a], "--bound16")) bound16_mode = true;
    if (!std::strcmp(argv[a], "--seconds") && a + 1 < argc) seconds = std::stod(argv[a + 1]);
    if (!std::strcmp(argv[a], "--gap") && a + 1 < argc) gap = std::stod(argv[a + 1]);
    if (!std::strcmp(argv[a], "--boxes") && a + 1 < argc) boxes = std::stol(argv[a + 1]);
  }
  for (int a = 1; a + 1 < argc; ++a) {
    if (!std::strcmp(argv[a], "--seed")) seed = std::stoull(argv[a + 1]);
    if (!std::strcmp(argv[a], "--range")) ranges = argv[a + 1];
    if (!std::strcmp(argv[a], "--recipe-steps")) recipe_steps = std::stol(argv[a + 1]);
    if (!std::strcmp(argv[a], "--starts")) po.starts = std::stoi(argv[a + 1]);
    if (!std::strcmp(argv[a], "--steps")) po.steps = std::stoi(argv[a + 1]);
  }
  po.seed = seed;
  if (bound_mode) return run_bound_check(seed, boxes);
  if (bound16_mode) return run_bound16(seconds, gap);
  std::vector<NamedModel> models;
  for (int s = 0; s < 3; ++s) {
    const std::string path = "results/theorem1/path_start" + std::to_string(s) + ".weights.json";
    models.push_back({"path_start" + std::to_string(s), to_model<double>(read_weight_file(path))});
  }
  const Task recipe_task{16, 16, TriggerRange::kPaper};
  for (std::uint64_t s = 0; s < 5; ++s) {
    PaperRecipeOptions p;
    p.seed = s;
    p.max_steps = recipe_steps;
    p.isa = kBenchmarkModelKernel;
    const PaperRecipeResult r = train_paper_recipe(recipe_task, p);
    std::printf("recipe seed %llu: %s after %ld steps, %.1f s, batch l_inf %.3e NUMERIC(53)\n",
                static_cast<unsigned long long>(s),
                r.reached ? "stopped" : "did NOT reach batch l_inf < 5e-3", r.steps, r.seconds,
                r.final_batch_linf);
    models.push_back({"recipe_seed" + std::to_string(s), r.model});
  }
  std::printf(
      "worst cases: SEARCH(lower bound), certified at the witness, rounded down; PGD %d starts x "
      "%d steps per trigger; seed %llu\n",
      po.starts, po.steps, static_cast<unsigned long long>(seed));
  for (const TriggerRange range : {TriggerRange::kPaper, TriggerRange::kReferenceCode}) {
    if (ranges != "both" && ranges != to_string(range)) continue;
    for (const NamedModel& m : models) run_model(m, Task{16, 16, range}, po, seed);
  }
  return 0;
}
