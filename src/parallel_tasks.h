// SPDX-License-Identifier: MIT
//
// Independent tasks on a few threads, with a result that does not depend on
// how many:
//   run_tasks(count, threads, f) calls f(0), ..., f(count - 1), each exactly
//   once, on min(threads, count) threads (the calling thread is one of
//   them), handing out the indices in increasing order as threads become
//   free, and returns when all have finished.
// Each f(k) must write only its own outputs (slot k of a vector the caller
// gathers in index order afterwards) and draw its random numbers from its
// own seed; then the outputs are the same for every thread count. If tasks
// throw, no further task is started and the exception of the lowest index
// is rethrown once every thread has stopped.
// Per-thread CPU time (thread_cpu_seconds) measures a task's own work on a
// machine shared with other processes, where wall time does not.
#pragma once

#include <time.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "src/thread_caches.h"

namespace sinkcert {

// Threads worth starting by default: the hardware's concurrency (1 when
// unknown).
inline int default_thread_count() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

inline void run_tasks(int count, int threads, const std::function<void(int)>& task) {
  if (count <= 0) return;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(count));
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  const auto work = [&] {
    for (int k = next++; k < count && !failed; k = next++) {
      try {
        task(k);
      } catch (...) {
        errors[static_cast<std::size_t>(k)] = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min(threads, count); ++t) {
    pool.emplace_back([&] {
      work();
      release_thread_caches();
    });
  }
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// CPU seconds the calling thread has used (user + system).
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace sinkcert
