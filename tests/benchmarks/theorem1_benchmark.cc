// SPDX-License-Identifier: MIT
//
// Benchmark of the Theorem 1 study (theorems/theorem1_study.h), not a ctest
// test: the same study (default n = L = 16, seed 0, the options of
// `sinkcert theorem1`) run in one process on 1 thread and then on 2, with
//   wall seconds and process CPU seconds (user + system, all threads) of each,
//   speed-up = wall(1 thread) / wall(2 threads),
//   the wall time of each phase and the CPU seconds of each task (the profile),
//   whether the two studies are identical (their JSON without time keys),
//   their verdict and frontier.
// On a machine shared with other processes wall times are inflated; CPU
// seconds are not, and the load average is printed beside them.
// Usage: theorem1_benchmark [--n N] [--L L] [--seed S] [--quick] [--threads-list 1,2]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "src/elapsed.h"
#include "src/run_info.h"
#include "theorems/theorem1_study.h"

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
  double wall = 0, cpu = 0;
  theorems::Theorem1Study study;
};

}  // namespace

int main(int argc, char** argv) {
  int n = 16, L = 16;
  std::uint64_t seed = 0;
  bool quick = false;
  std::vector<int> thread_counts = {1, 2};
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
    } else if (arg == "--threads-list" && has_value) {
      thread_counts.clear();
      std::stringstream list(argv[++a]);
      for (std::string t; std::getline(list, t, ',');)
        thread_counts.push_back(std::atoi(t.c_str()));
    } else {
      std::fprintf(stderr,
                   "usage: theorem1_benchmark [--n N] [--L L] [--seed S] [--quick] "
                   "[--threads-list 1,2]\n");
      return 2;
    }
  }
  const Task task{n, L, TriggerRange::kPaper};
  std::printf("theorem1 benchmark: n = %d, L = %d, seed %llu%s, thread counts", n, L,
              static_cast<unsigned long long>(seed), quick ? " (quick)" : "");
  for (int t : thread_counts) std::printf(" %d", t);
  std::printf("\n");
  std::fflush(stdout);
  std::vector<Run> runs;
  for (int threads : thread_counts) {
    theorems::Theorem1Options o =
        quick ? theorems::quick_options(task, seed) : theorems::Theorem1Options{};
    o.task = task;
    o.seed = seed;
    o.threads = threads;
    Run r;
    r.threads = threads;
    const double cpu0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    r.study = theorems::run_theorem1_study(o, [threads](const std::string& line) {
      std::fprintf(stderr, "theorem1_benchmark (%d threads): %s\n", threads, line.c_str());
    });
    r.wall = seconds_since(t0);
    r.cpu = process_cpu_seconds() - cpu0;
    std::printf("\n%d thread(s): wall %.1f s, CPU %.1f s (user + system), load average %s\n",
                threads, r.wall, r.cpu, load_average().c_str());
    for (const auto& [phase, seconds] : r.study.phase_seconds) {
      std::printf("  phase %-22s wall %8.1f s\n", phase.c_str(), seconds);
    }
    for (const theorems::TaskTime& t : r.study.profile) {
      std::printf("  task  %-20s %-26s CPU %8.1f s\n", t.phase.c_str(), t.task.c_str(),
                  t.cpu_seconds);
    }
    std::fflush(stdout);
    runs.push_back(std::move(r));
  }
  const RunInfo info{"theorem1_benchmark", "", "", seed, "double"};
  const Run& first = runs.front();
  std::printf("\nverdict %s; frontier (worst case of the frontier model, SEARCH lower bound):\n",
              theorems::to_string(first.study.verdict).c_str());
  for (const theorems::FrontierPoint& p : first.study.frontier) {
    std::printf("  delta %-6g %s (%s)\n", p.delta, theorems::format_bound(p.eps, true, 5).c_str(),
                p.final_certification.attacked ? p.final_certification.found_by.c_str()
                                               : "minimax adversary");
  }
  const std::string reference =
      theorems::without_time_keys(theorems::to_json(first.study, info)).dump();
  for (const Run& r : runs) {
    const bool same =
        theorems::without_time_keys(theorems::to_json(r.study, info)).dump() == reference;
    std::printf(
        "%d thread(s): wall %.1f s, CPU %.1f s, speed-up over %d thread(s) %.2fx, "
        "study identical: %s\n",
        r.threads, r.wall, r.cpu, first.threads, first.wall / r.wall, same ? "yes" : "NO");
  }
  return 0;
}
