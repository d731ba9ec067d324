// SPDX-License-Identifier: MIT
#include "theorems/reports/attention_figures.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "src/bos_statistics.h"
#include "src/constructions.h"
#include "src/forward.h"
#include "src/input_error.h"
#include "src/run_info.h"
#include "src/weight_file.h"
#include "tests/test_util.h"

namespace sinkcert::theorems::reports {
namespace {

using testing::near;

// Attention weights of at most L = 10 terms, each computed in another order
// than the reference (exp, sums, division): a few ulps; 1e-14 leaves margin.
constexpr double kRoundoff = 1e-14;
// Mean and std over 40 probes, one pass (Welford) against two passes: the
// values are in [0, 1] and the accumulated rounding is a few hundred ulps at
// most; 1e-12 is far below any modelling difference (a wrong divisor N - 1
// changes the std by 1/80 relative).
constexpr double kStatistics = 1e-12;

// The sink family's scores read flags only: s_ik = beta (x_i[n-1] - x_i[1]) x_k[0].
// Every probe with the trigger at j has the same attention, in closed form:
//   ordinary row i >= 1: a_i0 = e^b / (e^b + i), a_ik = 1 / (e^b + i), k = 1..i
//   trigger row j:       a_j0 = e^-b / (e^-b + j), a_jk = 1 / (e^-b + j)
//   BOS row 0:           a_00 = 1
double sink_family_weight(double beta, int i, int k, int j) {
  if (k > i) return 0;
  if (i == 0) return 1;
  const double bos = i == j ? std::exp(-beta) : std::exp(beta);
  return k == 0 ? bos / (bos + i) : 1 / (bos + i);
}

TEST_CASE("a flag-only model: every probe has the same attention, the closed form, std 0") {
  const Task task{6, 10, TriggerRange::kPaper};
  const double beta = 3;
  const Model<double> m = sink_family<double>(task.n, beta);
  const AttentionStatistics st = attention_statistics(m, task, 25, 5, 7);
  REQUIRE(st.mean.size() == 1);
  REQUIRE(st.mean[0].size() == 1);
  CHECK(st.samples == 25);
  CHECK(st.trigger == 7);
  int checked = 0;
  for (int i = 0; i < task.L; ++i) {
    for (int k = 0; k < task.L; ++k) {
      const double want = sink_family_weight(beta, i, k, 7);
      CHECK(near(st.mean[0][0](i, k), want, kRoundoff));
      CHECK(near(st.first[0][0](i, k), want, kRoundoff));
      // identical values every probe: d = 0 exactly after the first, so Q = 0
      CHECK(st.stddev[0][0](i, k) == 0.0);
      ++checked;
    }
  }
  CHECK(checked == task.L * task.L);
  // fed a false closed form (the trigger elsewhere), the comparison says so
  CHECK_FALSE(near(st.mean[0][0](7, 0), sink_family_weight(beta, 7, 0, 6), kRoundoff));
}

// The softmax attention of a single-layer single-head model computed by
// hand: s_ik = x_i^T A x_k, a_ik = exp(s_ik - max) / sum_m exp(s_im - max).
Matrix<double> hand_softmax_attention(const Matrix<double>& A, const Matrix<double>& X) {
  const int L = static_cast<int>(X.rows());
  Matrix<double> a = Matrix<double>::Zero(L, L);
  for (int i = 0; i < L; ++i) {
    std::vector<double> s(i + 1);
    double top = -1e300;
    for (int k = 0; k <= i; ++k) {
      s[k] = X.row(i).dot(A * X.row(k).transpose());
      top = std::max(top, s[k]);
    }
    double sum = 0;
    for (int k = 0; k <= i; ++k) sum += std::exp(s[k] - top);
    for (int k = 0; k <= i; ++k) a(i, k) = std::exp(s[k] - top) / sum;
  }
  return a;
}

TEST_CASE("a random softmax model: mean and std against a two-pass hand computation") {
  const Task task{5, 9, TriggerRange::kPaper};
  const Model<double> m = testing::random_model(task.n, AttentionKind::kSoftmax, 1.0, 11);
  const int samples = 40;
  const ProbeSet probes = make_probe_set(task, samples, 123, 7);
  // two passes: mean, then (1/N) sum (a - mean)^2
  std::vector<Matrix<double>> a;
  for (const Sample& s : probes.samples) a.push_back(hand_softmax_attention(m.layers[0][0].A, s.X));
  Matrix<double> mean = Matrix<double>::Zero(task.L, task.L), var = mean;
  for (const auto& x : a) mean += x / samples;
  for (const auto& x : a) var += (x - mean).cwiseProduct(x - mean) / samples;
  const AttentionStatistics st = attention_statistics(m, task, samples, 123, 7);
  double largest_std = 0;
  for (int i = 0; i < task.L; ++i) {
    for (int k = 0; k < task.L; ++k) {
      CHECK(near(st.mean[0][0](i, k), mean(i, k), kStatistics));
      CHECK(near(st.stddev[0][0](i, k), std::sqrt(var(i, k)), kStatistics));
      CHECK(near(st.first[0][0](i, k), a[0](i, k), kRoundoff));
      largest_std = std::max(largest_std, st.stddev[0][0](i, k));
    }
  }
  // the content moves this model's attention: the std is not trivially 0
  CHECK(largest_std > 0.01);
  // the sample form (divisor N - 1) is another number: the check would say so
  const double sample_form = std::sqrt(var(8, 1) * samples / (samples - 1));
  CHECK_FALSE(near(st.stddev[0][0](8, 1), sample_form, kStatistics));
}

TEST_CASE("a residual 2 x 2 model: every layer and head, on the probes of make_probe_set") {
  const Task task{5, 9, TriggerRange::kPaper};
  const Model<double> m =
      testing::random_model(task.n, AttentionKind::kSoftmax, 0.7, 3, 2, 2, ModelKind::kResidual);
  const int samples = 12;
  const ProbeSet probes = make_probe_set(task, samples, 9, 4);
  std::vector<ForwardResult<double>> runs;
  for (const Sample& s : probes.samples) runs.push_back(forward(m, s.X));
  const AttentionStatistics st = attention_statistics(m, task, samples, 9, 4);
  REQUIRE(st.mean.size() == 2);
  for (int l = 0; l < 2; ++l) {
    REQUIRE(st.mean[l].size() == 2);
    for (int h = 0; h < 2; ++h) {
      Matrix<double> mean = Matrix<double>::Zero(task.L, task.L), var = mean;
      for (const auto& r : runs) mean += r.attention[l][h] / samples;
      for (const auto& r : runs) {
        var += (r.attention[l][h] - mean).cwiseProduct(r.attention[l][h] - mean) / samples;
      }
      CHECK((st.first[l][h] - runs[0].attention[l][h]).cwiseAbs().maxCoeff() == 0.0);
      CHECK((st.mean[l][h] - mean).cwiseAbs().maxCoeff() <= kStatistics);
      CHECK((st.stddev[l][h] - var.cwiseSqrt()).cwiseAbs().maxCoeff() <= kStatistics);
      // the causal upper triangle is 0 in every statistic
      for (int i = 0; i < task.L; ++i) {
        for (int k = i + 1; k < task.L; ++k) {
          CHECK(st.mean[l][h](i, k) == 0.0);
          CHECK(st.stddev[l][h](i, k) == 0.0);
        }
      }
    }
  }
}

TEST_CASE("bad sizes are refused") {
  const Task task{5, 9, TriggerRange::kPaper};
  const Model<double> m = relu_construction<double>(5);
  CHECK_THROWS_AS(attention_statistics(m, task, 0, 1, 7), std::invalid_argument);
  CHECK_THROWS_AS(attention_statistics(m, task, 3, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(attention_statistics(m, task, 3, 1, 9), std::invalid_argument);
  CHECK_THROWS_AS(attention_statistics(m, Task{6, 9, TriggerRange::kPaper}, 3, 1, 7),
                  std::invalid_argument);
  CHECK_NOTHROW(attention_statistics(m, task, 1, 1, 8));
}

TEST_CASE("softmax beside ReLU: four heat maps in one row; a 2 x 2 model: a 2 x 2 grid") {
  const Task task{5, 9, TriggerRange::kPaper};
  const std::vector<FigureModel> models{
      {"softmax (the family's)", "the sink family", sink_family<double>(5, 2.0)},
      {"relu", "the construction", relu_construction<double>(5)}};
  std::vector<AttentionStatistics> stats;
  for (const auto& fm : models) stats.push_back(attention_statistics(fm.model, task, 6, 1, 7));
  const Figure f = attention_figure("demo", AttentionFigureKind::kMeanStd, models, stats);
  CHECK(f.name == "demo_mean_std");
  CHECK(f.png);
  REQUIRE(f.rows.size() == 4u * 81u);
  CHECK(f.plot.find("1 row(s) x 4 column(s)") != std::string::npos);
  CHECK(f.plot.find("every ::243::323 ") != std::string::npos);  // panel 3, the ReLU std
  CHECK(f.caption.find("0-indexed position 7") != std::string::npos);
  // a quote in a label is doubled inside gnuplot's single-quoted string
  CHECK(f.plot.find("set title 'softmax (the family''s): mean' noenhanced") != std::string::npos);
  CHECK(f.caption.find("over 6 probe inputs") != std::string::npos);
  // panel 2 = the ReLU mean: its trigger row 7 is uniform on 1..7, 1/7
  int trigger_row = 0;
  for (const auto& row : f.rows) {
    if (row[0] != "2" || row[5] != "7") continue;
    const int k = std::stoi(row[6]);
    CHECK(near(std::stod(row[7]), k >= 1 && k <= 7 ? 1.0 / 7 : 0.0, kRoundoff));
    ++trigger_row;
  }
  CHECK(trigger_row == 9);
  const Model<double> deep = relu_residual_construction<double>(5, 2, 2);
  const std::vector<FigureModel> one{{"relu 2 x 2", "the construction", deep}};
  const Figure g = attention_figure("deep", AttentionFigureKind::kOneInput, one,
                                    {attention_statistics(deep, task, 2, 1, 7)});
  CHECK(g.name == "deep_one_input");
  CHECK(g.rows.size() == 4u * 81u);
  CHECK(g.plot.find("2 row(s) x 2 column(s)") != std::string::npos);
  CHECK(g.plot.find("set title 'layer 1, head 1' noenhanced") != std::string::npos);
  // two deep models side by side: the label on its own line above where
  // (on one line, the titles of neighbouring panels overlap)
  const std::vector<FigureModel> two{{"relu 2 x 2", "the construction", deep},
                                     {"its \"twin\"", "the same", deep}};
  const AttentionStatistics deep_stats = attention_statistics(deep, task, 2, 1, 7);
  const Figure h =
      attention_figure("pair", AttentionFigureKind::kOneInput, two, {deep_stats, deep_stats});
  CHECK(h.plot.find("set title \"relu 2 x 2\\nlayer 0, head 1\" noenhanced") != std::string::npos);
  CHECK(h.plot.find("set title \"its \\\"twin\\\"\\nlayer 1, head 0\" noenhanced") !=
        std::string::npos);
  CHECK(h.plot.find("set tmargin 3\n") != std::string::npos);
  // one line each: the margin of one line
  CHECK(g.plot.find("set tmargin 2\n") != std::string::npos);
  CHECK(f.plot.find("set tmargin 2\n") != std::string::npos);
  // probe sets that differ cannot share a figure
  CHECK_THROWS_AS(
      attention_figure("x", AttentionFigureKind::kMeanStd, models,
                       {stats[0], attention_statistics(models[1].model, task, 7, 1, 7)}),
      std::invalid_argument);
}

TEST_CASE("the appendix's list: its weight files exist, load at n = 16, and a wrong n is refused") {
  const std::string models = std::string(SINKCERT_SOURCE_DIR) + "/results";
  const Task task{16, 16, TriggerRange::kPaper};
  int files = 0, trained = 0;
  for (const AttentionFigureSpec& spec : attention_figure_list()) {
    CHECK(spec.name.rfind("attention_", 0) == 0);
    for (const ModelSource& s : spec.models) {
      if (s.kind == ModelSource::Kind::kReluConstruction) continue;
      const FigureModel fm = load_figure_model(s, models, task);
      CHECK(fm.model.n == 16);
      ++files;
      if (s.kind != ModelSource::Kind::kPaperRecipe) continue;
      // the committed recipe model: its shape, and its training told in the caption
      ++trained;
      CHECK(s.weights.rfind(std::string(kFigureModelsFolder) + "/", 0) == 0);
      CHECK(fm.model.num_layers() == s.recipe_layers);
      CHECK(fm.model.num_heads() == s.recipe_heads);
      CHECK(fm.description.find("trained by the paper's recipe") != std::string::npos);
      CHECK(fm.description.find("committed as " + s.weights) != std::string::npos);
    }
  }
  CHECK(files == 6);
  CHECK(trained == 3);
  // the deep softmax models of the paper's recipe beside the ReLU constructions
  std::vector<int> deep;
  for (const AttentionFigureSpec& spec : attention_figure_list(300, 7)) {
    for (const ModelSource& s : spec.models) {
      if (s.kind != ModelSource::Kind::kPaperRecipe || s.recipe_layers == 1) continue;
      CHECK(spec.kind == AttentionFigureKind::kOneInput);
      CHECK(s.recipe_heads == s.recipe_layers);
      CHECK(s.recipe_max_steps == 7);
      deep.push_back(s.recipe_layers);
    }
  }
  CHECK(deep == std::vector<int>{2, 4});
  const ModelSource minimax{ModelSource::Kind::kWeightFile, "x",
                            "theorem1/path_start0.weights.json", 0, 0};
  CHECK_THROWS_AS(load_figure_model(minimax, models, Task{8, 16, TriggerRange::kPaper}),
                  InputError);
  const ModelSource missing{ModelSource::Kind::kWeightFile, "x", "no/such.weights.json", 0, 0};
  CHECK_THROWS_AS(load_figure_model(missing, models, task), InputError);
}

TEST_CASE("a recipe model trained, written, read back; a wrong shape or no account is refused") {
  const Task task{5, 4, TriggerRange::kPaper};
  ModelSource two{
      ModelSource::Kind::kPaperRecipe, "x", "figure_models/two.weights.json", 3, 0, 2, 2};
  const RunInfo info = make_run_info({"sinkcert", "appendix", "--retrain"}, 0, "double");
  const WeightFile file = train_figure_model(two, task, info);
  CHECK(file.kind == ModelKind::kResidual);
  CHECK(file.num_layers() == 2);
  CHECK(file.num_heads() == 2);
  CHECK(file.task->L == 4);
  const nlohmann::json& training = file.metadata["training"];
  CHECK(training["steps"] == 3);
  CHECK(training["stop_reason"] == "step cap");
  CHECK(training["description"].get<std::string>().find("residual 2 x 2 softmax") == 0);
  CHECK(training["description"].get<std::string>().find("after 3 steps") != std::string::npos);
  CHECK(file.metadata[kProvenanceKey]["command_line"] == "sinkcert appendix --retrain");
  // deterministic: trained again, the same weights
  CHECK(weight_file_text(train_figure_model(two, task, info)) == weight_file_text(file));
  // retrain_figure_models writes each recipe model once, read back as trained
  const std::string models = std::string(SINKCERT_BINARY_DIR) + "/attention_figures_test_models";
  std::filesystem::remove_all(models);
  ModelSource one{ModelSource::Kind::kPaperRecipe, "y", "figure_models/one.weights.json", 5, 0};
  const std::vector<AttentionFigureSpec> specs = {{"a", AttentionFigureKind::kMeanStd, {one, two}},
                                                  {"b", AttentionFigureKind::kOneInput, {two}}};
  const auto written = retrain_figure_models(specs, models, task, {"sinkcert"}, 2);
  CHECK(written == std::vector<std::string>{models + "/figure_models/one.weights.json",
                                            models + "/figure_models/two.weights.json"});
  const FigureModel back = load_figure_model(two, models, task);
  CHECK(back.model.num_layers() == 2);
  CHECK(back.description.find("after 3 steps") != std::string::npos);
  CHECK(back.description.find("committed as figure_models/two.weights.json") != std::string::npos);
  // the list asks for another shape than the file has: refused, naming the file
  ModelSource four = two;
  four.recipe_layers = four.recipe_heads = 4;
  try {
    load_figure_model(four, models, task);
    FAIL("a 2 x 2 file passed for a 4 x 4 model");
  } catch (const InputError& e) {
    CHECK(e.file() == models + "/figure_models/two.weights.json");
    CHECK(e.field() == "layers");
  }
  // a file without the account of its training: refused
  WeightFile bare = file;
  bare.metadata = nullptr;
  write_weight_file(models + "/figure_models/two.weights.json", bare);
  try {
    load_figure_model(two, models, task);
    FAIL("a recipe model without metadata.training.description passed");
  } catch (const InputError& e) {
    CHECK(e.field() == "metadata.training.description");
  }
  std::filesystem::remove_all(models);
}

}  // namespace
}  // namespace sinkcert::theorems::reports
