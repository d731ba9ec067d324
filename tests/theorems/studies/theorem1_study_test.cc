// SPDX-License-Identifier: MIT
#include "theorems/studies/theorem1_study.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "src/weight_file.h"
#include "theorems/reports/theorem1_report.h"

namespace sinkcert::theorems::studies {
namespace {

Theorem1Study made_up(const std::vector<std::pair<double, double>>& delta_eps) {
  Theorem1Study st;
  PathRun run;
  run.result.worst.value = 1e-11;
  run.result.worst.certified = 1e-11;
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
    p.eps_double = eps;
    p.bos_mean = 1 - delta;
    p.feasible = true;
    st.frontier.push_back(p);
  }
  return st;
}

TEST_CASE("the verdict rule: consistent, counterexample candidate, inconclusive") {
  Theorem1Study good = made_up({{0.5, 0.6}, {0.1, 0.15}, {0.01, 0.02}});
  decide_verdict(good);
  CHECK(good.verdict == StudyVerdict::kConsistent);
  // a feasible model with a tiny loss and no sink
  Theorem1Study bad = made_up({{0.5, 0.6}, {0.1, 1e-9}, {0.01, 0.02}});
  decide_verdict(bad);
  CHECK(bad.verdict == StudyVerdict::kCounterexampleCandidate);
  CHECK(bad.reason.find("delta 0.1") != std::string::npos);
  // eps growing as delta shrinks: the search is not trustworthy
  Theorem1Study odd = made_up({{0.5, 0.1}, {0.1, 0.5}, {0.01, 0.02}});
  decide_verdict(odd);
  CHECK(odd.verdict == StudyVerdict::kInconclusive);
  // a path that never formed a sink
  Theorem1Study nosink = made_up({{0.5, 0.6}, {0.1, 0.15}});
  nosink.runs[0].stats.heads[0][0].overall.mean = 0.5;
  decide_verdict(nosink);
  CHECK(nosink.verdict == StudyVerdict::kInconclusive);
  // L = 2: no non-trigger position, nothing to test (not a counterexample)
  Theorem1Study vacuous = made_up({{0.5, 1e-16}});
  vacuous.runs[0].stats.heads[0][0].overall.count = 0;
  decide_verdict(vacuous);
  CHECK(vacuous.verdict == StudyVerdict::kNotApplicable);
  // the verdict reads the certified worst case, not the double one: a path
  // whose double value looks low but whose certified value is not
  Theorem1Study noisy = made_up({{0.5, 0.6}, {0.1, 0.15}, {0.01, 0.02}});
  noisy.runs[0].result.worst.certified = 1e-3;
  decide_verdict(noisy);
  CHECK(noisy.verdict == StudyVerdict::kInconclusive);
}

TEST_CASE("study verdicts: names and their inverse") {
  CHECK(to_string(StudyVerdict::kCounterexampleCandidate) == "COUNTEREXAMPLE CANDIDATE");
  for (StudyVerdict v : {StudyVerdict::kConsistent, StudyVerdict::kCounterexampleCandidate,
                         StudyVerdict::kInconclusive, StudyVerdict::kNotApplicable}) {
    CHECK(study_verdict_from_string(to_string(v)) == v);
  }
  CHECK_THROWS_AS(study_verdict_from_string("consistent"), std::invalid_argument);
}

TEST_CASE("printed bounds are rounded in their direction") {
  // nearest rounding would print 6.373e-17, above a lower bound of 6.37259e-17
  CHECK(format_bound(6.37259e-17, true, 4) == "6.372e-17");
  CHECK(format_bound(6.37251e-17, false, 4) == "6.373e-17");
  CHECK(format_bound(std::nan(""), true, 4) == "nan");
}

TEST_CASE("reports: certified values, the double disagreement, frontier points retitled") {
  Theorem1Study st = made_up({{0.5, 0.6}, {0.1, 0.15}});
  st.frontier[1].eps_double = 0.9;  // the search's double value, differing in the first digit
  st.frontier[1].double_disagrees = true;
  st.runs[0].result.worst.value = 2e-11;  // the path's double value, differing
  st.runs[0].result.worst.double_disagrees = true;
  decide_verdict(st);
  RunInfo info{"test", "rev", "2026-11-29T00:00:00Z", 1, "double", {}, {}, ""};
  const std::string csv = to_csv(reports::frontier_table(st), info);
  CHECK(csv.find("eps(delta)") == std::string::npos);
  CHECK(csv.find("no bound on eps*(delta)") != std::string::npos);
  CHECK(csv.find("\n0.10000000000000001,0.90000000000000002,0.14999999999999999,") !=
        std::string::npos);
  CHECK(csv.find(",0.90000000000000002,1\n") != std::string::npos);
  CHECK(csv.find(",0.59999999999999998,0\n") != std::string::npos);
  const nlohmann::json j = to_json(st, info);
  CHECK(j["frontier"][1]["eps"] == 0.15);
  CHECK(j["frontier"][1]["eps_double"] == 0.9);
  CHECK(j["frontier"][1]["eps_double_disagrees"] == true);
  CHECK(j["frontier"][0]["eps_double_disagrees"] == false);
  CHECK(j["evidence"]["eps"].get<std::string>().find("no bound on eps*(delta)") !=
        std::string::npos);
  CHECK(j["path"][0]["worst_case"] == 1e-11);
  CHECK(j["path"][0]["worst_case_double"] == 2e-11);
  CHECK(j["path"][0]["worst_case_double_disagrees"] == true);
  // the verdict's reason quotes the certified value rounded down (the double
  // nearest 1e-11 is 9.99999999999999939e-12)
  CHECK(st.reason.find("path worst case (SEARCH, lower bound) 9.99999e-12") != std::string::npos);
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
  CHECK(st.runs[0].result.worst.certified <= 1e-6);
  CHECK(st.runs[0].result.worst.certified > 0);
  CHECK(st.verdict == StudyVerdict::kConsistent);
  CHECK(st.nuance.size() == 3 * 3);
  const std::string dir =
      (std::filesystem::temp_directory_path() / "sinkcert_theorem1_study_test").string();
  std::filesystem::remove_all(dir);
  RunInfo info{"test", "rev", "2026-11-29T00:00:00Z", 1, "double", {}, {}, ""};
  const auto files = reports::write_theorem1_outputs(st, info, dir);
  CHECK(std::filesystem::exists(dir + "/theorem1.json"));
  CHECK(std::filesystem::exists(dir + "/frontier_delta_0.5.weights.json"));
  // the metadata holds the certified worst case and the witness that attains it
  const WeightFile w = read_weight_file(dir + "/frontier_delta_0.5.weights.json");
  CHECK(w.metadata["worst_case_loss"].get<double>() == st.frontier[0].eps);
  CHECK(w.metadata["worst_case_witness"]["trigger"] == st.frontier[0].result.worst.trigger);
  CHECK(w.metadata["worst_case_witness"]["content"].size() == 3u);
  // the data tables and the figures' data and scripts (the renders when gnuplot runs)
  for (const char* name : {"path.csv", "frontier.csv", "nuance.csv", "path.dat", "path.gp",
                           "frontier.dat", "frontier.gp", "nuance.dat", "nuance.gp"}) {
    CHECK_MESSAGE(std::filesystem::exists(dir + "/" + name), name);
  }
  const std::string csv = to_csv(reports::frontier_table(st), info);
  CHECK(csv.rfind("# sinkcert table frontier\n# command_line: test\n", 0) == 0);
  CHECK(csv.find("\ndelta,bos_ceiling,frontier_model_worst_case,mean_bos,feasible,converged,"
                 "frontier_model_worst_case_double,double_disagrees\n0.5,0.5,") !=
        std::string::npos);
  std::filesystem::remove_all(dir);
}

Theorem1Options tiny_options() {
  Theorem1Options o = quick_options(Task{5, 4, TriggerRange::kPaper}, 2);
  o.starts = 2;
  o.deltas = {0.5, 0.05};
  o.path_rounds = 4;
  o.frontier_rounds = 3;
  o.probe_count = 100;
  o.nuance_samples = 10;
  o.content_scales = {0, 1};
  return o;
}

TEST_CASE("the study is the same on one thread and on two") {
  Theorem1Options o = tiny_options();
  o.threads = 1;
  const Theorem1Study one = run_theorem1_study(o);
  o.threads = 2;
  const Theorem1Study two = run_theorem1_study(o);
  RunInfo info{"test", "rev", "2026-11-29T00:00:00Z", 2, "double", {}, {}, ""};
  const nlohmann::json a = without_time_keys(to_json(one, info));
  const nlohmann::json b = without_time_keys(to_json(two, info));
  CHECK(a.dump() == b.dump());
  CHECK(a["path"].size() == 2u);
  CHECK(a["frontier"].size() == 2u);
  REQUIRE(one.runs.size() == 2u);
  CHECK(one.runs[1].result.model.layers[0][0].A == two.runs[1].result.model.layers[0][0].A);
  // one CPU time per task: 2 starts, 2 points, 2 nuances (path, delta 0.5
  // if feasible, delta 0.05 if feasible), 4 final certifications
  CHECK(one.profile.size() >= 2u + 2u + 1u + 4u);
}

TEST_CASE("the final certification: the attack never lowers a worst case, and without it less") {
  Theorem1Options o = tiny_options();
  o.threads = 2;
  const Theorem1Study with = run_theorem1_study(o);
  o.attack = false;
  const Theorem1Study without = run_theorem1_study(o);
  REQUIRE(with.runs.size() == without.runs.size());
  for (std::size_t s = 0; s < with.runs.size(); ++s) {
    const PathRun &a = with.runs[s], &b = without.runs[s];
    CHECK(a.final_certification.attacked);
    CHECK_FALSE(b.final_certification.attacked);
    // the same search; the weaker adversary's worst case is at most the reported one
    CHECK(a.final_certification.minimax_worst_case == b.result.worst.certified);
    CHECK(b.result.worst.certified <= a.result.worst.certified);
    CHECK(a.result.worst.certified == std::max(a.final_certification.minimax_worst_case,
                                               a.final_certification.attack_worst_case));
  }
  REQUIRE(with.frontier.size() == without.frontier.size());
  for (std::size_t k = 0; k < with.frontier.size(); ++k) {
    CHECK(without.frontier[k].eps <= with.frontier[k].eps);
    CHECK(with.frontier[k].eps == with.frontier[k].result.worst.certified);
    CHECK(with.frontier[k].final_certification.minimax_worst_case == without.frontier[k].eps);
  }
  RunInfo info{"test", "rev", "2026-11-29T00:00:00Z", 2, "double", {}, {}, ""};
  const nlohmann::json j = to_json(with, info), k = to_json(without, info);
  CHECK(j["path"][0].contains("worst_case_found_by"));
  CHECK(j["frontier"][0].contains("eps_attack"));
  CHECK(j["evidence"].contains("final_certification"));
  CHECK_FALSE(k["path"][0].contains("worst_case_found_by"));
  CHECK_FALSE(k["evidence"].contains("final_certification"));
}

TEST_CASE("re-certification replaces a weak witness and keeps a stronger one") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m = normal_init(AttentionKind::kSoftmax, 5, 0.5, 7);
  // a witness certified far below the model's error (a weak adversary's)
  search::Witness weak = search::score_error(m, task, 1, Matrix<double>::Zero(3, 2));
  weak.certified = 0;
  const FinalCertification replaced = recertify_worst_case(m, task, 0, weak);
  CHECK(replaced.attacked);
  CHECK(replaced.minimax_worst_case == 0);
  CHECK(weak.certified > 0);
  CHECK(weak.certified == replaced.attack_worst_case);
  CHECK(replaced.found_by.rfind("attack: ", 0) == 0);
  // a witness above anything the attack can certify stays
  search::Witness strong = weak;
  strong.certified = 1e9;
  const FinalCertification kept = recertify_worst_case(m, task, 0, strong);
  CHECK(strong.certified == 1e9);
  CHECK(kept.found_by == "minimax adversary");
  CHECK(kept.attack_worst_case <= 1e9);
}

}  // namespace
}  // namespace sinkcert::theorems::studies
