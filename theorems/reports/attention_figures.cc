// SPDX-License-Identifier: MIT
#include "theorems/reports/attention_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "search/paper_recipe.h"
#include "src/constructions.h"
#include "src/evaluation.h"
#include "src/forward.h"
#include "src/input_error.h"
#include "src/parallel_tasks.h"
#include "src/weight_file.h"
#include "theorems/studies/theorem1_study.h"

namespace sinkcert::theorems::reports {

namespace {

// A number for a caption: 3 significant digits.
std::string short_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// One heat map of the figure: its place in the grid and what it shows.
struct Panel {
  int model = 0, layer = 0, head = 0;
  std::string what;  // "mean", "std", "input"
  int row = 0, col = 0;
  const Matrix<double>* values = nullptr;
  std::string title;
};

// Text as a single-quoted gnuplot string: a quote inside is doubled. Text
// of several lines becomes a double-quoted string (gnuplot reads "\n" as a
// line break only there), a backslash or double quote inside escaped.
std::string gp_quote(const std::string& text) {
  if (text.find('\n') == std::string::npos) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  }
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out + "\"";
}

// Tic spacing for L positions: about four labelled tics.
int tic_step(int L) { return std::max(1, (L + 3) / 4); }

}  // namespace

AttentionStatistics attention_statistics(const Model<double>& model, const Task& task, int samples,
                                         std::uint64_t seed, int trigger) {
  task.validate();
  if (samples < 1) {
    throw std::invalid_argument("probe count " + std::to_string(samples) + ": expected >= 1");
  }
  if (trigger < 1 || trigger >= task.L) {
    throw std::invalid_argument("trigger " + std::to_string(trigger) +
                                ": expected a position in 1.." + std::to_string(task.L - 1));
  }
  if (model.n != task.n) {
    throw std::invalid_argument("model has n = " + std::to_string(model.n) +
                                ", task has n = " + std::to_string(task.n));
  }
  const int L = task.L;
  AttentionStatistics st;
  st.task = task;
  st.trigger = trigger;
  st.samples = samples;
  st.seed = seed;
  const auto zeros = [&] {
    return std::vector<std::vector<Matrix<double>>>(
        model.num_layers(),
        std::vector<Matrix<double>>(model.num_heads(), Matrix<double>::Zero(L, L)));
  };
  st.mean = zeros();
  std::vector<std::vector<Matrix<double>>> q = zeros();  // Welford's Q
  // The stream of make_probe_set(task, samples, seed, trigger), one probe at
  // a time (no probe set is stored).
  TaskSampler sampler(task, seed);
  for (int s = 1; s <= samples; ++s) {
    const Sample sample = sampler.next_with_trigger(trigger);
    const ForwardResult<double> r = forward(model, sample.X);
    if (s == 1) st.first = r.attention;
    for (int l = 0; l < model.num_layers(); ++l) {
      for (int h = 0; h < model.num_heads(); ++h) {
        // d = a - m_{s-1};  m_s = m_{s-1} + d / s;  Q_s = Q_{s-1} + d (a - m_s)
        const Matrix<double>& a = r.attention[l][h];
        const Matrix<double> d = a - st.mean[l][h];
        st.mean[l][h] += d / static_cast<double>(s);
        q[l][h].array() += d.array() * (a - st.mean[l][h]).array();
      }
    }
  }
  st.stddev = zeros();
  for (int l = 0; l < model.num_layers(); ++l) {
    for (int h = 0; h < model.num_heads(); ++h) {
      // sd = sqrt(Q_N / N); Q_N >= 0 up to rounding, clamped
      st.stddev[l][h] = (q[l][h].array() / static_cast<double>(samples)).max(0.0).sqrt().matrix();
    }
  }
  return st;
}

std::string figure_suffix(AttentionFigureKind kind) {
  return kind == AttentionFigureKind::kMeanStd ? "mean_std" : "one_input";
}

Figure attention_figure(const std::string& stem, AttentionFigureKind kind,
                        const std::vector<FigureModel>& models,
                        const std::vector<AttentionStatistics>& stats) {
  if (models.empty() || models.size() != stats.size()) {
    throw std::invalid_argument("attention figure: one statistics set per model expected");
  }
  const AttentionStatistics& s0 = stats.front();
  const int L = s0.task.L;
  for (const AttentionStatistics& s : stats) {
    if (s.task.L != L || s.trigger != s0.trigger || s.samples != s0.samples || s.seed != s0.seed) {
      throw std::invalid_argument("attention figure: the models' probe sets differ");
    }
  }
  const bool mean_std = kind == AttentionFigureKind::kMeanStd;
  // The grid: per model a block of columns; mean/std: layer l down, each
  // head two columns (mean, std); one input: layer l down, head h across.
  std::vector<Panel> panels;
  int rows = 0, col0 = 0;
  bool two_line_titles = false;
  for (std::size_t m = 0; m < models.size(); ++m) {
    const Model<double>& model = models[m].model;
    const int H = model.num_heads();
    const bool deep = model.num_layers() > 1 || H > 1;
    rows = std::max(rows, model.num_layers());
    for (int l = 0; l < model.num_layers(); ++l) {
      for (int h = 0; h < H; ++h) {
        // one model: its label is in the figure's title, panels say where;
        // several deep models: the label on a line of its own above where
        // (on one line, neighbouring titles overlap)
        const std::string where =
            deep ? "layer " + std::to_string(l) + ", head " + std::to_string(h) : "";
        const std::string name =
            models.size() == 1 ? where : models[m].label + (deep ? "\n" + where : "");
        two_line_titles = two_line_titles || name.find('\n') != std::string::npos;
        if (mean_std) {
          panels.push_back({static_cast<int>(m), l, h, "mean", l, col0 + 2 * h,
                            &stats[m].mean[l][h], (name.empty() ? "" : name + ": ") + "mean"});
          panels.push_back({static_cast<int>(m), l, h, "std", l, col0 + 2 * h + 1,
                            &stats[m].stddev[l][h], (name.empty() ? "" : name + ": ") + "std"});
        } else {
          panels.push_back({static_cast<int>(m), l, h, "input", l, col0 + h, &stats[m].first[l][h],
                            name.empty() ? "attention" : name});
        }
      }
    }
    col0 += mean_std ? 2 * H : H;
  }
  const int cols = col0;

  Figure f;
  f.name = stem + "_" + figure_suffix(kind);
  f.png = true;
  f.evidence = "NUMERIC(53)";
  std::ostringstream caption;
  caption << "Attention of ";
  for (std::size_t m = 0; m < models.size(); ++m) {
    caption << (m == 0 ? "" : m + 1 == models.size() ? " and " : ", ") << models[m].label;
  }
  caption << " on T(" << s0.task.n << ", " << L << ") with the trigger at 0-indexed position "
          << s0.trigger << " (position " << s0.trigger + 1 << " counted from 1): ";
  if (mean_std) {
    caption << "the mean and the standard deviation (population form) of each head's attention "
               "matrix over "
            << s0.samples << " probe inputs (probe seed " << s0.seed << ")";
  } else {
    caption << "every head's attention, layer by layer (down) and head by head (across), on one "
               "probe input (the first of probe seed "
            << s0.seed << ")";
  }
  caption << "; query position i down, key position k across, colour scale 0..1, the causal "
             "upper triangle blank. Models: ";
  for (std::size_t m = 0; m < models.size(); ++m) {
    caption << (m == 0 ? "" : "; ") << models[m].label << ": " << models[m].description;
  }
  caption << ".";
  f.caption = caption.str();

  f.columns = {"panel", "model", "layer", "head", "statistic", "query_i", "key_k", "value"};
  for (std::size_t p = 0; p < panels.size(); ++p) {
    const Panel& pn = panels[p];
    for (int i = 0; i < L; ++i) {
      for (int k = 0; k < L; ++k) {
        f.rows.push_back({std::to_string(p), std::to_string(pn.model), std::to_string(pn.layer),
                          std::to_string(pn.head), pn.what, std::to_string(i), std::to_string(k),
                          studies::format_double((*pn.values)(i, k))});
      }
    }
  }

  // The script: a terminal sized for the grid (about 2.2 in / 260 px per
  // panel, plus a strip on the right for the one colour box), then one
  // `with image` plot per panel at its place, selecting its rows by number
  // (`every ::first::last`); entries above the diagonal are drawn as NaN
  // (blank).
  // Sizes in inches: a cell of kCellW x kCellH per heat map (title, tics and
  // labels included), a strip on the right for the colour box, one on top
  // for the title; PNG at kPngDpi pixels per inch.
  // Two-line panel titles take kTitleLine more per cell.
  constexpr double kCellW = 2.3, kCellH = 2.4, kRight = 0.9, kTop = 0.4, kPngDpi = 110;
  constexpr double kTitleLine = 0.2;
  const double cell_h = kCellH + (two_line_titles ? kTitleLine : 0);
  const double width = kCellW * cols + kRight, height = cell_h * rows + kTop;
  const std::string title = (models.size() == 1 ? models[0].label + ": " : std::string()) +
                            "attention a_{ik} (query i down, key k across), trigger at position " +
                            std::to_string(s0.trigger);
  std::ostringstream gp;
  gp << "# the grid: " << rows << " row(s) x " << cols << " column(s) of heat maps\n"
     << "if (format eq 'png') {\n  set terminal pngcairo size "
     << static_cast<int>(std::lround(width * kPngDpi)) << ","
     << static_cast<int>(std::lround(height * kPngDpi))
     << " font \"Helvetica,9\"\n} else {\n  set terminal pdfcairo size " << width << "in," << height
     << "in font \"Helvetica,8\"\n}\n"
     << "set output '" << f.name << ".'.format\n"
     << "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', "
        "1 '#fde725')\nset cbrange [0:1]\n"
     << "set xrange [-0.5:" << L - 0.5 << "]\nset yrange [" << L - 0.5 << ":-0.5]\n"
     << "set xtics 0," << tic_step(L) << " out nomirror\nset ytics 0," << tic_step(L)
     << " out nomirror\nset size ratio -1\nset tmargin " << (two_line_titles ? 3 : 2)
     << "\nset bmargin 3.5\n"
     << "set lmargin 7\nset rmargin 1\nunset key\nunset colorbox\n"
     << "set multiplot title " << gp_quote(title) << "\n";
  const double w = kCellW / width, h = cell_h / height, top = 1 - kTop / height;
  for (std::size_t p = 0; p < panels.size(); ++p) {
    const Panel& pn = panels[p];
    const long first = static_cast<long>(p) * L * L, last = first + L * L - 1;
    gp << "set origin " << w * pn.col << "," << top - h * (pn.row + 1) << "\nset size " << w << ","
       << h << "\nset title " << gp_quote(pn.title) << " noenhanced\n"
       << "set xlabel " << (pn.row == rows - 1 ? "'key k'" : "''") << "\n"
       << "set ylabel " << (pn.col == 0 ? "'query i'" : "''") << "\n";
    if (p + 1 == panels.size()) {
      gp << "set colorbox user origin " << (kCellW * cols + 0.25) / width << ",0.15 size "
         << 0.2 / width << ",0.7\n";
    }
    gp << "plot data every ::" << first << "::" << last
       << " using 7:6:($7 > $6 ? NaN : $8) with image\n";
  }
  gp << "unset multiplot\n";
  f.plot = gp.str();
  return f;
}

std::vector<AttentionFigureSpec> attention_figure_list(long recipe_max_steps,
                                                       long deep_recipe_max_steps) {
  using Kind = ModelSource::Kind;
  const auto trained = [](int shape) {
    const std::string s = std::to_string(shape);
    return std::string(kFigureModelsFolder) + "/paper_recipe_" + s + "x" + s + ".weights.json";
  };
  const ModelSource relu{Kind::kReluConstruction, "ReLU (construction)", "", 0, 0};
  const ModelSource recipe{Kind::kPaperRecipe, "softmax (paper's recipe)", trained(1),
                           recipe_max_steps, 0};
  const ModelSource minimax{Kind::kWeightFile, "softmax (minimax)",
                            "theorem1/path_start0.weights.json", 0, 0};
  const auto file = [](const std::string& label, const std::string& path) {
    return ModelSource{Kind::kWeightFile, label, path, 0, 0};
  };
  const auto deep_recipe = [&](int shape) {
    return ModelSource{
        Kind::kPaperRecipe,
        "softmax " + std::to_string(shape) + " x " + std::to_string(shape) + " (paper's recipe)",
        trained(shape),
        deep_recipe_max_steps,
        0,
        shape,
        shape};
  };
  return {
      {"attention_paper_recipe", AttentionFigureKind::kMeanStd, {recipe, relu}},
      {"attention_minimax", AttentionFigureKind::kMeanStd, {minimax, relu}},
      {"attention_relu_2x2",
       AttentionFigureKind::kOneInput,
       {deep_recipe(2),
        file("ReLU 2 x 2 (construction)", "theorem3/relu_residual_2x2_n16.weights.json")}},
      {"attention_relu_4x4",
       AttentionFigureKind::kOneInput,
       {deep_recipe(4),
        file("ReLU 4 x 4 (construction)", "theorem3/relu_residual_4x4_n16.weights.json")}},
  };
}

std::vector<std::string> attention_figure_inputs(const AttentionFigureSpec& spec) {
  std::vector<std::string> inputs;
  for (const ModelSource& s : spec.models) {
    if (s.kind != ModelSource::Kind::kReluConstruction) inputs.push_back(s.weights);
  }
  return inputs;
}

WeightFile train_figure_model(const ModelSource& source, const Task& task, const RunInfo& info,
                              const bounds::ProgressSink& progress) {
  if (source.kind != ModelSource::Kind::kPaperRecipe) {
    throw std::invalid_argument("train_figure_model: " + source.label +
                                " is not a model of the paper's recipe");
  }
  search::PaperRecipeOptions o =
      search::paper_recipe_options(source.recipe_layers, source.recipe_heads);
  o.seed = source.recipe_seed;
  o.max_steps = source.recipe_max_steps;
  o.time_limit_seconds = 1e9;  // the step cap alone decides: reproducible
  // the baseline compilation of the kernel: the same model on any x86-64
  o.isa = search::RecipeIsa::kBaseline;
  if (progress) {
    o.progress = [&progress, &source, max = o.max_steps](const search::PaperRecipeProgress& p) {
      char line[160];
      std::snprintf(line, sizeof line, "training %s: step %ld of at most %ld, batch l_inf %.3g",
                    source.label.c_str(), p.steps, max, p.batch_linf);
      progress(line);
    };
  }
  const search::PaperRecipeResult r = search::train_paper_recipe(task, o);
  std::ostringstream d;
  const bool deep = o.kind == ModelKind::kResidual;
  d << (deep ? "residual " + std::to_string(o.layers) + " x " + std::to_string(o.heads) + " softmax"
             : std::string("single-layer softmax"))
    << " trained by the paper's recipe (Adam lr " << short_number(o.lr) << ", betas ("
    << short_number(o.beta1) << ", " << short_number(o.beta2) << ")"
    << ", batch " << o.batch << ", MSE, init std 0.02, training seed " << o.seed << ", " << r.kernel
    << " kernel"
    << "), stopped after " << r.steps << " steps "
    << (r.reached ? "by the recipe's stop rule, at the first batch whose l_inf error is below " +
                        short_number(o.stop_linf)
                  : "at the step cap " + std::to_string(o.max_steps) +
                        ", before the recipe's stop rule (a batch with l_inf error below " +
                        short_number(o.stop_linf) + ") was met")
    << " (that batch's l_inf error " << short_number(r.final_batch_linf) << ", NUMERIC(53))";
  nlohmann::json training = {{"recipe", "paper"},
                             {"layers", o.layers},
                             {"heads", o.heads},
                             {"seed", o.seed},
                             {"max_steps", o.max_steps},
                             {"steps", r.steps},
                             {"stop_reason", r.stop_reason},
                             {"reached", r.reached},
                             {"final_batch_linf", r.final_batch_linf},
                             {"kernel", r.kernel},
                             {"lr", o.lr},
                             {"description", d.str()}};
  WeightFile file =
      weight_file_from_model(r.model, {{kProvenanceKey, to_json(info)}, {"training", training}});
  WeightTask t;
  t.L = task.L;
  t.range = task.range;
  t.source = "the paper's recipe, for the appendix's attention figures";
  file.task = t;
  return file;
}

std::vector<std::string> retrain_figure_models(const std::vector<AttentionFigureSpec>& specs,
                                               const std::string& models_dir, const Task& task,
                                               const std::vector<std::string>& argv, int threads,
                                               const bounds::ProgressSink& progress) {
  std::vector<ModelSource> sources;
  for (const AttentionFigureSpec& spec : specs) {
    for (const ModelSource& s : spec.models) {
      if (s.kind != ModelSource::Kind::kPaperRecipe) continue;
      if (std::none_of(sources.begin(), sources.end(),
                       [&](const ModelSource& o) { return o.weights == s.weights; })) {
        sources.push_back(s);
      }
    }
  }
  std::mutex lines;
  const bounds::ProgressSink serialized = [&](const std::string& line) {
    if (!progress) return;
    const std::lock_guard<std::mutex> lock(lines);
    progress(line);
  };
  std::vector<std::string> written(sources.size());
  run_tasks(static_cast<int>(sources.size()), threads, [&](int k) {
    const ModelSource& s = sources[static_cast<std::size_t>(k)];
    const RunInfo info = make_run_info(argv, s.recipe_seed, "double (the recipe's training)");
    const WeightFile file = train_figure_model(s, task, info, serialized);
    const std::filesystem::path path = std::filesystem::path(models_dir) / s.weights;
    std::filesystem::create_directories(path.parent_path());
    write_weight_file(path.string(), file);
    written[static_cast<std::size_t>(k)] = path.string();
    serialized("wrote " + path.string() + " (" +
               file.metadata["training"]["stop_reason"].get<std::string>() + " after " +
               std::to_string(file.metadata["training"]["steps"].get<long>()) + " steps)");
  });
  return written;
}

FigureModel load_figure_model(const ModelSource& source, const std::string& models_dir,
                              const Task& task) {
  if (source.kind == ModelSource::Kind::kReluConstruction) {
    return {source.label,
            "Theorem 3's single-layer ReLU construction (exact weights, M = I, scores read "
            "the trigger and ordinary flags)",
            relu_construction<double>(task.n)};
  }
  const std::string path = (std::filesystem::path(models_dir) / source.weights).string();
  const WeightFile w = read_weight_file(path);
  if (w.n != task.n) {
    throw InputError(
        path, "n",
        "n = " + std::to_string(task.n) + " (the figure's task), got " + std::to_string(w.n));
  }
  if (source.kind == ModelSource::Kind::kWeightFile) {
    return {source.label, "the weight file " + source.weights + " (" + describe(w) + ")",
            to_model<double>(w)};
  }
  // a committed recipe model: the shape the list asks for, and its training's account
  if (w.num_layers() != source.recipe_layers || w.num_heads() != source.recipe_heads) {
    throw InputError(path, "layers",
                     std::to_string(source.recipe_layers) + " layer(s) of " +
                         std::to_string(source.recipe_heads) + " head(s) (" + source.label +
                         "), got " + describe(w) + "; retrain with sinkcert appendix --retrain");
  }
  const nlohmann::json& m = w.metadata;
  if (!m.is_object() || !m.contains("training") || !m["training"].is_object() ||
      !m["training"].contains("description") || !m["training"]["description"].is_string()) {
    throw InputError(path, "metadata.training.description",
                     "the account of the model's training (written by sinkcert appendix "
                     "--retrain)");
  }
  return {source.label,
          m["training"]["description"].get<std::string>() + "; committed as " + source.weights,
          to_model<double>(w)};
}

Figure make_attention_figure(const AttentionFigureSpec& spec, const std::string& models_dir,
                             const AttentionFigureOptions& options) {
  std::vector<FigureModel> models;
  std::vector<AttentionStatistics> stats;
  for (const ModelSource& source : spec.models) {
    models.push_back(load_figure_model(source, models_dir, options.task));
    stats.push_back(attention_statistics(models.back().model, options.task, options.samples,
                                         options.seed, options.trigger));
  }
  return attention_figure(spec.name, spec.kind, models, stats);
}

std::vector<std::string> attention_figure_files(const std::string& name) {
  return {name + ".dat", name + ".gp", name + ".pdf", name + ".png"};
}

}  // namespace sinkcert::theorems::reports
