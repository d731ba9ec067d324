// SPDX-License-Identifier: MIT
//
// The refined scale path (theorems/studies/refined_path.h) at the paper's size: the
// three n = L = 16 path models of the committed Theorem 1 study, projected
// onto the exact-trigger-row structure and scaled, each step certified at W,
// bounded over the whole box (E and 1 - min BOS). Prints per step the wall
// and CPU seconds of each stage.
// Not a ctest test: run from the source folder,
//   build/tests/refined_path_benchmark [start ...] [--scales s1,s2,...] [--boxes B]
//       [--bos-boxes B] [--out DIR]
// With --out, DIR/p5_refined_paper_size.{csv,json,tex} (the table, with run
// info) and DIR/p5_paper_size_start<k>_s<s>.weights.json (every refined
// model, exact) are written.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "src/run_info.h"
#include "src/table_writer.h"
#include "src/weight_file.h"
#include "theorems/reports/precision_report.h"
#include "theorems/studies/refined_path.h"

int main(int argc, char** argv) {
  using namespace sinkcert;
  using namespace sinkcert::theorems::reports;
  using namespace sinkcert::theorems::studies;
  std::vector<int> starts;
  std::string out;
  RefinedPathOptions o;
  o.method = RefineMethod::kExactStructure;
  o.scales = {1, 2, 4};
  o.bits = 1024;
  o.bound_boxes = 50;
  o.bos_boxes = 2000;
  o.bound_adversary = false;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--scales" && a + 1 < argc) {
      o.scales.clear();
      std::stringstream ss(argv[++a]);
      for (std::string t; std::getline(ss, t, ',');) o.scales.push_back(std::atof(t.c_str()));
    } else if (arg == "--boxes" && a + 1 < argc) {
      o.bound_boxes = std::atol(argv[++a]);
    } else if (arg == "--out" && a + 1 < argc) {
      out = argv[++a];
    } else if (arg == "--bos-boxes" && a + 1 < argc) {
      o.bos_boxes = std::atol(argv[++a]);
    } else {
      starts.push_back(std::atoi(arg.c_str()));
    }
  }
  if (starts.empty()) starts = {0, 1, 2};
  const Task task{16, 16, TriggerRange::kPaper};
  std::vector<NamedRefinedPath> paths;
  std::string load_before;
  std::ifstream("/proc/loadavg") >> load_before;
  for (int s : starts) {
    const std::string file = "results/theorem1/path_start" + std::to_string(s) + ".weights.json";
    std::cout << file << "\n";
    const RefinedPath path =
        refined_path(to_model<double>(read_weight_file(file)), task, o,
                     [](const std::string& line) { std::cout << "  " << line << std::endl; });
    for (const RefinedPathRow& r : path.rows) {
      std::printf(
          "  s = %g: refine %.2f s, certify W %.2f s, bound E %.2f s, bound BOS %.2f s; wall %.2f "
          "s, CPU %.2f s\n",
          r.scale, r.refine_seconds, r.certify_seconds, r.bound_seconds, r.bos_seconds, r.seconds,
          r.cpu_seconds);
    }
    paths.push_back({"path_start" + std::to_string(s), path});
  }
  if (out.empty()) return 0;
  std::string load_after;
  std::ifstream("/proc/loadavg") >> load_after;
  const std::vector<std::string> args(argv, argv + argc);
  std::ostringstream precision;
  precision << "MPFR " << o.bits << " bits (projection, scaling, F); MPFI adaptive from "
            << o.certify.start_bits << " bits, +" << o.certify.step_bits << ", " << o.certify.digits
            << " digits";
  const RunInfo info = make_run_info(args, o.seed, precision.str());
  const Table table = p5_paper_size_table(paths, task, o, load_before + " to " + load_after);
  for (const std::string& f : write_table(table, info, out)) std::cout << "wrote " << f << "\n";
  for (const NamedRefinedPath& np : paths) {
    for (const RefinedPathRow& r : np.path.rows) {
      WeightFile file =
          refined_path_weight_file(r, np.path, task, "theorem1/" + np.name + ".weights.json");
      file.metadata["run_info"] = to_json(info);
      std::ostringstream name;
      name << out << "/p5_paper_size_" << np.name.substr(5) << "_s" << r.scale << ".weights.json";
      write_weight_file(name.str(), file);
      std::cout << "wrote " << name.str() << "\n";
    }
  }
  return 0;
}
