// SPDX-License-Identifier: MIT
#include "src/run_info.h"

#include <chrono>
#include <ctime>

// Written by the build (scripts/revision_stamp.cmake): SINKCERT_REVISION.
#include "sinkcert_revision.h"

namespace sinkcert {

// The revision of the checkout this library was built from, stamped by the
// build itself whenever it changes (so a build after a new commit carries
// it), or "unknown" outside a git checkout. A compile-time constant: every
// artifact of a run carries the same revision even as the run's own outputs
// make the tree dirty, and a binary never claims a revision it was not built
// from.
std::string build_revision() { return SINKCERT_REVISION; }

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

nlohmann::json provenance_of(const nlohmann::json& j) {
  if (!j.is_object()) return nullptr;
  for (const char* key : {kProvenanceKey, "run_info", "run"}) {
    if (j.contains(key)) return j[key];
  }
  return nullptr;
}

RunInfo run_info_from_json(const nlohmann::json& j) {
  RunInfo info;
  if (!j.is_object()) return info;
  info.command_line = j.value("command_line", "");
  info.revision = j.value("revision", "");
  info.time_utc = j.value("time_utc", "");
  info.seed = j.value("seed", std::uint64_t{0});
  info.precision = j.value("precision", "");
  return info;
}

}  // namespace sinkcert
