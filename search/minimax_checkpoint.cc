// SPDX-License-Identifier: MIT
//
// The checkpoint file of search/minimax_checkpoint.h: one JSON object
//   {"format": "sinkcert minimax checkpoint", "version": 1,
//    "identity": ..., "init_hash": ..., "round": k, "elapsed": s,
//    "theta": [[...], ...], "active": [{"trigger", "initial", "content", "w"}],
//    "radius", "rho", "prev_objective", "best_worst", "best_feasible",
//    "best_theta", "best_witness", "warm": [witness, ...], "history": [record, ...],
//    "jacobian_evaluations"}
// with doubles as JSON numbers of 17 significant digits (a double read back
// from them is the same double) or, when not finite, the strings "inf",
// "-inf", "nan".
#include "search/minimax_checkpoint.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "src/output_files.h"

namespace sinkcert::search {

namespace {

using nlohmann::json;

constexpr const char* kFormat = "sinkcert minimax checkpoint";
constexpr int kVersion = 1;

json number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

json numbers(const std::vector<double>& v) {
  json out = json::array();
  for (double x : v) out.push_back(number(x));
  return out;
}

json matrix(const Matrix<double>& m) {
  json out = json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    std::vector<double> row(m.cols());
    for (Eigen::Index c = 0; c < m.cols(); ++c) row[c] = m(r, c);
    out.push_back(numbers(row));
  }
  return out;
}

json witness(const Witness& w) {
  return {{"trigger", w.trigger},
          {"content", matrix(w.content)},
          {"value", number(w.value)},
          {"position", w.position},
          {"coordinate", w.coordinate},
          {"layer", w.layer},
          {"certified", number(w.certified)},
          {"certified_bits", w.certified_bits},
          {"double_disagrees", w.double_disagrees}};
}

json record(const MinimaxRecord& r) {
  return {{"round", r.round},
          {"worst_case", number(r.worst_case)},
          {"worst_case_double", number(r.worst_case_double)},
          {"double_disagrees", r.double_disagrees},
          {"active_max", number(r.active_max)},
          {"active_size", r.active_size},
          {"elapsed", number(r.elapsed)},
          {"max_abs_A", number(r.max_abs_A)},
          {"mean_bos", number(r.mean_bos)},
          {"ceiling_bos", number(r.ceiling_bos)},
          {"accepted", r.accepted},
          {"event", r.event}};
}

// Reading: every access names the file and the field on failure.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& expected) const {
    throw std::runtime_error("checkpoint " + path_ + ": field " + field + ": expected " + expected);
  }
  const json& at(const json& j, const std::string& key, const std::string& where) const {
    if (!j.is_object() || !j.contains(key)) fail(where + key, "present");
    return j.at(key);
  }
  double real(const json& j, const std::string& field) const {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) {
      const std::string s = j.get<std::string>();
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    fail(field, "a number or \"inf\", \"-inf\", \"nan\"");
  }
  long integer(const json& j, const std::string& field) const {
    if (!j.is_number_integer()) fail(field, "an integer");
    return j.get<long>();
  }
  bool boolean(const json& j, const std::string& field) const {
    if (!j.is_boolean()) fail(field, "true or false");
    return j.get<bool>();
  }
  std::string text(const json& j, const std::string& field) const {
    if (!j.is_string()) fail(field, "a string");
    return j.get<std::string>();
  }
  std::vector<double> reals(const json& j, const std::string& field) const {
    if (!j.is_array()) fail(field, "an array of numbers");
    std::vector<double> out;
    for (std::size_t k = 0; k < j.size(); ++k)
      out.push_back(real(j[k], field + "[" + std::to_string(k) + "]"));
    return out;
  }
  std::vector<std::vector<double>> blocks(const json& j, const std::string& field) const {
    if (!j.is_array()) fail(field, "an array of arrays of numbers");
    std::vector<std::vector<double>> out;
    for (std::size_t k = 0; k < j.size(); ++k)
      out.push_back(reals(j[k], field + "[" + std::to_string(k) + "]"));
    return out;
  }
  Matrix<double> matrix(const json& j, const std::string& field) const {
    const std::vector<std::vector<double>> rows = blocks(j, field);
    const std::size_t cols = rows.empty() ? 0 : rows[0].size();
    Matrix<double> m(rows.size(), cols);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (rows[r].size() != cols) fail(field + "[" + std::to_string(r) + "]", "rows of one length");
      for (std::size_t c = 0; c < cols; ++c) m(r, c) = rows[r][c];
    }
    return m;
  }
  Witness witness(const json& j, const std::string& f) const {
    Witness w;
    w.trigger = static_cast<int>(integer(at(j, "trigger", f), f + "trigger"));
    w.content = matrix(at(j, "content", f), f + "content");
    w.value = real(at(j, "value", f), f + "value");
    w.position = static_cast<int>(integer(at(j, "position", f), f + "position"));
    w.coordinate = static_cast<int>(integer(at(j, "coordinate", f), f + "coordinate"));
    w.layer = static_cast<int>(integer(at(j, "layer", f), f + "layer"));
    w.certified = real(at(j, "certified", f), f + "certified");
    w.certified_bits = static_cast<int>(integer(at(j, "certified_bits", f), f + "certified_bits"));
    w.double_disagrees = boolean(at(j, "double_disagrees", f), f + "double_disagrees");
    return w;
  }
  MinimaxRecord record(const json& j, const std::string& f) const {
    MinimaxRecord r;
    r.round = static_cast<int>(integer(at(j, "round", f), f + "round"));
    r.worst_case = real(at(j, "worst_case", f), f + "worst_case");
    r.worst_case_double = real(at(j, "worst_case_double", f), f + "worst_case_double");
    r.double_disagrees = boolean(at(j, "double_disagrees", f), f + "double_disagrees");
    r.active_max = real(at(j, "active_max", f), f + "active_max");
    r.active_size = static_cast<int>(integer(at(j, "active_size", f), f + "active_size"));
    r.elapsed = real(at(j, "elapsed", f), f + "elapsed");
    r.max_abs_A = real(at(j, "max_abs_A", f), f + "max_abs_A");
    r.mean_bos = real(at(j, "mean_bos", f), f + "mean_bos");
    r.ceiling_bos = real(at(j, "ceiling_bos", f), f + "ceiling_bos");
    r.accepted = boolean(at(j, "accepted", f), f + "accepted");
    r.event = text(at(j, "event", f), f + "event");
    return r;
  }

 private:
  std::string path_;
};

}  // namespace

std::string parameter_hash(const std::vector<std::vector<double>>& blocks) {
  // FNV-1a, 64 bits: h = (h xor byte) * 1099511628211 over every byte
  std::uint64_t h = 14695981039346656037ull;
  for (const auto& b : blocks) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(b.data());
    for (std::size_t k = 0; k < b.size() * sizeof(double); ++k) {
      h = (h ^ bytes[k]) * 1099511628211ull;
    }
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

void write_checkpoint(const std::string& path, const MinimaxCheckpoint& c) {
  json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["identity"] = c.identity;
  j["init_hash"] = c.init_hash;
  j["round"] = c.round;
  j["elapsed"] = number(c.elapsed);
  j["theta"] = json::array();
  for (const auto& b : c.theta) j["theta"].push_back(numbers(b));
  j["active"] = json::array();
  for (const MinimaxCheckpoint::Input& a : c.active) {
    j["active"].push_back({{"trigger", a.trigger},
                           {"initial", a.initial},
                           {"content", matrix(a.content)},
                           {"w", numbers(a.w)}});
  }
  j["radius"] = number(c.radius);
  j["rho"] = number(c.rho);
  j["prev_objective"] = number(c.prev_objective);
  j["best_worst"] = number(c.best_worst);
  j["best_feasible"] = number(c.best_feasible);
  j["best_theta"] = json::array();
  for (const auto& b : c.best_theta) j["best_theta"].push_back(numbers(b));
  j["best_witness"] = witness(c.best_witness);
  j["warm"] = json::array();
  for (const Witness& w : c.warm) j["warm"].push_back(witness(w));
  j["history"] = json::array();
  for (const MinimaxRecord& r : c.history) j["history"].push_back(record(r));
  j["jacobian_evaluations"] = c.jacobian_evaluations;
  // nlohmann writes a double with the digits that read back to it
  write_file_atomically(path, j.dump() + "\n");
}

MinimaxCheckpoint read_checkpoint(const std::string& path) {
  const Reader rd(path);
  std::ifstream in(path);
  if (!in) throw std::runtime_error("checkpoint " + path + ": cannot be read");
  std::stringstream buffer;
  buffer << in.rdbuf();
  json j;
  try {
    j = json::parse(buffer.str());
  } catch (const json::parse_error& e) {
    throw std::runtime_error("checkpoint " + path + ": not JSON (" + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat) {
    rd.fail("format", std::string("\"") + kFormat + "\"");
  }
  if (rd.integer(rd.at(j, "version", ""), "version") != kVersion) {
    rd.fail("version", std::to_string(kVersion));
  }
  MinimaxCheckpoint c;
  c.identity = rd.text(rd.at(j, "identity", ""), "identity");
  c.init_hash = rd.text(rd.at(j, "init_hash", ""), "init_hash");
  c.round = static_cast<int>(rd.integer(rd.at(j, "round", ""), "round"));
  c.elapsed = rd.real(rd.at(j, "elapsed", ""), "elapsed");
  c.theta = rd.blocks(rd.at(j, "theta", ""), "theta");
  const json& active = rd.at(j, "active", "");
  if (!active.is_array()) rd.fail("active", "an array");
  for (std::size_t k = 0; k < active.size(); ++k) {
    const std::string f = "active[" + std::to_string(k) + "].";
    MinimaxCheckpoint::Input a;
    a.trigger = static_cast<int>(rd.integer(rd.at(active[k], "trigger", f), f + "trigger"));
    a.initial = rd.boolean(rd.at(active[k], "initial", f), f + "initial");
    a.content = rd.matrix(rd.at(active[k], "content", f), f + "content");
    a.w = rd.reals(rd.at(active[k], "w", f), f + "w");
    c.active.push_back(std::move(a));
  }
  c.radius = rd.real(rd.at(j, "radius", ""), "radius");
  c.rho = rd.real(rd.at(j, "rho", ""), "rho");
  c.prev_objective = rd.real(rd.at(j, "prev_objective", ""), "prev_objective");
  c.best_worst = rd.real(rd.at(j, "best_worst", ""), "best_worst");
  c.best_feasible = rd.real(rd.at(j, "best_feasible", ""), "best_feasible");
  c.best_theta = rd.blocks(rd.at(j, "best_theta", ""), "best_theta");
  c.best_witness = rd.witness(rd.at(j, "best_witness", ""), "best_witness.");
  const json& warm = rd.at(j, "warm", "");
  if (!warm.is_array()) rd.fail("warm", "an array");
  for (std::size_t k = 0; k < warm.size(); ++k)
    c.warm.push_back(rd.witness(warm[k], "warm[" + std::to_string(k) + "]."));
  const json& history = rd.at(j, "history", "");
  if (!history.is_array()) rd.fail("history", "an array");
  for (std::size_t k = 0; k < history.size(); ++k)
    c.history.push_back(rd.record(history[k], "history[" + std::to_string(k) + "]."));
  c.jacobian_evaluations = rd.integer(rd.at(j, "jacobian_evaluations", ""), "jacobian_evaluations");
  return c;
}

}  // namespace sinkcert::search
