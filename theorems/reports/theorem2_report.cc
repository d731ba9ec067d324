// SPDX-License-Identifier: MIT
#include "theorems/reports/theorem2_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <stdexcept>

#include "src/evidence.h"
#include "src/input_error.h"
#include "src/json_reader.h"
#include "src/weight_file.h"
#include "theorems/reports/figure_frame.h"
#include "theorems/reports/precision_report.h"
#include "theorems/reports/theorem1_report.h"

namespace sinkcert::theorems::reports {

namespace {

std::string flag(bool b) { return b ? "1" : "0"; }

std::string head_name(int t, int heads) {
  return "l" + std::to_string(t / heads) + "h" + std::to_string(t % heads);
}

// A new output file must be listed here: replace_output_set refuses to
// install a file that is not part of the set.
bool study_file(const std::string& name) {
  static const std::set<std::string> kFixed{"theorem2.json",
                                            "path.csv",
                                            "heads.csv",
                                            "frontier.csv",
                                            "every_head.csv",
                                            "every_head_targeted.csv",
                                            "path.dat",
                                            "path.gp",
                                            "path.pdf",
                                            "path.png",
                                            "frontier.dat",
                                            "frontier.gp",
                                            "frontier.pdf",
                                            "frontier.png",
                                            "every_head_hit.weights.json",
                                            "every_layer_hit.weights.json"};
  const std::string suffix = ".weights.json";
  // path_start<k>, eps_one_delta<delta>, targeted_l<l>h<h> weight files
  for (const auto& [prefix, chars] :
       {std::pair<std::string, std::string>{"path_start", "0123456789"},
        {"eps_one_delta", "0123456789.e-"},
        {"targeted_l", "0123456789h"}}) {
    if (name.size() > prefix.size() + suffix.size() && name.rfind(prefix, 0) == 0 &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string middle =
          name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
      if (middle.find_first_not_of(chars) == std::string::npos) return true;
    }
  }
  return kFixed.count(name) > 0;
}

}  // namespace

Table theorem2_path_table(const studies::Theorem2Study& st) {
  Table t;
  t.name = "path";
  t.caption = "Theorem 2 descent path (" + task_string(st.options.task) + ", residual " +
              std::to_string(st.options.layers) + " x " + std::to_string(st.options.heads) +
              "): worst case SEARCH(lower bound, certified at the adversary's witness); sampled "
              "loss, sink score and per-head mean BOS mass NUMERIC(53)";
  const int heads = st.options.layers * st.options.heads;
  std::vector<std::string> names = {"start",
                                    "round",
                                    "event",
                                    "accepted",
                                    "elapsed_s",
                                    "worst_case",
                                    "worst_case_double",
                                    "double_disagrees",
                                    "sampled_max",
                                    "sampled_mean",
                                    "sink_score",
                                    "sink_layer",
                                    "sink_head",
                                    "sink_position"};
  for (int h = 0; h < heads; ++h) names.push_back("mean_bos_" + head_name(h, st.options.heads));
  t.columns.assign(names.begin(), names.end());
  for (const studies::Theorem2PathPoint& p : st.path) {
    std::vector<Cell> row = {std::to_string(p.start),
                             std::to_string(p.round),
                             p.event,
                             flag(p.accepted),
                             studies::format_double(p.elapsed),
                             studies::format_double(p.worst_case),
                             studies::format_double(p.worst_case_double),
                             flag(p.double_disagrees),
                             studies::format_double(p.sampled_max),
                             studies::format_double(p.sampled_mean),
                             studies::format_double(p.sink.sigma),
                             std::to_string(p.sink.layer),
                             std::to_string(p.sink.head),
                             std::to_string(p.sink.position)};
    for (int h = 0; h < heads; ++h) {
      row.push_back(
          h < static_cast<int>(p.head_mean.size()) ? studies::format_double(p.head_mean[h]) : "");
    }
    t.rows.push_back(row);
  }
  return t;
}

Table theorem2_heads_table(const studies::Theorem2Study& st) {
  Table t;
  t.name = "heads";
  t.caption =
      "Theorem 2: each head's non-trigger BOS mass on the best model of each path start "
      "(probe set; NUMERIC(53))";
  t.columns = {"start",   "init_std",          "layer",       "head", "mean_bos",
               "min_bos", "max_position_mean", "max_position"};
  for (const studies::Theorem2Run& r : st.runs) {
    for (const auto& layer : r.stats.heads) {
      for (const HeadBosStatistics& h : layer) {
        double best = -1;
        int where = 0;
        for (std::size_t i = 1; i < h.per_position.size(); ++i) {
          if (h.per_position[i].count > 0 && h.per_position[i].mean > best) {
            best = h.per_position[i].mean;
            where = static_cast<int>(i);
          }
        }
        t.rows.push_back({std::to_string(r.start), studies::format_double(r.init_std),
                          std::to_string(h.layer), std::to_string(h.head),
                          studies::format_double(h.overall.mean),
                          studies::format_double(h.overall.min), studies::format_double(best),
                          std::to_string(where)});
      }
    }
  }
  return t;
}

Figure theorem2_figure_frame(const std::string& name, const Task& task, int layers, int heads) {
  static const std::vector<FigureText> texts = {
      {"path",
       std::string("Descent path") + kStudyMark +
           ": per optimizer round and start, the worst-case loss the adversary finds on the "
           "current model (solid) and 1 - its sink score sigma (dashed, the same colour for the "
           "same start). Theorem 2 predicts that 1 - sigma falls as the worst case falls.",
       std::string("Descent path") + kStudyMark +
           ": per optimizer round and start, the worst-case loss $E$ the adversary finds on the "
           "current model (solid) and $1-\\sigma$, one minus its sink score (dashed, the same "
           "colour for the same start). Theorem 2 predicts that $1-\\sigma$ falls as $E$ falls.",
       "worst case SEARCH(lower bound on that model's E, certified at the adversary's "
       "witness); sink score NUMERIC(53)"},
      {"frontier",
       std::string("Frontiers") + kStudyMark +
           ": the worst case of the best model found with the BOS mass of every head (eps_all) "
           "or of one head (eps_one) capped at 1 - delta. Theorem 2 predicts eps_all stays away "
           "from 0 and allows eps_one to reach it. Triangles, where present: an upper bound "
           "on the eps_one model's E over the whole box (CERTIFIED), its capped head's BOS cap "
           "certified too, so eps_one(delta) is at most that value.",
       std::string("Frontiers") + kStudyMark +
           ": the worst case $E$ of the best model found with the BOS mass of every head "
           "($\\varepsilon_{\\mathrm{all}}$) or of one head ($\\varepsilon_{\\mathrm{one}}$) "
           "capped at $1-\\delta$. Theorem 2 predicts $\\varepsilon_{\\mathrm{all}}$ stays away "
           "from 0 and allows $\\varepsilon_{\\mathrm{one}}$ to reach it. Triangles, where "
           "present: an upper bound on the $\\varepsilon_{\\mathrm{one}}$ model's $E$ over "
           "the whole box (CERTIFIED), its capped head's BOS cap certified too, so "
           "$\\varepsilon_{\\mathrm{one}}(\\delta)$ is at most that value.",
       studies::kFrontierPointMeaning},
  };
  return figure_frame(name, "Theorem 2",
                      " (Theorem 2 study, residual softmax " + std::to_string(layers) + " x " +
                          std::to_string(heads) + ", " + task_string(task) + ")",
                      texts);
}

Figure theorem2_path_figure(const studies::Theorem2Study& st) {
  Figure f = theorem2_figure_frame("path", st.options.task, st.options.layers, st.options.heads);
  f.columns = {"start", "round", "worst_case", "sink_score"};
  for (const studies::Theorem2PathPoint& p : st.path) {
    f.rows.push_back({std::to_string(p.start), std::to_string(p.round),
                      studies::format_double(p.worst_case), studies::format_double(p.sink.sigma)});
  }
  const std::string last = std::to_string(std::max<int>(0, static_cast<int>(st.runs.size()) - 1));
  f.plot = std::string(kLineColours) +
           "set key bottom left\nset grid\nset logscale y\nset format y '10^{%T}'\n"
           "set xlabel 'optimizer round'\n"
           "set ylabel 'worst case E (solid); 1 - sink score {/Symbol s} (dashed)'\n"
           "set title 'Theorem 2 descent path: worst case (SEARCH, lower bound) and 1 - sink "
           "score (NUMERIC(53))' noenhanced\n"
           "plot for [s=0:" +
           last +
           "] data using ($1==s ? $2 : 1/0):3 with linespoints linecolor s+1 pointtype 7 "
           "pointsize 0.6 title sprintf('worst case, start %d', s), \\\n  for [s=0:" +
           last +
           "] data using ($1==s ? $2 : 1/0):(1-$4) with lines linecolor s+1 dashtype 2 "
           "title sprintf('1 - sink score, start %d', s)\n";
  return f;
}

Table theorem2_frontier_table(const studies::Theorem2Study& st) {
  Table t;
  t.name = "frontier";
  t.caption = "Theorem 2 frontiers (" + task_string(st.options.task) +
              "): eps_all caps the BOS mass of every head, eps_one of one head.";
  t.notes = {std::string("eps: ") + studies::kFrontierPointMeaning,
             "capped_bos (the largest per-position probe mean over the capped heads) and "
             "sink_score NUMERIC(53)"};
  t.notes.push_back(
      "witness_capped_bos: the capped heads' largest a_i0 at the witness input of eps, "
      "CERTIFIED at that input (MPFI, upper end); start: which start's model is kept (warm, "
      "fresh, dead, sink, construction; theorem2.json lists every start's result)");
  std::ostringstream low;
  low << studies::kTheorem2LowLoss;
  t.notes.push_back(
      "certified_loss, certified_cap (eps_one with --certify-boxes): the deep bounds' verdicts "
      "over the whole content box on the kept model, E <= " +
      low.str() +
      " and the capped head's max a_i0 <= ceiling, with each bound's upper end rounded up "
      "(CERTIFIED); both VERIFIED make eps_one(delta) <= " +
      low.str() + " a certified statement; empty when not attempted");
  t.columns = {"capped",     "layer",         "head",
               "delta",      "ceiling",       "eps",
               "eps_double", "capped_bos",    "witness_capped_bos",
               "sink_score", "start",         "feasible",
               "converged",  "not_run",       "certified_loss",
               "loss_upper", "certified_cap", "cap_upper"};
  for (const studies::Theorem2FrontierPoint& p : st.frontier) {
    const bool one = p.scope == studies::CapScope::kOne;
    const bool cert = p.certificate.attempted;
    t.rows.push_back({to_string(p.scope), one ? std::to_string(p.layer) : "",
                      one ? std::to_string(p.head) : "", studies::format_double(p.delta),
                      studies::format_double(p.ceiling), studies::format_double(p.eps),
                      studies::format_double(p.eps_double), studies::format_double(p.capped_bos),
                      studies::format_double(p.witness_capped_bos),
                      studies::format_double(p.sink.sigma), to_string(p.start), flag(p.feasible),
                      flag(p.converged), p.not_run, cert ? to_string(p.certificate.loss) : "",
                      cert ? studies::format_double(p.certificate.loss_upper) : "",
                      cert ? to_string(p.certificate.cap) : "",
                      cert ? studies::format_double(p.certificate.cap_upper) : ""});
  }
  return t;
}

Table theorem2_every_head_table(const studies::Theorem2Study& st) {
  Table t;
  t.name = "every_head";
  t.caption =
      "Theorem 2, the every-head question: per candidate model and head (or layer, head "
      "empty), the worst case with and without it (M = 0) and its largest BOS mass.";
  t.notes = {
      "worst_case, ablated_worst_case: SEARCH(lower bound), the same adversary; ratio "
      "SEARCH; max_bos NUMERIC(53) over every probe and non-trigger position",
      st.every_head.summary};
  t.columns = {"candidate", "source",     "candidate_worst_case", "layer",
               "head",      "worst_case", "ablated_worst_case",   "ratio",
               "necessary", "max_bos"};
  const int heads = st.options.heads;
  for (std::size_t c = 0; c < st.every_head.candidates.size(); ++c) {
    const studies::EveryHeadCandidate& k = st.every_head.candidates[c];
    if (k.heads.empty()) {
      t.rows.push_back({std::to_string(c), k.source, studies::format_double(k.worst_case), "", "",
                        "", "", "", "", ""});
    }
    for (const auto* list : {&k.heads, &k.layers}) {
      for (const studies::Necessity& n : *list) {
        double bos = 0;
        for (int h = 0; h < heads; ++h) {
          if (n.head < 0 || n.head == h) bos = std::max(bos, k.head_max_bos[n.layer * heads + h]);
        }
        t.rows.push_back(
            {std::to_string(c), k.source, studies::format_double(k.worst_case),
             std::to_string(n.layer), n.head < 0 ? "" : std::to_string(n.head),
             studies::format_double(n.worst_case), studies::format_double(n.ablated_worst_case),
             studies::format_double(n.ratio), flag(n.necessary), studies::format_double(bos)});
      }
    }
  }
  return t;
}

std::string targeted_weight_file(int layer, int head) {
  return "targeted_l" + std::to_string(layer) + "h" + std::to_string(head) + ".weights.json";
}

// delta in %g (0.05, not 0.050000000000000003: a file name, not a value)
std::string eps_one_weight_file(double delta) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", delta);
  return std::string("eps_one_delta") + text + ".weights.json";
}

Table theorem2_targeted_table(const studies::Theorem2Study& st) {
  Table t;
  t.name = "every_head_targeted";
  t.caption = "T2b. Theorem 2, the every-head question by targeted search (" +
              task_string(st.options.task) + ", residual " + std::to_string(st.options.layers) +
              " x " + std::to_string(st.options.heads) + "): one head's BOS mass capped at " +
              studies::format_double(studies::kNoSinkScore) +
              " (per-position probe mean) for the whole descent, from a fresh init and from a "
              "model in which another head sinks (the best kept), then its "
              "necessity and BOS profile.";
  t.notes = {
      "worst_case, ablated_worst_case: SEARCH(lower bound), the same adversary; ratio "
      "SEARCH; max/mean BOS and low_fraction (share of (probe, position) pairs with "
      "a_i0 <= " +
          studies::format_double(studies::kNoSinkScore) + ") NUMERIC(53) on the probe set",
      "answer: FOUND (a necessary head with max BOS <= " +
          studies::format_double(studies::kNoSinkScore) +
          " in a model with worst case <= " + studies::format_double(studies::kEveryHeadLoss) +
          ", weight file given) or NOT FOUND with the model's numbers and role",
      st.every_head.summary};
  t.columns = {"layer", "head",      "answer",  "role",     "worst_case",   "ablated_worst_case",
               "ratio", "necessary", "max_bos", "mean_bos", "low_fraction", "weights"};
  const int heads = st.options.heads;
  for (const int c : st.every_head.targeted) {
    const studies::EveryHeadCandidate& k = st.every_head.candidates[c];
    const int t_index = k.capped_layer * heads + k.capped_head;
    const studies::HeadProfile& pr = k.profiles[t_index];
    const studies::Necessity* n = nullptr;
    for (const studies::Necessity& x : k.heads) {
      if (x.layer == k.capped_layer && x.head == k.capped_head) n = &x;
    }
    const bool low = k.worst_case <= studies::kEveryHeadLoss;
    const bool found = n && studies::answers_every_head(k.worst_case, n->necessary, pr.max);
    std::string role = !std::isfinite(k.worst_case) ? "no feasible model"
                       : !low
                           ? "worst case above " + studies::format_double(studies::kEveryHeadLoss)
                       : n ? studies::head_role(*n, pr)
                           : "";
    t.rows.push_back({std::to_string(k.capped_layer), std::to_string(k.capped_head),
                      found ? "FOUND" : "NOT FOUND", role, studies::format_double(k.worst_case),
                      n ? studies::format_double(n->ablated_worst_case) : "",
                      n ? studies::format_double(n->ratio) : "", n ? flag(n->necessary) : "",
                      studies::format_double(pr.max), studies::format_double(pr.mean),
                      studies::format_double(pr.low_fraction),
                      targeted_weight_file(k.capped_layer, k.capped_head)});
  }
  return t;
}

Figure theorem2_frontier_figure(const studies::Theorem2Study& st) {
  Figure f =
      theorem2_figure_frame("frontier", st.options.task, st.options.layers, st.options.heads);
  // certified: the upper end on E of a model whose two claims hold
  // (FrontierCertificate), NaN (no point) otherwise
  f.columns = {"all", "delta", "eps", "certified"};
  bool any_certified = false;
  for (const studies::Theorem2FrontierPoint& p : st.frontier) {
    if (!p.feasible) continue;
    any_certified |= p.certificate.certified();
    f.rows.push_back(
        {p.scope == studies::CapScope::kAll ? "1" : "0", studies::format_double(p.delta),
         studies::format_double(p.eps),
         p.certificate.certified() ? studies::format_double(p.certificate.loss_upper) : "NaN"});
  }
  f.plot = std::string(kLineColours) +
           "set key center right\nset grid\nset logscale xy\nset format y '10^{%T}'\n"
           "set xlabel '{/Symbol d} (BOS ceiling 1 - {/Symbol d})'\n"
           "set ylabel 'worst case E of the capped model (SEARCH, lower bound)'\n"
           "set title 'Theorem 2 frontiers'\n"
           "plot data using ($1==1 ? $2 : 1/0):3 with linespoints linecolor 1 pointtype 7 title "
           "'{/Symbol e}_{all} (every head capped)', \\\n  data using ($1==0 ? $2 : 1/0):3 with "
           "linespoints linecolor 2 pointtype 5 title '{/Symbol e}_{one} (one head capped)'";
  // the certified upper ends only where some point has one (no empty legend entry)
  if (any_certified) {
    f.plot +=
        ", \\\n  data using ($1==0 ? $2 : 1/0):4 with points linecolor 3 pointtype 9 "
        "pointsize 1.5 title 'upper bound on E of the {/Symbol e}_{one} model (CERTIFIED)'";
  }
  f.plot += "\n";
  return f;
}

namespace {

// at[key] of the theorem2.json at json_path; an InputError naming the file
// and the key when it is missing.
const nlohmann::json& study_field(const std::string& json_path, const nlohmann::json& at,
                                  const char* key) {
  if (!at.is_object() || !at.contains(key)) {
    throw InputError(json_path, key, "present (a theorem2.json written by sinkcert theorem2)");
  }
  return at[key];
}

Table theorem2_appendix_table_of(const std::string& json_path) {
  Table t;
  t.name = "t2_theorem2_study";
  t.columns = {"part", "item", "value", "evidence"};
  t.alignment = "llll";
  std::ifstream in(json_path);
  if (!in) {
    t.caption = "Theorem 2 study (residual softmax): not run; no theorem2.json in the results.";
    t.rows.push_back({"study", "theorem2.json", "not found: the study was not run", "-"});
    return t;
  }
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  const auto field = [&](const nlohmann::json& at, const char* key) -> const nlohmann::json& {
    return study_field(json_path, at, key);
  };
  if (j.is_discarded()) throw InputError(json_path, "file", "JSON written by sinkcert theorem2");
  const nlohmann::json& task = field(j, "task");
  const nlohmann::json& model = field(j, "model");
  t.caption = "Theorem 2 study, residual softmax " +
              std::to_string(field(model, "layers").get<int>()) + " x " +
              std::to_string(field(model, "heads").get<int>()) +
              " at n = " + std::to_string(field(task, "n").get<int>()) +
              ", L = " + std::to_string(field(task, "L").get<int>()) +
              " (read from theorem2.json). Worst cases are SEARCH lower bounds on the model "
              "found; frontier points bound nothing about the frontier itself.";
  const std::string search = Evidence::search(Bound::kLower).label();
  const std::string numeric = Evidence::numeric(53).label();
  const auto g = [](double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return std::string(buf);
  };
  for (const nlohmann::json& r : field(j, "path")) {
    // "normal std 0.10000000000000001" (the JSON's round trip) shown "std 0.1"
    std::string init = field(r, "init").get<std::string>();
    const std::string normal = "normal std ";
    if (init.rfind(normal, 0) == 0) {
      char* end = nullptr;
      const double std = std::strtod(init.c_str() + normal.size(), &end);
      if (end && *end == '\0') init = "std " + g(std, 6);
    }
    const std::string start =
        "start " + std::to_string(field(r, "start").get<int>()) + " (" + init + ")";
    t.rows.push_back({"path", start + ": worst case",
                      studies::format_bound(field(r, "worst_case").get<double>(), true, 3),
                      search});
    // 1 - sigma: sigma itself rounds to 1 at any printable width
    const nlohmann::json& sink = field(r, "sink_score");
    t.rows.push_back({"path", start + ": 1 - sink score",
                      sink.is_null() ? "undefined" : g(1 - field(sink, "sigma").get<double>(), 3),
                      numeric});
  }
  if (j.contains("frontier")) {
    for (const nlohmann::json& p : field(field(j, "frontier"), "points")) {
      const std::string item = "eps_" + field(p, "capped").get<std::string>() + "(" +
                               g(field(p, "delta").get<double>(), 3) + ")";
      std::string value;
      if (!field(p, "not_run").is_null()) {
        value = "not run";
      } else if (!field(p, "feasible").get<bool>()) {
        value = "no feasible model found";
      } else {
        value = studies::format_bound(field(p, "eps").get<double>(), true, 3);
      }
      t.rows.push_back({"frontier", item, value, search});
    }
  }
  if (j.contains("every_head")) {
    const nlohmann::json& a = field(j, "every_head");
    t.rows.push_back({"every head", "a necessary head that does not sink",
                      field(a, "head_found").get<bool>() ? "FOUND" : "not found", search});
    t.rows.push_back({"every head", "a necessary layer none of whose heads sinks",
                      field(a, "layer_found").get<bool>() ? "FOUND" : "not found", search});
    t.notes.push_back("every head: " + field(a, "summary").get<std::string>());
  }
  t.rows.push_back({"verdict", "", field(j, "verdict").get<std::string>(), ""});
  t.notes.push_back("verdict: " + field(j, "verdict_reason").get<std::string>());
  return t;
}

// T2b read back: per targeted search its capped head, per path model every
// head (EveryHeadCandidate JSON: source, worst_case, capped_head, heads).
Table theorem2_every_head_appendix_table_of(const std::string& json_path) {
  Table t;
  t.name = "t2b_theorem2_every_head";
  t.columns = {"model", "layer",   "head",     "answer",      "worst_case",
               "ratio", "max_bos", "mean_bos", "low_fraction"};
  t.alignment = "lrrlrrrrr";
  std::ifstream in(json_path);
  if (!in) {
    t.caption =
        "T2b. Theorem 2, the every-head question: not run; no theorem2.json in the results.";
    t.rows.push_back(
        {"theorem2.json", "", "", "not found: the study was not run", "", "", "", "", ""});
    return t;
  }
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw InputError(json_path, "file", "JSON written by sinkcert theorem2");
  const auto field = [&](const nlohmann::json& at, const char* key) -> const nlohmann::json& {
    return study_field(json_path, at, key);
  };
  // a number, or null for a value JSON cannot hold (an infeasible search's
  // worst case is +inf)
  const auto number = [&](const nlohmann::json& at, const char* key) {
    const nlohmann::json& v = field(at, key);
    if (v.is_null()) return std::numeric_limits<double>::infinity();
    if (!v.is_number()) throw InputError(json_path, key, "a number or null");
    return v.get<double>();
  };
  const nlohmann::json& task = field(j, "task");
  const nlohmann::json& model = field(j, "model");
  const nlohmann::json& every = field(j, "every_head");
  const nlohmann::json& candidates = field(every, "candidates");
  if (!candidates.is_array()) throw InputError(json_path, "candidates", "an array");
  t.caption = "T2b. Theorem 2, the every-head question (residual softmax " +
              std::to_string(field(model, "layers").get<int>()) + " x " +
              std::to_string(field(model, "heads").get<int>()) +
              ", n = " + std::to_string(field(task, "n").get<int>()) +
              ", L = " + std::to_string(field(task, "L").get<int>()) +
              "; read from theorem2.json): is there a model with worst case <= " +
              studies::format_double(studies::kEveryHeadLoss) +
              " and a necessary head (M = 0 raises the worst case >= " +
              studies::format_double(studies::kNecessityFactor) +
              "-fold) whose BOS mass stays <= " + studies::format_double(studies::kNoSinkScore) +
              "? Rows: every head of each path model, and the capped head of each targeted search "
              "(that head's BOS capped at " +
              studies::format_double(studies::kNoSinkScore) + " for the whole descent).";
  t.notes = {
      "worst_case (the model's) and ratio (ablated / model worst case): SEARCH(lower "
      "bound), the same adversary for both; max_bos, mean_bos and low_fraction (share of "
      "(probe, position) pairs with a_i0 <= " +
          studies::format_double(studies::kNoSinkScore) + "): NUMERIC(53) on the probe set",
      "answer: FOUND, or the head's role: not necessary; necessary, sinks (mean BOS "
      "above " +
          studies::format_double(studies::kNoSinkScore) +
          "); necessary but not sinking on average (max above, mean at most " +
          studies::format_double(studies::kNoSinkScore) + "); or why no role was measured",
      "every head: " + field(every, "summary").get<std::string>()};
  const auto g = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return std::string(buf);
  };
  const auto head_row = [&](const std::string& who, const nlohmann::json& h, double worst,
                            bool targeted) {
    const bool necessary = field(h, "necessary").get<bool>();
    const double max_bos = number(h, "max_bos");
    const bool low = worst <= studies::kEveryHeadLoss;
    const bool found = studies::answers_every_head(worst, necessary, max_bos);
    const std::string role = field(h, "role").get<std::string>();
    std::string answer = "FOUND";
    if (!found && !low) {
      answer = "NOT FOUND: worst case above " + studies::format_double(studies::kEveryHeadLoss) +
               " (" + role + ")";
    } else if (!found) {
      answer = (targeted ? "NOT FOUND: " : "") + role;
    }
    t.rows.push_back({who, std::to_string(field(h, "layer").get<int>()),
                      std::to_string(field(h, "head").get<int>()), answer,
                      studies::format_bound(worst, true, 3), g(number(h, "ratio")), g(max_bos),
                      g(number(h, "mean_bos")), g(number(h, "low_bos_fraction"))});
  };
  for (const nlohmann::json& k : candidates) {
    if (k.is_object() && !k.contains("capped_head")) {
      throw InputError(json_path, "every_head.candidates[].capped_head",
                       "present; this file was written by an older sinkcert theorem2, without "
                       "the every-head profiles (run the study again)");
    }
    const std::string source = field(k, "source").get<std::string>();
    const double worst = number(k, "worst_case");
    const nlohmann::json& capped = field(k, "capped_head");
    if (capped.is_null()) {
      // a path model: every head whose necessity was measured
      if (source.rfind("path start", 0) != 0) continue;
      for (const nlohmann::json& h : field(k, "heads")) head_row(source, h, worst, false);
      continue;
    }
    const int cl = field(capped, "layer").get<int>(), ch = field(capped, "head").get<int>();
    const std::string who = "targeted, capped head";
    bool shown = false;
    for (const nlohmann::json& h : field(k, "heads")) {
      if (field(h, "layer").get<int>() != cl || field(h, "head").get<int>() != ch) continue;
      head_row(who, h, worst, true);
      shown = true;
    }
    if (!shown) {
      // no necessity measured: no feasible model, or its loss above the question's
      const nlohmann::json& profiles = field(k, "head_profiles");
      const int heads = field(model, "heads").get<int>();
      const std::size_t idx = static_cast<std::size_t>(cl * heads + ch);
      const bool have = profiles.is_array() && idx < profiles.size();
      t.rows.push_back(
          {who, std::to_string(cl), std::to_string(ch),
           std::string("NOT FOUND: ") +
               (std::isfinite(worst)
                    ? "worst case above " + studies::format_double(studies::kEveryHeadLoss)
                    : "no feasible model"),
           std::isfinite(worst) ? studies::format_bound(worst, true, 3) : "-", "-",
           have ? g(number(profiles[idx], "max_bos")) : "-",
           have ? g(number(profiles[idx], "mean_bos")) : "-",
           have ? g(number(profiles[idx], "low_bos_fraction")) : "-"});
    }
  }
  return t;
}

}  // namespace

Table theorem2_every_head_appendix_table(const std::string& json_path) {
  return internal::reading_json(json_path,
                                [&] { return theorem2_every_head_appendix_table_of(json_path); });
}

Table theorem2_appendix_table(const std::string& json_path) {
  return internal::reading_json(json_path, [&] { return theorem2_appendix_table_of(json_path); });
}

OutputSet theorem2_output_set(const std::string& dir) { return owned_files_set(dir, study_file); }

std::vector<std::string> write_theorem2_outputs(const studies::Theorem2Study& st,
                                                const RunInfo& info, const std::string& dir,
                                                std::vector<std::string>* skipped) {
  namespace fs = std::filesystem;
  std::vector<std::string> written;
  replace_output_set(theorem2_output_set(dir), [&](const std::string& staging) {
    const auto shown = [&](const std::string& path) {
      return (fs::path(dir) / fs::path(path).filename()).string();
    };
    const auto put = [&](const std::string& name, const std::string& text) {
      write_file_atomically((fs::path(staging) / name).string(), text);
      written.push_back((fs::path(dir) / name).string());
    };
    put("theorem2.json", to_json(st, info).dump(2) + "\n");
    for (const Table& t :
         {theorem2_path_table(st), theorem2_heads_table(st), theorem2_frontier_table(st),
          theorem2_every_head_table(st), theorem2_targeted_table(st)}) {
      written.push_back(shown(write_csv_table(t, info, staging, t.name + ".csv")));
    }
    const auto weights = [&](const std::string& name, const Model<double>& m,
                             const nlohmann::json& meta) {
      put(name,
          study_weight_file_text(m, meta, search::kDeepParametrization, st.options.task, info));
    };
    for (const studies::Theorem2Run& r : st.runs) {
      weights("path_start" + std::to_string(r.start) + ".weights.json", r.result.model,
              {{"study", "theorem2 path"},
               {"init", "normal std " + studies::format_double(r.init_std)},
               {"worst_case_loss", r.result.worst.certified},
               {"worst_case_evidence", Evidence::search(Bound::kLower).label()},
               {"worst_case_witness", witness_json(r.result.worst)},
               {"sink_score", r.sink.sigma}});
    }
    const studies::EveryHeadAnswer& a = st.every_head;
    const auto hit = [&](const std::string& name, int c, const nlohmann::json& where) {
      const studies::EveryHeadCandidate& k = a.candidates[c];
      weights(name, k.model,
              {{"study", "theorem2 every-head question"},
               {"source", k.source},
               {"hit", where},
               {"worst_case_loss", k.worst_case},
               {"worst_case_evidence", Evidence::search(Bound::kLower).label()},
               {"head_max_bos", k.head_max_bos}});
    };
    if (a.head_found) {
      hit("every_head_hit.weights.json", a.head_candidate,
          {{"layer", a.head_layer}, {"head", a.head_head}});
    }
    if (a.layer_found)
      hit("every_layer_hit.weights.json", a.layer_candidate, {{"layer", a.layer_layer}});
    for (const int c : a.targeted) {
      const studies::EveryHeadCandidate& k = a.candidates[c];
      hit(targeted_weight_file(k.capped_layer, k.capped_head), c,
          {{"capped_layer", k.capped_layer}, {"capped_head", k.capped_head}});
    }
    for (const studies::Theorem2FrontierPoint& p : st.frontier) {
      if (p.scope != studies::CapScope::kOne || !p.feasible) continue;
      weights(eps_one_weight_file(p.delta), p.result.model,
              {{"study", "theorem2 eps_one"},
               {"capped_head", {{"layer", p.layer}, {"head", p.head}}},
               {"delta", p.delta},
               {"bos_ceiling", p.ceiling},
               {"start", to_string(p.start)},
               {"converged", p.converged},
               {"worst_case_loss", p.eps},
               {"worst_case_evidence", Evidence::search(Bound::kLower).label()},
               {"worst_case_witness", witness_json(p.result.worst)},
               {"capped_bos", p.capped_bos},
               {"witness_capped_bos", p.witness_capped_bos},
               {"certificate", certificate_json(p.certificate, p.ceiling)}});
    }
    for (const Figure& f : {theorem2_frontier_figure(st)}) {
      if (f.rows.empty()) continue;
      const FigureFiles files = write_figure(f, info, staging);
      for (const auto& path : files.written) written.push_back(shown(path));
      if (skipped) skipped->insert(skipped->end(), files.failures.begin(), files.failures.end());
    }
    const FigureFiles files = write_figure(theorem2_path_figure(st), info, staging);
    for (const auto& path : files.written) written.push_back(shown(path));
    if (skipped) skipped->insert(skipped->end(), files.failures.begin(), files.failures.end());
  });
  return written;
}

}  // namespace sinkcert::theorems::reports
