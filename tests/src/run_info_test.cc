// SPDX-License-Identifier: MIT
#include "src/run_info.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "src/subprocess.h"

namespace sinkcert {
namespace {

TEST_CASE("run info carries command line, revision, time, seed and precision") {
  const RunInfo info = make_run_info({"sinkcert", "appendix", "--full"}, 42, "double");
  CHECK(info.command_line == "sinkcert appendix --full");
  CHECK(info.revision == build_revision());
  CHECK(info.time_utc.size() == 20);  // 2026-11-29T22:39:08Z
  const auto j = to_json(info);
  CHECK(j.at("seed") == 42);
  CHECK(j.at("precision") == "double");
  CHECK(j.at("command_line") == "sinkcert appendix --full");
  CHECK(j.at("revision") == build_revision());
}

// First line of a git command's output in the source tree; empty if it failed.
std::string git_line(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"git", "-C", SINKCERT_SOURCE_DIR};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions options;
  options.capture = RunOptions::Capture::kStdout;
  const ProgramResult result = run_program(argv, options);
  if (!result.ok()) return "";
  return result.output.substr(0, result.output.find_first_of("\r\n"));
}

// In a git checkout the stamp is `git describe --always --dirty --abbrev=12`
// of the tree the library was built from; its part before "-dirty" must
// name the current HEAD (the suite runs after a build, as scripts/test.sh
// does: a commit without a rebuild fails here, and rightly, since artifacts
// would carry the old revision). Whether the tree is dirty may have changed
// since the build, so "-dirty" is not compared. Outside a checkout (a
// release tarball) the stamp is "unknown".
TEST_CASE("the revision stamp names the checkout's HEAD, or is unknown outside one") {
  const std::string revision = build_revision();
  MESSAGE("build revision: " << revision);
  const std::string top = git_line({"rev-parse", "--show-toplevel"});
  const bool checkout =
      !top.empty() && std::filesystem::equivalent(top, std::filesystem::path(SINKCERT_SOURCE_DIR));
  if (!checkout) {
    CHECK(revision == "unknown");
    return;
  }
  const std::string head = git_line({"describe", "--always", "--abbrev=12"});
  REQUIRE_FALSE(head.empty());
  const std::string kDirty = "-dirty";
  std::string committed = revision;
  if (committed.size() > kDirty.size() &&
      committed.compare(committed.size() - kDirty.size(), kDirty.size(), kDirty) == 0) {
    committed.resize(committed.size() - kDirty.size());
  }
  CHECK(committed == head);
}

}  // namespace
}  // namespace sinkcert
