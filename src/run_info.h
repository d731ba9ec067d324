// SPDX-License-Identifier: MIT
//
// Provenance stamped on every artifact: command line, git revision, UTC time,
// seed and precision. The atomic file writer every artifact goes through,
// write_file_atomically, lives in src/output_files.h (included here).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/output_files.h"

namespace sinkcert {

struct RunInfo {
  std::string command_line;  // argv joined by spaces
  std::string revision;      // git revision the binary was built from
  std::string time_utc;      // ISO 8601, e.g. 2026-11-29T22:39:08Z
  std::uint64_t seed = 0;
  std::string precision;  // e.g. "double", "mpfi 257 bits", "exact"
};

// The revision compiled into the library: `git describe --always --dirty
// --abbrev=12` of the checkout when it was built, or "unknown" outside one.
std::string build_revision();
// Now, as ISO 8601 UTC.
std::string utc_now();
// A RunInfo for this process; argv joined with single spaces.
RunInfo make_run_info(const std::vector<std::string>& argv, std::uint64_t seed,
                      const std::string& precision);

// The one key under which every JSON document sinkcert writes keeps its
// RunInfo (to_json below).
inline constexpr const char* kProvenanceKey = "provenance";
// The provenance object of document j: under "provenance", else under the
// former keys "run_info" or "run" (files written before); null if none.
nlohmann::json provenance_of(const nlohmann::json& j);

nlohmann::json to_json(const RunInfo& info);
// The inverse of to_json; a missing key leaves its field empty (0 for seed).
RunInfo run_info_from_json(const nlohmann::json& j);

}  // namespace sinkcert
