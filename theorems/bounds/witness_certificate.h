// SPDX-License-Identifier: MIT
//
// Certification at a witness set: for inputs W = {(j, C)} (a trigger and
// its content), the CERTIFIED enclosures of
//   max_W e(X)                                   (the loss at the witnesses)
//   max_W max_{i >= 1, i != j, heads} (1 - a_i0)  (the largest BOS deficit)
// computed in MPFI at adaptive precision (src/certified_eval.h). The model's
// entries are enclosed exactly once the precision holds them. A value at a
// witness is a LOWER bound on the worst case over the whole box, certified.
// The default witness set is the two constant vertices per trigger (content
// all +1 and all -1), where every model whose scores read flags only attains
// its worst case (theorems/studies/precision_tables.h says why).
#pragma once

#include <utility>
#include <vector>

#include "src/certified_eval.h"
#include "src/forward.h"
#include "src/linf_error.h"
#include "src/model.h"
#include "src/scalar_traits.h"
#include "src/task.h"

namespace sinkcert::theorems::bounds {

namespace detail {

template <class T>
Matrix<T> cast_matrix(const Matrix<double>& X) {
  return X.unaryExpr([](double v) { return T(v); });
}

}  // namespace detail

// max_W e(X) and max_W max_{i >= 1, i != j} (1 - a_i0) for a model in T.
template <class T>
std::pair<T, T> witness_values(const Model<T>& model, const Task& task,
                               const std::vector<std::pair<int, Matrix<double>>>& witnesses) {
  T loss(0), deficit(0);
  bool first = true;
  for (const auto& [j, C] : witnesses) {
    const Matrix<T> X = make_input<T>(task, j, detail::cast_matrix<T>(C));
    const auto r = forward(model, X);
    const Matrix<T> Y = make_target(X, j, target_kind_of(model.kind));
    const T e = linf_error(r.output, Y).value;
    loss = first ? e : max_of(loss, e);
    for (const auto& layer : r.attention) {
      for (const auto& a : layer) {
        for (int i = 1; i < task.L; ++i) {
          if (i == j) continue;
          // 1 - a_i0
          const T d = T(1) - a(i, 0);
          deficit = first ? d : max_of(deficit, d);
          first = false;
        }
      }
    }
    first = false;
  }
  return {loss, deficit};
}

// The witness set W: per trigger of the task, content all +1 and all -1.
std::vector<std::pair<int, Matrix<double>>> vertex_witnesses(const Task& task);

// Certified max over `witnesses` of e(X) and of 1 - a_i0 (non-trigger
// i >= 1, every head), at adaptive precision (options.digits).
struct WitnessCertificate {
  Mpfi loss, deficit;
  int bits = 0, digits = 0;
  bool reached = false;
};
WitnessCertificate certify_witnesses(const Model<double>& model, const Task& task,
                                     const std::vector<std::pair<int, Matrix<double>>>& witnesses,
                                     const AdaptiveOptions& options);
// The same for a model beyond double (theorems/studies/refined_path.h).
WitnessCertificate certify_witnesses(const Model<Mpfr>& model, const Task& task,
                                     const std::vector<std::pair<int, Matrix<double>>>& witnesses,
                                     const AdaptiveOptions& options);
WitnessCertificate certify_witnesses(const Model<Rational>& model, const Task& task,
                                     const std::vector<std::pair<int, Matrix<double>>>& witnesses,
                                     const AdaptiveOptions& options);

}  // namespace sinkcert::theorems::bounds
