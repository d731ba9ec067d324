// SPDX-License-Identifier: MIT
#include "src/run_info.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "src/input_error.h"
#include "src/json_reader.h"
#include "src/subprocess.h"
#include "tests/test_util.h"

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

// --- Provenance: input digests, library versions, recipe kernel ------------

const testing::ScratchDir kScratch("sinkcert_run_info_test");

std::string write_scratch(const std::string& name, const std::string& text) {
  const std::string path = (kScratch.path / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The digest of `sha256sum FILE`: its first 64 characters.
std::string sha256sum(const std::string& path) {
  RunOptions options;
  options.capture = RunOptions::Capture::kStdout;
  const ProgramResult result = run_program({"sha256sum", path}, options);
  REQUIRE(result.ok());
  return result.output.substr(0, 64);
}

TEST_CASE("sha256 agrees with sha256sum, and with the published test vectors") {
  // FIPS 180-2 examples: "abc" and the empty message
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  std::string bytes;
  for (int i = 0; i < 100000; ++i) bytes += static_cast<char>((i * 7919) % 256);
  const std::string path = write_scratch("bytes.bin", bytes);
  CHECK(sha256_file(path) == sha256sum(path));
  // a false claim fails: one byte changed changes the digest
  bytes[500] = static_cast<char>(bytes[500] ^ 1);
  CHECK(sha256_hex(bytes) != sha256sum(path));
  CHECK_THROWS_AS(sha256_file((kScratch.path / "absent").string()), InputError);
}

TEST_CASE("every JSON file read is an input of the run, with its digest") {
  clear_recorded_input_files();
  const std::string text = "{\"a\": 1}\n";
  const std::string path = write_scratch("doc.json", text);
  internal::read_json_document(path);
  internal::read_json_document(path);  // the same bytes again: recorded once
  const RunInfo info = make_run_info({"sinkcert"}, 0, "double");
  REQUIRE(info.inputs.size() == 1);
  CHECK(info.inputs[0].path == path);
  CHECK(info.inputs[0].sha256 == sha256sum(path));
  const auto j = to_json(info);
  CHECK(j.at("inputs")[0].at("sha256") == sha256sum(path));
  CHECK(run_info_from_json(j).inputs[0].sha256 == info.inputs[0].sha256);
  // parsed text that did not come from a file is no input
  clear_recorded_input_files();
  internal::parse_json_document(text, "mem");
  CHECK(recorded_input_files().empty());
}

TEST_CASE("the stamp names the library versions and the recipe kernel") {
  const nlohmann::json libs = library_versions();
  for (const char* name : {"eigen", "ceres", "boost", "mpfr", "mpfi", "gmp", "openssl"}) {
    INFO(name);
    REQUIRE(libs.contains(name));
    CHECK(libs[name].get<std::string>().find('.') != std::string::npos);
  }
  set_recipe_kernel("baseline");
  const RunInfo info = make_run_info({"sinkcert"}, 0, "double");
  CHECK(info.recipe_kernel == "baseline");
  CHECK(to_json(info).at("libraries") == libs);
  CHECK(run_info_from_json(to_json(info)).recipe_kernel == "baseline");
  set_recipe_kernel("");
}

}  // namespace
}  // namespace sinkcert
