// SPDX-License-Identifier: MIT
//
// Cost of one forward pass, n = L = 16, single-layer single-head softmax
// (A, M with i.i.d. N(0, 0.5^2) entries, seed 1), keep_attention = false:
//   sequences/s = sequences evaluated / wall seconds,  ratio = (sequences/s) / (double's)
// Generic forward<T> (forward.h), one thread, on 64 sampled sequences
// (TaskSampler seed 7), for double, Float128 (113), MPFR at 113, 256 and 1024
// bits and MPFI at 113, 256 and 1024 bits.
// Not a ctest test: run build/tests/forward_benchmark [seconds per row].
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "src/forward.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

volatile double sink_value = 0.0;  // keeps the passes from being optimized away

template <class T>
double sequences_per_second(const Model<double>& md, const std::vector<Matrix<double>>& inputs,
                            double seconds) {
  const Model<T> m = md.cast<T>();
  std::vector<Matrix<T>> xs;
  for (const auto& X : inputs) xs.push_back(X.unaryExpr([](double v) { return T(v); }));
  long passes = 0;
  const auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0.0;
  do {
    for (const auto& X : xs) {
      const auto r = forward(m, X, false);
      sink_value = sink_value + to_double(r.output(15, 15));
      ++passes;
    }
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (elapsed < seconds);
  return passes / elapsed;
}

}  // namespace
}  // namespace sinkcert

int main(int argc, char** argv) {
  using namespace sinkcert;
  const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
  const Task task{16, 16, TriggerRange::kPaper};
  const Model<double> model = testing::random_model(16, AttentionKind::kSoftmax, 0.5, 1);
  TaskSampler sampler(task, 7);
  std::vector<Matrix<double>> inputs;
  for (int s = 0; s < 64; ++s) inputs.push_back(sampler.next().X);

  struct Row {
    std::string name;
    double rate;
  };
  std::vector<Row> rows;
  rows.push_back({"double (53)", sequences_per_second<double>(model, inputs, seconds)});
  rows.push_back({"Float128 (113)", sequences_per_second<Float128>(model, inputs, seconds)});
  for (int bits : {113, 256, 1024}) {
    PrecisionScope scope(bits);
    const std::string b = std::to_string(PrecisionScope::current_bits());
    rows.push_back({"MPFR (" + b + ")", sequences_per_second<Mpfr>(model, inputs, seconds)});
    rows.push_back({"MPFI (" + b + ")", sequences_per_second<Mpfi>(model, inputs, seconds)});
  }
  std::printf("forward pass, n = L = 16, single-layer softmax [NUMERIC timing]\n");
  std::printf("generic forward<T>, 1 thread, 64 sequences\n");
  std::printf("%-24s %14s %16s\n", "scalar", "sequences/s", "ratio to double");
  for (const auto& r : rows) {
    std::printf("%-24s %14.4g %16.4g\n", r.name.c_str(), r.rate, r.rate / rows[0].rate);
  }
  return 0;
}
