// SPDX-License-Identifier: MIT
//
// The committed results/row1_frontier/below_family/ re-read and checked
// against a recomputation (check_row1_below_dir), and tampered copies that
// the check must reject.
#include "theorems/reports/row1_below_report.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/json_reader.h"
#include "src/run_info.h"
#include "tests/test_util.h"

namespace sinkcert::theorems::reports {
namespace {

namespace fs = std::filesystem;

const std::string kDir = std::string(SINKCERT_SOURCE_DIR) + "/results/row1_frontier/below_family";
// Each E rerun's budget: the first pass and the attack's witnesses give a
// lower end near E within it (n = 5, L = 4).
constexpr double kRerunSeconds = 3.0;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
void spit(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// A copy of the committed directory to tamper with.
void copy_dir(const fs::path& to) {
  for (const auto& e : fs::directory_iterator(kDir))
    fs::copy_file(e.path(), to / e.path().filename());
}

TEST_CASE("the committed models recheck") {
  const Row1BelowCheck c = check_row1_below_dir(kDir, kRerunSeconds);
  for (const std::string& f : c.failures) MESSAGE(f);
  CHECK(c.ok);
  CHECK(!c.lines.empty());
}

TEST_CASE("a hand-edited README is rejected") {
  testing::ScratchDir tmp("row1_below_readme");
  copy_dir(tmp.path);
  spit(tmp.path / "README.md", slurp(tmp.path / "README.md") + "\nedited\n");
  CHECK(!check_row1_below_dir(tmp.path.string(), kRerunSeconds).ok);
}

TEST_CASE("a changed model is rejected, even with its hash and README updated") {
  testing::ScratchDir tmp("row1_below_model");
  copy_dir(tmp.path);
  nlohmann::json s = nlohmann::json::parse(slurp(tmp.path / "summary.json"));
  auto& row = s.at("rows").at(0);
  const fs::path file = tmp.path / row.at("file").get<std::string>();
  // the model's row-1 logit lowered: A_{n-1,n-1} - 0.01
  WeightFile w = read_weight_file(file.string());
  Model<Rational> m = to_model<Rational>(w);
  const int n = m.n;
  m.layers[0][0].A(n - 1, n - 1) -= Rational(1, 100);
  WeightFile changed = weight_file_from_model(m, w.metadata);
  changed.task = w.task;
  spit(file, weight_file_text(changed));
  row["sha256"] = sha256_hex(weight_file_text(changed));
  spit(tmp.path / "summary.json", s.dump(2) + "\n");
  spit(tmp.path / "README.md", row1_below_readme(s));
  const Row1BelowCheck c = check_row1_below_dir(tmp.path.string(), kRerunSeconds);
  CHECK(!c.ok);
}

TEST_CASE("a recorded E upper end below the model's E is rejected") {
  testing::ScratchDir tmp("row1_below_E");
  copy_dir(tmp.path);
  nlohmann::json s = nlohmann::json::parse(slurp(tmp.path / "summary.json"));
  auto& E = s.at("rows").at(0).at("E");
  // half the certified lower end: below E for sure
  const double half = E.at("lower").get<double>() / 2;
  E["upper"] = half;
  E["upper_exact"] = internal::exact_decimal(Rational(half));
  spit(tmp.path / "summary.json", s.dump(2) + "\n");
  spit(tmp.path / "README.md", row1_below_readme(s));
  CHECK(!check_row1_below_dir(tmp.path.string(), kRerunSeconds).ok);
}

}  // namespace
}  // namespace sinkcert::theorems::reports
