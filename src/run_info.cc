// SPDX-License-Identifier: MIT
#include "src/run_info.h"

#include <chrono>
#include <ctime>

#include "src/subprocess.h"

namespace sinkcert {

namespace {

// The checkout's state when first asked (a binary can outlive the configure
// step that stamped SINKCERT_GIT_REVISION, and results are often regenerated
// after a commit); the configure-time stamp when git or the checkout is
// absent. Asked once per process, so that every artifact of one run carries
// the same revision even as the run's own outputs make the tree dirty.
std::string read_revision() {
#ifdef SINKCERT_SOURCE_DIR
  RunOptions options;
  options.capture = RunOptions::Capture::kStdout;
  const ProgramResult git = run_program(
      {"git", "-C", SINKCERT_SOURCE_DIR, "describe", "--always", "--dirty", "--abbrev=12"},
      options);
  std::string rev = git.output.substr(0, git.output.find_first_of("\r\n"));
  if (git.ok() && !rev.empty()) return rev;
#endif
#ifdef SINKCERT_GIT_REVISION
  return SINKCERT_GIT_REVISION;
#else
  return "unknown";
#endif
}

}  // namespace

std::string build_revision() {
  static const std::string revision = read_revision();
  return revision;
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

RunInfo make_run_info(const std::vector<std::string>& argv, std::uint64_t seed,
                      const std::string& precision) {
  RunInfo info;
  for (const auto& a : argv) {
    info.command_line += info.command_line.empty() ? "" : " ";
    info.command_line += a;
  }
  info.revision = build_revision();
  info.time_utc = utc_now();
  info.seed = seed;
  info.precision = precision;
  return info;
}

nlohmann::json to_json(const RunInfo& info) {
  return nlohmann::json{{"command_line", info.command_line},
                        {"revision", info.revision},
                        {"time_utc", info.time_utc},
                        {"seed", info.seed},
                        {"precision", info.precision}};
}

}  // namespace sinkcert
