// SPDX-License-Identifier: MIT
//
// Orchestration of the appendix (see appendix.h): computes each table with
// precision_tables, writes it with table_writer, renders figure F1 with
// gnuplot (run without a shell, in the figures folder, on our own file
// names), and writes appendix.tex last, all into the staging folder of
// replace_output_set.
#include "theorems/appendix.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>

#include "src/constructions.h"
#include "src/run_info.h"
#include "src/subprocess.h"
#include "src/table_writer.h"
#include "src/weight_file.h"
#include "theorems/refined_path.h"

namespace sinkcert::theorems {

namespace {

constexpr const char* kF1Stem = "f1_sink_precision";

// The whole appendix, written into `staging` (the new <out>); reads its
// inputs (<out>/theorem1, extra figures in <out>/figures) from opt.out.
AppendixSummary write_appendix(const AppendixOptions& opt, const std::string& staging,
                               const std::vector<std::string>& argv, const Progress& progress) {
  namespace fs = std::filesystem;
  const std::string tables = staging + "/tables", figures = staging + "/figures";
  // paths as they will be once the set is swapped in
  const auto shown = [&](const std::string& path) {
    return path.rfind(staging, 0) == 0 ? opt.out + path.substr(staging.size()) : path;
  };
  std::vector<std::string> stems, figure_files;
  auto emit = [&](const Table& t, const RunInfo& info) {
    for (const auto& path : write_table(t, info, tables)) progress("wrote " + shown(path));
    stems.push_back("tables/" + t.name);
  };

  // P1
  const Task p1_task{16, 16, TriggerRange::kPaper};
  const std::vector<double> betas{5, 10, 20, 40, 80, 160, 320};
  progress("P1: sink family, n = L = 16, 7 values of beta, " + std::to_string(kP1Digits) +
           " certified digits");
  const auto p1 = sink_family_precision_rows(p1_task, betas, kP1Digits, progress);
  const RunInfo p1_info = make_run_info(
      argv, 0,
      "float, double, Float128 (113), MPFR 257 bits; MPFI adaptive from 64 bits, +64, " +
          std::to_string(kP1Digits) + " digits");
  emit(p1_loss_table(p1, p1_task), p1_info);
  emit(p1_bos_table(p1, p1_task), p1_info);

  // F1 figure: gnuplot runs in the figures folder, so the script names its
  // data and output relative to it (and still works there for a reader)
  const std::string data = std::string(kF1Stem) + ".dat", script = std::string(kF1Stem) + ".gp",
                    pdf = std::string(kF1Stem) + ".pdf";
  write_file_atomically(figures + "/" + data, p1_figure_data(p1, p1_info));
  write_file_atomically(figures + "/" + script, "# " + p1_info.command_line + " (revision " +
                                                    p1_info.revision + ")\n" +
                                                    p1_figure_script(data, pdf));
  RunOptions gnuplot;
  gnuplot.working_dir = figures;
  gnuplot.capture = RunOptions::Capture::kStderr;
  const ProgramResult f1 = run_program({"gnuplot", script}, gnuplot);
  std::error_code ec;
  if (f1.ok() && fs::is_regular_file(figures + "/" + pdf, ec)) {
    figure_files.push_back("figures/" + pdf);
    progress("wrote " + shown(figures + "/" + pdf));
  } else {
    fs::remove(figures + "/" + pdf, ec);  // a partial figure
    progress("figure F1 skipped (" + describe_failure(f1) + "; data in " +
             shown(figures + "/" + data) + ")");
  }

  // P3
  std::vector<std::pair<int, int>> sizes{{5, 4}, {8, 8}, {16, 16}, {32, 64}, {64, 256}};
  progress("P3: ReLU certificate, 5 sizes");
  const auto p3 = relu_certificate_rows(sizes, progress);
  emit(p3_table(p3), make_run_info(argv, 0, "exact (GMP rationals)"));

  // P4
  progress("P4: scale path of the sink family, base beta = 10");
  AdaptiveOptions p4_options;
  p4_options.digits = 10;
  const auto p4 = scale_path(sink_family<double>(16, 10.0), p1_task, {1, 2, 4, 8, 16, 24, 32},
                             p4_options, progress);
  emit(p4_table(p4, "the sink family", p1_task, 10.0),
       make_run_info(argv, 0, "MPFI adaptive from 64 bits, +64, 10 digits"));

  // B1
  progress("B1: branch and bound reach");
  const auto b1 = worst_case_bound_rows(opt.full, progress);
  emit(b1_table(b1), make_run_info(argv, 21, "MPFI 128 bits"));

  // P2: the n = L = 16 study's models, and the n = 5, L = 4 edge models
  // (where the branch and bound reaches)
  const std::string p2_dir = opt.out + "/theorem1";
  std::vector<SearchModelRow> p2;
  for (const std::string& dir : {p2_dir, p2_dir + "/edges/n5_L4_paper"}) {
    progress("P2: search models in " + dir);
    auto rows = search_model_rows(dir, opt.full ? 300.0 : opt.p2_bound_seconds, progress);
    for (auto& r : rows) {
      if (dir != p2_dir) r.file = "edges/n5_L4_paper/" + r.file;
      p2.push_back(std::move(r));
    }
  }
  emit(p2_table(p2, p2_dir), make_run_info(argv, 0, "MPFI adaptive, 6 digits"));

  // P5: beyond double for a search model (n = 5, L = 4, where the fit set
  // holds a quarter of the vertices and W every vertex)
  const std::string p5_file = p2_dir + "/edges/n5_L4_paper/path_start0.weights.json";
  if (fs::exists(p5_file)) {
    progress("P5: refined scale path of " + p5_file);
    RefinedPathOptions p5_options;
    if (opt.full) {
      p5_options.scales = {1, 2, 4, 8, 12};
      p5_options.bits = 1024;
    }
    const Task p5_task{5, 4, TriggerRange::kPaper};
    const RefinedPath p5 =
        refined_path(to_model<double>(read_weight_file(p5_file)), p5_task, p5_options, progress);
    std::ostringstream precision;
    precision << "refinement MPFR " << p5.bits << " bits; MPFI adaptive from 64 bits, +64, "
              << p5_options.certify.digits << " digits";
    const RunInfo p5_info = make_run_info(argv, p5_options.seed, precision.str());
    emit(p5_table(p5, "edges/n5_L4_paper/path_start0", p5_task, p5_options), p5_info);
    // every refined model as an exact weight file beside the table, so that
    // `verify bound` / `eval --certify` re-check its row
    for (const RefinedPathRow& row : p5.rows) {
      WeightFile file = refined_path_weight_file(row, p5, p5_task, "edges/n5_L4_paper/path_start0");
      file.metadata["run_info"] = to_json(p5_info);
      const std::string path = tables + "/" + refined_path_file_name(row);
      write_weight_file(path, file);
      progress("wrote " + shown(path));
    }
  } else {
    progress("P5 skipped: " + p5_file + " is missing (run sinkcert theorem1 first)");
  }

  // Figures the user put in <out>/figures stay: copied into the new set
  // (F1's own files are regenerated above, never carried over).
  fs::create_directories(figures);
  for (const auto& entry : fs::directory_iterator(opt.out + "/figures", ec)) {
    const std::string name = entry.path().filename().string();
    std::error_code kind_ec;
    if (name[0] == '.' || name.rfind(std::string(kF1Stem) + ".", 0) == 0 ||
        name.find(".tmp") != std::string::npos || !entry.is_regular_file(kind_ec) ||
        entry.is_symlink(kind_ec) || fs::exists(figures + "/" + name)) {
      continue;
    }
    fs::copy_file(entry.path(), figures + "/" + name);
  }

  // figures in the new <out>/figures (pdf, png) and the Theorem 1 study's
  // figures in <out>/theorem1 (pdf)
  for (const auto& [sub, folder] :
       {std::pair<std::string, std::string>{"figures", figures}, {"theorem1", p2_dir}}) {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      const std::string name = entry.path().filename().string();
      const std::string ext = entry.path().extension().string();
      const std::string rel = sub + "/" + name;
      const bool wanted = ext == ".pdf" || (sub == "figures" && ext == ".png");
      if (wanted && name[0] != '.' && name.find(".tmp") == std::string::npos &&
          std::find(figure_files.begin(), figure_files.end(), rel) == figure_files.end()) {
        found.push_back(rel);
      }
    }
    std::sort(found.begin(), found.end());
    figure_files.insert(figure_files.end(), found.begin(), found.end());
  }
  const std::string folder = fs::path(opt.out).filename().string();
  write_file_atomically(
      staging + "/appendix.tex",
      appendix_document(stems, figure_files, make_run_info(argv, 0, "see each table"),
                        folder.empty() ? "." : folder));
  progress("wrote " + opt.out + "/appendix.tex");
  return AppendixSummary{stems, figure_files, 0.0};
}

}  // namespace

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
                                  const Progress& report) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto progress = [&](const std::string& msg) {
    if (report) report("[appendix " + std::to_string(static_cast<int>(elapsed())) + " s] " + msg);
  };
  AppendixSummary summary;
  replace_output_set(appendix_output_set(opt.out), [&](const std::string& staging) {
    summary = write_appendix(opt, staging, argv, progress);
  });
  progress("replaced tables/, figures/ and appendix.tex in " + opt.out + " as a whole");
  summary.seconds = elapsed();
  return summary;
}

}  // namespace sinkcert::theorems
