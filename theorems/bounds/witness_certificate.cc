// SPDX-License-Identifier: MIT
#include "theorems/bounds/witness_certificate.h"

namespace sinkcert::theorems::bounds {

std::vector<std::pair<int, Matrix<double>>> vertex_witnesses(const Task& task) {
  std::vector<std::pair<int, Matrix<double>>> out;
  for (int j : task.trigger_positions()) {
    for (double v : {1.0, -1.0}) {
      out.emplace_back(j, Matrix<double>::Constant(task.L - 1, task.content_dim(), v));
    }
  }
  return out;
}

namespace {

// T = double or Mpfr: the model's entries are enclosed in MPFI at each
// precision tried (exactly once it holds them).
template <class T>
WitnessCertificate certify_witnesses_of(
    const Model<T>& model, const Task& task,
    const std::vector<std::pair<int, Matrix<double>>>& witnesses, const AdaptiveOptions& options) {
  WitnessCertificate out;
  const AdaptiveResult r = certify_adaptively(
      [&] {
        const auto [loss, deficit] = witness_values(model.template cast<Mpfi>(), task, witnesses);
        return std::vector<Mpfi>{loss, deficit};
      },
      options);
  out.loss = r.values[0];
  out.deficit = r.values[1];
  out.bits = r.bits;
  out.digits = r.digits;
  out.reached = r.reached;
  return out;
}

}  // namespace

WitnessCertificate certify_witnesses(const Model<double>& model, const Task& task,
                                     const std::vector<std::pair<int, Matrix<double>>>& witnesses,
                                     const AdaptiveOptions& options) {
  return certify_witnesses_of(model, task, witnesses, options);
}

WitnessCertificate certify_witnesses(const Model<Mpfr>& model, const Task& task,
                                     const std::vector<std::pair<int, Matrix<double>>>& witnesses,
                                     const AdaptiveOptions& options) {
  return certify_witnesses_of(model, task, witnesses, options);
}

WitnessCertificate certify_witnesses(const Model<Rational>& model, const Task& task,
                                     const std::vector<std::pair<int, Matrix<double>>>& witnesses,
                                     const AdaptiveOptions& options) {
  return certify_witnesses_of(model, task, witnesses, options);
}

}  // namespace sinkcert::theorems::bounds
