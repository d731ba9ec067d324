// SPDX-License-Identifier: MIT
//
// Benchmark of the Theorem 1 study (theorems/studies/theorem1_study.h), not a ctest
// test: the same study (default n = L = 16, seed 0, the options of
// `sinkcert theorem1`) run in one process on 1 thread and then on 2, with
//   wall seconds and process CPU seconds (user + system, all threads) of each,
//   speed-up = wall(first run) / wall(run),
//   the wall time of each phase and the CPU seconds of each task (the profile),
//   whether the two studies are identical (their JSON without time keys),
//   their verdict and frontier.
// With --baseline-per-row the first run is the study as it was before the
// compressed least-squares block (MinimaxOptions::compressed_rows = false:
// one Ceres block per row, J^T J formed from the dense Jacobian) on 1
// thread, so that the speed-ups are against it; its study differs from the
// others by rounding only (its frontier is printed beside theirs).
// On a machine shared with other processes wall times are inflated; CPU
// seconds are not, and the load average is printed beside them.
// Usage: theorem1_benchmark [--n N] [--L L] [--seed S] [--quick] [--threads-list 1,2]
//                           [--baseline-per-row]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "src/elapsed.h"
#include "src/run_info.h"
#include "theorems/studies/theorem1_study.h"

namespace {

using namespace sinkcert;

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto s = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); };
  return s(u.ru_utime) + s(u.ru_stime);
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

struct Run {
  int threads = 1;
  bool compressed = true;
  double wall = 0, cpu = 0;
  theorems::studies::Theorem1Study study;
};

}  // namespace

int main(int argc, char** argv) {
  int n = 16, L = 16;
  std::uint64_t seed = 0;
  bool quick = false;
  std::vector<int> thread_counts = {1, 2};
  bool baseline_per_row = false;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    const bool has_value = a + 1 < argc;
    if (arg == "--n" && has_value) {
      n = std::atoi(argv[++a]);
    } else if (arg == "--L" && has_value) {
      L = std::atoi(argv[++a]);
    } else if (arg == "--seed" && has_value) {
      seed = std::strtoull(argv[++a], nullptr, 10);
    } else if (arg == "--quick") {
      quick = true;
    } else if (arg == "--baseline-per-row") {
      baseline_per_row = true;
    } else if (arg == "--threads-list" && has_value) {
      thread_counts.clear();
      std::stringstream list(argv[++a]);
      for (std::string t; std::getline(list, t, ',');)
        thread_counts.push_back(std::atoi(t.c_str()));
    } else {
      std::fprintf(stderr,
                   "usage: theorem1_benchmark [--n N] [--L L] [--seed S] [--quick] "
                   "[--threads-list 1,2] [--baseline-per-row]\n");
      return 2;
    }
  }
  const Task task{n, L, TriggerRange::kPaper};
  std::printf("theorem1 benchmark: n = %d, L = %d, seed %llu%s, thread counts", n, L,
              static_cast<unsigned long long>(seed), quick ? " (quick)" : "");
  for (int t : thread_counts) std::printf(" %d", t);
  std::printf("\n");
  std::fflush(stdout);
  // (threads, compressed) of every run, the baseline first
  std::vector<std::pair<int, bool>> plan;
  if (baseline_per_row) plan.emplace_back(1, false);
  for (int threads : thread_counts) plan.emplace_back(threads, true);
  std::vector<Run> runs;
  for (const auto& [threads, compressed] : plan) {
    theorems::studies::Theorem1Options o =
        quick ? theorems::studies::quick_options(task, seed) : theorems::studies::Theorem1Options{};
    o.task = task;
    o.seed = seed;
    o.threads = threads;
    o.compressed_rows = compressed;
    Run r;
    r.threads = threads;
    r.compressed = compressed;
    const char* form = compressed ? "compressed" : "per-row";
    const double cpu0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    r.study = theorems::studies::run_theorem1_study(o, [threads, form](const std::string& line) {
      std::fprintf(stderr, "theorem1_benchmark (%s, %d threads): %s\n", form, threads,
                   line.c_str());
    });
    r.wall = seconds_since(t0);
    r.cpu = process_cpu_seconds() - cpu0;
    std::printf("\n%s, %d thread(s): wall %.1f s, CPU %.1f s (user + system), load average %s\n",
                form, threads, r.wall, r.cpu, load_average().c_str());
    for (const auto& [phase, seconds] : r.study.phase_seconds) {
      std::printf("  phase %-22s wall %8.1f s\n", phase.c_str(), seconds);
    }
    for (const theorems::studies::TaskTime& t : r.study.profile) {
      std::printf("  task  %-20s %-26s CPU %8.1f s\n", t.phase.c_str(), t.task.c_str(),
                  t.cpu_seconds);
    }
    std::fflush(stdout);
    runs.push_back(std::move(r));
  }
  RunInfo info;
  info.command_line = "theorem1_benchmark";
  info.seed = seed;
  info.precision = "double";
  const Run& first = runs.front();
  // the first compressed run: the reference of "identical"
  const Run& ref = baseline_per_row && runs.size() > 1 ? runs[1] : first;
  for (const Run& r : runs) {
    std::printf(
        "\n%s, %d thread(s): verdict %s; frontier (worst case of the frontier model, "
        "SEARCH lower bound):\n",
        r.compressed ? "compressed" : "per-row", r.threads,
        theorems::studies::to_string(r.study.verdict).c_str());
    for (const theorems::studies::FrontierPoint& p : r.study.frontier) {
      std::printf("  delta %-6g %s (%s)\n", p.delta,
                  theorems::studies::format_bound(p.eps, true, 5).c_str(),
                  p.final_certification.attacked ? p.final_certification.found_by.c_str()
                                                 : "minimax adversary");
    }
    if (&r == &ref) break;
  }
  const std::string reference =
      theorems::studies::without_time_keys(theorems::studies::to_json(ref.study, info)).dump();
  for (const Run& r : runs) {
    const bool same =
        theorems::studies::without_time_keys(theorems::studies::to_json(r.study, info)).dump() ==
        reference;
    // the largest relative difference of a frontier point from the reference's
    double frontier_change = 0;
    for (std::size_t k = 0; k < r.study.frontier.size() && k < ref.study.frontier.size(); ++k) {
      const double a = r.study.frontier[k].eps, b = ref.study.frontier[k].eps;
      frontier_change = std::max(frontier_change, std::abs(a - b) / b);
    }
    std::printf(
        "%s, %d thread(s): wall %.1f s, CPU %.1f s, speed-up over the first run %.2fx, "
        "study identical to the first compressed run: %s (largest frontier change %.1f%%)\n",
        r.compressed ? "compressed" : "per-row", r.threads, r.wall, r.cpu, first.wall / r.wall,
        same ? "yes" : "NO", 100 * frontier_change);
  }
  return 0;
}
