// SPDX-License-Identifier: MIT
#include "theorems/reports/theorem1_report.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "src/input_error.h"

namespace sinkcert::theorems::reports {
namespace {

const std::string kEdges = std::string(SINKCERT_SOURCE_DIR) + "/results/theorem1/edges";

std::string edge_file(const std::string& run) { return kEdges + "/" + run + "/theorem1.json"; }

std::string written(const std::string& name, const std::string& text) {
  const std::string path = std::string(SINKCERT_BINARY_DIR) + "/theorem1_report_test_" + name;
  std::ofstream(path) << text;
  return path;
}

TEST_CASE("edge table: the committed runs read into its rows") {
  const Task paper{5, 4, TriggerRange::kPaper};
  const EdgeRun run = read_edge_run(paper, edge_file("n5_L4_paper"));
  CHECK(run.has_trigger);
  CHECK(run.has_bos);
  CHECK(run.verdict == studies::StudyVerdict::kConsistent);
  const Task vacuous{5, 2, TriggerRange::kPaper};
  const Task none{5, 2, TriggerRange::kReferenceCode};
  const Table t = edges_table(
      {run, read_edge_run(vacuous, edge_file("n5_L2_paper")), read_edge_run(none, "/nonexistent")});
  REQUIRE(t.rows.size() == 3u);
  const auto text = [&](std::size_t r) {
    std::string line;
    for (const Cell& c : t.rows[r]) line += (line.empty() ? "" : "|") + c.text;
    return line;
  };
  CHECK(text(0) == "5|4|paper|2e-11|1.0000000000|0.539|0.0745|0.00769|CONSISTENT");
  CHECK(text(1) == "5|2|paper|1.7e-16|n/a|1.72e-16|1.72e-16|1.72e-16|NOT APPLICABLE");
  CHECK(text(2) == "5|2|reference-code|-|-|-|-|-|no trigger position: rejected (exit 2)");
  CHECK(t.landscape);
}

TEST_CASE("edge table: a missing or foreign run is an error naming the file") {
  const Task task{5, 4, TriggerRange::kPaper};
  const std::string missing = kEdges + "/n5_L4_nowhere/theorem1.json";
  try {
    read_edge_run(task, missing);
    FAIL("a missing run was read");
  } catch (const InputError& e) {
    CHECK(e.file() == missing);
    CHECK(std::string(e.what()).find("missing") != std::string::npos);
  }
  // the run of another task
  CHECK_THROWS_AS(read_edge_run(task, edge_file("n4_L4_paper")), InputError);
  // a verdict that is not a study verdict
  std::ifstream in(edge_file("n5_L4_paper"));
  nlohmann::json j = nlohmann::json::parse(in);
  j["verdict"] = "MAYBE";
  try {
    read_edge_run(task, written("verdict.json", j.dump()));
    FAIL("an unknown verdict was read");
  } catch (const InputError& e) {
    CHECK(e.field() == "verdict");
  }
  j.erase("frontier");
  try {
    read_edge_run(task, written("frontier.json", j.dump()));
    FAIL("a run without a frontier was read");
  } catch (const InputError& e) {
    CHECK(e.field() == "frontier");
  }
}

TEST_CASE("study figures: captions say what they show and at which evidence level") {
  const Task task{16, 16, TriggerRange::kPaper};
  for (const char* name : {"path", "frontier", "nuance"}) {
    const Figure f = theorem1_figure_frame(name, task);
    CHECK(f.name == name);
    CHECK(f.caption.find("n = 16, L = 16") != std::string::npos);
    CHECK_FALSE(f.evidence.empty());
    CHECK(figure_caption(f).find("Evidence: ") != std::string::npos);
  }
  CHECK(theorem1_figure_frame("frontier", task).evidence == "SEARCH(lower bound)");
  CHECK(theorem1_figure_frame("nuance", task).evidence == "NUMERIC(53)");
  CHECK_THROWS_AS(theorem1_figure_frame("path.pdf", task), std::invalid_argument);
}

TEST_CASE("study tables and figures carry the study's numbers as written") {
  studies::Theorem1Study st;
  st.options.task = Task{5, 4, TriggerRange::kPaper};
  studies::FrontierPoint p;
  p.delta = 0.1;
  p.ceiling = 0.9;
  p.eps = 0.15;
  p.feasible = true;
  st.frontier.push_back(p);
  st.nuance.push_back({"frontier delta=0.1", 0.5, 0.75, 0.5, 0.25});
  const Table t = frontier_table(st);
  REQUIRE(t.rows.size() == 1u);
  CHECK(t.rows[0][0].text == "0.10000000000000001");
  CHECK(t.rows[0][2].text == "0.14999999999999999");
  CHECK(t.rows[0][4].text == "1");
  // the nuance model name holds a space: one quoted column in the data
  RunInfo info{"test", "rev", "2026-11-29T00:00:00Z", 1, "double", {}, {}, ""};
  const std::string data = figure_data(nuance_figure(st), info);
  CHECK(data.find("\n\"frontier delta=0.1\" 0.5 0.75 0.5\n") != std::string::npos);
  CHECK(nuance_figure(st).plot.find("strcol(1) eq 'frontier delta=0.5'") != std::string::npos);
}

TEST_CASE("the nuance caption says what the data show") {
  // flat in t: the committed study's kind of data
  const std::vector<studies::NuancePoint> flat = {{"path", 0, 1 - 6.9e-12, 1 - 1.3e-11, 0},
                                                  {"path", 1, 1 - 7e-12, 1 - 1.7e-11, 0},
                                                  {"frontier delta=0.5", 0, 0.4983, 0.3066, 0},
                                                  {"frontier delta=0.5", 0.5, 0.4983, 0.305, 0},
                                                  {"frontier delta=0.5", 1, 0.4982, 0.3029, 0}};
  CHECK(nuance_summary(flat) ==
        "Measured (mean, and min in parentheses, at the smallest and the largest t): path model "
        "1 - 6.9e-12 (1 - 1.3e-11) at t = 0 and 1 - 7e-12 (1 - 1.7e-11) at t = 1; frontier "
        "delta=0.5 0.4983 (0.3066) at t = 0 and 0.4982 (0.3029) at t = 1. The mean BOS mass "
        "hardly depends on the content scale (it changes by at most 0.0001 over t): these models "
        "do not spend their BOS deficit on inputs with small content.");
  // a model that sinks less at small content is named
  const std::vector<studies::NuancePoint> falls = {{"frontier delta=0.05", 0, 0.6, 0.2, 0},
                                                   {"frontier delta=0.05", 1, 0.95, 0.9, 0}};
  const std::string s = nuance_summary(falls);
  CHECK(s.find("lower at small content for frontier delta=0.05") != std::string::npos);
  CHECK(s.find("hardly depends") == std::string::npos);
  CHECK(s.find("Largest change of a mean over t: 0.35.") != std::string::npos);
  CHECK(nuance_summary({}) == "No BOS mass against content was measured.");

  // the figure's caption ends with it, in both forms
  studies::Theorem1Study st;
  st.options.task = Task{5, 4, TriggerRange::kPaper};
  st.nuance = flat;
  const Figure f = nuance_figure(st);
  CHECK(f.caption.size() > nuance_summary(flat).size());
  CHECK(f.caption.substr(f.caption.size() - nuance_summary(flat).size()) == nuance_summary(flat));
  CHECK(f.caption_latex.find("$t=0$") != std::string::npos);
  CHECK(f.caption_latex.find("frontier delta=0.5 0.4983") != std::string::npos);
  // each model one colour, mean and min alike
  CHECK(f.plot.find("eq 'path') ? $2 : 1/0):3 with linespoints linecolor 1") != std::string::npos);
  CHECK(f.plot.find("eq 'path') ? $2 : 1/0):4 with lines linecolor 1 dashtype 2") !=
        std::string::npos);
}

TEST_CASE("the nuance points read back from a theorem1.json, and a malformed one refused") {
  const auto dir = std::filesystem::temp_directory_path() / "sinkcert_nuance_points_test";
  std::filesystem::create_directories(dir);
  studies::Theorem1Study st;
  st.options.task = Task{5, 4, TriggerRange::kPaper};
  st.nuance = {{"path", 0.5, 0.75, 0.5, 0.25}};
  const RunInfo info{"test", "rev", "2026-11-29T00:00:00Z", 1, "double", {}, {}, ""};
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream((dir / name).string()) << text;
    return (dir / name).string();
  };
  const std::vector<studies::NuancePoint> back =
      read_nuance_points(write("theorem1.json", to_json(st, info).dump()));
  REQUIRE(back.size() == 1u);
  CHECK(back[0].model == "path");
  CHECK(back[0].scale == 0.5);
  CHECK(back[0].bos_mean == 0.75);
  CHECK(back[0].bos_min == 0.5);
  CHECK(back[0].error_max == 0.25);
  nlohmann::json j = to_json(st, info);
  j["with_high_probability"]["points"][0].erase("bos_min");
  try {
    read_nuance_points(write("bad.json", j.dump()));
    FAIL("a point without bos_min was read");
  } catch (const InputError& e) {
    CHECK(e.field() == "with_high_probability.points[0].bos_min");
  }
  CHECK_THROWS_AS(read_nuance_points((dir / "missing.json").string()), InputError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the path figure: each start's BOS curve in its worst case's colour, a y label") {
  studies::Theorem1Study st;
  st.options.task = Task{5, 4, TriggerRange::kPaper};
  st.runs.resize(2);
  const Figure f = path_figure(st);
  CHECK(f.plot.find(":3 with linespoints linecolor s+1") != std::string::npos);
  CHECK(f.plot.find(":(1-$4) with lines linecolor s+1 dashtype 2") != std::string::npos);
  CHECK(f.plot.find("set ylabel 'worst case E (solid); 1 - mean BOS mass (dashed)'") !=
        std::string::npos);
  CHECK(f.plot.find("set ylabel 'value'") == std::string::npos);
  CHECK(f.plot.find("set linetype 1 linecolor rgb '#0072B2'") != std::string::npos);
}

}  // namespace
}  // namespace sinkcert::theorems::reports
