// SPDX-License-Identifier: MIT
#include "src/run_info.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sinkcert {
namespace {

namespace fs = std::filesystem;

TEST_CASE("write_file_atomically writes the content and leaves no temporary") {
  const fs::path dir = fs::temp_directory_path() / "sinkcert_run_info_test" / "nested";
  fs::remove_all(dir.parent_path());
  const std::string path = (dir / "out.txt").string();
  write_file_atomically(path, "first\n");
  write_file_atomically(path, "second\n");
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == "second\n");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  CHECK(entries == 1);
  fs::remove_all(dir.parent_path());
}

TEST_CASE("write_file_atomically names the path when it cannot write") {
  try {
    write_file_atomically("/proc/sinkcert-cannot-write/x.txt", "x");
    FAIL("expected an error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("/proc/sinkcert-cannot-write/x.txt") != std::string::npos);
  }
}

TEST_CASE("run info carries command line, revision, time, seed and precision") {
  const RunInfo info = make_run_info({"sinkcert", "appendix", "--full"}, 42, "double");
  CHECK(info.command_line == "sinkcert appendix --full");
  CHECK_FALSE(info.revision.empty());
  CHECK(info.time_utc.size() == 20);  // 2026-11-29T22:39:08Z
  const auto j = to_json(info);
  CHECK(j.at("seed") == 42);
  CHECK(j.at("precision") == "double");
  CHECK(j.at("command_line") == "sinkcert appendix --full");
}

}  // namespace
}  // namespace sinkcert
