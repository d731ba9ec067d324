// SPDX-License-Identifier: MIT
//
// Cost of one forward pass, n = L = 16, single-layer single-head softmax
// (A, M with i.i.d. N(0, 0.5^2) entries, seed 1), keep_attention = false:
//   sequences/s = sequences evaluated / wall seconds,  ratio = (sequences/s) / (double's)
// Generic forward<T> (forward.h), one thread, on 64 sampled sequences
// (TaskSampler seed 7), for double, Float128 (113), MPFR at 113, 256 and 1024
// bits and MPFI at 113, 256 and 1024 bits. Then BatchForward (batch_forward.h)
// in double on 4096 sampled sequences (the same stream, seed 7), stacked once
// into a (4096 L) x n matrix before timing; each call of run_stacked
// evaluates all 4096 (output allocation included), with the baseline (SSE2)
// and the AVX2/FMA kernel, on 1 and 2 threads.
// Target: >= 1e6 sequences/s in double (PyTorch's batched forward reaches
// about 1e5 on this 2-core machine).
// Not a ctest test: run build/tests/forward_benchmark [seconds per row].
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "src/batch_forward.h"
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

// BatchForward on the stacked batch, run until `seconds` have passed.
double batch_sequences_per_second(const Model<double>& model, const Matrix<double>& stacked, int L,
                                  const BatchForwardOptions& options, double seconds) {
  const BatchForward batch(model, options);
  long sequences = 0;
  const auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0.0;
  do {
    const BatchForwardResult r = batch.run_stacked(stacked, L);
    sink_value = sink_value + r.output(r.output.rows() - 1, r.output.cols() - 1);
    sequences += r.batch_size();
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (elapsed < seconds);
  return sequences / elapsed;
}

}  // namespace
}  // namespace sinkcert

int main(int argc, char** argv) {
  using namespace sinkcert;
  const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
  const Task task{16, 16, TriggerRange::kPaper};
  const Model<double> model = testing::random_model(16, AttentionKind::kSoftmax, 0.5, 1);
  TaskSampler sampler(task, 7);
  const int kBatch = 4096;
  Matrix<double> stacked(kBatch * task.L, task.n);
  std::vector<Matrix<double>> inputs;
  for (int s = 0; s < kBatch; ++s) {
    const Matrix<double> X = sampler.next().X;
    stacked.middleRows(s * task.L, task.L) = X;
    if (s < 64) inputs.push_back(X);
  }

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
  const size_t generic_rows = rows.size();
  for (bool baseline : {true, false}) {
    if (!baseline && !BatchForward::avx2_available()) continue;
    for (int threads : {1, 2}) {
      BatchForwardOptions options;
      options.threads = threads;
      options.force_baseline = baseline;
      rows.push_back({std::string(baseline ? "batch baseline" : "batch AVX2") + ", " +
                          std::to_string(threads) + (threads == 1 ? " thread" : " threads"),
                      batch_sequences_per_second(model, stacked, task.L, options, seconds)});
    }
  }
  std::printf("forward pass, n = L = 16, single-layer softmax [NUMERIC timing]\n");
  std::printf("generic forward<T>, 1 thread, 64 sequences; batch: BatchForward, %d sequences\n",
              kBatch);
  std::printf("%-24s %14s %16s\n", "scalar", "sequences/s", "ratio to double");
  for (const auto& r : rows) {
    std::printf("%-24s %14.4g %16.4g\n", r.name.c_str(), r.rate, r.rate / rows[0].rate);
  }
  if (!BatchForward::avx2_available()) std::printf("(no AVX2/FMA kernel on this build or CPU)\n");
  const double target = 1e6;
  std::printf("generic double %s the 1e6 sequences/s target (%.3g)\n",
              rows[0].rate >= target ? "meets" : "misses", rows[0].rate);
  size_t best = generic_rows;
  for (size_t i = generic_rows; i < rows.size(); ++i) {
    if (rows[i].rate > rows[best].rate) best = i;
  }
  std::printf("batched double (best: %s) %s the 1e6 sequences/s target (%.3g)\n",
              rows[best].name.c_str(), rows[best].rate >= target ? "meets" : "misses",
              rows[best].rate);
  return 0;
}
