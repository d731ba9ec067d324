// SPDX-License-Identifier: MIT
#include "theorems/theorem2_report.h"

#include <cstdio>
#include <filesystem>
#include <set>

#include "src/evidence.h"
#include "src/weight_file.h"
#include "theorems/precision_report.h"

namespace sinkcert::theorems {

namespace {

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string flag(bool b) { return b ? "1" : "0"; }

std::string head_name(int t, int heads) {
  return "l" + std::to_string(t / heads) + "h" + std::to_string(t % heads);
}

// A new output file must be listed here: replace_output_set refuses to
// install a file that is not part of the set.
bool study_file(const std::string& name) {
  static const std::set<std::string> kFixed{"theorem2.json", "path.csv", "heads.csv", "path.dat",
                                            "path.gp",       "path.pdf", "path.png"};
  const std::string prefix = "path_start", suffix = ".weights.json";
  if (name.size() > prefix.size() + suffix.size() && name.rfind(prefix, 0) == 0 &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const std::string middle =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (middle.find_first_not_of("0123456789") == std::string::npos) return true;
  }
  return kFixed.count(name) > 0;
}

}  // namespace

Table theorem2_path_table(const Theorem2Study& st) {
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
  for (const Theorem2PathPoint& p : st.path) {
    std::vector<Cell> row = {std::to_string(p.start),
                             std::to_string(p.round),
                             p.event,
                             flag(p.accepted),
                             fmt(p.elapsed),
                             fmt(p.worst_case),
                             fmt(p.worst_case_double),
                             flag(p.double_disagrees),
                             fmt(p.sampled_max),
                             fmt(p.sampled_mean),
                             fmt(p.sink.sigma),
                             std::to_string(p.sink.layer),
                             std::to_string(p.sink.head),
                             std::to_string(p.sink.position)};
    for (int h = 0; h < heads; ++h) {
      row.push_back(h < static_cast<int>(p.head_mean.size()) ? fmt(p.head_mean[h]) : "");
    }
    t.rows.push_back(row);
  }
  return t;
}

Table theorem2_heads_table(const Theorem2Study& st) {
  Table t;
  t.name = "heads";
  t.caption =
      "Theorem 2: each head's non-trigger BOS mass on the best model of each path start "
      "(probe set; NUMERIC(53))";
  t.columns = {"start",   "init_std",          "layer",       "head", "mean_bos",
               "min_bos", "max_position_mean", "max_position"};
  for (const Theorem2Run& r : st.runs) {
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
        t.rows.push_back({std::to_string(r.start), fmt(r.init_std), std::to_string(h.layer),
                          std::to_string(h.head), fmt(h.overall.mean), fmt(h.overall.min),
                          fmt(best), std::to_string(where)});
      }
    }
  }
  return t;
}

Figure theorem2_path_figure(const Theorem2Study& st) {
  Figure f;
  f.name = "path";
  f.png = true;
  f.caption = "Descent path (Theorem 2 study, residual softmax " +
              std::to_string(st.options.layers) + " x " + std::to_string(st.options.heads) + ", " +
              task_string(st.options.task) +
              "): per optimizer round and start, the worst-case loss the adversary finds on the "
              "current model (solid) and 1 - its sink score sigma (dashed). Theorem 2 predicts "
              "that 1 - sigma falls as the worst case falls.";
  f.evidence =
      "worst case SEARCH(lower bound on that model's E, certified at the adversary's witness); "
      "sink score NUMERIC(53)";
  f.columns = {"start", "round", "worst_case", "sink_score"};
  for (const Theorem2PathPoint& p : st.path) {
    f.rows.push_back(
        {std::to_string(p.start), std::to_string(p.round), fmt(p.worst_case), fmt(p.sink.sigma)});
  }
  const std::string last = std::to_string(std::max<int>(0, static_cast<int>(st.runs.size()) - 1));
  f.plot =
      "set key bottom left\nset grid\nset logscale y\nset format y '10^{%T}'\n"
      "set xlabel 'round'\nset ylabel 'value'\n"
      "set title 'Theorem 2 descent path: worst case (SEARCH, lower bound) and 1 - sink score "
      "(NUMERIC(53))'\n"
      "plot for [s=0:" +
      last +
      "] data using ($1==s ? $2 : 1/0):3 with linespoints title sprintf('worst case, start %d', "
      "s), \\\n  for [s=0:" +
      last +
      "] data using ($1==s ? $2 : 1/0):(1-$4) with lines dashtype 2 title sprintf('1 - sink "
      "score, start %d', s)\n";
  return f;
}

OutputSet theorem2_output_set(const std::string& dir) {
  return OutputSet{dir, [](const std::string& name) {
                     // and the temporaries of runs killed while writing:
                     // NAME.tmp.PID, and .STEM.tmp.EXT of the figures
                     const std::size_t tmp = name.find(".tmp.");
                     const bool ours =
                         tmp == std::string::npos
                             ? study_file(name)
                             : study_file(name.substr(0, tmp)) ||
                                   (name[0] == '.' &&
                                    study_file(name.substr(1, tmp - 1) + name.substr(tmp + 4)));
                     return ours ? OutputSet::Kind::kFile : OutputSet::Kind::kNotInSet;
                   }};
}

std::vector<std::string> write_theorem2_outputs(const Theorem2Study& st, const RunInfo& info,
                                                const std::string& dir,
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
    for (const Table& t : {theorem2_path_table(st), theorem2_heads_table(st)}) {
      written.push_back(shown(write_csv_table(t, info, staging, t.name + ".csv")));
    }
    for (const Theorem2Run& r : st.runs) {
      nlohmann::json content = nlohmann::json::array();
      for (int k = 0; k < r.result.worst.content.rows(); ++k) {
        nlohmann::json row = nlohmann::json::array();
        for (int c = 0; c < r.result.worst.content.cols(); ++c) {
          row.push_back(r.result.worst.content(k, c));
        }
        content.push_back(row);
      }
      nlohmann::json md = {
          {"study", "theorem2 path"},
          {"init", "normal std " + fmt(r.init_std)},
          {"parametrization", search::kDeepParametrization},
          {"n", st.options.task.n},
          {"L", st.options.task.L},
          {"trigger_range", to_string(st.options.task.range)},
          {"worst_case_loss", r.result.worst.certified},
          {"worst_case_evidence", Evidence::search(Bound::kLower).label()},
          {"worst_case_witness", {{"trigger", r.result.worst.trigger}, {"content", content}}},
          {"sink_score", r.sink.sigma},
          {"run_info", to_json(info)}};
      put("path_start" + std::to_string(r.start) + ".weights.json",
          weight_file_text(weight_file_from_model(r.result.model, md)));
    }
    const FigureFiles files = write_figure(theorem2_path_figure(st), info, staging);
    for (const auto& path : files.written) written.push_back(shown(path));
    if (skipped) skipped->insert(skipped->end(), files.failures.begin(), files.failures.end());
  });
  return written;
}

}  // namespace sinkcert::theorems
