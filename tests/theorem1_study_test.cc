// SPDX-License-Identifier: MIT
#include "theorems/theorem1_study.h"

#include <doctest/doctest.h>

#include <filesystem>

namespace sinkcert::theorems {
namespace {

Theorem1Study made_up(const std::vector<std::pair<double, double>>& delta_eps) {
  Theorem1Study st;
  PathRun run;
  run.result.worst.value = 1e-11;
  HeadBosStatistics h;
  h.overall.mean = 1 - 1e-11;
  h.overall.count = 1000;
  run.stats.heads = {{h}};
  st.runs.push_back(run);
  for (const auto& [delta, eps] : delta_eps) {
    FrontierPoint p;
    p.delta = delta;
    p.ceiling = 1 - delta;
    p.eps = eps;
    p.bos_mean = 1 - delta;
    p.feasible = true;
    st.frontier.push_back(p);
  }
  return st;
}

TEST_CASE("the verdict rule: consistent, counterexample candidate, inconclusive") {
  Theorem1Study good = made_up({{0.5, 0.6}, {0.1, 0.15}, {0.01, 0.02}});
  decide_verdict(good);
  CHECK(good.verdict == "CONSISTENT");
  // a feasible model with a tiny loss and no sink
  Theorem1Study bad = made_up({{0.5, 0.6}, {0.1, 1e-9}, {0.01, 0.02}});
  decide_verdict(bad);
  CHECK(bad.verdict == "COUNTEREXAMPLE CANDIDATE");
  CHECK(bad.reason.find("delta 0.1") != std::string::npos);
  // eps growing as delta shrinks: the search is not trustworthy
  Theorem1Study odd = made_up({{0.5, 0.1}, {0.1, 0.5}, {0.01, 0.02}});
  decide_verdict(odd);
  CHECK(odd.verdict == "INCONCLUSIVE");
  // a path that never formed a sink
  Theorem1Study nosink = made_up({{0.5, 0.6}, {0.1, 0.15}});
  nosink.runs[0].stats.heads[0][0].overall.mean = 0.5;
  decide_verdict(nosink);
  CHECK(nosink.verdict == "INCONCLUSIVE");
  // L = 2: no non-trigger position, nothing to test (not a counterexample)
  Theorem1Study vacuous = made_up({{0.5, 1e-16}});
  vacuous.runs[0].stats.heads[0][0].overall.count = 0;
  decide_verdict(vacuous);
  CHECK(vacuous.verdict == "NOT APPLICABLE");
}

TEST_CASE("a small study runs end to end and writes its files") {
  Theorem1Options o = quick_options(Task{5, 4, TriggerRange::kPaper}, 1);
  o.starts = 1;
  o.deltas = {0.5, 0.2, 0.05};
  o.frontier_rounds = 6;
  o.probe_count = 100;
  o.nuance_samples = 10;
  o.content_scales = {0, 0.5, 1};
  const Theorem1Study st = run_theorem1_study(o);
  REQUIRE(st.frontier.size() == 3);
  CHECK(st.frontier[0].delta == 0.5);
  for (const FrontierPoint& p : st.frontier) {
    CHECK(p.feasible);
    CHECK(p.bos_mean <= p.ceiling);
    CHECK(p.eps > kCandidateLoss);
  }
  CHECK(st.runs[0].result.worst.value <= 1e-6);
  CHECK(st.verdict == "CONSISTENT");
  CHECK(st.nuance.size() == 3 * 3);
  const std::string dir =
      (std::filesystem::temp_directory_path() / "sinkcert_theorem1_study_test").string();
  std::filesystem::remove_all(dir);
  RunInfo info{"test", "rev", "2026-11-29T00:00:00Z", 1, "double"};
  const auto files = write_theorem1_outputs(st, info, dir);
  CHECK(std::filesystem::exists(dir + "/theorem1.json"));
  CHECK(std::filesystem::exists(dir + "/frontier_delta_0.5.weights.json"));
  const std::string csv = frontier_csv(st, info);
  CHECK(csv.rfind("# Theorem 1 frontier", 0) == 0);
  CHECK(csv.find("\ndelta,bos_ceiling,eps,mean_bos,feasible,converged\n0.5,0.5,") !=
        std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sinkcert::theorems
