// SPDX-License-Identifier: MIT
//
// BatchForward: checks the model, stacks the heads,
//   a_cat = [A_1 .. A_H] (n x H n),   m_cat = [M_1^T; ..; M_H^T] (H n x n),
// cuts the batch into chunks of internal::kLanes sequences and hands
// contiguous runs of chunks to the threads, each running the kernel of
// src/internal/batch_kernel.h (the AVX2/FMA build when the CPU has both).
#include "src/batch_forward.h"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

#define SINKCERT_BATCH_KERNEL_NS baseline
#include "src/internal/batch_kernel.h"

#ifdef SINKCERT_HAVE_AVX2_KERNEL
namespace sinkcert::internal::avx2 {
// src/internal/batch_kernel_avx2.cc
void batch_kernel(const BatchKernelArgs& args, long first_chunk, long last_chunk);
}  // namespace sinkcert::internal::avx2
#endif

namespace sinkcert {

BatchForward::BatchForward(const Model<double>& model, BatchForwardOptions options)
    : options_(options) {
  const std::string supported =
      "BatchForward supports single-layer models with softmax attention (any number of heads)";
  if (model.kind != ModelKind::kSingleLayer || model.num_layers() != 1) {
    throw std::invalid_argument(supported + "; got a " + to_string(model.kind) + " model with " +
                                std::to_string(model.num_layers()) + " layer(s)");
  }
  if (model.attention != AttentionKind::kSoftmax) {
    throw std::invalid_argument(supported + "; got " + to_string(model.attention) + " attention");
  }
  if (model.num_heads() < 1) throw std::invalid_argument(supported + "; got no heads");
  if (options.threads < 0) {
    throw std::invalid_argument("BatchForward: threads must be >= 0 (0: one per core), got " +
                                std::to_string(options.threads));
  }
  n_ = model.n;
  heads_ = model.num_heads();
  a_cat_.resize(n_, heads_ * n_);
  m_cat_.resize(heads_ * n_, n_);
  for (int h = 0; h < heads_; ++h) {
    const Head<double>& head = model.layers[0][h];
    if (head.A.rows() != n_ || head.A.cols() != n_ || head.M.rows() != n_ || head.M.cols() != n_) {
      throw std::invalid_argument(
          "BatchForward: head " + std::to_string(h) +
          " does not hold n x n matrices A and M (n = " + std::to_string(n_) + ")");
    }
    a_cat_.middleCols(h * n_, n_) = head.A;
    m_cat_.middleRows(h * n_, n_) = head.M.transpose();
  }
}

bool BatchForward::avx2_available() {
#ifdef SINKCERT_HAVE_AVX2_KERNEL
  static const bool available = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return available;
#else
  return false;
#endif
}

BatchForwardResult BatchForward::run(const std::vector<Matrix<double>>& inputs) const {
  if (inputs.empty()) return run_stacked(Matrix<double>(0, n_), 0);
  const long L = inputs[0].rows();
  Matrix<double> stacked(L * static_cast<long>(inputs.size()), n_);
  for (size_t b = 0; b < inputs.size(); ++b) {
    if (inputs[b].rows() != L || inputs[b].cols() != n_) {
      throw std::invalid_argument(
          "BatchForward: input " + std::to_string(b) + " is " + std::to_string(inputs[b].rows()) +
          " x " + std::to_string(inputs[b].cols()) + ", expected " + std::to_string(L) + " x " +
          std::to_string(n_) + " (L of input 0, n of the model)");
    }
    stacked.middleRows(static_cast<long>(b) * L, L) = inputs[b];
  }
  return run_stacked(stacked, static_cast<int>(L));
}

BatchForwardResult BatchForward::run_stacked(const Matrix<double>& stacked, int L) const {
  if (stacked.cols() != n_) {
    throw std::invalid_argument("BatchForward: stacked input has " +
                                std::to_string(stacked.cols()) +
                                " columns, model expects n = " + std::to_string(n_));
  }
  if (L < 0 || (L == 0 && stacked.rows() != 0) || (L > 0 && stacked.rows() % L != 0)) {
    throw std::invalid_argument(
        "BatchForward: " + std::to_string(stacked.rows()) +
        " stacked rows are not a whole number of sequences of L = " + std::to_string(L));
  }
  BatchForwardResult result;
  result.L = L;
  result.output.resize(stacked.rows(), n_);
  if (options_.keep_bos_mass) result.bos_mass.resize(stacked.rows(), heads_);
  const long batch = L == 0 ? 0 : stacked.rows() / L;
  if (batch == 0) return result;

  internal::BatchKernelArgs args;
  args.x = stacked.data();
  args.x_ld = stacked.rows();
  args.batch = batch;
  args.L = L;
  args.n = n_;
  args.heads = heads_;
  args.a_cat = a_cat_.data();
  args.m_cat = m_cat_.data();
  args.out = result.output.data();
  args.out_ld = result.output.rows();
  if (options_.keep_bos_mass) {
    args.bos = result.bos_mass.data();
    args.bos_ld = result.bos_mass.rows();
  }

  auto* kernel = &internal::baseline::batch_kernel;
#ifdef SINKCERT_HAVE_AVX2_KERNEL
  if (!options_.force_baseline && avx2_available()) {
    kernel = &internal::avx2::batch_kernel;
    result.used_avx2 = true;
  }
#endif

  const long chunks = (batch + internal::kLanes - 1) / internal::kLanes;
  long threads = options_.threads > 0 ? options_.threads
                                      : static_cast<long>(std::thread::hardware_concurrency());
  threads = std::clamp(threads, 1L, chunks);
  result.threads_used = static_cast<int>(threads);
  // thread t takes chunks [t chunks / T, (t + 1) chunks / T)
  std::vector<std::exception_ptr> errors(threads);
  auto work = [&](long t) {
    try {
      kernel(args, t * chunks / threads, (t + 1) * chunks / threads);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  for (long t = 1; t < threads; ++t) workers.emplace_back(work, t);
  work(0);
  for (auto& w : workers) w.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return result;
}

BatchForwardResult batch_forward(const Model<double>& model,
                                 const std::vector<Matrix<double>>& inputs,
                                 BatchForwardOptions options) {
  return BatchForward(model, options).run(inputs);
}

}  // namespace sinkcert
