// SPDX-License-Identifier: MIT
#include "src/run_info.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace sinkcert {

namespace {

// The checkout's state when first asked (a binary can outlive the configure
// step that stamped SINKCERT_GIT_REVISION, and results are often regenerated
// after a commit); the configure-time stamp when git or the checkout is
// absent. Asked once per process, so that every artifact of one run carries
// the same revision even as the run's own outputs make the tree dirty.
std::string read_revision() {
#ifdef SINKCERT_SOURCE_DIR
  const std::string cmd = std::string("git -C '") + SINKCERT_SOURCE_DIR +
                          "' describe --always --dirty --abbrev=12 2>/dev/null";
  if (FILE* pipe = ::popen(cmd.c_str(), "r")) {
    char buf[128] = {0};
    const bool got = std::fgets(buf, sizeof buf, pipe) != nullptr;
    const int status = ::pclose(pipe);
    std::string rev = got ? buf : "";
    while (!rev.empty() && (rev.back() == '\n' || rev.back() == '\r')) rev.pop_back();
    if (status == 0 && !rev.empty()) return rev;
  }
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

void write_file_atomically(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const fs::path tmp = target.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot open for writing");
    out << content;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw std::runtime_error(path + ": write failed");
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error(path + ": cannot rename temporary file into place");
  }
}

}  // namespace sinkcert
