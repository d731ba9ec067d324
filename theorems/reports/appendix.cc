// SPDX-License-Identifier: MIT
//
// The registry of the appendix (see appendix.h) and its orchestration: the
// inputs are checked, each entry is built in document order (computations
// shared by several entries, the P1 rows, are made once), written into the
// staging folder of replace_output_set, and appendix.tex is written last.
#include "theorems/reports/appendix.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <variant>

#include "src/constructions.h"
#include "src/input_error.h"
#include "src/parallel_tasks.h"
#include "src/run_info.h"
#include "src/table_writer.h"
#include "src/weight_file.h"
#include "src/worker_processes.h"
#include "theorems/reports/attention_figures.h"
#include "theorems/reports/certified_path_report.h"
#include "theorems/reports/precision_report.h"
#include "theorems/reports/row1_frontier_report.h"
#include "theorems/reports/study_json.h"
#include "theorems/reports/theorem1_report.h"
#include "theorems/reports/theorem2_certified_report.h"
#include "theorems/reports/theorem2_report.h"
#include "theorems/studies/normalization_study.h"
#include "theorems/studies/refined_path.h"

namespace sinkcert::theorems::reports {

namespace fs = std::filesystem;

// results/ of the current directory (the repository root when run from
// there), never a path compiled into the program
std::string default_models_dir() { return "results"; }

namespace {

// The folders of the committed Theorem 1 study and of its n = 5, L = 4
// edge run, relative to the models folder.
constexpr const char* kStudy = "theorem1";
// The committed Theorem 2 study (sinkcert theorem2 --out results/theorem2).
constexpr const char* kTheorem2Study = "theorem2";
constexpr const char* kEdgeStudy = "theorem1/edges/n5_L4_paper";
// The committed table of P5 at the paper's size (without its extension).
constexpr const char* kPaperSizeP5 = "p5_paper_size/p5_refined_paper_size";
constexpr const char* kP5Start = "theorem1/edges/n5_L4_paper/path_start0.weights.json";

// The model files of a study folder, in name order (as the study writes
// them: frontier models for each delta, then the path starts).
// Quick: the n = 5, L = 4 study's first path model only.
std::vector<std::string> study_models(const std::string& folder, studies::RunSize size) {
  if (size == studies::RunSize::kQuick) {
    if (folder != kEdgeStudy) return {};
    return {folder + "/path_start0.weights.json"};
  }
  std::vector<std::string> files;
  for (const char* delta : {"0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.3", "0.5"}) {
    files.push_back(folder + "/frontier_delta_" + delta + ".weights.json");
  }
  for (int s = 0; s < 3; ++s)
    files.push_back(folder + "/path_start" + std::to_string(s) + ".weights.json");
  return files;
}

// The hypothesis-edge runs: (n, L) at the edges, both conventions.
std::vector<Task> edge_tasks() {
  std::vector<Task> tasks;
  for (TriggerRange range : {TriggerRange::kPaper, TriggerRange::kReferenceCode}) {
    for (const auto& [n, L] :
         std::vector<std::pair<int, int>>{{3, 4}, {4, 4}, {5, 4}, {5, 3}, {5, 2}}) {
      tasks.push_back(Task{n, L, range});
    }
  }
  return tasks;
}

std::string edge_json(const Task& task) {
  return std::string(kStudy) + "/edges/n" + std::to_string(task.n) + "_L" + std::to_string(task.L) +
         "_" + to_string(task.range) + "/theorem1.json";
}

// What an entry builds: a table or a figure, its provenance, and files
// written beside it.
struct Built {
  std::variant<Table, Figure> item;
  RunInfo info;
  std::vector<std::pair<std::string, WeightFile>> weight_files;  // beside a table
  std::string copy_pdf;  // a committed figure: this PDF (under models) is copied
};

// Computations shared by entries, made on first use.
class Computations {
 public:
  Computations(const AppendixOptions& opt, const std::vector<std::string>& argv,
               const studies::Progress& progress)
      : opt_(opt), argv_(argv), progress_(progress) {}

  const AppendixOptions& options() const { return opt_; }
  studies::RunSize size() const { return opt_.size; }
  std::string model_path(const std::string& relative) const {
    return (fs::path(opt_.models) / relative).string();
  }
  RunInfo info(std::uint64_t seed, const std::string& precision) const {
    return make_run_info(argv_, seed, precision);
  }
  void say(const std::string& line) const {
    if (progress_) progress_(line);
  }
  const studies::Progress& progress() const { return progress_; }

  const Task& p1_task() const { return p1_task_; }
  const std::vector<studies::PrecisionRow>& p1() {
    if (!p1_) {
      const std::vector<double> betas = size() == studies::RunSize::kQuick
                                            ? std::vector<double>{40}
                                            : std::vector<double>{5, 10, 20, 40, 80, 160, 320};
      say("P1: sink family, n = L = 16, " + std::to_string(betas.size()) + " values of beta, " +
          std::to_string(studies::kP1Digits) + " certified digits");
      p1_ = studies::sink_family_precision_rows(p1_task_, betas, studies::kP1Digits, progress_);
    }
    return *p1_;
  }
  // P5's refined path, shared by P5 and C1.
  const studies::RefinedPathOptions& p5_options() {
    if (!p5_options_) {
      studies::RefinedPathOptions o;
      if (size() == studies::RunSize::kFull) {
        o.scales = {1, 2, 4, 8, 12};
        o.bits = 1024;
      } else if (size() == studies::RunSize::kQuick) {
        o.scales = {1};
        o.bits = 256;
        o.evaluations = 4;
        o.bound_boxes = 100;
      }
      p5_options_ = o;
    }
    return *p5_options_;
  }
  const Task& p5_task() const { return p5_task_; }
  const studies::RefinedPath& p5() {
    if (!p5_) {
      const std::string start = model_path(kP5Start);
      say("P5: refined scale path of " + start);
      p5_ = studies::refined_path(to_model<double>(read_weight_file(start)), p5_task_, p5_options(),
                                  progress_);
    }
    return *p5_;
  }
  // C1's rows: the descent path models and P5's continuation.
  const std::vector<CertifiedPathRow>& c1();
  // T2c's budgets and rows (the models of t2c_models), shared by T2c and F3.
  Theorem2CertifiedOptions t2c_options() const;
  const std::vector<Theorem2CertifiedRow>& t2c();
  // Q1's rows (the row-1 frontier), shared by Q1 and F4.
  const std::vector<studies::Row1FrontierRow>& q1() {
    if (!q1_) {
      say("Q1: row-1 frontier, 12 certified lower ends and model losses");
      q1_ = studies::row1_frontier_rows(q1_sizes(), q1_deltas());
    }
    return *q1_;
  }
  RunInfo q1_info() const { return info(0, "MPFI 128 bits"); }
  RunInfo p1_info() const {
    return info(0,
                "float, double, Float128 (113), MPFR 257 bits; MPFI adaptive from 64 bits, +64, " +
                    std::to_string(studies::kP1Digits) + " digits");
  }

 private:
  const AppendixOptions& opt_;
  const std::vector<std::string>& argv_;
  const studies::Progress& progress_;
  const Task p1_task_{16, 16, TriggerRange::kPaper};
  std::optional<std::vector<studies::PrecisionRow>> p1_;
  const Task p5_task_{5, 4, TriggerRange::kPaper};
  std::optional<studies::RefinedPathOptions> p5_options_;
  std::optional<studies::RefinedPath> p5_;
  std::optional<std::vector<CertifiedPathRow>> c1_;
  std::optional<std::vector<Theorem2CertifiedRow>> t2c_;
  std::optional<std::vector<studies::Row1FrontierRow>> q1_;
};

// T2c's models, relative to the models folder: the Theorem 2 study's path
// model from the paper's init (start 0, which every run of the study has;
// the committed study runs it alone, --init-stds 0.02) and the small
// study's eps_one models (n = 5, L = 4; the distinct ones: delta 0.5 from
// the construction, delta 0.2 and below from the polished sink). Quick: the
// delta 0.5 model alone (a tenth of a second, every bound to its gap).
std::vector<std::string> t2c_models(studies::RunSize size) {
  const std::string eps_one = std::string(kTheorem2Study) + "/n5_L4/eps_one_delta";
  if (size == studies::RunSize::kQuick) return {eps_one + "0.5.weights.json"};
  return {std::string(kTheorem2Study) + "/path_start0.weights.json", eps_one + "0.5.weights.json",
          eps_one + "0.2.weights.json"};
}

// T2c's budgets at n L > 64 (the path model, n = L = 16): boxes per head and
// extreme above layer 0 and for E, and the time guards; boxes decide, so the
// table is the same on every machine. Layer 0 and n L <= 64 keep the
// defaults (20000 and 2000 boxes: each bound reaches its gap first).
Theorem2CertifiedOptions t2c_budgets(long deep_bos_boxes, long loss_boxes, double bos_seconds,
                                     double loss_seconds) {
  Theorem2CertifiedOptions o;
  o.bos_seconds = bos_seconds;
  o.loss_seconds = loss_seconds;
  o.bos_boxes = [deep_bos_boxes](const Task& t, int layer) {
    return layer == 0 || t.n * t.L <= 64 ? 20000L : deep_bos_boxes;
  };
  o.loss_boxes = [loss_boxes](const Task& t) { return t.n * t.L <= 64 ? 2000L : loss_boxes; };
  o.boxes_text = "per head and extreme 20000 boxes (" + std::to_string(deep_bos_boxes) +
                 " above layer 0 at n L > 64), E 2000 boxes (" + std::to_string(loss_boxes) +
                 " at n L > 64)";
  return o;
}

Theorem2CertifiedOptions Computations::t2c_options() const {
  // Default: above layer 0 at n = L = 16 each box carries an interval
  // forward pass through the layers below (about 0.35 s a box on one core,
  // against about 8 ms in layer 0, where 600 boxes reach the gap) and the
  // first pass alone is about 120 boxes: 150 boxes take about 15 s and go
  // no further in the enclosure than 135; E at n = L = 16 about 1.3 s a box
  // on one core, its batches of boxes on every core: 50 boxes, about 55 s
  // on 2 cores (E <= 1.755e-9; one box at a time, 40 boxes took 78 s for
  // E <= 1.791e-9, and 40 in batches 39 s for E <= 1.849e-9: a batch
  // bounds the best boxes at its start, not each best in turn). Full: about
  // 2 and 10 minutes. Quick: one n = 5, L = 4 model, every bound to its gap.
  Theorem2CertifiedOptions o = size() == studies::RunSize::kFull ? t2c_budgets(400, 560, 1200, 3000)
                               : size() == studies::RunSize::kQuick
                                   ? t2c_budgets(150, 40, 60, 60)
                                   : t2c_budgets(150, 50, 120, 300);
  if (options().t2c_bos_seconds > 0) o.bos_seconds = options().t2c_bos_seconds;
  if (options().t2c_loss_seconds > 0) o.loss_seconds = options().t2c_loss_seconds;
  return o;
}

const std::vector<Theorem2CertifiedRow>& Computations::t2c() {
  if (t2c_) return *t2c_;
  std::vector<Theorem2CertifiedModel> models;
  for (const std::string& rel : t2c_models(size())) {
    const WeightFile file = read_weight_file(model_path(rel));
    // the study's task: the file's own L, else its metadata's (n = L = 16)
    int L = file.n;
    if (file.task && file.task->L) {
      L = *file.task->L;
    } else if (file.metadata.is_object() && file.metadata.contains("L") &&
               file.metadata["L"].is_number_integer()) {
      L = file.metadata["L"].get<int>();
    }
    const std::string shown = rel.substr(0, rel.size() - std::string(".weights.json").size());
    models.push_back({shown, Task{file.n, L, TriggerRange::kPaper}, to_model<Rational>(file)});
  }
  say("T2c: " + std::to_string(models.size()) + " Theorem 2 models, certified");
  t2c_ = theorem2_certified_rows(models, t2c_options(), progress());
  return *t2c_;
}

struct Entry {
  AppendixArtifact artifact;
  std::function<Built(Computations&)> build;
  // Entries sharing a computation (P1's three, P5 with C1 and F2, T2c with
  // F3) are one job, built in registry order by one process; every other
  // entry is a job of its own.
  std::string job;
  // About the entry's seconds on one core at the default size, measured:
  // the jobs start longest first (the order changes no value).
  double seconds = 1;
};

Built build_p2(Computations& c) {
  std::vector<studies::SearchModelFile> files;
  for (const char* folder : {kStudy, kEdgeStudy}) {
    for (const std::string& rel : study_models(folder, c.size())) {
      // shown relative to the study folder, as the study names them
      files.push_back({rel.substr(std::string(kStudy).size() + 1), c.model_path(rel)});
    }
  }
  c.say("P2: " + std::to_string(files.size()) + " search models under " + c.model_path(kStudy));
  const long bound_boxes = c.size() == studies::RunSize::kFull    ? 120000
                           : c.size() == studies::RunSize::kQuick ? 400
                                                                  : c.options().p2_bound_boxes;
  const auto rows = studies::search_model_rows(files, bound_boxes, c.progress());
  return {p2_table(rows, "the committed study in theorem1/ and its n = 5, L = 4 edge run"),
          c.info(0, "MPFI adaptive, 6 digits"),
          {},
          {}};
}

Built build_p5(Computations& c) {
  const studies::RefinedPathOptions& o = c.p5_options();
  const Task& task = c.p5_task();
  const studies::RefinedPath& path = c.p5();
  std::ostringstream precision;
  precision << "refinement MPFR " << path.bits << " bits; MPFI adaptive from 64 bits, +64, "
            << o.certify.digits << " digits";
  Built b{p5_table(path, "edges/n5_L4_paper/path_start0", task, o),
          c.info(o.seed, precision.str()),
          {},
          {}};
  // every refined model as an exact weight file beside the table, so that
  // `verify bound` / `eval --certify` re-check its row
  for (const studies::RefinedPathRow& row : path.rows) {
    WeightFile file =
        studies::refined_path_weight_file(row, path, task, "edges/n5_L4_paper/path_start0");
    file.metadata["run_info"] = to_json(b.info);
    b.weight_files.emplace_back(studies::refined_path_file_name(row), std::move(file));
  }
  return b;
}

// C1's descent path models: the n = 5, L = 4 edge run's and (not in quick
// mode) the n = L = 16 study's, relative to the models folder.
std::vector<std::pair<std::string, Task>> c1_path_models(studies::RunSize size) {
  std::vector<std::pair<std::string, Task>> out;
  const int starts = size == studies::RunSize::kQuick ? 1 : 3;
  for (int s = 0; s < starts; ++s) {
    out.emplace_back(std::string(kEdgeStudy) + "/path_start" + std::to_string(s) + ".weights.json",
                     Task{5, 4, TriggerRange::kPaper});
  }
  if (size == studies::RunSize::kQuick) return out;
  for (int s = 0; s < 3; ++s) {
    out.emplace_back(std::string(kStudy) + "/path_start" + std::to_string(s) + ".weights.json",
                     Task{16, 16, TriggerRange::kPaper});
  }
  return out;
}

const std::vector<CertifiedPathRow>& Computations::c1() {
  if (c1_) return *c1_;
  std::vector<CertifiedPathModel> models;
  for (const auto& [rel, task] : c1_path_models(size())) {
    const std::string shown =
        rel.substr(std::string(kStudy).size() + 1, rel.size() - std::string(kStudy).size() - 1 -
                                                       std::string(".weights.json").size());
    models.push_back({shown, "search (double)", task,
                      to_model<Rational>(read_weight_file(model_path(rel))), std::nullopt});
  }
  for (const studies::RefinedPathRow& row : p5().rows) {
    std::ostringstream stage;
    stage << "MPFR continuation, s = " << row.scale;
    models.push_back(
        {"edges/n5_L4_paper/path_start0", stage.str(), p5_task(), row.model,
         row.bounded ? std::optional<bounds::WorstCaseBound>(row.bound) : std::nullopt});
  }
  CertifiedPathOptions o;
  // about 1 s (quick), 10 s (default) and 120 s (full) per model for E
  if (size() == studies::RunSize::kQuick) {
    o.loss_boxes = [](const Task&) { return 400L; };
    o.bos_boxes = 800;
  } else if (size() == studies::RunSize::kFull) {
    o.loss_boxes = [](const Task& t) { return t.n * t.L <= 64 ? 48000L : 600L; };
  } else {
    o.loss_boxes = [](const Task& t) { return t.n * t.L <= 64 ? 4000L : 50L; };
  }
  say("C1: certified path, " + std::to_string(models.size()) + " models");
  c1_ = certified_path_rows(models, o, progress());
  return *c1_;
}

// A figure of the committed Theorem 1 study: its PDF, captioned for the
// study's task (read from its theorem1.json).
Built study_figure(Computations& c, const std::string& name) {
  RunInfo info;
  const Task task = read_study_task(c.model_path(std::string(kStudy) + "/theorem1.json"), &info);
  Figure f = theorem1_figure_frame(name, task);
  if (name == "nuance") {
    // what the committed data show, from the same theorem1.json
    const std::string summary =
        nuance_summary(read_nuance_points(c.model_path(std::string(kStudy) + "/theorem1.json")));
    f.caption += " " + summary;
    f.caption_latex += " " + latex_escape(summary);
  }
  f.name = "theorem1_" + name;
  return {f, info, {}, c.model_path(std::string(kStudy) + "/" + name + ".pdf")};
}

// A figure of the committed Theorem 2 study, likewise from its theorem2.json.
Built theorem2_study_figure(Computations& c, const std::string& name) {
  RunInfo info;
  nlohmann::json model;
  const Task task =
      read_study_task(c.model_path(std::string(kTheorem2Study) + "/theorem2.json"), &info, &model);
  Figure f =
      theorem2_figure_frame(name, task, model["layers"].get<int>(), model["heads"].get<int>());
  f.name = "theorem2_" + name;
  return {f, info, {}, c.model_path(std::string(kTheorem2Study) + "/" + name + ".pdf")};
}

// The attention figures; the step caps apply when their recipe models are
// retrained (quick: 300 steps single-layer, 30 deep: seconds).
std::vector<AttentionFigureSpec> appendix_attention_figures(studies::RunSize size) {
  return attention_figure_list(size == studies::RunSize::kQuick ? 300 : kFigureRecipeSteps,
                               size == studies::RunSize::kQuick ? 30 : kFigureDeepRecipeSteps);
}

// THE registry: every table and figure of the appendix, in document order.
std::vector<Entry> registry(studies::RunSize size) {
  std::vector<Entry> entries;
  const auto table = [&](const std::string& name, std::vector<std::string> inputs,
                         std::function<Built(Computations&)> build, std::string job = "",
                         double seconds = 1) {
    if (job.empty()) job = name;
    entries.push_back(
        {{name, ArtifactKind::kTable, std::move(inputs), job}, std::move(build), job, seconds});
  };
  const auto figure = [&](const std::string& name, std::vector<std::string> inputs,
                          std::function<Built(Computations&)> build, std::string job = "",
                          double seconds = 1) {
    if (job.empty()) job = name;
    entries.push_back(
        {{name, ArtifactKind::kFigure, std::move(inputs), job}, std::move(build), job, seconds});
  };
  table(
      "p1_sink_loss", {},
      [](Computations& c) {
        return Built{p1_loss_table(c.p1(), c.p1_task()), c.p1_info(), {}, {}};
      },
      "P1", 23);
  table(
      "p1_sink_bos", {},
      [](Computations& c) {
        return Built{p1_bos_table(c.p1(), c.p1_task()), c.p1_info(), {}, {}};
      },
      "P1", 0);
  figure(
      "f1_sink_precision", {},
      [](Computations& c) {
        return Built{p1_figure(c.p1(), c.p1_task()), c.p1_info(), {}, {}};
      },
      "P1", 0);
  table("p3_relu_certificate", {}, [](Computations& c) {
    const std::vector<std::pair<int, int>> sizes =
        c.size() == studies::RunSize::kQuick
            ? std::vector<std::pair<int, int>>{{5, 4}, {8, 8}}
            : std::vector<std::pair<int, int>>{{5, 4}, {8, 8}, {16, 16}, {32, 64}, {64, 256}};
    c.say("P3: ReLU certificate, " + std::to_string(sizes.size()) + " sizes");
    return Built{p3_table(studies::relu_certificate_rows(sizes, c.progress())),
                 c.info(0, "exact (GMP rationals)"),
                 {},
                 {}};
  });
  table(
      "p4_beyond_double", {},
      [](Computations& c) {
        c.say("P4: scale path of the sink family, base beta = 10");
        AdaptiveOptions o;
        o.digits = 10;
        const std::vector<double> scales = c.size() == studies::RunSize::kQuick
                                               ? std::vector<double>{1, 8}
                                               : std::vector<double>{1, 2, 4, 8, 16, 24, 32};
        const auto rows = studies::scale_path(sink_family<double>(16, 10.0), c.p1_task(), scales, o,
                                              c.progress());
        return Built{p4_table(rows, "the sink family", c.p1_task(), 10.0),
                     c.info(0, "MPFI adaptive from 64 bits, +64, 10 digits"),
                     {},
                     {}};
      },
      "", 5);
  table("b1_worst_case_bound", {}, [](Computations& c) {
    c.say("B1: branch and bound reach");
    return Built{b1_table(studies::worst_case_bound_rows(c.size(), c.progress())),
                 c.info(21, "MPFI 128 bits"),
                 {},
                 {}};
  });
  std::vector<std::string> p2_inputs = study_models(kStudy, size);
  for (const auto& f : study_models(kEdgeStudy, size)) p2_inputs.push_back(f);
  table("p2_search_models", p2_inputs, build_p2, "", 58);
  table("p5_refined_search_path", {kP5Start}, build_p5, "P5", 24);
  std::vector<std::string> c1_inputs{kP5Start};
  for (const auto& [rel, task] : c1_path_models(size)) c1_inputs.push_back(rel);
  table(
      "c1_certified_path", c1_inputs,
      [](Computations& c) {
        return Built{certified_path_table(c.c1()),
                     c.info(0, "MPFI from 128 bits, raised by 64 while rounding limits a bound"),
                     {},
                     {}};
      },
      "P5", 20);
  std::vector<std::string> edge_inputs;
  for (const Task& task : edge_tasks()) {
    if (!task.trigger_positions().empty()) edge_inputs.push_back(edge_json(task));
  }
  table("t1_hypothesis_edges", edge_inputs, [](Computations& c) {
    c.say("T1: hypothesis-edge runs under " + c.model_path(std::string(kStudy) + "/edges"));
    std::vector<EdgeRun> runs;
    for (const Task& task : edge_tasks())
      runs.push_back(read_edge_run(task, c.model_path(edge_json(task))));
    return Built{
        edges_table(runs), c.info(0, "double (read from each run's theorem1.json)"), {}, {}};
  });
  figure(
      "f2_certified_path", c1_inputs,
      [](Computations& c) {
        return Built{certified_path_figure(c.c1()),
                     c.info(0, "MPFI from 128 bits, raised by 64 while rounding limits a bound"),
                     {},
                     {}};
      },
      "P5", 0);
  for (const char* name : {"path", "frontier", "nuance"}) {
    const std::string stem = name;
    figure("theorem1_" + stem,
           {std::string(kStudy) + "/theorem1.json", std::string(kStudy) + "/" + stem + ".pdf"},
           [stem](Computations& c) { return study_figure(c, stem); });
  }
  // The Theorem 2 study in theorem2/, read back, and its two figures (which
  // make the study a required input).
  table("t2_theorem2_study", {}, [](Computations& c) {
    return Built{
        theorem2_appendix_table(c.model_path(std::string(kTheorem2Study) + "/theorem2.json")),
        c.info(0, "double (read from theorem2.json)"),
        {},
        {}};
  });
  table("t2b_theorem2_every_head", {}, [](Computations& c) {
    return Built{theorem2_every_head_appendix_table(
                     c.model_path(std::string(kTheorem2Study) + "/theorem2.json")),
                 c.info(0, "double (read from theorem2.json)"),
                 {},
                 {}};
  });
  // T2c and F3: every head's BOS mass and E CERTIFIED over the whole box
  // (quick: one n = 5, L = 4 model).
  const std::vector<std::string> t2c_inputs = t2c_models(size);
  table(
      "t2c_theorem2_certified", t2c_inputs,
      [](Computations& c) {
        return Built{theorem2_certified_table(c.t2c(), c.t2c_options()),
                     c.info(0, "MPFI from 128 bits, raised by 64 while rounding limits a bound"),
                     {},
                     {}};
      },
      "T2c", 120);
  figure(
      "f3_theorem2_certified", t2c_inputs,
      [](Computations& c) {
        return Built{theorem2_certified_figure(c.t2c()),
                     c.info(0, "MPFI from 128 bits, raised by 64 while rounding limits a bound"),
                     {},
                     {}};
      },
      "T2c", 0);
  for (const char* name : {"path", "frontier"}) {
    const std::string stem = name;
    figure("theorem2_" + stem,
           {std::string(kTheorem2Study) + "/theorem2.json",
            std::string(kTheorem2Study) + "/" + stem + ".pdf"},
           [stem](Computations& c) { return theorem2_study_figure(c, stem); });
  }
  // The per-kind normalization table, rebuilt from the committed sweep's
  // merged results (sinkcert sweep --grid normalizations/grid_<dims>.json).
  for (const std::string dims : {"n5_L4", "n16_L16"}) {
    const std::string input = "normalizations/sweep_" + dims + "/sweep.json";
    table("normalizations_" + dims, {input}, [input, dims](Computations& c) {
      RunInfo info;
      Table t = studies::normalization_table_from_sweep(c.model_path(input),
                                                        "normalizations_" + dims, &info);
      return Built{std::move(t), info, {}, {}};
    });
  }
  // Q1 and F4: the row-1 frontier's certified ends (theorems/studies/row1_frontier.h);
  // the twelve upper models as exact weight files beside the table.
  table(
      "q1_row1_frontier", {},
      [](Computations& c) {
        Built b{q1_table(c.q1()), c.q1_info(), {}, {}};
        for (const studies::Row1FrontierRow& r : c.q1()) {
          WeightFile file = r.model.file;
          file.metadata["run_info"] = to_json(b.info);
          b.weight_files.emplace_back(r.file, std::move(file));
        }
        return b;
      },
      "Q1", 5);
  figure(
      "f4_row1_frontier", {},
      [](Computations& c) {
        return Built{q1_figure(c.q1()), c.q1_info(), {}, {}};
      },
      "Q1", 0);
  // P5 at the paper's size, as its benchmark wrote it (refined_path_benchmark
  // --out p5_paper_size; two minutes of MPFR and MPFI work, not redone here).
  {
    const std::string input = std::string(kPaperSizeP5) + ".json";
    table("p5_refined_paper_size", {input}, [input](Computations& c) {
      RunInfo info;
      Table t = read_table_json(c.model_path(input), &info);
      t.alignment = kP5PaperSizeAlignment;  // the JSON keeps text only
      return Built{std::move(t), info, {}, {}};
    });
  }
  // The attention figures, one per entry of attention_figure_list(), from
  // the committed recipe models (retrained by --retrain).
  for (const AttentionFigureSpec& spec : appendix_attention_figures(size)) {
    figure(spec.name + "_" + figure_suffix(spec.kind), attention_figure_inputs(spec),
           [spec](Computations& c) {
             c.say("attention figure " + spec.name);
             return Built{make_attention_figure(spec, c.options().models, AttentionFigureOptions{}),
                          c.info(kDefaultProbeSeed, "double"),
                          {},
                          {}};
           });
  }
  return entries;
}

std::string read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "file", "readable");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// What one entry wrote: its table stem or figure (and the figure's entry in
// the document), and a figure gnuplot did not render; passed from a worker
// process to the parent as JSON.
struct EntryOutcome {
  std::vector<std::string> tables, figures, not_rendered;
  std::optional<DocumentFigure> figure;
};

nlohmann::json to_json(const EntryOutcome& o) {
  nlohmann::json j = {
      {"tables", o.tables}, {"figures", o.figures}, {"not_rendered", o.not_rendered}};
  if (o.figure) {
    const DocumentFigure& f = *o.figure;
    j["figure"] = {{"path", f.path},
                   {"name", f.name},
                   {"caption", f.caption},
                   {"missing", f.missing},
                   {"caption_latex", f.caption_latex}};
  }
  return j;
}

EntryOutcome entry_outcome(const nlohmann::json& j) {
  EntryOutcome o;
  o.tables = j.at("tables").get<std::vector<std::string>>();
  o.figures = j.at("figures").get<std::vector<std::string>>();
  o.not_rendered = j.at("not_rendered").get<std::vector<std::string>>();
  if (j.contains("figure")) {
    const nlohmann::json& f = j["figure"];
    o.figure =
        DocumentFigure{f.at("path").get<std::string>(), f.at("name").get<std::string>(),
                       f.at("caption").get<std::string>(), f.at("missing").get<std::string>(),
                       f.at("caption_latex").get<std::string>()};
  }
  return o;
}

// One built table or figure, written into the existing folders `tables` or
// `figures` (every file atomically; a folder is never created here, so a
// worker cannot recreate a staging folder an interrupt removed).
EntryOutcome write_built(const Built& b, const std::string& tables, const std::string& figures) {
  EntryOutcome out;
  if (const Table* t = std::get_if<Table>(&b.item)) {
    write_table(*t, b.info, tables);
    for (const auto& [name, file] : b.weight_files) write_weight_file(tables + "/" + name, file);
    out.tables.push_back("tables/" + t->name);
    return out;
  }
  const Figure& f = std::get<Figure>(b.item);
  DocumentFigure d{"", f.name, figure_caption(f), "", figure_caption_latex(f)};
  if (!b.copy_pdf.empty()) {
    write_file_atomically(figures + "/" + f.name + ".pdf", read_binary(b.copy_pdf));
    d.path = "figures/" + f.name + ".pdf";
  } else {
    const FigureFiles files = write_figure(f, b.info, figures);
    if (!files.pdf.empty()) {
      d.path = "figures/" + f.name + ".pdf";
    } else {
      d.missing = files.failures.empty() ? "not rendered" : files.failures.front();
      out.not_rendered.push_back(f.name + ": " + d.missing);
    }
  }
  if (!d.path.empty()) out.figures.push_back(d.path);
  out.figure = d;
  return out;
}

// A job: entries of the registry built by one process, in registry order.
struct Job {
  std::string name;
  std::vector<std::size_t> entries;  // indices into the registry
  double seconds = 0;
};

// The selected entries as jobs (Entry::job), longest first (ties: registry
// order).
std::vector<Job> make_jobs(const std::vector<Entry>& registry,
                           const std::vector<std::size_t>& selected) {
  std::vector<Job> jobs;
  for (std::size_t i : selected) {
    auto it = std::find_if(jobs.begin(), jobs.end(),
                           [&](const Job& j) { return j.name == registry[i].job; });
    if (it == jobs.end()) it = jobs.insert(jobs.end(), Job{registry[i].job, {}, 0});
    it->entries.push_back(i);
    it->seconds += registry[i].seconds;
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const Job& a, const Job& b) { return a.seconds > b.seconds; });
  return jobs;
}

// The progress of a run: at most one line a second (kStatusSeconds), saying
// how many entries are done of how many, the time so far, and what each
// running job is doing (its latest line), e.g.
//   "9 of 27 done (last: c1_certified_path), 2 running: T2c 62 s (T2c
//    theorem2/path_start0 layer 1 head 0: ...); p2_search_models 40 s (P2
//    path_start0.weights.json)"
class AppendixStatus {
 public:
  static constexpr double kStatusSeconds = 1.0;
  static constexpr double kQuietSeconds = 10.0;
  // Longest account of a job's latest line in a status line (characters).
  static constexpr std::size_t kLineChars = 90;

  AppendixStatus(int total, const std::function<void(const std::string&)>& out,
                 std::function<double()> elapsed)
      : total_(total), out_(out), elapsed_(std::move(elapsed)) {}

  void line(const std::string& job, const std::string& text) {
    auto it = std::find_if(running_.begin(), running_.end(),
                           [&](const Running& r) { return r.job == job; });
    if (it == running_.end()) it = running_.insert(running_.end(), Running{job, "", elapsed_()});
    it->text = text.size() > kLineChars ? text.substr(0, kLineChars - 3) + "..." : text;
    changed_ = true;
  }
  void entry_done(const std::string& job, const std::string& entry, bool job_finished) {
    ++done_;
    last_done_ = entry;
    if (job_finished) {
      running_.erase(std::remove_if(running_.begin(), running_.end(),
                                    [&](const Running& r) { return r.job == job; }),
                     running_.end());
    }
    changed_ = true;
  }
  // Prints a line when something changed since the last one and a second
  // has passed (with force, at once), or when jobs are running and ten
  // seconds have passed without news.
  void tick(bool force = false) {
    const double now = elapsed_();
    // nothing new: a line every kQuietSeconds while jobs run, for their times
    const bool due = changed_ ? force || now - printed_ >= kStatusSeconds
                              : !running_.empty() && now - printed_ >= kQuietSeconds;
    if (!out_ || !due) return;
    std::ostringstream s;
    s << done_ << " of " << total_ << " done";
    if (!last_done_.empty()) s << " (last: " << last_done_ << ")";
    if (!running_.empty()) {
      s << ", " << running_.size() << " running:";
      const char* sep = " ";
      for (const Running& r : running_) {
        s << sep << r.job << " " << static_cast<long>(now - r.since) << " s"
          << (r.text.empty() ? "" : " (" + r.text + ")");
        sep = "; ";
      }
    }
    out_(s.str());
    printed_ = now;
    changed_ = false;
  }

 private:
  int total_;
  std::function<void(const std::string&)> out_;
  std::function<double()> elapsed_;
  int done_ = 0;
  std::string last_done_;
  struct Running {
    std::string job;
    std::string text;  // its latest line
    double since = 0;  // when its first line came
  };
  std::vector<Running> running_;
  double printed_ = -1e9;
  bool changed_ = false;
};

// What a job's lines start with when they say an entry is done (a byte no
// progress line contains).
constexpr char kDoneMark = '\x1e';

// Builds `selected` into the existing folders `tables` and `figures`:
// `threads` worker processes at a time (src/worker_processes.h), or in this
// process when threads <= 1; the outcomes in the order of `selected`.
std::vector<EntryOutcome> build_entries(const AppendixOptions& opt,
                                        const std::vector<std::string>& argv,
                                        const std::vector<Entry>& entries,
                                        const std::vector<std::size_t>& selected,
                                        const std::string& tables, const std::string& figures,
                                        const std::function<void(const std::string&)>& out,
                                        const std::function<double()>& elapsed) {
  const std::vector<Job> jobs = make_jobs(entries, selected);
  AppendixStatus status(static_cast<int>(selected.size()), out, elapsed);
  // job k, reporting through say (progress lines and kDoneMark lines);
  // returns the JSON array of its entries' outcomes
  const auto run_job = [&](int k, const WorkerSay& say) {
    const Job& job = jobs[static_cast<std::size_t>(k)];
    // each job's provenance lists the inputs it read, in any mode
    clear_recorded_input_files();
    const studies::Progress progress = say;  // Computations keeps a reference
    Computations c(opt, argv, progress);
    nlohmann::json outcomes = nlohmann::json::array();
    for (std::size_t i : job.entries) {
      say("building " + entries[i].artifact.name);
      outcomes.push_back(to_json(write_built(entries[i].build(c), tables, figures)));
      say(std::string(1, kDoneMark) + entries[i].artifact.name);
    }
    return outcomes.dump();
  };
  std::vector<int> left(jobs.size());
  for (std::size_t k = 0; k < jobs.size(); ++k) left[k] = static_cast<int>(jobs[k].entries.size());
  const auto on_line = [&](int k, const std::string& text) {
    const std::string& job = jobs[static_cast<std::size_t>(k)].name;
    if (!text.empty() && text[0] == kDoneMark) {
      status.entry_done(job, text.substr(1), --left[static_cast<std::size_t>(k)] == 0);
    } else {
      status.line(job, text);
    }
    status.tick();
  };
  std::vector<std::string> results(jobs.size());
  if (opt.threads <= 1) {
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      const int job = static_cast<int>(k);
      results[k] = run_job(job, [&](const std::string& text) { on_line(job, text); });
    }
  } else {
    results = run_worker_processes(static_cast<int>(jobs.size()), opt.threads, run_job, on_line,
                                   [&] { status.tick(); });
  }
  status.tick(true);
  std::vector<EntryOutcome> outcomes(entries.size());
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const nlohmann::json list = nlohmann::json::parse(results[k]);
    for (std::size_t e = 0; e < jobs[k].entries.size(); ++e) {
      outcomes[jobs[k].entries[e]] = entry_outcome(list.at(e));
    }
  }
  std::vector<EntryOutcome> ordered;
  for (std::size_t i : selected) ordered.push_back(std::move(outcomes[i]));
  return ordered;
}

void add_to_summary(const EntryOutcome& o, AppendixSummary& summary) {
  for (const auto& t : o.tables) summary.tables.push_back(t);
  for (const auto& f : o.figures) summary.figures.push_back(f);
  for (const auto& n : o.not_rendered) summary.not_rendered.push_back(n);
}

// The whole appendix, written into `staging` (the new <out>).
AppendixSummary write_appendix(const AppendixOptions& opt, const std::string& staging,
                               const std::vector<std::string>& argv,
                               const std::function<void(const std::string&)>& out,
                               const std::function<double()>& elapsed) {
  const std::string tables = staging + "/tables", figures = staging + "/figures";
  fs::create_directories(tables);
  fs::create_directories(figures);
  const std::vector<Entry> entries = registry(opt.size);
  std::vector<std::size_t> all(entries.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  AppendixSummary summary;
  std::vector<DocumentFigure> doc_figures;
  for (const EntryOutcome& o :
       build_entries(opt, argv, entries, all, tables, figures, out, elapsed)) {
    add_to_summary(o, summary);
    if (o.figure) doc_figures.push_back(*o.figure);
  }
  // Figures the user put in <out>/figures stay: copied into the new set
  // (the registry's own files are regenerated above, never carried over).
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(opt.out + "/figures", ec)) {
    const std::string name = entry.path().filename().string();
    std::error_code kind_ec;
    if (name[0] == '.' || name.find(".tmp") != std::string::npos ||
        !entry.is_regular_file(kind_ec) || entry.is_symlink(kind_ec) ||
        fs::exists(figures + "/" + name)) {
      continue;
    }
    fs::copy_file(entry.path(), figures + "/" + name);
  }
  const std::string folder = fs::path(opt.out).filename().string();
  clear_recorded_input_files();  // the document reads no input of its own
  write_file_atomically(
      staging + "/appendix.tex",
      appendix_document(summary.tables, doc_figures, make_run_info(argv, 0, "see each table"),
                        folder.empty() ? "." : folder));
  return summary;
}

}  // namespace

std::vector<AppendixArtifact> appendix_registry(studies::RunSize size) {
  std::vector<AppendixArtifact> out;
  for (const Entry& e : registry(size)) out.push_back(e.artifact);
  return out;
}

void check_appendix_inputs(const AppendixOptions& opt) {
  std::error_code ec;
  if (!fs::is_directory(opt.models, ec)) {
    throw InputError(opt.models, "--models",
                     "the folder of the committed search models (results/ of the repository); it "
                     "is not a folder" +
                         std::string(opt.models == default_models_dir()
                                         ? " in the current directory (run from the repository "
                                           "root, or give --models DIR)"
                                         : ""));
  }
  for (const AppendixArtifact& a : appendix_registry(opt.size)) {
    for (const std::string& rel : a.inputs) {
      // --retrain writes them before they are read
      if (opt.retrain && rel.rfind(std::string(kFigureModelsFolder) + "/", 0) == 0) continue;
      const std::string path = (fs::path(opt.models) / rel).string();
      if (!fs::is_regular_file(path, ec)) {
        throw InputError(
            path, "file",
            "an input of " + a.name + " (missing; --models names the folder holding theorem1/)");
      }
    }
  }
}

OutputSet appendix_output_set(const std::string& out) {
  return OutputSet{out, [](const std::string& name) {
                     if (name == "tables" || name == "figures") return OutputSet::Kind::kFolder;
                     // appendix.tex, and its temporary left by a run killed
                     // before sets were replaced as a whole
                     if (name == "appendix.tex" || name.rfind("appendix.tex.tmp.", 0) == 0) {
                       return OutputSet::Kind::kFile;
                     }
                     return OutputSet::Kind::kNotInSet;
                   }};
}

AppendixSummary generate_appendix(const AppendixOptions& opt, const std::vector<std::string>& argv,
                                  const studies::Progress& report) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto progress = [&](const std::string& msg) {
    if (report) report("[appendix " + std::to_string(static_cast<int>(elapsed())) + " s] " + msg);
  };
  check_appendix_inputs(opt);
  std::vector<std::size_t> selected;
  const std::vector<Entry> entries = registry(opt.size);
  if (!opt.only.empty()) {
    // the named tables and figures of the registry (comma-separated)
    std::vector<std::string> names;
    std::stringstream list(opt.only);
    for (std::string name; std::getline(list, name, ',');) {
      if (!name.empty()) names.push_back(name);
    }
    for (const std::string& name : names) {
      if (std::none_of(entries.begin(), entries.end(),
                       [&](const Entry& e) { return e.artifact.name == name; })) {
        throw InputError(
            "command line", "--only",
            "names of tables or figures of the appendix (comma-separated), got " + name);
      }
    }
    if (names.empty()) {
      throw InputError(
          "command line", "--only",
          "names of tables or figures of the appendix (comma-separated), got " + opt.only);
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (std::find(names.begin(), names.end(), entries[i].artifact.name) != names.end()) {
        selected.push_back(i);
      }
    }
  }
  if (opt.retrain) {
    const std::vector<AttentionFigureSpec> specs = appendix_attention_figures(opt.size);
    progress("retraining the attention figures' recipe models into " +
             (fs::path(opt.models) / kFigureModelsFolder).string());
    retrain_figure_models(specs, opt.models, Task{16, 16, TriggerRange::kPaper}, argv, opt.threads,
                          progress);
  }
  AppendixSummary summary;
  if (!opt.only.empty()) {
    // those entries' files alone (each written atomically), into the
    // folders they need
    const std::string tables = opt.out + "/tables", figures = opt.out + "/figures";
    for (std::size_t i : selected) {
      fs::create_directories(entries[i].artifact.kind == ArtifactKind::kTable ? tables : figures);
    }
    for (const EntryOutcome& o :
         build_entries(opt, argv, entries, selected, tables, figures, progress, elapsed)) {
      add_to_summary(o, summary);
    }
  } else {
    replace_output_set(appendix_output_set(opt.out), [&](const std::string& staging) {
      summary = write_appendix(opt, staging, argv, progress, elapsed);
    });
    progress("replaced tables/, figures/ and appendix.tex in " + opt.out + " as a whole");
  }
  for (const std::string& note : summary.not_rendered) progress("figure NOT rendered: " + note);
  summary.seconds = elapsed();
  return summary;
}

namespace {

// Plain text for \texttt, breakable after each '/' (long paths).
std::string breakable_tt(const std::string& text) {
  std::string out;
  for (char c : latex_escape(text)) {
    out += c;
    if (c == '/') out += "\\allowbreak{}";
  }
  return out;
}

}  // namespace

std::string appendix_document(const std::vector<std::string>& table_stems,
                              const std::vector<DocumentFigure>& figures, const RunInfo& info,
                              const std::string& folder_name) {
  std::ostringstream out;
  out << provenance_header("% ", "sinkcert appendix", info);
  out << "\\documentclass[11pt]{article}\n"
         "\\usepackage[margin=2cm]{geometry}\n"
         "\\usepackage{booktabs}\n"
         "\\usepackage{graphicx}\n"
         "\\usepackage{rotating}\n"
         "\\usepackage{amsmath}\n"
         "\\makeatletter\n"
         "\\def\\input@path{{./}{"
      << folder_name
      << "/}}\n"
         "\\makeatother\n"
         "\\graphicspath{{./}{"
      << folder_name
      << "/}}\n"
         "\\title{sinkcert: appendix tables}\n\\author{}\n"
         "\\date{"
      << latex_escape(info.time_utc)
      << "}\n"
         "\\begin{document}\n\\maketitle\n\n"
         "{\\raggedright Generated by \\texttt{"
      << breakable_tt(info.command_line) << "} at revision \\texttt{" << latex_escape(info.revision)
      << "} (seed " << info.seed << ", precision " << latex_escape(info.precision)
      << ").\\par}\n"
         "Evidence labels: EXACT (rational arithmetic), CERTIFIED (outward-rounded MPFI "
         "enclosure), NUMERIC(p) ($p$-bit floating point, no error bound), SEARCH (an "
         "optimizer's value, a bound in the stated direction only).\n\n";
  for (const auto& stem : table_stems) out << "\\input{" << stem << "}\n";
  if (!figures.empty()) out << "\\clearpage\n";
  for (const auto& fig : figures) {
    out << "\\begin{figure}[htbp]\n\\centering\n";
    if (fig.path.empty()) {
      out << "\\fbox{\\parbox{0.8\\linewidth}{Figure not rendered: " << latex_escape(fig.missing)
          << ". Its data and gnuplot script are in figures/.}}\n";
    } else {
      out << "\\includegraphics[width=0.9\\linewidth]{" << fig.path << "}\n";
    }
    out << "\\caption{"
        << (fig.caption_latex.empty() ? latex_escape(fig.caption) : fig.caption_latex)
        << "}\n\\label{fig:" << fig.name << "}\n\\end{figure}\n";
  }
  out << "\\end{document}\n";
  return out.str();
}

}  // namespace sinkcert::theorems::reports
