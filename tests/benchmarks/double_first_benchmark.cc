// SPDX-License-Identifier: MIT
//
// double_first_benchmark: one box's certified bound in MPFI at 128 bits
// (bound_box, the baseline) against the same kernel in outward-rounded
// double intervals (bound_box_double_first, src/double_interval.h), on
// whole-trigger content boxes, the boxes of verify bound's first pass (a
// program, not a ctest test).
//
//   double_first_benchmark [--triggers K] [--gap G] FILE...
//
// For each single-layer weight file (its task's L and trigger convention),
// K triggers spread over its trigger positions (first, last and between;
// default 3): the MPFI bound and its wall time, the double-first bound, its
// time and whether double was kept, the ratio of the times
//   speedup = MPFI seconds / double-first seconds,
// and the relative difference of the two upper ends (both CERTIFIED; they
// differ by rounding). G is the gap the double-first rule is asked for
// (default 0.05, verify bound's common --gap). Single thread.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "src/weight_file.h"
#include "theorems/bounds/worst_case_bound.h"

using namespace sinkcert;
using namespace sinkcert::theorems::bounds;

int main(int argc, char** argv) {
  int triggers_asked = 3;
  double gap = 0.05;
  std::vector<std::string> files;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--triggers") && a + 1 < argc) {
      triggers_asked = std::atoi(argv[++a]);
    } else if (!std::strcmp(argv[a], "--gap") && a + 1 < argc) {
      gap = std::atof(argv[++a]);
    } else {
      files.push_back(argv[a]);
    }
  }
  if (files.empty() || triggers_asked < 1) {
    std::fprintf(stderr, "usage: double_first_benchmark [--triggers K] [--gap G] FILE...\n");
    return 2;
  }
  std::printf(
      "double_first_benchmark: one whole-trigger box, MPFI 128 bits against double "
      "intervals first (gap %g), single thread; both upper ends CERTIFIED\n",
      gap);
  std::printf("%-28s %3s %3s %7s | %12s %9s | %12s %9s %6s | %8s %9s\n", "model", "n", "L",
              "trigger", "MPFI upper", "MPFI s", "double upper", "double s", "kept", "speedup",
              "rel diff");
  double total_mpfi = 0, total_double = 0;
  for (const std::string& path : files) {
    const WeightFile w = read_weight_file(path);
    Task task;
    task.n = w.n;
    task.L = w.task && w.task->L ? *w.task->L : 16;
    task.range = w.task && w.task->range ? *w.task->range : TriggerRange::kPaper;
    PrecisionScope scope(128);
    const Model<Mpfi> model = to_model<Mpfi>(w);
    const std::vector<int> all = task.trigger_positions();
    std::vector<int> picked;
    for (int t = 0; t < triggers_asked && t < static_cast<int>(all.size()); ++t) {
      const int index =
          triggers_asked == 1 ? 0 : static_cast<int>(t * (all.size() - 1) / (triggers_asked - 1));
      if (picked.empty() || picked.back() != all[index]) picked.push_back(all[index]);
    }
    std::string name = path.substr(path.find_last_of('/') + 1);
    if (name.size() > 28) name = name.substr(0, 28);
    for (int j : picked) {
      const ContentBox box = full_content_box(task, j);
      auto t0 = std::chrono::steady_clock::now();
      const BoxBound slow = bound_box(model, task, box);
      const double slow_s = seconds_since(t0);
      t0 = std::chrono::steady_clock::now();
      bool kept = false;
      const BoxBound fast = bound_box_double_first(model, task, box, gap, &kept);
      const double fast_s = seconds_since(t0);
      total_mpfi += slow_s;
      total_double += fast_s;
      const double su = slow.upper.convert_to<double>(), fu = fast.upper.convert_to<double>();
      std::printf("%-28s %3d %3d %7d | %12.5e %9.3f | %12.5e %9.3f %6s | %8.2f %9.2e\n",
                  name.c_str(), task.n, task.L, j, su, slow_s, fu, fast_s, kept ? "yes" : "no",
                  slow_s / fast_s, su > 0 ? (fu - su) / su : 0.0);
      std::fflush(stdout);
    }
  }
  std::printf("total: MPFI %.2f s, double first %.2f s, speedup %.2f\n", total_mpfi, total_double,
              total_mpfi / total_double);
  return 0;
}
