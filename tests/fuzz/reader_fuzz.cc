// SPDX-License-Identifier: MIT
//
// Fuzz target for the file readers: any byte string is parsed as a weight
// file and as an input file. The only acceptable outcomes are a value or an
// InputError (one-line message, exit code 2 in the CLI); anything else (a
// crash, another exception, a hang) is a defect. A weight file that reads is
// also made into a double model and run forward on one task input, when it is
// small, so weights that overflow or produce NaN reach the forward pass too.
//
// Built two ways (tests/CMakeLists.txt):
//   - with clang and -DSINKCERT_FUZZ=ON: a libFuzzer binary,
//       build/tests/reader_fuzz tests/fuzz/corpus
//   - otherwise: a replay runner whose main() feeds every file of the
//     directories (or files) named on its command line to the target; ctest
//     replays tests/fuzz/corpus, which holds a reproducer of every hostile
//     file found so far.
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
#include "src/task.h"
#include "src/weight_file.h"

namespace {

// Models up to this size are run forward (keeps one run well under 1 ms).
constexpr int kMaxForwardN = 8;
constexpr int kMaxForwardLayers = 4;

void fuzz_one(const std::string& text) {
  using namespace sinkcert;
  try {
    const internal::JsonDocument doc = internal::parse_json_document(text, "fuzz.json");
    try {
      const WeightFile w = weight_file_from_document(doc);
      if (w.n <= kMaxForwardN && w.num_layers() <= kMaxForwardLayers) {
        const Model<double> m = to_model<double>(w);
        TaskSampler sampler(Task{w.n, 4, TriggerRange::kPaper}, 1);
        (void)forward(m, sampler.next().X);
      }
    } catch (const InputError&) {
    }
    try {
      (void)input_file_from_document(doc, 5);
    } catch (const InputError&) {
    }
  } catch (const InputError&) {
  }
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
    fuzz_one(buf.str());  // an uncaught exception or a crash fails the test
  }
  std::cout << "reader_fuzz: replayed " << files.size() << " files\n";
  return 0;
}
#endif
