// SPDX-License-Identifier: MIT
//
// The paper's attention figures, for any model: heat maps of the attention
// matrices a^{l,h} (query position i down, key position k across, one
// colour scale 0..1, the causal upper triangle k > i left blank).
//
// Statistics over a probe set with the trigger fixed at position j (the
// paper's figure: 0-indexed 7, its 8th position). For probes X_1..X_N and
// every layer l, head h, query i and key k, with a_s = a^{l,h}_{ik}(X_s):
//   mean  m   = (1/N) sum_s a_s
//   std   sd  = sqrt((1/N) sum_s (a_s - m)^2)     (population form, ddof 0,
//                                                   numpy's default)
// accumulated in one pass by Welford's update, in probe order:
//   d = a_s - m_{s-1},  m_s = m_{s-1} + d / s,  Q_s = Q_{s-1} + d (a_s - m_s),
//   sd = sqrt(Q_N / N).
// The probes are the stream of make_probe_set (src/bos_statistics.h):
// TaskSampler(task, seed).next_with_trigger(j), N times; probe 0 is the
// "one input" of the layer-by-head figure. All values NUMERIC(53).
//
// Two figures (src/table_writer.h: data file, gnuplot script, PDF, PNG):
//   <stem>_mean_std   per model, per layer l (grid row) and head h: the mean
//                     and the std side by side; models side by side
//                     (softmax beside ReLU: four heat maps in one row);
//   <stem>_one_input  per model, layer l down, head h across: the attention
//                     on probe 0; models side by side.
// The figures of the appendix are one list (attention_figure_list): a name,
// a kind and the models, each a weight file under the models folder, the
// single-layer ReLU construction, or a model trained by the paper's recipe
// (search/paper_recipe.h) with a step cap; adding a figure is adding an
// entry. A recipe model is trained once, by retrain_figure_models
// (`sinkcert appendix --retrain`), and committed as a weight file under
// <models>/figure_models/ with its provenance (command, revision, seed and
// how the training stopped, in its metadata); the figures read that file.
// Training is deterministic (the recipe's baseline kernel, a seed, a step
// cap and no time limit), so retraining writes the same weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/bos_statistics.h"
#include "src/model.h"
#include "src/run_info.h"
#include "src/table_writer.h"
#include "src/task.h"
#include "src/weight_file.h"
#include "theorems/bounds/progress_lines.h"

namespace sinkcert::theorems::reports {

// Mean and std of every head's attention over the probes, [layer][head], L x L.
struct AttentionStatistics {
  Task task;
  int trigger = kPaperFigureTrigger;
  int samples = 0;
  std::uint64_t seed = kDefaultProbeSeed;
  std::vector<std::vector<Matrix<double>>> mean, stddev;
  std::vector<std::vector<Matrix<double>>> first;  // the attention on probe 0
};

// Throws std::invalid_argument if samples < 1, the trigger is outside
// 1..L-1 or the model's n is not task.n.
AttentionStatistics attention_statistics(const Model<double>& model, const Task& task,
                                         int samples = kDefaultProbeCount,
                                         std::uint64_t seed = kDefaultProbeSeed,
                                         int trigger = kPaperFigureTrigger);

// One model of a figure: its label in the panel titles and what it is.
struct FigureModel {
  std::string label;        // e.g. "softmax (minimax)"
  std::string description;  // provenance for the caption, e.g. the file and how it was made
  Model<double> model;
};

enum class AttentionFigureKind { kMeanStd, kOneInput };
// "mean_std" or "one_input": the suffix of the figure's name.
std::string figure_suffix(AttentionFigureKind kind);

// The figure `<stem>_<kind>` of the models' statistics (same task, trigger,
// samples and seed for all); throws std::invalid_argument if the sizes
// differ or the lists are empty.
Figure attention_figure(const std::string& stem, AttentionFigureKind kind,
                        const std::vector<FigureModel>& models,
                        const std::vector<AttentionStatistics>& stats);

// Where a model of the appendix's figures comes from.
struct ModelSource {
  enum class Kind { kWeightFile, kReluConstruction, kPaperRecipe };
  Kind kind = Kind::kWeightFile;
  std::string label;
  // kWeightFile: the file, relative to the models folder; kPaperRecipe: the
  // committed trained model (figure_models/...), likewise
  std::string weights;
  long recipe_max_steps = 0;  // kPaperRecipe: the step cap
  std::uint64_t recipe_seed = 0;
  int recipe_layers = 1, recipe_heads = 1;  // kPaperRecipe: the shape (residual if > 1 layer)
};

// One figure of the appendix: drawn as <name>_<kind>.
struct AttentionFigureSpec {
  std::string name;
  AttentionFigureKind kind = AttentionFigureKind::kMeanStd;
  std::vector<ModelSource> models;
};

// The step cap of the paper's recipe in the figures: a guard. Measured, the
// single-layer softmax model (n = L = 16, training seed 0) met the criterion
// batch l_inf < 5e-3 after 651 to 18902 steps (under 1 s to 25 s on one
// core) as the recipe's code changed; the caption records the steps taken.
constexpr long kFigureRecipeSteps = 30000;
// The step cap of the deep (2 x 2, 4 x 4 residual) recipe models: a guard,
// as above, for the recipe's stop rule (batch l_inf < 5e-3). Measured with
// the baseline kernel, training seed 0, n = L = 16, on a loaded machine:
// 2 x 2 met the rule after 7208 steps (259 s there; about 40 s on one idle
// core at 176 steps/s); 4 x 4 had not after 15158 steps (batch l_inf 0.0146,
// falling slowly from 0.024 at 10000; about 5 steps/s there, about 25 on an
// idle core), so it may stop at this cap (20 minutes on an idle core). The
// caption records which stop ended the training, the steps and that
// batch's l_inf.
constexpr long kFigureDeepRecipeSteps = 30000;

// Every attention figure of the appendix, in document order (n = L = 16);
// the paper's recipe is stopped at its criterion or at recipe_max_steps
// (single layer) or deep_recipe_max_steps (2 x 2 and 4 x 4 residual) when
// its models are retrained.
std::vector<AttentionFigureSpec> attention_figure_list(
    long recipe_max_steps = kFigureRecipeSteps,
    long deep_recipe_max_steps = kFigureDeepRecipeSteps);
// The weight files the list reads (the recipe models' committed files
// included), relative to the models folder.
std::vector<std::string> attention_figure_inputs(const AttentionFigureSpec& spec);

// The folder of the committed recipe models, relative to the models folder.
inline constexpr const char* kFigureModelsFolder = "figure_models";

// The model a source names (n = task.n; a weight file must have that n:
// InputError otherwise, as for any bad weight file). A recipe model is read
// from its committed file, which must have the source's shape and a
// metadata.training.description (the caption's account of its training):
// InputError naming the file and the field otherwise.
FigureModel load_figure_model(const ModelSource& source, const std::string& models_dir,
                              const Task& task);

// A recipe source trained now (paper_recipe_options(layers, heads), its seed
// and step cap, no time limit, the baseline kernel), as the weight file
// load_figure_model reads: (A, M) per head, the task (L, paper convention),
// metadata {provenance: info, training: {steps, stop_reason, reached,
// final_batch_linf, kernel, max_steps, seed, lr, description}}.
// progress: lines from the training (steps, batch l_inf) about every ten
// seconds; none when empty. Throws std::invalid_argument for a source that
// is not a recipe model.
WeightFile train_figure_model(const ModelSource& source, const Task& task, const RunInfo& info,
                              const bounds::ProgressSink& progress = {});

// Trains every recipe model of `specs` (each file once) and writes it to
// <models_dir>/<source.weights> (atomically; the folder created when
// missing), `threads` trainings at a time (the same files for any count);
// progress lines are serialized. Returns the paths written, in list order.
std::vector<std::string> retrain_figure_models(const std::vector<AttentionFigureSpec>& specs,
                                               const std::string& models_dir, const Task& task,
                                               const std::vector<std::string>& argv, int threads,
                                               const bounds::ProgressSink& progress = {});

struct AttentionFigureOptions {
  Task task{16, 16, TriggerRange::kPaper};
  int samples = kDefaultProbeCount;
  std::uint64_t seed = kDefaultProbeSeed;
  int trigger = kPaperFigureTrigger;
};

// The spec's figure, its models loaded and their statistics computed.
Figure make_attention_figure(const AttentionFigureSpec& spec, const std::string& models_dir,
                             const AttentionFigureOptions& options);

// The files one figure writes: <stem>.dat, .gp, .pdf, .png.
std::vector<std::string> attention_figure_files(const std::string& name);

}  // namespace sinkcert::theorems::reports
