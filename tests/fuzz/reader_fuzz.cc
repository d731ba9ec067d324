// SPDX-License-Identifier: MIT
//
// Fuzz target for every file reader of the tool: any byte string is parsed
// as each kind of file the tool reads:
//   - a weight file and an input file (src/weight_file.h, src/input_file.h);
//   - a sweep grid (theorems/studies/sweep.h) and a sweep result file, the
//     state a resumed sweep reads back (check_result_file against a fixed
//     grid), and a merged normalization sweep table;
//   - a table JSON (src/table_writer.h), a study's JSON as the appendix reads
//     it back (theorems/reports/study_json.h), the Theorem 1 hypothesis-edge
//     run and nuance points (theorem1.json) and the Theorem 2 study summary
//     (theorem2.json).
// The only acceptable outcomes are a value or an InputError (one-line
// message, exit code 2 in the CLI); anything else (a crash, another
// exception, a hang) is a defect. A weight file that reads is also made into
// a double model and run forward on one task input, when it is small, so
// weights that overflow or produce NaN reach the forward pass too. The
// readers that take a path read the bytes from a scratch file.
//
// Built two ways (tests/CMakeLists.txt):
//   - with clang and -DSINKCERT_FUZZ=ON: a libFuzzer binary,
//       build/tests/reader_fuzz tests/fuzz/corpus
//   - otherwise: a replay runner whose main() feeds every file of the
//     directories (or files) named on its command line to the target; ctest
//     replays tests/fuzz/corpus, which holds a reproducer of every hostile
//     file found so far.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "src/forward.h"
#include "src/input_error.h"
#include "src/input_file.h"
#include "src/json_reader.h"
#include "src/table_writer.h"
#include "src/task.h"
#include "src/weight_file.h"
#include "theorems/reports/study_json.h"
#include "theorems/reports/theorem1_report.h"
#include "theorems/reports/theorem2_report.h"
#include "theorems/studies/normalization_study.h"
#include "theorems/studies/sweep.h"

namespace {

// Models up to this size are run forward (keeps one run well under 1 ms).
constexpr int kMaxForwardN = 8;
constexpr int kMaxForwardLayers = 4;

// Runs `read` and lets an InputError (the readers' one way to refuse) pass.
template <class Read>
void refused_or_read(Read read) {
  try {
    read();
  } catch (const sinkcert::InputError&) {
  }
}

// The grid whose result files the fuzzer feeds to check_result_file: the
// committed tiny grid's text, parsed once.
const sinkcert::theorems::studies::SweepGrid& fixed_grid() {
  static const sinkcert::theorems::studies::SweepGrid grid =
      sinkcert::theorems::studies::parse_sweep_grid(
          R"({"format": "sinkcert-sweep-grid", "version": 1, "study": "theorem1",
          "axes": {"attention": ["softmax"], "n": [5], "L": [4], "trigger_range": ["paper"],
                   "seed": [0]},
          "options": {"quick": true, "starts": 1, "path_rounds": 20, "frontier_rounds": 3,
                      "deltas": [0.5]}})",
          "fixed_grid.json");
  return grid;
}

// A scratch file holding the bytes, for the readers that take a path; one
// per process, rewritten for every input.
std::string scratch_file(const std::string& text) {
  static const std::string path = (std::filesystem::temp_directory_path() /
                                   ("sinkcert_reader_fuzz_" + std::to_string(getpid()) + ".json"))
                                      .string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return path;
}

void fuzz_one(const std::string& text) {
  using namespace sinkcert;
  using namespace sinkcert::theorems::reports;
  using namespace sinkcert::theorems::studies;
  refused_or_read([&] {
    const internal::JsonDocument doc = internal::parse_json_document(text, "fuzz.json");
    refused_or_read([&] {
      const WeightFile w = weight_file_from_document(doc);
      if (w.n <= kMaxForwardN && w.num_layers() <= kMaxForwardLayers) {
        const Model<double> m = to_model<double>(w);
        TaskSampler sampler(Task{w.n, 4, TriggerRange::kPaper}, 1);
        (void)forward(m, sampler.next().X);
      }
    });
    refused_or_read([&] { (void)input_file_from_document(doc, 5); });
  });
  refused_or_read([&] { (void)parse_sweep_grid(text, "fuzz.json"); });
  const std::string path = scratch_file(text);
  refused_or_read([&] {
    const SweepGrid& grid = fixed_grid();
    (void)check_result_file(path, grid, grid.configs.front());
  });
  refused_or_read([&] {
    RunInfo info;
    (void)normalization_table_from_sweep(path, "fuzz", &info);
  });
  refused_or_read([&] {
    RunInfo info;
    (void)read_table_json(path, &info);
  });
  refused_or_read([&] {
    RunInfo info;
    nlohmann::json model;
    (void)read_study_task(path, &info, &model);
  });
  refused_or_read([&] { (void)read_edge_run(Task{5, 4, TriggerRange::kPaper}, path); });
  refused_or_read([&] { (void)read_nuance_points(path); });
  refused_or_read([&] { (void)theorem2_appendix_table(path); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz_one(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}

#ifndef SINKCERT_LIBFUZZER
// Replay runner: every regular file under the given paths, in sorted order.
int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int a = 1; a < argc; ++a) {
    const fs::path p(argv[a]);
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::cerr << "reader_fuzz: no corpus files given\n";
    return 2;
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::ostringstream buf;
    buf << in.rdbuf();
    try {
      fuzz_one(buf.str());  // another exception than InputError, or a crash, fails the test
    } catch (const std::exception& e) {
      std::cerr << "reader_fuzz: " << f.string() << ": " << e.what() << "\n";
      return 1;
    }
  }
  std::filesystem::remove(scratch_file(""));
  std::cout << "reader_fuzz: replayed " << files.size() << " files\n";
  return 0;
}
#endif
