// SPDX-License-Identifier: MIT
#include "theorems/reports/check_files.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "src/constructions.h"
#include "src/input_error.h"
#include "src/weight_file.h"
#include "tests/test_util.h"

namespace sinkcert::theorems::reports {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The sink family at n = 5, L = 4: the check encloses E within a few seconds.
CheckReport small_report() {
  WeightFile file = weight_file_from_model(sink_family<double>(5, 30.0));
  file.path = "mem.json";
  CheckOptions options;
  options.seconds = 3;
  return check_model(file, Task{5, 4, TriggerRange::kPaper}, options);
}

TEST_CASE("the report folder: report.json with provenance, report.md, heat map, witness") {
  const testing::ScratchDir scratch("check_files_test");
  const CheckReport report = small_report();
  const RunInfo info = make_run_info({"check_files_test"}, 0, "exact model");
  const std::string out = (scratch.path / "report").string();
  check_report_dir(out, "--out");
  const CheckFiles files = write_check_files(report, info, out);
  CHECK(files.document["provenance"]["command_line"] == "check_files_test");
  CHECK(nlohmann::json::parse(read(fs::path(out) / "report.json")) == files.document);
  CHECK(read(fs::path(out) / "report.md") == report.markdown());
  REQUIRE(report.witness_tokens.rows() == 4);
  CHECK(fs::exists(fs::path(out) / "witness.json"));
  for (const char* name : {"attention_mean_std.dat", "attention_mean_std.gp"}) {
    CHECK(fs::exists(fs::path(out) / name));
  }
  // every name written belongs to the set, and is there
  for (const auto& name : files.written) {
    CHECK(check_file_names().count(name) == 1);
    CHECK(fs::exists(fs::path(out) / name));
  }
  // a file of the set that is not a regular file is refused before any work
  const fs::path odd = scratch.path / "odd";
  fs::create_directories(odd / "report.json");
  CHECK_THROWS_AS(check_report_dir(odd.string(), "--out"), InputError);
}

TEST_CASE("never into results/ of the working directory") {
  const fs::path results = fs::current_path() / "results" / "check-here";
  try {
    check_report_dir(results.string(), "out");
    FAIL("results/ accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("outside results/") != std::string::npos);
    CHECK(std::string(e.what()).find("out") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(results));
}

}  // namespace
}  // namespace sinkcert::theorems::reports
