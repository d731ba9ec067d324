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

RunInfo run_info_from_json(const nlohmann::json& j) {
  RunInfo info;
  if (!j.is_object()) return info;
  // A field of another type than written reads as absent (the stamp is
  // informative; a hand-edited file must not stop the reader).
  const auto text = [&](const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  info.command_line = text("command_line");
  info.revision = text("revision");
  info.time_utc = text("time_utc");
  if (j.contains("seed") && j["seed"].is_number_unsigned())
    info.seed = j["seed"].get<std::uint64_t>();
  info.precision = text("precision");
  return info;
}

}  // namespace sinkcert
