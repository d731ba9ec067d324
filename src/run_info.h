// SPDX-License-Identifier: MIT
//
// Provenance stamped on every artifact: command line, git revision, UTC time,
// seed and precision; the SHA-256 of every input file the process read, the
// versions of the numerical libraries it was built with and runs against,
// and the compilation of the recipe kernel that runs (search/recipe_kernel.h).
// The atomic file writer every artifact goes through,
// write_file_atomically, lives in src/output_files.h (included here).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/output_files.h"

namespace sinkcert {

// One input file and the SHA-256 of the bytes that were read from it.
struct InputDigest {
  std::string path;
  std::string sha256;  // 64 lower-case hex digits
};

struct RunInfo {
  std::string command_line;  // argv joined by spaces
  std::string revision;      // git revision the binary was built from
  std::string time_utc;      // ISO 8601, e.g. 2026-11-29T22:39:08Z
  std::uint64_t seed = 0;
  std::string precision;            // e.g. "double", "mpfi 257 bits", "exact"
  std::vector<InputDigest> inputs;  // every input file read, in reading order
  nlohmann::json libraries;         // {"eigen": "3.4.0", "mpfr": "4.2.0", ...}
  std::string recipe_kernel;        // e.g. "avx2+fma"; "" when not recorded
};

// SHA-256 (OpenSSL's EVP_Digest) of bytes, as 64 lower-case hex digits.
std::string sha256_hex(const std::string& bytes);
// Of a file's contents; InputError(path, "(file)", ...) when it cannot be read.
std::string sha256_file(const std::string& path);

// The process's record of the input files it read (src/json_reader.cc
// records every JSON document it reads from a file: weight and input
// files). Reading the same path again with the same bytes records it once.
// Thread-safe.
void record_input_file(const std::string& path, const std::string& bytes);
std::vector<InputDigest> recorded_input_files();
void clear_recorded_input_files();  // for tests

// The library versions, each "<compiled against> (runtime <version>)" when
// the library reports the one it runs with and it differs: Eigen, Ceres,
// Boost, MPFR, MPFI, GMP, OpenSSL.
nlohmann::json library_versions();
// The recipe kernel's compilation, recorded by the program at start-up (a
// library below search/ cannot ask for it); "" until then.
void set_recipe_kernel(const std::string& kernel);
std::string recipe_kernel();

// The revision compiled into the library: `git describe --always --dirty
// --abbrev=12` of the checkout when it was built, or "unknown" outside one.
std::string build_revision();
// Now, as ISO 8601 UTC.
std::string utc_now();
// A RunInfo for this process; argv joined with single spaces; inputs,
// libraries and recipe kernel as recorded so far.
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
