// SPDX-License-Identifier: MIT
//
// sinkcert sweep without running a study: the grid's parsing and its errors
// (file, field, expected), the product and its key order, the digest, the
// result files (missing, incomplete, complete, another configuration or
// grid: an error), the skip logic of run_sweep on finished results and the
// merged table. Results are made up with result_json; the studies
// themselves run in tests/app/sweep_cli_test.sh.
#include "theorems/studies/sweep.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "src/input_error.h"
#include "tests/input_error_check.h"
#include "tests/test_util.h"
#include "theorems/studies/normalization_study.h"

namespace sinkcert::theorems::studies {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::caught;
using testing::CaughtError;
using testing::check_error;
using testing::ScratchDir;

const char* const kGrid = R"({
  "format": "sinkcert-sweep-grid", "version": 1, "study": "theorem1",
  "axes": {"attention": ["softmax", "relu"], "n": [10, 5], "L": [4],
           "trigger_range": ["reference-code", "paper"], "seed": [2, 0]},
  "options": {"quick": true, "starts": 1, "path_rounds": 5, "frontier_rounds": 2,
              "deltas": [0.5, 0.1]}
})";

// The grid kGrid with `field` (a JSON pointer) replaced by `value`, or
// removed when value is discarded.
std::string grid_with(const std::string& pointer, const json& value) {
  json g = json::parse(kGrid);
  if (value.is_discarded()) {
    const json::json_pointer p(pointer);
    g[p.parent_pointer()].erase(p.back());
  } else {
    g[json::json_pointer(pointer)] = value;
  }
  return g.dump();
}

CaughtError parse_error(const std::string& text) {
  try {
    parse_sweep_grid(text, "G.json");
  } catch (const InputError& e) {
    CHECK(e.file() == "G.json");
    return caught(e);
  }
  return {};
}

SweepStudyResult made_up(const SweepConfig& c) {
  SweepStudyResult r;
  r.result = {{"made_up", true}};
  r.summary = {"CONSISTENT", Cell("1e-9", "$10^{-9}$"), "0.999", "0.7",
               "0.1",        std::to_string(c.task.n)};
  return r;
}

void write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

void write_all_results(const SweepGrid& g, const std::string& dir) {
  for (const SweepConfig& c : g.configs) {
    write(result_path(dir, c), result_json(g, c, made_up(c), 1, 2.5).dump());
  }
}

TEST_CASE("a grid's product, in key order, with stable keys") {
  const SweepGrid g = parse_sweep_grid(kGrid, "G.json");
  REQUIRE(g.configs.size() == 2 * 2 * 1 * 2 * 2);
  CHECK(config_key(g.configs[0]) == "theorem1-relu-n5-L4-paper-s0");
  CHECK(config_key(g.configs[1]) == "theorem1-relu-n5-L4-paper-s2");
  CHECK(config_key(g.configs[2]) == "theorem1-relu-n5-L4-reference-code-s0");
  // n compared as a number: 5 before 10
  CHECK(config_key(g.configs[4]) == "theorem1-relu-n10-L4-paper-s0");
  CHECK(config_key(g.configs[8]) == "theorem1-softmax-n5-L4-paper-s0");
  for (std::size_t k = 1; k < g.configs.size(); ++k) {
    CHECK(config_before(g.configs[k - 1], g.configs[k]));
    CHECK_FALSE(config_before(g.configs[k], g.configs[k - 1]));
  }
  CHECK(g.configs[0].attention == AttentionKind::kRelu);
  CHECK(g.configs[0].task.range == TriggerRange::kPaper);
  // the digest: the same for the axes in another order, another for other options
  const std::string reordered = grid_with("/axes/n", json::array({5, 10}));
  CHECK(parse_sweep_grid(reordered, "H.json").digest == g.digest);
  const std::string other = grid_with("/options/path_rounds", 6);
  CHECK(parse_sweep_grid(other, "G.json").digest != g.digest);
  CHECK(g.digest.size() == 16);
  // FNV-1a 64 of "a" (the published test vector)
  CHECK(fnv1a_hex("a") == "af63dc4c8601ec8c");
}

TEST_CASE("defaults: softmax, paper, seed 0, no options") {
  const SweepGrid g = parse_sweep_grid(
      R"({"format": "sinkcert-sweep-grid", "version": 1, "study": "theorem1",
          "axes": {"n": [5], "L": [4]}})",
      "G.json");
  REQUIRE(g.configs.size() == 1);
  CHECK(config_key(g.configs[0]) == "theorem1-softmax-n5-L4-paper-s0");
  CHECK(g.options == json::object());
}

TEST_CASE("bad grids: one InputError naming the file, the field and what was expected") {
  const json drop = json(json::value_t::discarded);
  CHECK(parse_error("{").thrown);
  check_error(parse_error(grid_with("/study", "theorem9")), "study",
              "expected one of theorem1, normalization, theorem2, got \"theorem9\"");
  check_error(parse_error(grid_with("/format", "sinkcert-weights")), "format",
              "sinkcert-sweep-grid");
  check_error(parse_error(grid_with("/version", 2)), "version", "[1, 1]");
  check_error(parse_error(grid_with("/study", drop)), "study", "missing");
  check_error(parse_error(grid_with("/axes/n", drop)), "axes.n", "missing");
  check_error(parse_error(grid_with("/axes/n", json::array())), "axes.n", "non-empty array");
  check_error(parse_error(grid_with("/axes/n", 5)), "axes.n", "non-empty array");
  check_error(parse_error(grid_with("/axes/n", json::array({5, 2}))), "axes.n[1]",
              "an integer in [3, 256]");
  check_error(parse_error(grid_with("/axes/n", json::array({5, 5.5}))), "axes.n[1]", "integer");
  check_error(parse_error(grid_with("/axes/n", json::array({5, 7, 5}))), "axes.n[2]",
              "distinct values, 5 repeats axes.n[0]");
  check_error(parse_error(grid_with("/axes/L", json::array({1}))), "axes.L[0]", "[2, 1024]");
  check_error(parse_error(grid_with("/axes/attention", json::array({"softmax", "cosine"}))),
              "axes.attention[1]", "expected one of softmax, relu");
  check_error(parse_error(grid_with("/axes/trigger_range", json::array({"both"}))),
              "axes.trigger_range[0]", "paper or reference-code");
  check_error(parse_error(grid_with("/axes/seed", json::array({-1}))), "axes.seed[0]",
              "[0, 2^64 - 1]");
  check_error(parse_error(grid_with("/axes/heads", json::array({1}))), "axes.heads", "");
  check_error(parse_error(grid_with("/colour", "red")), "colour", "");
  check_error(parse_error(grid_with("/options/rounds", 3)), "options.rounds", "");
  check_error(parse_error(grid_with("/options", json::array())), "options", "object");
  // the study's own checks
  check_error(parse_error(grid_with("/axes/attention", json::array({"gated"}))), "axes.attention",
              "every kind but gated");
  check_error(parse_error(grid_with("/axes/n", json::array({33}))), "axes.n", "[3, 32]");
  check_error(parse_error(grid_with("/axes/L", json::array({65}))), "axes.L", "[2, 64]");
  check_error(parse_error(grid_with("/options/quick", "yes")), "options.quick", "true or false");
  check_error(parse_error(grid_with("/options/starts", 0)), "options.starts", "[1, 10]");
  check_error(parse_error(grid_with("/options/path_rounds", 1e6)), "options.path_rounds",
              "integer");
  check_error(parse_error(grid_with("/options/deltas", json::array({0.5, 1}))), "options.deltas[1]",
              "(0, 1)");
  check_error(parse_error(grid_with("/options/deltas", json::array({0.5, 0.5}))),
              "options.deltas[1]", "distinct");
  // L = 2 has no trigger position under reference-code (L = 3 has one)
  check_error(parse_error(grid_with("/axes/L", json::array({3, 2}))), "axes.L",
              "no trigger position");
  CHECK_FALSE(parse_error(grid_with("/axes/L", json::array({3}))).thrown);
  // too many configurations
  json many = json::array();
  for (int s = 0; s < 2000; ++s) many.push_back(s);
  check_error(parse_error(grid_with("/axes/seed", many)), "axes", "at most 10000");
  // and the good grid passes
  CHECK_FALSE(parse_error(kGrid).thrown);
}

TEST_CASE("read_sweep_grid names the file; a missing file is an InputError") {
  ScratchDir dir("sinkcert_sweep_read");
  const std::string path = (dir.path / "grid.json").string();
  write(path, grid_with("/study", "normalisation"));
  try {
    read_sweep_grid(path);
    FAIL("accepted an unknown study");
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    CHECK(e.field() == "study");
  }
  CHECK_THROWS_AS(read_sweep_grid((dir.path / "absent.json").string()), InputError);
  write(path, kGrid);
  CHECK(read_sweep_grid(path).configs.size() == 16);
}

TEST_CASE("result files: missing, incomplete, complete, and mismatches are errors") {
  ScratchDir dir("sinkcert_sweep_results");
  const std::string out = dir.path.string();
  const SweepGrid g = parse_sweep_grid(kGrid, "G.json");
  const SweepConfig& c = g.configs[3];
  const std::string path = result_path(out, c);
  CHECK(path == out + "/configs/" + config_key(c) + ".json");
  CHECK(check_result_file(path, g, c) == ResultState::kMissing);
  write(path, "{\"format\": \"sinkcert-sweep-res");  // cut short
  std::string why;
  CHECK(check_result_file(path, g, c, &why) == ResultState::kIncomplete);
  CHECK_FALSE(why.empty());
  json r = result_json(g, c, made_up(c), 0, 1.0);
  r.erase("complete");
  write(path, r.dump());
  CHECK(check_result_file(path, g, c) == ResultState::kIncomplete);
  write(path, result_json(g, c, made_up(c), 0, 1.0).dump());
  CHECK(check_result_file(path, g, c) == ResultState::kComplete);
  // the result of another configuration under this name
  write(path, result_json(g, g.configs[4], made_up(g.configs[4]), 0, 1.0).dump());
  try {
    check_result_file(path, g, c);
    FAIL("reused another configuration's result");
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    CHECK(e.field() == "key");
  }
  // the same configuration of another grid (other options)
  const SweepGrid other = parse_sweep_grid(grid_with("/options/path_rounds", 6), "G2.json");
  write(path, result_json(other, c, made_up(c), 0, 1.0).dump());
  try {
    check_result_file(path, g, c);
    FAIL("reused another grid's result");
  } catch (const InputError& e) {
    CHECK(e.field() == "grid_digest");
    CHECK(e.expected().find("another grid") != std::string::npos);
  }
  // a key that matches but a configuration that does not
  json forged = result_json(g, c, made_up(c), 0, 1.0);
  forged["config"]["seed"] = 7;
  write(path, forged.dump());
  CHECK_THROWS_AS(check_result_file(path, g, c), InputError);
  // other summary columns (another version of the study)
  json old = result_json(g, c, made_up(c), 0, 1.0);
  old["summary_columns"][0] = "outcome";
  write(path, old.dump());
  CHECK_THROWS_AS(check_result_file(path, g, c), InputError);
  // not a regular file
  fs::remove(path);
  fs::create_directory(path);
  CHECK_THROWS_AS(check_result_file(path, g, c), InputError);
}

TEST_CASE("the merged table: key order, axes then summary, no wall time") {
  ScratchDir dir("sinkcert_sweep_merge");
  const std::string out = dir.path.string();
  const SweepGrid g = parse_sweep_grid(kGrid, "G.json");
  write_all_results(g, out);
  const Table t = merged_table(g, out);
  REQUIRE(t.rows.size() == g.configs.size());
  REQUIRE(t.columns.size() == 6 + theorem1_sweep_study().summary_columns.size());
  CHECK(t.columns[6].text == "verdict");
  CHECK(t.rows[0][1].text == "relu");
  CHECK(t.rows[0][2].text == "5");
  CHECK(t.rows[0][4].text == "paper");
  CHECK(t.rows[4][2].text == "10");
  CHECK(t.rows[4].back().text == "10");  // the made-up summary's last cell is n
  CHECK(t.rows[15][1].text == "softmax");
  RunInfo info{"sinkcert sweep", "rev", "2026-12-01T00:00:00Z", 0, "double", {}, {}, ""};
  write_merged_table(g, out, info);
  std::ifstream in(out + "/sweep.csv");
  const std::string csv((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(csv.find("theorem1,relu,5,4,paper,0,CONSISTENT") != std::string::npos);
  CHECK(csv.find("2.5") == std::string::npos);  // the wall time stays out
  std::ifstream tin(out + "/sweep_times.csv");
  const std::string times((std::istreambuf_iterator<char>(tin)), std::istreambuf_iterator<char>());
  CHECK(times.find("theorem1-relu-n5-L4-paper-s0,1,2.500") != std::string::npos);
  CHECK(fs::exists(out + "/sweep.tex"));
  CHECK(json::parse(std::ifstream(out + "/sweep.json"))["grid"]["digest"] == g.digest);
  // a missing result: no table
  fs::remove(result_path(out, g.configs[5]));
  try {
    merged_table(g, out);
    FAIL("merged without a result");
  } catch (const InputError& e) {
    CHECK(e.expected().find("missing") != std::string::npos);
  }
}

TEST_CASE("run_sweep skips finished configurations and merges; a mismatch stops it") {
  ScratchDir dir("sinkcert_sweep_skip");
  const std::string out = (dir.path / "out").string();
  const std::string grid_path = (dir.path / "grid.json").string();
  write(grid_path, kGrid);
  const SweepGrid g = read_sweep_grid(grid_path);
  write_all_results(g, out);
  std::vector<std::string> lines;
  const SweepOutcome o = run_sweep(grid_path, out, {"sinkcert", "sweep"},
                                   [&](const std::string& l) { lines.push_back(l); });
  CHECK(o.total == 16);
  CHECK(o.skipped == 16);
  CHECK(o.ran == 0);
  CHECK(o.merged);
  CHECK(o.root);
  REQUIRE(!lines.empty());
  CHECK(lines[0].find("theorem1-relu-n5-L4-paper-s0: finished earlier") == 0);
  CHECK(lines[0].find("skipped (1/16 done)") != std::string::npos);
  CHECK(fs::exists(out + "/sweep.csv"));
  // one result of another grid: an error before anything runs
  const SweepGrid other = parse_sweep_grid(grid_with("/options/path_rounds", 6), "G2.json");
  write(result_path(out, g.configs[2]),
        result_json(other, g.configs[2], made_up(g.configs[2]), 0, 1.0).dump());
  fs::remove(out + "/sweep.csv");
  CHECK_THROWS_AS(run_sweep(grid_path, out, {"sinkcert", "sweep"}, {}), InputError);
  CHECK_FALSE(fs::exists(out + "/sweep.csv"));
}

TEST_CASE("the normalization and theorem2 studies are registered, with their checks") {
  const SweepStudy* norm = find_sweep_study("normalization");
  REQUIRE(norm != nullptr);
  CHECK(norm->option_names == std::vector<std::string>{"quick"});
  CHECK(norm->summary_columns == normalization_summary_columns());
  const std::string grid = R"({"format": "sinkcert-sweep-grid", "version": 1,
    "study": "normalization", "caption": "A caption.",
    "axes": {"attention": ["gated", "relu"], "n": [4], "L": [3]}, "options": {"quick": true}})";
  const SweepGrid g = parse_sweep_grid(grid, "N.json");
  REQUIRE(g.configs.size() == 2);
  CHECK(config_key(g.configs[0]) == "normalization-gated-n4-L3-paper-s0");
  CHECK(g.caption == "A caption.");
  // the caption is not part of the digest
  json j = json::parse(grid);
  j["caption"] = "Another.";
  CHECK(parse_sweep_grid(j.dump(), "N.json").digest == g.digest);
  j["options"]["quick"] = 1;
  check_error(parse_error(j.dump()), "options.quick", "expected true or false");
  j["options"] = {{"starts", 2}};
  check_error(parse_error(j.dump()), "options.starts", "expected only quick");
  j["options"] = json::object();
  j["axes"]["n"] = json::array({40});
  check_error(parse_error(j.dump()), "axes.n", "for the normalization study");
  const SweepStudy* t2 = find_sweep_study("theorem2");
  REQUIRE(t2 != nullptr);
  json k = json::parse(R"({"format": "sinkcert-sweep-grid", "version": 1, "study": "theorem2",
    "axes": {"attention": ["sigmoid"], "n": [5], "L": [4]}, "options": {"quick": true}})");
  check_error(parse_error(k.dump()), "axes.attention", "residual softmax");
  k["axes"]["attention"] = json::array({"softmax"});
  CHECK(parse_sweep_grid(k.dump(), "T.json").configs.size() == 1);
  k["options"]["layers"] = 3;
  check_error(parse_error(k.dump()), "options.layers", "expected 1, 2 or 4");
}

// A process id that was alive a moment ago and is not now (a reaped child).
long dead_pid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

TEST_CASE("stale temporaries: a pending configuration's always, another's if its PID is dead") {
  ScratchDir dir("sinkcert_sweep_stale");
  const std::string out = (dir.path / "out").string();
  const SweepGrid g = parse_sweep_grid(kGrid, "G.json");
  const std::string live = std::to_string(getpid()), dead = std::to_string(dead_pid());
  const std::string pending_tmp = result_path(out, g.configs[0]) + ".tmp." + live;
  const std::string finished_live = result_path(out, g.configs[1]) + ".tmp." + live;
  const std::string finished_dead = result_path(out, g.configs[1]) + ".tmp." + dead;
  const std::string merged_dead = out + "/sweep.csv.tmp." + dead;
  const std::string not_ours = result_path(out, g.configs[1]) + ".tmp.x1";
  for (const auto& p : {pending_tmp, finished_live, finished_dead, merged_dead, not_ours}) {
    write(p, "{\"format\": ");
  }
  const std::vector<std::string> removed = remove_stale_temporaries(g, out, {0});
  CHECK(removed.size() == 3);
  CHECK_FALSE(fs::exists(pending_tmp));
  CHECK_FALSE(fs::exists(finished_dead));
  CHECK_FALSE(fs::exists(merged_dead));
  CHECK(fs::exists(finished_live));  // maybe another run's write in flight
  CHECK(fs::exists(not_ours));
  // run_sweep does it before running: every configuration finished here
  const std::string grid_path = (dir.path / "grid.json").string();
  write(grid_path, kGrid);
  const SweepGrid again = read_sweep_grid(grid_path);
  write_all_results(again, out);
  write(finished_dead, "{");
  std::vector<std::string> lines;
  run_sweep(grid_path, out, {"sinkcert", "sweep"},
            [&](const std::string& l) { lines.push_back(l); });
  CHECK_FALSE(fs::exists(finished_dead));
  CHECK(fs::exists(finished_live));
  bool said = false;
  for (const auto& l : lines) said = said || l.find("removed " + finished_dead) == 0;
  CHECK(said);
}

}  // namespace
}  // namespace sinkcert::theorems::studies
