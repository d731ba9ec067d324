// SPDX-License-Identifier: MIT
#include "theorems/reports/theorem1_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "src/evidence.h"
#include "src/input_error.h"
#include "src/json_reader.h"
#include "src/weight_file.h"
#include "theorems/reports/figure_frame.h"
#include "theorems/reports/precision_report.h"

namespace sinkcert::theorems::reports {

namespace {

// A double as "%.17g": enough digits to read back the same double.
std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string flag(bool b) { return b ? "1" : "0"; }

}  // namespace

nlohmann::json witness_json(const search::Witness& w) {
  nlohmann::json rows = nlohmann::json::array();
  for (int r = 0; r < w.content.rows(); ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (int c = 0; c < w.content.cols(); ++c) row.push_back(w.content(r, c));
    rows.push_back(row);
  }
  return {{"trigger", w.trigger}, {"content", rows}};
}

namespace {

std::vector<Cell> header(const std::vector<std::string>& names) {
  return std::vector<Cell>(names.begin(), names.end());
}

}  // namespace

Table path_table(const studies::Theorem1Study& st) {
  Table t;
  t.name = "path";
  t.caption = "Theorem 1 descent path (" + task_string(st.options.task) +
              "): one row per optimizer round of each start.";
  t.notes = {
      "worst_case: SEARCH(lower bound), certified at the witness; worst_case_double and the "
      "other values NUMERIC(53); double_disagrees = 1 where the two differ in the first "
      "significant digit"};
  t.columns = header({"start", "round", "event", "elapsed_s", "worst_case", "sampled_max",
                      "sampled_mean", "bos_mean", "bos_min", "active_size", "max_abs_A",
                      "worst_case_double", "double_disagrees"});
  for (const studies::PathPoint& p : st.path) {
    t.rows.push_back({std::to_string(p.start), std::to_string(p.round), p.event, fmt(p.elapsed),
                      fmt(p.worst_case), fmt(p.sampled_max), fmt(p.sampled_mean), fmt(p.bos_mean),
                      fmt(p.bos_min), std::to_string(p.active_size), fmt(p.max_abs_A),
                      fmt(p.worst_case_double), flag(p.double_disagrees)});
  }
  return t;
}

Table frontier_table(const studies::Theorem1Study& st) {
  Table t;
  t.name = "frontier";
  t.caption = "Theorem 1 frontier (" + task_string(st.options.task) +
              "): one row per delta, the best model found with mean BOS mass <= 1 - delta.";
  t.caption_latex = "Theorem 1 frontier (" + latex_escape(task_string(st.options.task)) +
                    "): one row per $\\delta$, the best model found with mean BOS mass "
                    "$\\le 1-\\delta$.";
  t.notes = {std::string("frontier_model_worst_case: ") + studies::kFrontierPointMeaning,
             "mean_bos and frontier_model_worst_case_double NUMERIC(53); double_disagrees = 1 "
             "where the two differ in the first digit"};
  t.columns = header({"delta", "bos_ceiling", "frontier_model_worst_case", "mean_bos", "feasible",
                      "converged", "frontier_model_worst_case_double", "double_disagrees"});
  for (const studies::FrontierPoint& p : st.frontier) {
    t.rows.push_back({fmt(p.delta), fmt(p.ceiling), fmt(p.eps), fmt(p.bos_mean), flag(p.feasible),
                      flag(p.converged), fmt(p.eps_double), flag(p.double_disagrees)});
  }
  return t;
}

Table nuance_table(const studies::Theorem1Study& st) {
  Table t;
  t.name = "nuance";
  t.caption = "BOS mass against content scale (" + task_string(st.options.task) +
              "): probes with the content multiplied by t.";
  t.notes = {"every value NUMERIC(53)"};
  t.columns = header({"model", "content_scale", "bos_mean", "bos_min", "sampled_error_max"});
  for (const studies::NuancePoint& p : st.nuance) {
    t.rows.push_back({p.model, fmt(p.scale), fmt(p.bos_mean), fmt(p.bos_min), fmt(p.error_max)});
  }
  return t;
}

Figure theorem1_figure_frame(const std::string& name, const Task& task) {
  static const std::vector<FigureText> texts = {
      {"path",
       std::string("Descent path") + kStudyMark +
           ": per optimizer round and start, the worst-case loss the adversary finds on the "
           "current model (solid) and 1 - its mean BOS mass over the probe set (dashed, the same "
           "colour for the same start); both fall together as the model learns the task with a "
           "sink.",
       std::string("Descent path") + kStudyMark +
           ": per optimizer round and start, the worst-case loss $E$ the adversary finds on the "
           "current model (solid) and $1-\\bar a_{i0}$, one minus its mean BOS mass over the "
           "probe set (dashed, the same colour for the same start); both fall together as the "
           "model learns the task with a sink.",
       "worst case SEARCH(lower bound on that model's E, certified at the adversary's "
       "witness); BOS mass NUMERIC(53)"},
      {"frontier",
       std::string("Loss-sink frontier") + kStudyMark +
           ": for each delta, the worst case of the best model found whose mean BOS mass is at "
           "most 1 - delta, against delta (log-log, with the fitted slope). Each point bounds "
           "that model's E from below; it is no bound on eps*(delta).",
       std::string("Loss-sink frontier") + kStudyMark +
           ": for each $\\delta$, the worst case $E$ of the best model found whose mean BOS mass "
           "is at most $1-\\delta$, against $\\delta$ (log-log, with the fitted slope). Each "
           "point bounds that model's $E$ from below; it is no bound on "
           "$\\varepsilon^*(\\delta)$.",
       "SEARCH(lower bound)"},
      {"nuance",
       std::string("BOS mass against content scale") + kStudyMark +
           ": the mean (solid) and minimum (dashed) non-trigger BOS mass over probes with their "
           "content multiplied by t, for the path model and two frontier models. Theorem 1 "
           "holds with high probability over the content: inputs whose content is near 0 need "
           "not sink, and a curve that fell towards t = 0 would show a model spending its BOS "
           "deficit there.",
       std::string("BOS mass against content scale") + kStudyMark +
           ": the mean (solid) and minimum (dashed) non-trigger BOS mass $a_{i0}$ over probes "
           "with their content multiplied by $t$, for the path model and two frontier models. "
           "Theorem 1 holds with high probability over the content: inputs whose content is "
           "near 0 need not sink, and a curve that fell towards $t=0$ would show a model "
           "spending its BOS deficit there.",
       "NUMERIC(53)"},
  };
  return figure_frame(name, "Theorem 1",
                      " (Theorem 1 study, single-layer softmax, " + task_string(task) + ")", texts);
}

namespace {

// A BOS mass for a caption: "1 - 6.87e-12" near 1, else 4 digits.
std::string bos_words(double mass) {
  char buf[64];
  if (mass > 0.999) {
    std::snprintf(buf, sizeof buf, "1 - %.3g", 1 - mass);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", mass);
  }
  return buf;
}

}  // namespace

std::string nuance_summary(const std::vector<studies::NuancePoint>& points) {
  if (points.empty()) return "No BOS mass against content was measured.";
  // per model, in order of appearance: its points at the smallest and largest t
  std::vector<std::string> models;
  for (const studies::NuancePoint& p : points) {
    if (std::find(models.begin(), models.end(), p.model) == models.end()) {
      models.push_back(p.model);
    }
  }
  std::ostringstream out;
  out << "Measured (mean, and min in parentheses, at the smallest and the largest t): ";
  double largest_change = 0;         // max over models and t of |mean(t) - mean(t_max)|
  std::string falls, rises;          // models whose mean is lower / higher at the smallest t
  constexpr double kVisible = 1e-3;  // a change of the mean this large shows on the plot
  for (std::size_t m = 0; m < models.size(); ++m) {
    const studies::NuancePoint *lo = nullptr, *hi = nullptr;
    for (const studies::NuancePoint& p : points) {
      if (p.model != models[m]) continue;
      if (!lo || p.scale < lo->scale) lo = &p;
      if (!hi || p.scale > hi->scale) hi = &p;
    }
    for (const studies::NuancePoint& p : points) {
      if (p.model == models[m])
        largest_change = std::max(largest_change, std::abs(p.bos_mean - hi->bos_mean));
    }
    if (lo->bos_mean < hi->bos_mean - kVisible) falls += (falls.empty() ? "" : ", ") + models[m];
    if (lo->bos_mean > hi->bos_mean + kVisible) rises += (rises.empty() ? "" : ", ") + models[m];
    char t_lo[32], t_hi[32];
    std::snprintf(t_lo, sizeof t_lo, "%g", lo->scale);
    std::snprintf(t_hi, sizeof t_hi, "%g", hi->scale);
    out << (m == 0 ? "" : "; ") << (models[m] == "path" ? "path model" : models[m]) << " "
        << bos_words(lo->bos_mean) << " (" << bos_words(lo->bos_min) << ") at t = " << t_lo
        << " and " << bos_words(hi->bos_mean) << " (" << bos_words(hi->bos_min)
        << ") at t = " << t_hi;
  }
  char change[32];
  std::snprintf(change, sizeof change, "%.2g", largest_change);
  out << ". ";
  if (falls.empty() && rises.empty()) {
    out << "The mean BOS mass hardly depends on the content scale (it changes by at most " << change
        << " over t): these models do not spend their BOS deficit on inputs with small "
           "content.";
  } else {
    if (!falls.empty()) {
      out << "The mean BOS mass is lower at small content for " << falls
          << ": that model spends part of its BOS deficit on inputs with small content. ";
    }
    if (!rises.empty()) {
      out << "The mean BOS mass is higher at small content for " << rises << ". ";
    }
    out << "Largest change of a mean over t: " << change << ".";
  }
  return out.str();
}

Figure path_figure(const studies::Theorem1Study& st) {
  Figure f = theorem1_figure_frame("path", st.options.task);
  f.columns = {"start", "round", "worst_case", "bos_mean"};
  for (const studies::PathPoint& p : st.path) {
    f.rows.push_back(
        {std::to_string(p.start), std::to_string(p.round), fmt(p.worst_case), fmt(p.bos_mean)});
  }
  const std::string last = std::to_string(std::max<int>(0, static_cast<int>(st.runs.size()) - 1));
  f.plot = std::string(kLineColours) +
           "set key top right\nset grid\nset logscale y\nset format y '10^{%T}'\n"
           "set xlabel 'optimizer round'\n"
           "set ylabel 'worst case E (solid); 1 - mean BOS mass (dashed)'\n"
           "set title 'Theorem 1 descent path: worst case (SEARCH, lower bound) and 1 - mean "
           "BOS (NUMERIC(53))' noenhanced\n"
           "plot for [s=0:" +
           last +
           "] data using ($1==s ? $2 : 1/0):3 with linespoints linecolor s+1 pointtype 7 "
           "pointsize 0.6 title sprintf('worst case, start %d', s), \\\n  for [s=0:" +
           last +
           "] data using ($1==s ? $2 : 1/0):(1-$4) with lines linecolor s+1 dashtype 2 "
           "title sprintf('1 - mean BOS, start %d', s)\n";
  return f;
}

Figure frontier_figure(const studies::Theorem1Study& st) {
  Figure f = theorem1_figure_frame("frontier", st.options.task);
  f.columns = {"delta", "frontier_model_worst_case", "feasible"};
  for (const studies::FrontierPoint& p : st.frontier) {
    f.rows.push_back({fmt(p.delta), fmt(p.eps), flag(p.feasible)});
  }
  f.plot =
      std::string(kLineColours) +
      "set key top left\nset grid\nset logscale xy\nset format y '10^{%T}'\n"
      "set xlabel '{/Symbol d} (mean BOS mass <= 1 - {/Symbol d})'\n"
      "set ylabel 'worst case of the frontier model (SEARCH, lower bound)'\n"
      "set title sprintf(\"Worst case of the frontier model at delta (SEARCH: lower bound on "
      "that model's E,\\nno bound on eps*(delta) until the model is certified); fit slope %.3f "
      "+- %.3f\", " +
      fmt(st.slope) + ", " + fmt(st.slope_stderr) +
      ")\n"
      "plot data using 1:($3==1 ? $2 : 1/0) with linespoints linecolor 1 pointtype 7 title "
      "'frontier model worst case (SEARCH, lower bound)'\n";
  return f;
}

Figure nuance_figure(const studies::Theorem1Study& st) {
  Figure f = theorem1_figure_frame("nuance", st.options.task);
  f.columns = {"model", "content_scale", "bos_mean", "bos_min"};
  for (const studies::NuancePoint& p : st.nuance) {
    f.rows.push_back({p.model, fmt(p.scale), fmt(p.bos_mean), fmt(p.bos_min)});
  }
  f.caption += " " + nuance_summary(st.nuance);
  if (!f.caption_latex.empty()) f.caption_latex += " " + latex_escape(nuance_summary(st.nuance));
  // per model one colour: mean solid with points, min dashed
  const std::vector<std::pair<std::string, std::string>> models = {
      {"path", "path model"},
      {"frontier delta=0.05", "frontier delta = 0.05"},
      {"frontier delta=0.5", "frontier delta = 0.5"}};
  std::string plot = std::string(kLineColours) +
                     "set key bottom left\nset grid\nset yrange [0:1.05]\n"
                     "set xlabel 'content scale t (content multiplied by t)'\n"
                     "set ylabel 'non-trigger BOS mass a_{i0}'\n"
                     "set title 'BOS mass against content scale (NUMERIC(53))'\nplot ";
  for (std::size_t k = 0; k < models.size(); ++k) {
    const std::string select = "data using ((strcol(1) eq '" + models[k].first + "') ? $2 : 1/0)";
    const std::string colour = " linecolor " + std::to_string(k + 1);
    plot += (k == 0 ? "" : ", \\\n  ") + select + ":3 with linespoints" + colour +
            " pointtype 7 pointsize 0.6 title '" + models[k].second + ": mean' noenhanced, \\\n  " +
            select + ":4 with lines" + colour + " dashtype 2 title '" + models[k].second +
            ": min' noenhanced";
  }
  f.plot = plot + "\n";
  return f;
}

std::vector<studies::NuancePoint> read_nuance_points(const std::string& json_path) {
  std::ifstream in(json_path);
  if (!in) throw InputError(json_path, "file", "a theorem1.json written by sinkcert theorem1");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw InputError(json_path, "document", "JSON");
  const std::string field = "with_high_probability.points";
  if (!j.contains("with_high_probability") || !j["with_high_probability"].is_object() ||
      !j["with_high_probability"].contains("points") ||
      !j["with_high_probability"]["points"].is_array()) {
    throw InputError(json_path, field, "an array (a theorem1.json written by sinkcert)");
  }
  std::vector<studies::NuancePoint> points;
  const nlohmann::json& list = j["with_high_probability"]["points"];
  for (std::size_t k = 0; k < list.size(); ++k) {
    const nlohmann::json& p = list[k];
    const std::string where = field + "[" + std::to_string(k) + "]";
    const auto number = [&](const char* key) {
      if (!p.is_object() || !p.contains(key) || !p[key].is_number()) {
        throw InputError(json_path, where + "." + key, "a number");
      }
      return p[key].get<double>();
    };
    if (!p.is_object() || !p.contains("model") || !p["model"].is_string()) {
      throw InputError(json_path, where + ".model", "a model name");
    }
    points.push_back({p["model"].get<std::string>(), number("content_scale"), number("bos_mean"),
                      number("bos_min"), number("sampled_error_max")});
  }
  return points;
}

namespace {

EdgeRun read_edge_run_of(const Task& task, const std::string& json_path) {
  EdgeRun run;
  run.task = task;
  if (task.trigger_positions().empty()) {
    run.has_trigger = false;
    return run;
  }
  std::ifstream in(json_path);
  if (!in)
    throw InputError(json_path, "file",
                     "the theorem1.json of a hypothesis-edge run (it is missing)");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw InputError(json_path, "document", "JSON");
  // the field at a path of keys (strings) and indices, or an InputError naming it
  const auto at = [&](std::initializer_list<nlohmann::json> keys) -> const nlohmann::json& {
    const nlohmann::json* node = &j;
    std::string where;
    for (const nlohmann::json& k : keys) {
      if (k.is_string()) {
        where += (where.empty() ? "" : ".") + k.get<std::string>();
        if (!node->is_object() || !node->contains(k.get<std::string>())) {
          throw InputError(json_path, where, "present (a theorem1.json written by sinkcert)");
        }
        node = &(*node)[k.get<std::string>()];
      } else {
        const std::size_t i = k.get<std::size_t>();
        where += "[" + std::to_string(i) + "]";
        if (!node->is_array() || node->size() <= i) {
          throw InputError(json_path, where, "present (a theorem1.json written by sinkcert)");
        }
        node = &(*node)[i];
      }
    }
    return *node;
  };
  const auto number = [&](const nlohmann::json& v, const std::string& field) {
    if (!v.is_number()) throw InputError(json_path, field, "a number");
    return v.get<double>();
  };
  if (at({"task", "n"}) != task.n || at({"task", "L"}) != task.L ||
      at({"task", "trigger_range"}) != to_string(task.range)) {
    throw InputError(json_path, "task", "the run on " + task_string(task));
  }
  const nlohmann::json& path = at({"path"});
  if (!path.is_array() || path.empty()) throw InputError(json_path, "path", "a non-empty array");
  // the start with the smallest worst case (the first of equals)
  std::size_t best = 0;
  for (std::size_t k = 0; k < path.size(); ++k) {
    const double w =
        number(at({"path", k, "worst_case"}), "path[" + std::to_string(k) + "].worst_case");
    if (k == 0 || w < run.path_worst_case) {
      run.path_worst_case = w;
      best = k;
    }
  }
  const nlohmann::json& heads = at({"path", best, "bos_statistics", "bos_mass", "heads"});
  if (heads.is_array() && !heads.empty()) {
    const nlohmann::json& overall =
        at({"path", best, "bos_statistics", "bos_mass", "heads", 0, "overall"});
    if (overall.contains("count") && overall["count"].is_number() &&
        overall["count"].get<double>() > 0) {
      run.has_bos = true;
      run.path_mean_bos = number(overall["mean"], "overall.mean");
    }
  }
  const nlohmann::json& frontier = at({"frontier"});
  for (std::size_t k = 0; k < frontier.size(); ++k) {
    if (at({"frontier", k, "feasible"}) == true) {
      run.eps.emplace_back(number(at({"frontier", k, "delta"}), "frontier.delta"),
                           number(at({"frontier", k, "eps"}), "frontier.eps"));
    }
  }
  const nlohmann::json& verdict = at({"verdict"});
  try {
    run.verdict =
        studies::study_verdict_from_string(verdict.is_string() ? verdict.get<std::string>() : "");
  } catch (const std::invalid_argument&) {
    throw InputError(json_path, "verdict",
                     "CONSISTENT, COUNTEREXAMPLE CANDIDATE, INCONCLUSIVE or NOT APPLICABLE");
  }
  return run;
}

}  // namespace

EdgeRun read_edge_run(const Task& task, const std::string& json_path) {
  return internal::reading_json(json_path, [&] { return read_edge_run_of(task, json_path); });
}

Table edges_table(const std::vector<EdgeRun>& runs) {
  Table t;
  t.name = "t1_hypothesis_edges";
  t.caption =
      "Theorem 1 at the hypothesis edges (theorem1 runs with seed 0 at n = 3, 4 and L = 2, 3 "
      "beside n = 5, L = 4, under both trigger-range conventions).";
  t.columns = {"n",
               "L",
               "trigger range",
               "path worst case",
               "path mean BOS",
               Cell("eps(0.5)", "$\\varepsilon(0.5)$"),
               Cell("eps(0.05)", "$\\varepsilon(0.05)$"),
               Cell("eps(0.005)", "$\\varepsilon(0.005)$"),
               "verdict"};
  t.alignment = "rrlrrrrrl";
  t.landscape = true;
  t.notes = {
      "Path: worst case SEARCH(lower bound) and mean non-trigger BOS mass NUMERIC(53) of the "
      "best path model.",
      "eps(delta): SEARCH lower bound on the worst case of the best model found with mean BOS "
      "<= 1 - delta (that model is an upper-bound witness for eps*(delta) once certified).",
      "Read from theorem1/edges/n<n>_L<L>_<range>/theorem1.json."};
  t.notes_latex = {
      "",
      "$\\varepsilon(\\delta)$: SEARCH lower bound on the worst case of the best model found "
      "with mean BOS mass $\\le 1-\\delta$ (that model is an upper-bound witness for "
      "$\\varepsilon^*(\\delta)$ once certified).",
      ""};
  const auto g = [](double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return std::string(buf);
  };
  for (const EdgeRun& r : runs) {
    std::vector<Cell> row{std::to_string(r.task.n), std::to_string(r.task.L),
                          to_string(r.task.range)};
    if (!r.has_trigger) {
      for (int k = 0; k < 5; ++k) row.push_back("-");
      row.push_back("no trigger position: rejected (exit 2)");
      t.rows.push_back(std::move(row));
      continue;
    }
    row.push_back(g(r.path_worst_case, 2));
    if (r.has_bos) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.10f", r.path_mean_bos);
      row.push_back(std::string(buf));
    } else {
      row.push_back("n/a");
    }
    for (double delta : {0.5, 0.05, 0.005}) {
      std::string cell = "-";
      for (const auto& [d, eps] : r.eps) {
        if (d == delta) cell = g(eps, 3);
      }
      row.push_back(cell);
    }
    row.push_back(to_string(r.verdict));
    t.rows.push_back(std::move(row));
  }
  return t;
}

namespace {

// A file the study writes: a fixed name, or the weight file of a path start
// (path_start<digits>) or of a frontier point (frontier_delta_<number>).
// A new output file must be listed here: replace_output_set refuses to
// install a file that is not part of the set (theorem1_study_test writes
// the whole set and would say so).
bool study_file(const std::string& name) {
  static const std::set<std::string> kFixed{
      "theorem1.json", "path.csv",     "frontier.csv", "nuance.csv", "path.dat", "frontier.dat",
      "nuance.dat",    "path.gp",      "frontier.gp",  "nuance.gp",  "path.png", "path.pdf",
      "frontier.png",  "frontier.pdf", "nuance.png",   "nuance.pdf"};
  const std::string suffix = ".weights.json";
  const auto numbered = [&](const std::string& prefix, const char* chars) {
    if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      return false;
    }
    const std::string middle =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    return middle.find_first_not_of(chars) == std::string::npos;
  };
  return kFixed.count(name) > 0 || numbered("path_start", "0123456789") ||
         numbered("frontier_delta_", "0123456789.e+-");
}

}  // namespace

std::string study_weight_file_text(const Model<double>& model, nlohmann::json meta,
                                   const std::string& parametrization, const Task& task,
                                   const RunInfo& info) {
  meta["parametrization"] = parametrization;
  meta["n"] = task.n;
  meta["L"] = task.L;
  meta["trigger_range"] = to_string(task.range);
  meta["run_info"] = to_json(info);
  return weight_file_text(weight_file_from_model(model, meta));
}

OutputSet owned_files_set(const std::string& dir,
                          const std::function<bool(const std::string&)>& owns) {
  return OutputSet{dir, [owns](const std::string& name) {
                     // and the temporaries of runs killed while writing:
                     // NAME.tmp.PID, and .STEM.tmp.EXT of the figures
                     const std::size_t tmp = name.find(".tmp.");
                     const bool ours = tmp == std::string::npos
                                           ? owns(name)
                                           : owns(name.substr(0, tmp)) ||
                                                 (name[0] == '.' && owns(name.substr(1, tmp - 1) +
                                                                         name.substr(tmp + 4)));
                     return ours ? OutputSet::Kind::kFile : OutputSet::Kind::kNotInSet;
                   }};
}

OutputSet theorem1_output_set(const std::string& dir) { return owned_files_set(dir, study_file); }

namespace {

// Writes the study's files into `staging`; `written` gets their paths in `dir`.
void write_study_files(const studies::Theorem1Study& st, const RunInfo& info,
                       const std::string& staging, const std::string& dir,
                       std::vector<std::string>& written, std::vector<std::string>* skipped) {
  namespace fs = std::filesystem;
  const auto shown = [&](const std::string& path) {
    return (fs::path(dir) / fs::path(path).filename()).string();
  };
  const auto put = [&](const std::string& name, const std::string& text) {
    write_file_atomically((fs::path(staging) / name).string(), text);
    written.push_back((fs::path(dir) / name).string());
  };
  put("theorem1.json", to_json(st, info).dump(2) + "\n");
  for (const Table& t : {path_table(st), frontier_table(st), nuance_table(st)}) {
    written.push_back(shown(write_csv_table(t, info, staging, t.name + ".csv")));
  }
  const auto weights = [&](const std::string& name, const Model<double>& m,
                           const nlohmann::json& meta) {
    put(name, study_weight_file_text(m, meta, search::kParametrization, st.options.task, info));
  };
  // which adversary found the worst case, when the attack re-measured it
  const auto found_by = [](nlohmann::json meta, const studies::FinalCertification& fc) {
    if (fc.attacked) meta["worst_case_found_by"] = fc.found_by;
    return meta;
  };
  for (const studies::PathRun& r : st.runs) {
    weights("path_start" + std::to_string(r.start) + ".weights.json", r.result.model,
            found_by({{"study", "theorem1 path"},
                      {"worst_case_loss", r.result.worst.certified},
                      {"worst_case_evidence", Evidence::search(Bound::kLower).label()},
                      {"worst_case_witness", witness_json(r.result.worst)}},
                     r.final_certification));
  }
  for (const studies::FrontierPoint& p : st.frontier) {
    if (!p.feasible) continue;
    char name[64];
    std::snprintf(name, sizeof name, "frontier_delta_%g.weights.json", p.delta);
    weights(name, p.result.model,
            found_by({{"study", "theorem1 frontier"},
                      {"delta", p.delta},
                      {"worst_case_loss", p.eps},
                      {"worst_case_evidence", Evidence::search(Bound::kLower).label()},
                      {"worst_case_witness", witness_json(p.result.worst)},
                      {"mean_bos", p.bos_mean}},
                     p.final_certification));
  }
  for (const Figure& f : {path_figure(st), frontier_figure(st), nuance_figure(st)}) {
    const FigureFiles files = write_figure(f, info, staging);
    for (const auto& path : files.written) written.push_back(shown(path));
    if (skipped) skipped->insert(skipped->end(), files.failures.begin(), files.failures.end());
  }
}

}  // namespace

std::vector<std::string> write_theorem1_outputs(const studies::Theorem1Study& st,
                                                const RunInfo& info, const std::string& dir,
                                                std::vector<std::string>* skipped) {
  std::vector<std::string> written;
  replace_output_set(theorem1_output_set(dir), [&](const std::string& staging) {
    write_study_files(st, info, staging, dir, written, skipped);
  });
  return written;
}

}  // namespace sinkcert::theorems::reports
