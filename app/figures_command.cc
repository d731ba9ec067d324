// SPDX-License-Identifier: MIT
//
// sinkcert figures --weights W.json [--beside W2.json] [--L L] [--samples N]
//                  [--trigger J] [--seed S] [--name STEM] --out DIR
// sinkcert figures --paper [--models DIR] [--samples N] [--trigger J] [--seed S] --out DIR
// The paper's attention figures (theorems/reports/attention_figures.h): for the
// model of --weights (and the one of --beside, drawn to its right), the
// mean and std of every head's attention over N probe inputs with the
// trigger at J (STEM_mean_std) and every head's attention on the first probe
// (STEM_one_input); with --paper, every figure of the appendix's list from
// the committed models under --models. Each figure: .dat, .gp, .pdf, .png,
// with provenance; the set of files is replaced as a whole
// (src/output_files.h). Exit codes: 0 done (a figure gnuplot could not render
// is reported on stderr, its data and script written), 2 bad input.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "app/commands.h"
#include "src/input_error.h"
#include "src/limits.h"
#include "src/output_files.h"
#include "src/run_info.h"
#include "src/weight_file.h"
#include "theorems/reports/appendix.h"
#include "theorems/reports/attention_figures.h"
#include "theorems/reports/theorem1_report.h"

namespace sinkcert::cli {

namespace {

constexpr int kMaxFigureL = 128;            // a heat map of more positions is unreadable
constexpr int kMaxFigureSamples = 1000000;  // about 10 minutes for a 4 x 4 model at L = 16

struct FiguresCliOptions {
  std::string weights, beside, name = "attention", out,
                               models = theorems::reports::default_models_dir();
  bool paper = false;
  TaskOptions task;  // --L; n is the weight file's
  int samples = kDefaultProbeCount, trigger = kPaperFigureTrigger;
  std::uint64_t seed = kDefaultProbeSeed;
  CLI::Option *weights_option = nullptr, *beside_option = nullptr, *name_option = nullptr,
              *out_option = nullptr, *models_option = nullptr;
};

// A weight file as a figure's model, labelled by its attention kind and shape.
theorems::reports::FigureModel file_model(const std::string& path, int n) {
  const WeightFile w = read_weight_file(path);
  if (w.n != n) {
    throw InputError(
        path, "n",
        "the n of the --weights file (" + std::to_string(n) + "), got " + std::to_string(w.n));
  }
  std::string label = to_string(w.attention);
  if (w.num_layers() > 1 || w.num_heads() > 1) {
    label += " " + std::to_string(w.num_layers()) + " x " + std::to_string(w.num_heads());
  }
  return {label + " (" + std::filesystem::path(path).filename().string() + ")",
          "the weight file " + path + " (" + describe(w) + ")", to_model<double>(w)};
}

// The files of the figures named `stems`, and the temporaries of runs killed
// while writing them (NAME.tmp.PID; .STEM.tmp.EXT of a render).
OutputSet figures_output_set(const std::string& dir, const std::vector<std::string>& stems) {
  std::set<std::string> names;
  for (const auto& stem : stems) {
    for (const auto& f : theorems::reports::attention_figure_files(stem)) names.insert(f);
  }
  return theorems::reports::owned_files_set(
      dir, [names](const std::string& name) { return names.count(name) > 0; });
}

void run_figures(const FiguresCliOptions& opt, Context& ctx) {
  // Every value was range-checked when parsed (add_*_option, limits.h).
  require_option(opt.out_option);
  const bool weights = opt.weights_option->count() > 0;
  if (weights == opt.paper) {
    throw InputError("command line", "--weights",
                     "exactly one of --weights W.json and --paper is required");
  }
  if (opt.paper) {
    for (const CLI::Option* o : {opt.beside_option, opt.name_option, opt.task.L_option}) {
      if (o->count() > 0) {
        throw InputError("command line", o->get_name(),
                         "not with --paper (its figures are at n = L = 16)");
      }
    }
  } else if (opt.models_option->count() > 0) {
    throw InputError("command line", "--models", "only with --paper");
  }
  if (!opt.paper && opt.name.find_first_of("/\\") != std::string::npos) {
    throw InputError("command line", "--name", "a file stem without '/', got '" + opt.name + "'");
  }
  theorems::reports::AttentionFigureOptions fo;
  fo.samples = opt.samples;
  fo.seed = opt.seed;
  fo.trigger = opt.trigger;
  fo.task = opt.task.task();
  std::vector<theorems::reports::FigureModel> models;
  std::vector<theorems::reports::AttentionFigureSpec> specs;
  if (opt.paper) {
    fo.task.n = fo.task.L = 16;
    specs = theorems::reports::attention_figure_list();
    for (const auto& spec : specs) {
      for (const auto& rel : theorems::reports::attention_figure_inputs(spec)) {
        const std::string path = (std::filesystem::path(opt.models) / rel).string();
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) {
          throw InputError(path, "file",
                           "an input of " + spec.name +
                               " (missing; --models names the folder "
                               "holding theorem1/ and theorem3/)");
        }
      }
    }
  } else {
    ctx.activity = "reading " + opt.weights;
    models.push_back(file_model(opt.weights, read_weight_file(opt.weights).n));
    fo.task.n = models.front().model.n;
    if (opt.beside_option->count() > 0) models.push_back(file_model(opt.beside, fo.task.n));
  }
  check_task_options(fo.task);
  const std::vector<int> allowed = fo.task.trigger_positions();
  if (std::find(allowed.begin(), allowed.end(), fo.trigger) == allowed.end()) {
    throw InputError("command line", "--trigger",
                     "a trigger position of the task: " + std::to_string(allowed.front()) + ".." +
                         std::to_string(allowed.back()) + " at L = " + std::to_string(fo.task.L) +
                         " (" + to_string(fo.task.range) + "), got " + std::to_string(fo.trigger));
  }
  std::vector<std::string> stems;
  if (opt.paper) {
    for (const auto& spec : specs)
      stems.push_back(spec.name + "_" + theorems::reports::figure_suffix(spec.kind));
  } else {
    for (auto kind : {theorems::reports::AttentionFigureKind::kMeanStd,
                      theorems::reports::AttentionFigureKind::kOneInput}) {
      stems.push_back(opt.name + "_" + theorems::reports::figure_suffix(kind));
    }
  }
  const OutputSet set = figures_output_set(opt.out, stems);
  check_output_set(set, "--out");

  ctx.activity = "computing the attention statistics (--samples, --L)";
  const RunInfo info = make_run_info(ctx.argv, opt.seed, "double");
  std::vector<Figure> figures;
  if (opt.paper) {
    for (const auto& spec : specs) {
      progress_sink(ctx, "figures")(spec.name + " (" + std::to_string(opt.samples) + " probes)");
      figures.push_back(theorems::reports::make_attention_figure(spec, opt.models, fo));
    }
  } else {
    std::vector<theorems::reports::AttentionStatistics> stats;
    for (const auto& m : models) {
      progress_sink(ctx, "figures")(m.label + ", " + std::to_string(opt.samples) + " probes");
      stats.push_back(theorems::reports::attention_statistics(m.model, fo.task, fo.samples, fo.seed,
                                                              fo.trigger));
    }
    for (auto kind : {theorems::reports::AttentionFigureKind::kMeanStd,
                      theorems::reports::AttentionFigureKind::kOneInput}) {
      figures.push_back(theorems::reports::attention_figure(opt.name, kind, models, stats));
    }
  }
  std::vector<std::string> written, failures;
  replace_output_set(set, [&](const std::string& staging) {
    for (const Figure& f : figures) {
      const FigureFiles files = write_figure(f, info, staging);
      for (const auto& path : files.written) {
        written.push_back(
            (std::filesystem::path(opt.out) / std::filesystem::path(path).filename()).string());
      }
      failures.insert(failures.end(), files.failures.begin(), files.failures.end());
    }
  });
  for (const auto& path : written) std::cout << "wrote " << path << "\n";
  for (const auto& f : failures) {
    std::cerr << "figures: NOT rendered: " << f << "; its data and script are written\n";
  }
  std::cout << "attention figures, trigger at 0-indexed position " << fo.trigger << ", "
            << opt.samples << " probes, seed " << opt.seed << " (NUMERIC(53))\n";
}

}  // namespace

void add_figures_command(CLI::App& app, Context& ctx) {
  auto opt = std::make_shared<FiguresCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "figures",
      "the paper's attention figures (heat maps) of a model, or of the appendix's models");
  opt->weights_option = add_text_option(sub, "--weights", &opt->weights, "a file name",
                                        "weight file (sinkcert-weights JSON); or --paper");
  opt->beside_option = add_text_option(sub, "--beside", &opt->beside, "a file name",
                                       "a second weight file, drawn to the right of the first");
  sub->add_flag("--paper", opt->paper,
                "the appendix's attention figures, from the committed models (n = L = 16)");
  opt->models_option =
      add_text_option(sub, "--models", &opt->models, "a folder name",
                      "with --paper: the folder of the committed models, default " + opt->models);
  add_task_options(sub, &opt->task, {std::nullopt, "", kMaxFigureL, "sequence length, default 16"});
  add_int_option(sub, "--samples", &opt->samples, 1, kMaxFigureSamples,
                 "probe inputs for the mean and std, default 1000");
  add_int_option(sub, "--trigger", &opt->trigger, 1, kMaxFigureL - 1,
                 "0-indexed trigger position of every probe, default 7 (the paper's 8th)");
  add_seed_option(sub, &opt->seed, "seed of the probe inputs");
  opt->name_option = add_text_option(sub, "--name", &opt->name, "a word",
                                     "file stem: STEM_mean_std, STEM_one_input; default attention");
  opt->out_option = add_out_option(sub, &opt->out, OutputKind::kFolder,
                                   "folder for the figures (.dat, .gp, .pdf, .png), required");
  sub->callback([opt, &ctx] { run_figures(*opt, ctx); });
}

}  // namespace sinkcert::cli
