// SPDX-License-Identifier: MIT
#include "theorems/studies/sweep.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include "search/minimax.h"
#include "src/input_error.h"
#include "src/json_reader.h"
#include "src/limits.h"
#include "src/output_files.h"
#include "theorems/studies/normalization_study.h"
#include "theorems/studies/theorem1_study.h"
#include "theorems/studies/theorem2_study.h"

#ifdef SINKCERT_HAVE_MPI
#include <mpi.h>
#endif

namespace sinkcert::theorems::studies {

namespace {

using internal::require_int;
using internal::require_string;
using nlohmann::json;

constexpr const char* kGridFormat = "sinkcert-sweep-grid";
constexpr const char* kResultFormat = "sinkcert-sweep-result";
constexpr int kVersion = 1;

// The axes of a grid, in key order.
const std::vector<std::string> kAxes = {"attention", "n", "L", "trigger_range", "seed"};

std::string json_text(const json& v) { return v.dump(); }

}  // namespace

// --- Configurations ----------------------------------------------------------

std::string config_key(const SweepConfig& c) {
  return c.study + "-" + to_string(c.attention) + "-n" + std::to_string(c.task.n) + "-L" +
         std::to_string(c.task.L) + "-" + to_string(c.task.range) + "-s" + std::to_string(c.seed);
}

bool config_before(const SweepConfig& a, const SweepConfig& b) {
  const auto tuple = [](const SweepConfig& c) {
    return std::make_tuple(c.study, to_string(c.attention), c.task.n, c.task.L,
                           to_string(c.task.range), c.seed);
  };
  return tuple(a) < tuple(b);
}

json to_json(const SweepConfig& c) {
  return {{"study", c.study}, {"attention", to_string(c.attention)},      {"n", c.task.n},
          {"L", c.task.L},    {"trigger_range", to_string(c.task.range)}, {"seed", c.seed}};
}

std::string fnv1a_hex(const std::string& text) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64-bit offset basis
  for (unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ULL;  // FNV-1a 64-bit prime
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// --- The Theorem 1 study as a registry entry ------------------------------------

namespace {

// Option bounds of the theorem1 entry: the study's defaults are 3 starts,
// 60 path rounds, 12 frontier rounds; the caps keep a typo from running
// for days.
constexpr int kMaxStarts = 10;
constexpr int kMaxRounds = 10000;

// The sizes a search runs at (the theorem1, normalization and theorem2
// studies): n, L within the theorem1 command's limits and one search's
// memory (the studies of a sweep run on one thread) within the budget:
// single-head, search/minimax.h's single_head_minimax_bytes (as `sinkcert
// theorem1` checks it); `heads` = layers x heads > 1, deep_minimax_bytes
// (as `sinkcert theorem2`).
void check_search_task(const SweepConfig& c, const std::string& file, const std::string& study,
                       int heads = 1) {
  if (c.task.n > kMaxTheorem1N) {
    throw InputError(file, "axes.n",
                     "expected an integer in [3, " + std::to_string(kMaxTheorem1N) + "] for the " +
                         study + " study, got " + std::to_string(c.task.n));
  }
  if (c.task.L > kMaxTheorem1L) {
    throw InputError(file, "axes.L",
                     "expected an integer in [2, " + std::to_string(kMaxTheorem1L) + "] for the " +
                         study + " study, got " + std::to_string(c.task.L));
  }
  const double bytes = heads == 1
                           ? search::single_head_minimax_bytes(c.task, kTheorem1MaxInputsPerTrigger)
                           : search::deep_minimax_bytes(c.task, heads);
  if (bytes > static_cast<double>(kMemoryBudgetBytes)) {
    throw InputError(file, "axes.n",
                     "expected n, L whose search (P x P matrices, P = 2 n^2 layers heads) fits " +
                         std::to_string(kMemoryBudgetBytes >> 30) + " GiB, got n = " +
                         std::to_string(c.task.n) + ", L = " + std::to_string(c.task.L));
  }
}

void require_bool(const json& v, const std::string& file, const std::string& field) {
  if (!v.is_boolean()) {
    throw InputError(file, field,
                     "expected true or false, got " + internal::json_type_name(v) + " " + v.dump());
  }
}

void check_theorem1(const SweepConfig& c, const json& options, const std::string& file) {
  if (c.attention == AttentionKind::kGated) {
    throw InputError(file, "axes.attention",
                     "expected an attention kind the theorem1 search covers (every kind but "
                     "gated: the minimax optimizes A and M only), got gated");
  }
  check_search_task(c, file, "theorem1");
  for (const auto& [key, v] : options.items()) {
    const std::string field = "options." + key;
    if (key == "quick") {
      require_bool(v, file, field);
    } else if (key == "starts") {
      require_int(v, file, field, 1, kMaxStarts);
    } else if (key == "path_rounds" || key == "frontier_rounds") {
      require_int(v, file, field, 1, kMaxRounds);
    } else if (key == "deltas") {
      if (!v.is_array() || v.empty()) {
        throw InputError(file, field, "expected a non-empty array of numbers in (0, 1)");
      }
      std::set<double> seen;
      for (std::size_t k = 0; k < v.size(); ++k) {
        const std::string f = internal::field_index(field, k);
        const double d = internal::require_finite(v[k], file, f);
        if (!(d > 0 && d < 1)) {
          throw InputError(file, f, "expected a number in (0, 1), got " + v[k].dump());
        }
        if (!seen.insert(d).second) {
          throw InputError(file, f, "expected distinct deltas, " + v[k].dump() + " repeats");
        }
      }
    }
  }
}

// The run of a study with the lowest certified worst case (nullptr if none).
template <typename Run>
const Run* lowest_worst_case(const std::vector<Run>& runs) {
  const Run* best = nullptr;
  for (const Run& r : runs) {
    if (!best || r.result.worst.certified < best->result.worst.certified) best = &r;
  }
  return best;
}

// A number: its text, and in LaTeX as math.
Cell number(const std::string& text) { return Cell(text, latex_number(text)); }

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// 4 significant digits, "1.234e-05" (what the table prints of a NUMERIC value).
std::string format_sci(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

SweepStudyResult run_theorem1(const SweepConfig& c, const json& options, const RunInfo& info,
                              const std::function<void(const std::string&)>& progress) {
  Theorem1Options o;
  if (options.value("quick", false)) {
    o = quick_options(c.task, c.seed);
  } else {
    o.task = c.task;
    o.seed = c.seed;
  }
  o.attention = c.attention;
  if (options.contains("starts")) o.starts = options["starts"].get<int>();
  if (options.contains("path_rounds")) o.path_rounds = options["path_rounds"].get<int>();
  if (options.contains("frontier_rounds")) {
    o.frontier_rounds = options["frontier_rounds"].get<int>();
  }
  if (options.contains("deltas")) o.deltas = options["deltas"].get<std::vector<double>>();
  // rounds bound the work; a time limit would make the numbers depend on load
  o.path_time_limit = std::numeric_limits<double>::infinity();
  o.frontier_time_limit = std::numeric_limits<double>::infinity();
  const Theorem1Study st = run_theorem1_study(o, progress);
  SweepStudyResult out;
  out.result = to_json(st, info);
  const PathRun* best = lowest_worst_case(st.runs);
  const auto eps_cell = [&](const FrontierPoint* p) -> Cell {
    if (p == nullptr) return Cell("none");
    if (!p->feasible) return Cell("infeasible");
    return number(format_bound(p->eps, true, 4));
  };
  // the frontier is in decreasing delta
  const FrontierPoint* largest = st.frontier.empty() ? nullptr : &st.frontier.front();
  const FrontierPoint* smallest = st.frontier.empty() ? nullptr : &st.frontier.back();
  // the study fits its slope to 3 or more feasible points (else leaves 0)
  const auto fitted = std::count_if(st.frontier.begin(), st.frontier.end(),
                                    [](const FrontierPoint& p) { return p.feasible && p.eps > 0; });
  const bool has_bos = best && best->stats.heads[0][0].overall.count > 0;
  out.summary = {
      Cell(to_string(st.verdict)),
      best ? number(format_bound(best->result.worst.certified, true, 4)) : Cell("none"),
      has_bos ? number(format_sci(1 - best->stats.heads[0][0].overall.mean)) : Cell("none"),
      eps_cell(largest),
      eps_cell(smallest),
      fitted >= 3 ? number(fixed(st.slope, 3)) : Cell("none"),
  };
  return out;
}

}  // namespace

SweepStudy theorem1_sweep_study() {
  SweepStudy s;
  s.name = "theorem1";
  s.option_names = {"quick", "starts", "path_rounds", "frontier_rounds", "deltas"};
  s.summary_columns = {"verdict",
                       "path worst case SEARCH(lower bound)",
                       "path 1 - mean BOS NUMERIC(53)",
                       "frontier worst case at the largest delta SEARCH(lower bound)",
                       "frontier worst case at the smallest delta SEARCH(lower bound)",
                       "frontier log-log slope NUMERIC(53)"};
  s.check = check_theorem1;
  s.run = run_theorem1;
  return s;
}

// --- The normalization study as a registry entry --------------------------------

namespace {

void check_normalization(const SweepConfig& c, const json& options, const std::string& file) {
  check_search_task(c, file, "normalization");
  if (options.contains("quick")) require_bool(options["quick"], file, "options.quick");
}

SweepStudyResult run_normalization(const SweepConfig& c, const json& options, const RunInfo& info,
                                   const std::function<void(const std::string&)>& progress) {
  NormalizationEntry e = run_normalization_entry(c.attention, c.task, c.seed,
                                                 options.value("quick", false), info, progress);
  return {std::move(e.result), std::move(e.row)};
}

}  // namespace

SweepStudy normalization_sweep_study() {
  SweepStudy s;
  s.name = "normalization";
  s.option_names = {"quick"};
  s.summary_columns = normalization_summary_columns();
  s.check = check_normalization;
  s.run = run_normalization;
  return s;
}

// --- The Theorem 2 study as a registry entry -------------------------------------

namespace {

void check_theorem2(const SweepConfig& c, const json& options, const std::string& file) {
  if (c.attention != AttentionKind::kSoftmax) {
    throw InputError(file, "axes.attention",
                     "expected [\"softmax\"] for the theorem2 study (residual softmax), got " +
                         to_string(c.attention));
  }
  for (const auto& [key, v] : options.items()) {
    const std::string field = "options." + key;
    if (key == "quick") {
      require_bool(v, file, field);
    } else if (key == "layers" || key == "heads") {
      const int k = require_int(v, file, field, 1, 4);
      if (k == 3) throw InputError(file, field, "expected 1, 2 or 4, got 3");
    }
  }
  check_search_task(c, file, "theorem2", options.value("layers", 2) * options.value("heads", 2));
}

SweepStudyResult run_theorem2(const SweepConfig& c, const json& options, const RunInfo& info,
                              const std::function<void(const std::string&)>& progress) {
  const int layers = options.value("layers", 2), heads = options.value("heads", 2);
  Theorem2Options o;
  if (options.value("quick", false)) {
    o = theorem2_quick_options(c.task, layers, heads, c.seed);
  } else {
    o.task = c.task;
    o.layers = layers;
    o.heads = heads;
    o.seed = c.seed;
  }
  // rounds bound the work; a time limit would make the numbers depend on load
  o.path_time_limit = std::numeric_limits<double>::infinity();
  const Theorem2Study st = run_theorem2_study(o, progress);
  SweepStudyResult out;
  out.result = to_json(st, info);
  const Theorem2Run* best = lowest_worst_case(st.runs);
  const bool has_sink = best && best->sink.defined && std::isfinite(best->sink.sigma);
  out.summary = {
      Cell(to_string(st.verdict)),
      best ? number(format_bound(best->result.worst.certified, true, 4)) : Cell("none"),
      has_sink ? number(format_sci(1 - best->sink.sigma)) : Cell("none"),
      has_sink ? Cell("layer " + std::to_string(best->sink.layer) + ", head " +
                      std::to_string(best->sink.head))
               : Cell("none"),
  };
  return out;
}

}  // namespace

SweepStudy theorem2_sweep_study() {
  SweepStudy s;
  s.name = "theorem2";
  s.option_names = {"quick", "layers", "heads"};
  s.summary_columns = {"verdict", "path worst case SEARCH(lower bound)",
                       "1 - sink score NUMERIC(53)", "sink head"};
  s.check = check_theorem2;
  s.run = run_theorem2;
  return s;
}

// --- The registry ----------------------------------------------------------------

const std::vector<SweepStudy>& sweep_studies() {
  // One line per study.
  static const std::vector<SweepStudy> studies = {
      theorem1_sweep_study(),
      normalization_sweep_study(),
      theorem2_sweep_study(),
  };
  return studies;
}

const SweepStudy* find_sweep_study(const std::string& name) {
  for (const SweepStudy& s : sweep_studies()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// --- The grid ------------------------------------------------------------------------

namespace {

std::string study_names() {
  std::string list;
  for (const SweepStudy& s : sweep_studies()) list += (list.empty() ? "" : ", ") + s.name;
  return list;
}

// The values of one axis: a non-empty array (default `fallback` if absent).
json axis_values(const json& axes, const std::string& name, const json& fallback,
                 const std::string& file, const std::string& what) {
  const std::string field = "axes." + name;
  if (!axes.contains(name)) {
    if (fallback.is_null()) {
      throw InputError(file, field, "missing: expected a non-empty array of " + what);
    }
    return fallback;
  }
  const json& v = axes[name];
  if (!v.is_array() || v.empty()) {
    throw InputError(file, field,
                     "expected a non-empty array of " + what + ", got " +
                         (v.is_array() ? std::string("[]") : internal::json_type_name(v)));
  }
  return v;
}

std::uint64_t require_seed(const json& v, const std::string& file, const std::string& field) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<std::uint64_t>();
  throw InputError(file, field,
                   "expected an integer in [0, 2^64 - 1], got " +
                       (v.is_number() ? v.dump() : internal::json_type_name(v)));
}

// Throws unless values[k] (its canonical form) is new.
template <class T>
void require_distinct(std::vector<T>& seen, const T& value, const json& text,
                      const std::string& file, const std::string& field) {
  for (std::size_t k = 0; k < seen.size(); ++k) {
    if (seen[k] == value) {
      throw InputError(file, field,
                       "expected distinct values, " + text.dump() + " repeats " +
                           internal::field_index(field.substr(0, field.rfind('[')), k));
    }
  }
  seen.push_back(value);
}

}  // namespace

namespace {

SweepGrid grid_from_json(const json& root, const std::string& file) {
  internal::require_object(root, file, "");
  internal::reject_unknown_members(
      root, {"format", "version", "study", "axes", "options", "caption"}, file, "");
  const std::string format =
      require_string(internal::require_member(root, "format", file, ""), file, "format");
  if (format != kGridFormat) {
    throw InputError(file, "format",
                     std::string("expected \"") + kGridFormat + "\", got " + json_text(format));
  }
  require_int(internal::require_member(root, "version", file, ""), file, "version", kVersion,
              kVersion);
  SweepGrid g;
  g.file = file;
  g.study = require_string(internal::require_member(root, "study", file, ""), file, "study");
  const SweepStudy* study = find_sweep_study(g.study);
  if (study == nullptr) {
    throw InputError(file, "study",
                     "expected one of " + study_names() + ", got " + json_text(g.study));
  }
  const json& axes = internal::require_member(root, "axes", file, "");
  internal::require_object(axes, file, "axes");
  internal::reject_unknown_members(axes, kAxes, file, "axes");
  // canonical values, per axis
  std::vector<AttentionKind> kinds;
  std::vector<int> ns, Ls;
  std::vector<TriggerRange> ranges;
  std::vector<std::uint64_t> seeds;
  {
    const json& v = axis_values(axes, "attention", json::array({"softmax"}), file,
                                "attention kinds (" + attention_kind_names() + ")");
    for (std::size_t k = 0; k < v.size(); ++k) {
      const std::string f = internal::field_index("axes.attention", k);
      const std::string name = require_string(v[k], file, f);
      AttentionKind kind;
      try {
        kind = parse_attention_kind(name);
      } catch (const std::invalid_argument&) {
        throw InputError(file, f,
                         "expected one of " + attention_kind_names() + ", got " + json_text(name));
      }
      require_distinct(kinds, kind, v[k], file, f);
    }
  }
  {
    const json& v =
        axis_values(axes, "n", json(), file,
                    "integers in [" + std::to_string(kMinN) + ", " + std::to_string(kMaxN) + "]");
    for (std::size_t k = 0; k < v.size(); ++k) {
      const std::string f = internal::field_index("axes.n", k);
      require_distinct(ns, require_int(v[k], file, f, kMinN, kMaxN), v[k], file, f);
    }
  }
  {
    const json& v =
        axis_values(axes, "L", json(), file,
                    "integers in [" + std::to_string(kMinL) + ", " + std::to_string(kMaxL) + "]");
    for (std::size_t k = 0; k < v.size(); ++k) {
      const std::string f = internal::field_index("axes.L", k);
      require_distinct(Ls, require_int(v[k], file, f, kMinL, kMaxL), v[k], file, f);
    }
  }
  {
    const json& v = axis_values(axes, "trigger_range", json::array({"paper"}), file,
                                "trigger ranges (paper, reference-code)");
    for (std::size_t k = 0; k < v.size(); ++k) {
      const std::string f = internal::field_index("axes.trigger_range", k);
      const std::string name = require_string(v[k], file, f);
      TriggerRange r;
      try {
        r = parse_trigger_range(name);
      } catch (const std::invalid_argument&) {
        throw InputError(file, f, "expected paper or reference-code, got " + json_text(name));
      }
      require_distinct(ranges, r, v[k], file, f);
    }
  }
  {
    const json& v = axis_values(axes, "seed", json::array({0}), file, "integers in [0, 2^64 - 1]");
    for (std::size_t k = 0; k < v.size(); ++k) {
      const std::string f = internal::field_index("axes.seed", k);
      require_distinct(seeds, require_seed(v[k], file, f), v[k], file, f);
    }
  }
  if (root.contains("caption")) g.caption = require_string(root["caption"], file, "caption");
  g.options = json::object();
  if (root.contains("options")) {
    internal::require_object(root["options"], file, "options");
    internal::reject_unknown_members(root["options"], study->option_names, file, "options");
    g.options = root["options"];
  }
  const double count =
      static_cast<double>(kinds.size()) * ns.size() * Ls.size() * ranges.size() * seeds.size();
  if (count > static_cast<double>(kMaxSweepConfigs)) {
    throw InputError(file, "axes",
                     "expected at most " + std::to_string(kMaxSweepConfigs) +
                         " configurations (the product of the axes' lengths), got " +
                         fixed(count, 0));
  }
  for (AttentionKind a : kinds)
    for (int n : ns)
      for (int L : Ls)
        for (TriggerRange r : ranges)
          for (std::uint64_t s : seeds) {
            SweepConfig c;
            c.study = g.study;
            c.attention = a;
            c.task = Task{n, L, r};
            c.seed = s;
            if (c.task.trigger_positions().empty()) {
              throw InputError(file, "axes.L",
                               "expected L >= 3 under the reference-code trigger range (L = " +
                                   std::to_string(L) + " has no trigger position)");
            }
            study->check(c, g.options, file);
            g.configs.push_back(c);
          }
  std::sort(g.configs.begin(), g.configs.end(), config_before);
  // canonical axes: names and numbers, each axis sorted
  json canon_axes = json::object();
  std::vector<std::string> kind_names, range_names;
  for (AttentionKind a : kinds) kind_names.push_back(to_string(a));
  for (TriggerRange r : ranges) range_names.push_back(to_string(r));
  std::sort(kind_names.begin(), kind_names.end());
  std::sort(range_names.begin(), range_names.end());
  std::sort(ns.begin(), ns.end());
  std::sort(Ls.begin(), Ls.end());
  std::sort(seeds.begin(), seeds.end());
  canon_axes["attention"] = kind_names;
  canon_axes["n"] = ns;
  canon_axes["L"] = Ls;
  canon_axes["trigger_range"] = range_names;
  canon_axes["seed"] = seeds;
  g.axes = canon_axes;
  g.digest = fnv1a_hex(json{{"study", g.study}, {"axes", g.axes}, {"options", g.options}}.dump());
  return g;
}

}  // namespace

SweepGrid parse_sweep_grid(const std::string& text, const std::string& file) {
  return internal::reading_json(
      file, [&] { return grid_from_json(internal::parse_json_document(text, file).root, file); });
}

SweepGrid read_sweep_grid(const std::string& path) {
  // the reader's checks (regular file, size, NUL, nesting, duplicate keys)
  return internal::reading_json(
      path, [&] { return grid_from_json(internal::read_json_document(path).root, path); });
}

// --- Result files ----------------------------------------------------------------------

std::string result_path(const std::string& out_dir, const SweepConfig& config) {
  return out_dir + "/configs/" + config_key(config) + ".json";
}

json result_json(const SweepGrid& grid, const SweepConfig& config, const SweepStudyResult& result,
                 int rank, double wall_seconds) {
  const SweepStudy* study = find_sweep_study(config.study);
  std::vector<std::string> summary_text, summary_latex;
  for (const Cell& c : result.summary) {
    summary_text.push_back(c.text);
    summary_latex.push_back(c.latex);
  }
  return {{"format", kResultFormat},
          {"version", kVersion},
          {"key", config_key(config)},
          {"config", to_json(config)},
          {"grid_digest", grid.digest},
          {"grid", {{"study", grid.study}, {"axes", grid.axes}, {"options", grid.options}}},
          {"summary_columns", study ? study->summary_columns : std::vector<std::string>{}},
          {"summary", summary_text},
          {"summary_latex", summary_latex},
          {"rank", rank},
          {"wall_seconds", wall_seconds},
          {"result", result.result},
          {"complete", true}};
}

namespace {

ResultState check_result_file_of(const std::string& path, const SweepGrid& grid,
                                 const SweepConfig& config, std::string* why) {
  struct stat sb;
  if (lstat(path.c_str(), &sb) != 0) return ResultState::kMissing;
  if (!S_ISREG(sb.st_mode)) {
    throw InputError(path, "(file)", "expected a regular file (a sweep result), got another kind");
  }
  json j;
  try {
    j = internal::read_json_file(path);
  } catch (const InputError& e) {
    if (why) *why = e.what();
    return ResultState::kIncomplete;
  }
  if (!j.is_object() || j.value("format", "") != kResultFormat || !j.contains("key") ||
      !j.contains("config") || !j.contains("grid_digest") || !j.contains("summary") ||
      !j.contains("summary_columns") || j.value("complete", false) != true) {
    if (why) *why = "not a complete sweep result";
    return ResultState::kIncomplete;
  }
  const std::string key = config_key(config);
  const std::string again =
      "; use another --out, or remove the folder's configs/ to run the grid again";
  if (j["key"] != key) {
    throw InputError(path, "key",
                     "expected " + json_text(key) + ", got " + j["key"].dump() + again);
  }
  if (j["config"] != to_json(config)) {
    throw InputError(path, "config",
                     "expected " + to_json(config).dump() + ", got " + j["config"].dump() + again);
  }
  if (j["grid_digest"] != grid.digest) {
    throw InputError(path, "grid_digest",
                     "expected " + json_text(grid.digest) + " (the grid " + grid.file + "), got " +
                         j["grid_digest"].dump() + ": a result of another grid" + again);
  }
  const SweepStudy* study = find_sweep_study(config.study);
  if (j["summary_columns"] != json(study->summary_columns) || !j["summary"].is_array() ||
      j["summary"].size() != study->summary_columns.size()) {
    throw InputError(path, "summary_columns",
                     "expected " + json(study->summary_columns).dump() + ", got " +
                         j["summary_columns"].dump() + ": a result of another version" + again);
  }
  return ResultState::kComplete;
}

}  // namespace

ResultState check_result_file(const std::string& path, const SweepGrid& grid,
                              const SweepConfig& config, std::string* why) {
  return internal::reading_json(path,
                                [&] { return check_result_file_of(path, grid, config, why); });
}

// --- The merged table ----------------------------------------------------------------------

namespace {

json read_complete_result(const std::string& path, const SweepGrid& grid,
                          const SweepConfig& config) {
  std::string why;
  const ResultState s = check_result_file(path, grid, config, &why);
  if (s != ResultState::kComplete) {
    throw InputError(path, "(file)",
                     s == ResultState::kMissing
                         ? "expected the result of " + config_key(config) + ", but it is missing"
                         : "expected a complete result: " + why);
  }
  return internal::read_json_file(path);
}

std::string seeds_text(const SweepGrid& grid) {
  std::string out;
  for (const auto& s : grid.axes["seed"]) {
    out += (out.empty() ? "" : ", ") + std::to_string(s.get<std::uint64_t>());
  }
  return out;
}

std::string basename_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Table merged_table(const SweepGrid& grid, const std::string& out_dir) {
  const SweepStudy* study = find_sweep_study(grid.study);
  Table t;
  t.name = "sweep";
  t.caption = "sinkcert sweep of the " + grid.study + " study over the grid " +
              basename_of(grid.file) + " (digest " + grid.digest +
              "): one row per configuration, in key order; each study column names its "
              "evidence level." +
              (grid.caption.empty() ? std::string() : " " + grid.caption);
  t.columns = {"study", "attention", "n", "L", "trigger range", "seed"};
  for (const auto& c : study->summary_columns) t.columns.push_back(c);
  for (const SweepConfig& c : grid.configs) {
    const json j = read_complete_result(result_path(out_dir, c), grid, c);
    std::vector<Cell> row = {c.study,
                             to_string(c.attention),
                             std::to_string(c.task.n),
                             std::to_string(c.task.L),
                             to_string(c.task.range),
                             std::to_string(c.seed)};
    const json& latex = j.value("summary_latex", json::array());
    for (std::size_t k = 0; k < j["summary"].size(); ++k) {
      const json& text = j["summary"][k];
      row.emplace_back(
          text.is_string() ? text.get<std::string>() : text.dump(),
          k < latex.size() && latex[k].is_string() ? latex[k].get<std::string>() : std::string());
    }
    t.rows.push_back(std::move(row));
  }
  t.notes.push_back("seeds of the grid: " + seeds_text(grid));
  t.notes.push_back("study options: " + grid.options.dump());
  t.notes.push_back("wall times are in sweep_times.csv, the full results in configs/<key>.json");
  t.landscape = t.columns.size() > 8;
  return t;
}

std::vector<std::string> write_merged_table(const SweepGrid& grid, const std::string& out_dir,
                                            const RunInfo& info) {
  const Table t = merged_table(grid, out_dir);
  std::string times = provenance_header("# ", "sinkcert sweep times", info);
  times += "key,rank,wall_seconds\n";
  for (const SweepConfig& c : grid.configs) {
    const json j = internal::read_json_file(result_path(out_dir, c));
    char buf[64];
    std::snprintf(buf, sizeof buf, ",%d,%.3f\n", j.value("rank", -1), j.value("wall_seconds", 0.0));
    times += config_key(c) + buf;
  }
  json tj = to_json(t, info);
  tj["grid"] = {{"file", grid.file}, {"digest", grid.digest},   {"study", grid.study},
                {"axes", grid.axes}, {"options", grid.options}, {"caption", grid.caption}};
  const std::string stem = out_dir + "/sweep";
  write_file_atomically(stem + ".tex", to_latex(t, info));
  write_file_atomically(stem + ".csv", to_csv(t, info));
  write_file_atomically(stem + ".json", tj.dump(2) + "\n");
  write_file_atomically(out_dir + "/sweep_times.csv", times);
  return {stem + ".json", stem + ".csv", stem + ".tex", out_dir + "/sweep_times.csv"};
}

// --- Running ----------------------------------------------------------------------------------

int launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  }
  // PMIx (srun --mpi=pmix) names the rank; a rank above 0 means several
  for (const char* name : {"PMIX_RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v) > 0 ? 2 : 1;
  }
  return 1;
}

namespace {

bool launched_by_mpi() {
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

// Runs configurations and writes their result files.
struct Runner {
  const SweepGrid& grid;
  std::string out;
  RunInfo info;
  int rank = 0;
  SweepProgress say;

  bool run(std::size_t index) const {
    const SweepConfig& c = grid.configs[index];
    const std::string key = config_key(c);
    const std::string who = "rank " + std::to_string(rank);
    say(who + ": running " + key);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const SweepStudy* study = find_sweep_study(c.study);
      RunInfo ci = info;
      ci.seed = c.seed;
      const SweepStudyResult r = study->run(c, grid.options, ci, [&](const std::string& line) {
        say(who + ": " + key + ": " + line);
      });
      if (r.summary.size() != study->summary_columns.size()) {
        throw std::logic_error("study " + c.study + " returned " +
                               std::to_string(r.summary.size()) + " summary cells for " +
                               std::to_string(study->summary_columns.size()) + " columns");
      }
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      write_file_atomically(result_path(out, c),
                            result_json(grid, c, r, rank, wall).dump(1) + "\n");
      return true;
    } catch (const std::exception& e) {
      say(who + ": " + key + " failed: " + e.what());
      return false;
    }
  }
};

std::string done_text(int done, int total) {
  return "(" + std::to_string(done) + "/" + std::to_string(total) + " done)";
}

// Checks the grid's existing results: the indices still to run.
std::vector<std::size_t> pending_configs(const SweepGrid& grid, const std::string& out,
                                         SweepOutcome& outcome, const SweepProgress& say) {
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < grid.configs.size(); ++i) {
    const std::string path = result_path(out, grid.configs[i]);
    std::string why;
    switch (check_result_file(path, grid, grid.configs[i], &why)) {
      case ResultState::kComplete:
        ++outcome.skipped;
        say(config_key(grid.configs[i]) + ": finished earlier (" + path + "), skipped " +
            done_text(outcome.skipped, outcome.total));
        break;
      case ResultState::kIncomplete:
        say(config_key(grid.configs[i]) + ": " + path + " is not a complete result (" + why +
            "): running it again");
        pending.push_back(i);
        break;
      case ResultState::kMissing:
        pending.push_back(i);
        break;
    }
  }
  return pending;
}

// "NAME.tmp.PID" -> PID (0 if `name` is not "<stem>.tmp.<digits>").
long temporary_pid(const std::string& name, const std::string& stem) {
  const std::string prefix = stem + ".tmp.";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return 0;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stol(digits);
}

bool process_alive(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

}  // namespace

std::vector<std::string> remove_stale_temporaries(const SweepGrid& grid, const std::string& out_dir,
                                                  const std::vector<std::size_t>& pending) {
  // stem of every file a sweep writes atomically, and whether it is about
  // to be written by this run (then any temporary of it is stale)
  std::vector<std::pair<std::string, bool>> stems;
  std::vector<bool> is_pending(grid.configs.size(), false);
  for (std::size_t i : pending) is_pending[i] = true;
  for (std::size_t i = 0; i < grid.configs.size(); ++i) {
    stems.emplace_back(result_path(out_dir, grid.configs[i]), is_pending[i]);
  }
  for (const char* name : {"sweep.json", "sweep.csv", "sweep.tex", "sweep_times.csv"}) {
    stems.emplace_back(out_dir + "/" + name, false);
  }
  std::vector<std::string> removed;
  for (const auto& [stem, about_to_run] : stems) {
    const std::size_t slash = stem.rfind('/');
    const std::string dir = stem.substr(0, slash), base = stem.substr(slash + 1);
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) continue;
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
    ::closedir(d);
    for (const std::string& name : names) {
      const long pid = temporary_pid(name, base);
      if (pid <= 0 || (!about_to_run && process_alive(pid))) continue;
      const std::string path = dir + "/" + name;
      struct stat sb;
      if (lstat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
      if (::unlink(path.c_str()) == 0) removed.push_back(path);
    }
  }
  return removed;
}

namespace {

// remove_stale_temporaries, each removal said.
void clean_temporaries(const SweepGrid& grid, const std::string& out,
                       const std::vector<std::size_t>& pending, const SweepProgress& say) {
  for (const std::string& path : remove_stale_temporaries(grid, out, pending)) {
    say("removed " + path + " (the temporary of a killed run)");
  }
}

void finish(const SweepGrid& grid, const std::string& out, const RunInfo& info,
            SweepOutcome& outcome) {
  if (!outcome.failed.empty()) {
    std::string keys;
    for (const auto& k : outcome.failed) keys += (keys.empty() ? "" : ", ") + k;
    throw std::runtime_error(std::to_string(outcome.failed.size()) + " configuration(s) failed (" +
                             keys +
                             "; errors above); the merged table was not written; a rerun "
                             "retries them");
  }
  write_merged_table(grid, out, info);
  outcome.merged = true;
}

RunInfo sweep_info(const SweepGrid& grid, const std::vector<std::string>& argv) {
  return make_run_info(argv, grid.axes["seed"].front().get<std::uint64_t>(), "double");
}

#ifdef SINKCERT_HAVE_MPI
constexpr int kTagReport = 1;  // worker -> rank 0: {finished index or -1, status}
constexpr int kTagWork = 2;    // rank 0 -> worker: index to run, or -1: stop

// Waits for a receive without spinning a core (Open MPI busy-polls in
// MPI_Recv; the workers need the cores).
void receive(void* buf, int count, int source, int tag, MPI_Status* status) {
  MPI_Request req;
  MPI_Irecv(buf, count, MPI_INT, source, tag, MPI_COMM_WORLD, &req);
  for (int flag = 0;;) {
    MPI_Test(&req, &flag, status);
    if (flag) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

struct MpiSession {
  MpiSession() { MPI_Init(nullptr, nullptr); }
  ~MpiSession() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
};

SweepOutcome run_sweep_mpi(const std::string& grid_file, const std::string& out,
                           const std::vector<std::string>& argv, const SweepProgress& say) {
  MpiSession session;
  SweepOutcome outcome;
  MPI_Comm_rank(MPI_COMM_WORLD, &outcome.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &outcome.ranks);
  outcome.root = outcome.rank == 0;
  if (!outcome.root) {
    int status = 0;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status != 0) {
      outcome.quiet_exit_code = 2;
      return outcome;
    }
    SweepGrid grid;
    try {
      grid = read_sweep_grid(grid_file);
    } catch (const std::exception& e) {
      // rank 0 read it a moment ago: the file changed under us
      say("rank " + std::to_string(outcome.rank) + ": " + e.what());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const Runner runner{grid, out, sweep_info(grid, argv), outcome.rank, say};
    int report[2] = {-1, 0};
    for (;;) {
      MPI_Send(report, 2, MPI_INT, 0, kTagReport, MPI_COMM_WORLD);
      int index = -1;
      receive(&index, 1, 0, kTagWork, MPI_STATUS_IGNORE);
      if (index < 0) break;
      report[0] = index;
      report[1] = runner.run(static_cast<std::size_t>(index)) ? 0 : 1;
    }
    return outcome;
  }
  SweepGrid grid;
  std::vector<std::size_t> pending;
  std::exception_ptr error;
  try {
    grid = read_sweep_grid(grid_file);
    outcome.total = static_cast<int>(grid.configs.size());
    check_output_dir(out, "--out");
    pending = pending_configs(grid, out, outcome, say);
    clean_temporaries(grid, out, pending, say);
  } catch (...) {
    error = std::current_exception();
  }
  int status = error ? 1 : 0;
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (error) std::rethrow_exception(error);
  const RunInfo info = sweep_info(grid, argv);
  const int workers = outcome.ranks - 1;
  say(std::to_string(outcome.total) + " configurations, " + std::to_string(outcome.skipped) +
      " finished earlier, " + std::to_string(pending.size()) + " to run on " +
      (workers == 0 ? std::string("rank 0") : std::to_string(workers) + " worker rank(s)"));
  int done = outcome.skipped;
  if (workers == 0) {
    const Runner runner{grid, out, info, 0, say};
    for (std::size_t i : pending) {
      const bool ok = runner.run(i);
      ++done;
      if (ok) {
        ++outcome.ran;
        say(config_key(grid.configs[i]) + " finished on rank 0 " + done_text(done, outcome.total));
      } else {
        outcome.failed.push_back(config_key(grid.configs[i]));
      }
    }
  } else {
    std::size_t next = 0;
    for (int active = workers; active > 0;) {
      int report[2];
      MPI_Status st;
      receive(report, 2, MPI_ANY_SOURCE, kTagReport, &st);
      if (report[0] >= 0) {
        const std::string key = config_key(grid.configs[static_cast<std::size_t>(report[0])]);
        ++done;
        if (report[1] == 0) {
          ++outcome.ran;
          say(key + " finished on rank " + std::to_string(st.MPI_SOURCE) + " " +
              done_text(done, outcome.total));
        } else {
          outcome.failed.push_back(key);
        }
      }
      const int index = next < pending.size() ? static_cast<int>(pending[next++]) : -1;
      MPI_Send(&index, 1, MPI_INT, st.MPI_SOURCE, kTagWork, MPI_COMM_WORLD);
      if (index < 0) --active;
    }
  }
  finish(grid, out, info, outcome);
  return outcome;
}
#endif

}  // namespace

SweepOutcome run_sweep(const std::string& grid_file, const std::string& out,
                       const std::vector<std::string>& argv, const SweepProgress& progress) {
  const SweepProgress say = [&](const std::string& line) {
    if (progress) progress(line);
  };
#ifdef SINKCERT_HAVE_MPI
  if (launched_by_mpi()) return run_sweep_mpi(grid_file, out, argv, say);
#else
  if (launched_by_mpi() && launcher_size() > 1) {
    throw InputError("command line", "mpirun",
                     "this sinkcert was built without MPI (no Open MPI at configure time), so "
                     "its ranks cannot share a grid: run one process, or rebuild with "
                     "libopenmpi-dev installed");
  }
#endif
  SweepOutcome outcome;
  const SweepGrid grid = read_sweep_grid(grid_file);
  outcome.total = static_cast<int>(grid.configs.size());
  check_output_dir(out, "--out");
  const std::vector<std::size_t> pending = pending_configs(grid, out, outcome, say);
  clean_temporaries(grid, out, pending, say);
  const RunInfo info = sweep_info(grid, argv);
  say(std::to_string(outcome.total) + " configurations, " + std::to_string(outcome.skipped) +
      " finished earlier, " + std::to_string(pending.size()) + " to run in this process");
  const Runner runner{grid, out, info, 0, say};
  int done = outcome.skipped;
  for (std::size_t i : pending) {
    const bool ok = runner.run(i);
    ++done;
    if (ok) {
      ++outcome.ran;
      say(config_key(grid.configs[i]) + " finished on rank 0 " + done_text(done, outcome.total));
    } else {
      outcome.failed.push_back(config_key(grid.configs[i]));
    }
  }
  finish(grid, out, info, outcome);
  return outcome;
}

}  // namespace sinkcert::theorems::studies
