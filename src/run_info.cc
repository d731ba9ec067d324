// SPDX-License-Identifier: MIT
#include "src/run_info.h"

#include <ceres/version.h>
#include <gmp.h>
#include <mpfi.h>
#include <mpfr.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include <Eigen/Core>
#include <boost/version.hpp>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "src/input_error.h"

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

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("sha256_hex: EVP_Digest failed");
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

std::string sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "(file)", "expected a readable file");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw InputError(path, "(file)", "expected a readable file (read failed)");
  return sha256_hex(bytes.str());
}

namespace {

struct ProcessRecord {
  std::mutex mutex;
  std::vector<InputDigest> inputs;
  std::string kernel;
};

ProcessRecord& process_record() {
  static ProcessRecord record;
  return record;
}

}  // namespace

void record_input_file(const std::string& path, const std::string& bytes) {
  InputDigest d{path, sha256_hex(bytes)};
  ProcessRecord& r = process_record();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& seen : r.inputs) {
    if (seen.path == d.path && seen.sha256 == d.sha256) return;
  }
  r.inputs.push_back(std::move(d));
}

std::vector<InputDigest> recorded_input_files() {
  ProcessRecord& r = process_record();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.inputs;
}

void clear_recorded_input_files() {
  ProcessRecord& r = process_record();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.inputs.clear();
}

void set_recipe_kernel(const std::string& kernel) {
  ProcessRecord& r = process_record();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.kernel = kernel;
}

std::string recipe_kernel() {
  ProcessRecord& r = process_record();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.kernel;
}

nlohmann::json library_versions() {
  const auto both = [](const std::string& compiled, const std::string& runtime) {
    return compiled == runtime ? compiled : compiled + " (runtime " + runtime + ")";
  };
  const std::string eigen = std::to_string(EIGEN_WORLD_VERSION) + "." +
                            std::to_string(EIGEN_MAJOR_VERSION) + "." +
                            std::to_string(EIGEN_MINOR_VERSION);
  // BOOST_VERSION = major * 100000 + minor * 100 + patch
  const std::string boost = std::to_string(BOOST_VERSION / 100000) + "." +
                            std::to_string(BOOST_VERSION / 100 % 1000) + "." +
                            std::to_string(BOOST_VERSION % 100);
  const std::string gmp_compiled = std::to_string(__GNU_MP_VERSION) + "." +
                                   std::to_string(__GNU_MP_VERSION_MINOR) + "." +
                                   std::to_string(__GNU_MP_VERSION_PATCHLEVEL);
  return nlohmann::json{{"eigen", eigen},
                        {"ceres", CERES_VERSION_STRING},
                        {"boost", boost},
                        {"mpfr", both(MPFR_VERSION_STRING, mpfr_get_version())},
                        {"mpfi", mpfi_get_version()},
                        {"gmp", both(gmp_compiled, gmp_version)},
                        {"openssl", both(OPENSSL_VERSION_TEXT, OpenSSL_version(OPENSSL_VERSION))}};
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
  info.inputs = recorded_input_files();
  info.libraries = library_versions();
  info.recipe_kernel = recipe_kernel();
  return info;
}

namespace {

nlohmann::json inputs_json(const std::vector<InputDigest>& inputs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : inputs) out.push_back({{"path", d.path}, {"sha256", d.sha256}});
  return out;
}

}  // namespace

// The five keys, then "inputs" ([{path, sha256}]), "libraries" and
// "recipe_kernel", each only when recorded (not empty).
nlohmann::json to_json(const RunInfo& info) {
  nlohmann::json j{{"command_line", info.command_line},
                   {"revision", info.revision},
                   {"time_utc", info.time_utc},
                   {"seed", info.seed},
                   {"precision", info.precision}};
  // recorded only: a stamp built by hand (or read from an older file) keeps
  // the five keys above
  if (!info.inputs.empty()) j["inputs"] = inputs_json(info.inputs);
  if (!info.libraries.is_null()) j["libraries"] = info.libraries;
  if (!info.recipe_kernel.empty()) j["recipe_kernel"] = info.recipe_kernel;
  return j;
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
  if (j.contains("inputs") && j["inputs"].is_array()) {
    for (const auto& d : j["inputs"]) {
      if (!d.is_object()) continue;
      const auto field = [&](const char* key) {
        return d.contains(key) && d[key].is_string() ? d[key].get<std::string>() : std::string();
      };
      info.inputs.push_back({field("path"), field("sha256")});
    }
  }
  if (j.contains("libraries")) info.libraries = j["libraries"];
  info.recipe_kernel = text("recipe_kernel");
  return info;
}

}  // namespace sinkcert
