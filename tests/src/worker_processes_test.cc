// SPDX-License-Identifier: MIT
#include "src/worker_processes.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/input_error.h"
#include "src/scalar_traits.h"

namespace sinkcert {
namespace {

TEST_CASE("results in slot order, lines tagged with their job, for any number of workers") {
  for (int workers : {1, 2, 3, 8}) {
    std::vector<std::pair<int, std::string>> lines;
    int idle_calls = 0;
    const auto results = run_worker_processes(
        5, workers,
        [](int k, const WorkerSay& say) {
          say("job " + std::to_string(k) + "\nstarted");  // a line break becomes a space
          // every job in a process of its own, none in this one
          return std::to_string(k * k) + ":" + std::to_string(::getpid());
        },
        [&](int k, const std::string& line) { lines.emplace_back(k, line); },
        [&] { ++idle_calls; });
    REQUIRE(results.size() == 5);
    std::set<std::string> pids;
    for (int k = 0; k < 5; ++k) {
      const std::string& r = results[static_cast<std::size_t>(k)];
      CHECK(r.substr(0, r.find(':')) == std::to_string(k * k));
      const std::string pid = r.substr(r.find(':') + 1);
      CHECK(pid != std::to_string(::getpid()));
      pids.insert(pid);
    }
    CHECK(pids.size() == 5);
    CHECK(lines.size() == 5);
    for (const auto& [k, line] : lines) CHECK(line == "job " + std::to_string(k) + " started");
    CHECK(idle_calls >= 1);
  }
  CHECK(run_worker_processes(0, 2, [](int, const WorkerSay&) { return std::string("x"); }).empty());
}

TEST_CASE("a job's global state stays in its process (the reason for processes)") {
  // MPFR's default precision is process-wide in Boost 1.74: a job that sets
  // it changes neither its siblings nor the parent
  const unsigned before = Mpfr::default_precision();
  const auto results = run_worker_processes(4, 2, [before](int k, const WorkerSay&) {
    const bool untouched = Mpfr::default_precision() == before;
    Mpfr::default_precision(100 + 50 * static_cast<unsigned>(k));
    return std::string(untouched ? "untouched" : "changed");
  });
  for (const std::string& r : results) CHECK(r == "untouched");
  CHECK(Mpfr::default_precision() == before);
}

TEST_CASE("failures: an InputError comes back as itself, the lowest index wins, a crash is named") {
  try {
    run_worker_processes(4, 2, [](int k, const WorkerSay&) -> std::string {
      if (k == 1) throw InputError("a.json", "weights[0]", "a matrix");
      if (k == 2) throw std::runtime_error("second");
      return "ok";
    });
    FAIL("a failing job passed");
  } catch (const InputError& e) {
    CHECK(e.file() == "a.json");
    CHECK(e.field() == "weights[0]");
    CHECK(e.expected() == "a matrix");
  }
  try {
    run_worker_processes(2, 1, [](int k, const WorkerSay&) -> std::string {
      if (k == 0) throw std::runtime_error("it broke");
      return "never started";
    });
    FAIL("a failing job passed");
  } catch (const InputError&) {
    FAIL("not an InputError");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "it broke");
  }
  try {
    run_worker_processes(1, 1, [](int, const WorkerSay& say) -> std::string {
      say("about to die");
      ::raise(SIGKILL);
      return "unreachable";
    });
    FAIL("a killed worker passed");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find("job 0") != std::string::npos);
    CHECK(what.find("killed by signal 9") != std::string::npos);
  }
}

}  // namespace
}  // namespace sinkcert
