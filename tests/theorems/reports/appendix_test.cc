// SPDX-License-Identifier: MIT
#include "theorems/reports/appendix.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>

#include "src/input_error.h"

namespace sinkcert::theorems::reports {
namespace {

namespace fs = std::filesystem;

std::set<std::string> names(const std::vector<AppendixArtifact>& registry) {
  std::set<std::string> out;
  for (const auto& a : registry) out.insert(a.name);
  return out;
}

TEST_CASE("the registry lists every table and figure once, at every size") {
  const auto registry = appendix_registry(studies::RunSize::kDefault);
  const std::set<std::string> expected{"p1_sink_loss",
                                       "p1_sink_bos",
                                       "f1_sink_precision",
                                       "p3_relu_certificate",
                                       "p4_beyond_double",
                                       "b1_worst_case_bound",
                                       "p2_search_models",
                                       "p5_refined_search_path",
                                       "t1_hypothesis_edges",
                                       "t2_theorem2_study",
                                       "t2b_theorem2_every_head",
                                       "t2c_theorem2_certified",
                                       "normalizations_n5_L4",
                                       "normalizations_n16_L16",
                                       "p5_refined_paper_size",
                                       "q1_row1_frontier",
                                       "f4_row1_frontier",
                                       "theorem1_path",
                                       "theorem1_frontier",
                                       "theorem1_nuance",
                                       "theorem2_path",
                                       "theorem2_frontier",
                                       "c1_certified_path",
                                       "f2_certified_path",
                                       "f3_theorem2_certified",
                                       "attention_paper_recipe_mean_std",
                                       "attention_minimax_mean_std",
                                       "attention_relu_2x2_one_input",
                                       "attention_relu_4x4_one_input"};
  CHECK(names(registry) == expected);
  CHECK(registry.size() == expected.size());  // no name twice
  // quick and full write the same tables and figures (smaller or larger runs)
  CHECK(names(appendix_registry(studies::RunSize::kQuick)) == expected);
  CHECK(names(appendix_registry(studies::RunSize::kFull)) == expected);
  int figures = 0;
  for (const auto& a : registry) figures += a.kind == ArtifactKind::kFigure;
  CHECK(figures == 13);
  // P5 and P2 read the committed search models, relative to --models
  for (const auto& a : registry) {
    if (a.name == "p5_refined_search_path") {
      CHECK(a.inputs ==
            std::vector<std::string>{"theorem1/edges/n5_L4_paper/path_start0.weights.json"});
    }
    if (a.name == "p2_search_models") CHECK(a.inputs.size() == 22u);
    if (a.name == "t1_hypothesis_edges") CHECK(a.inputs.size() == 9u);
    // C1: P5's start and the six descent path models (n = 5, L = 4 and n = L = 16)
    if (a.name == "c1_certified_path") CHECK(a.inputs.size() == 7u);
    // the entries sharing a computation are one job
    const std::map<std::string, std::string> shared = {{"p1_sink_loss", "P1"},
                                                       {"p1_sink_bos", "P1"},
                                                       {"f1_sink_precision", "P1"},
                                                       {"p5_refined_search_path", "P5"},
                                                       {"c1_certified_path", "P5"},
                                                       {"f2_certified_path", "P5"},
                                                       {"t2c_theorem2_certified", "T2c"},
                                                       {"f3_theorem2_certified", "T2c"},
                                                       {"q1_row1_frontier", "Q1"},
                                                       {"f4_row1_frontier", "Q1"}};
    CHECK(a.job == (shared.count(a.name) ? shared.at(a.name) : a.name));
    // the attention figures read their committed recipe models
    if (a.name == "attention_relu_4x4_one_input") {
      CHECK(a.inputs == std::vector<std::string>{"figure_models/paper_recipe_4x4.weights.json",
                                                 "theorem3/relu_residual_4x4_n16.weights.json"});
    }
    // T2c: the Theorem 2 study's start-0 path model, the small study's two eps_one models
    if (a.name == "t2c_theorem2_certified") {
      CHECK(a.inputs == std::vector<std::string>{"theorem2/path_start0.weights.json",
                                                 "theorem2/n5_L4/eps_one_delta0.5.weights.json",
                                                 "theorem2/n5_L4/eps_one_delta0.2.weights.json"});
    }
    // the committed Theorem 2 study's figures, copied with its JSON's caption
    if (a.name == "theorem2_path") {
      CHECK(a.inputs == std::vector<std::string>{"theorem2/theorem2.json", "theorem2/path.pdf"});
    }
  }
}

TEST_CASE("the default models folder is the repository's results/, and it is complete") {
  CHECK(fs::equivalent(default_models_dir(), std::string(SINKCERT_SOURCE_DIR) + "/results"));
  AppendixOptions opt;
  CHECK(opt.models == default_models_dir());
  for (studies::RunSize size :
       {studies::RunSize::kQuick, studies::RunSize::kDefault, studies::RunSize::kFull}) {
    opt.size = size;
    CHECK_NOTHROW(check_appendix_inputs(opt));
  }
}

TEST_CASE("a missing input is an error naming it, never a skipped table") {
  const std::string models = std::string(SINKCERT_BINARY_DIR) + "/appendix_test_models";
  fs::remove_all(models);
  AppendixOptions opt;
  opt.size = studies::RunSize::kQuick;
  opt.models = models;
  // no models folder at all
  try {
    check_appendix_inputs(opt);
    FAIL("a missing models folder passed");
  } catch (const InputError& e) {
    CHECK(e.file() == models);
    CHECK(e.field() == "--models");
  }
  // every input of the quick registry: complete
  for (const auto& a : appendix_registry(studies::RunSize::kQuick)) {
    for (const std::string& rel : a.inputs) {
      fs::create_directories(fs::path(models + "/" + rel).parent_path());
      fs::copy_file(default_models_dir() + "/" + rel, models + "/" + rel,
                    fs::copy_options::overwrite_existing);
    }
  }
  CHECK_NOTHROW(check_appendix_inputs(opt));
  // a committed recipe model missing: an error, unless --retrain writes it first
  const std::string recipe = models + "/figure_models/paper_recipe_2x2.weights.json";
  fs::remove(recipe);
  try {
    check_appendix_inputs(opt);
    FAIL("a missing recipe model passed");
  } catch (const InputError& e) {
    CHECK(e.file() == recipe);
    CHECK(std::string(e.what()).find("attention_relu_2x2_one_input") != std::string::npos);
  }
  opt.retrain = true;
  CHECK_NOTHROW(check_appendix_inputs(opt));
  opt.retrain = false;
  fs::copy_file(default_models_dir() + "/figure_models/paper_recipe_2x2.weights.json", recipe);
  // ... but not for the default size, which reads more models
  opt.size = studies::RunSize::kDefault;
  CHECK_THROWS_AS(check_appendix_inputs(opt), InputError);
  opt.size = studies::RunSize::kQuick;
  // P5's start model removed: the error names it and the table needing it
  const std::string p5 = models + "/theorem1/edges/n5_L4_paper/path_start0.weights.json";
  fs::remove(p5);
  try {
    check_appendix_inputs(opt);
    FAIL("a missing P5 input passed");
  } catch (const InputError& e) {
    CHECK(e.file() == p5);
    CHECK(std::string(e.what()).find("p2_search_models") != std::string::npos);
  }
  // generate_appendix checks before writing anything
  const std::string out = std::string(SINKCERT_BINARY_DIR) + "/appendix_test_out";
  fs::remove_all(out);
  opt.out = out;
  CHECK_THROWS_AS(generate_appendix(opt, {"sinkcert", "appendix"}), InputError);
  CHECK_FALSE(fs::exists(out + "/tables"));
  fs::remove_all(models);
}

TEST_CASE("appendix document: every table, every figure with its caption, two folders") {
  RunInfo info;
  info.command_line = "sinkcert appendix";
  info.revision = "r1";
  info.time_utc = "2026-11-29T00:00:00Z";
  info.precision = "see each table";
  const std::vector<DocumentFigure> figures{
      {"figures/f1_sink_precision.pdf", "f1_sink_precision",
       "F1: 1 - min BOS mass. Evidence: CERTIFIED.", "", ""},
      {"", "theorem1_path", "Descent path. Evidence: SEARCH(lower bound).",
       "path.pdf (gnuplot: exit status 1)", ""},
      // a caption with a LaTeX form: the document takes it as it is
      {"figures/f2.pdf", "f2", "F2: 1 - min a_i0 against E. Evidence: CERTIFIED.", "",
       "F2: $1-\\min a_{i0}$ against $E$. Evidence: CERTIFIED."}};
  const std::string doc = appendix_document({"tables/p1_sink_loss", "tables/p3_relu_certificate"},
                                            figures, info, "results");
  CHECK(doc.rfind("% sinkcert appendix\n% command_line: sinkcert appendix\n% revision: r1\n", 0) ==
        0);
  CHECK(doc.find("\\documentclass[11pt]{article}") != std::string::npos);
  CHECK(doc.find("\\usepackage{booktabs}") != std::string::npos);
  CHECK(doc.find("\\usepackage{rotating}") != std::string::npos);  // landscape tables
  CHECK(doc.find("\\def\\input@path{{./}{results/}}") != std::string::npos);
  CHECK(doc.find("\\graphicspath{{./}{results/}}") != std::string::npos);
  CHECK(doc.find("\\input{tables/p1_sink_loss}\n\\input{tables/p3_relu_certificate}\n") !=
        std::string::npos);
  CHECK(doc.find("\\includegraphics[width=0.9\\linewidth]{figures/f1_sink_precision.pdf}\n"
                 "\\caption{F1: 1 - min BOS mass. Evidence: CERTIFIED.}\n"
                 "\\label{fig:f1_sink_precision}") != std::string::npos);
  CHECK(doc.find("\\caption{F2: $1-\\min a_{i0}$ against $E$. Evidence: CERTIFIED.}") !=
        std::string::npos);
  // a caption is never the file name
  CHECK(doc.find("\\caption{\\texttt") == std::string::npos);
  // a figure not rendered is said so in the document
  CHECK(doc.find("Figure not rendered: path.pdf (gnuplot: exit status 1)") != std::string::npos);
  CHECK(doc.substr(doc.size() - 15) == "\\end{document}\n");
}

}  // namespace
}  // namespace sinkcert::theorems::reports
