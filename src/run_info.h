// SPDX-License-Identifier: MIT
//
// Provenance stamped on every artifact: command line, git revision, UTC time,
// seed and precision. And the atomic file writer every artifact goes through
// (write to a temporary in the same directory, then rename, so a reader never
// sees a partial file and a failed run leaves no output).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sinkcert {

struct RunInfo {
  std::string command_line;  // argv joined by spaces
  std::string revision;      // git revision the binary was built from
  std::string time_utc;      // ISO 8601, e.g. 2026-11-29T22:39:08Z
  std::uint64_t seed = 0;
  std::string precision;     // e.g. "double", "mpfi 257 bits", "exact"
};

// The revision compiled into the library (git describe at configure time).
std::string build_revision();
// Now, as ISO 8601 UTC.
std::string utc_now();
// A RunInfo for this process; argv joined with single spaces.
RunInfo make_run_info(const std::vector<std::string>& argv, std::uint64_t seed,
                      const std::string& precision);

nlohmann::json to_json(const RunInfo& info);

// Writes `content` to `path` atomically (temp file + rename). Creates missing
// parent directories. Throws std::runtime_error naming the path on failure.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace sinkcert
