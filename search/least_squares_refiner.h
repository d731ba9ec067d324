// SPDX-License-Identifier: MIT
//
// Least-squares refinement of a single-layer softmax model in any precision:
// Levenberg-Marquardt (Eigen's MINPACK port, unsupported/NonLinearOptimization)
// over theta = (A, M) on a fixed input set, in the scalar type T.
//
//   min_theta  sum_{X in S} sum_{i,d} r_{X,i,d}(theta)^2,
//   r_{X,i,d} = f_theta(X)_{i,d} - y_{i,d},
//   f(X)_i = M sum_{k<=i} a_ik x_k,  a_ik = softmax_k(s_ik),  s_ik = x_i^T A x_k.
//
// Jacobian (analytic, in T): row (i, d) is the reverse pass of the forward
// pass (src/forward_vjp.h) with cotangent e_d on f(X)_i:
//   dr_{i,d}/dM[d,e] = V_i[e],                 V_i = sum_k a_ik x_k
//   dr_{i,d}/dA[p,q] = x_i[p] w[q],            w = sum_k a_ik (z_k - sum_m a_im z_m) x_k
//   with z_k = M[d, :] . x_k; theta packed as src/parameter_layout.h says.
//
// Why: a double search stalls near 1e-11 (the content-dependent entries of A
// in the trigger row are fitted only to ~1e-16, and scaling A to sharpen the
// sink amplifies them). Re-solving the active-set problem in MPFR removes
// them to the working precision, so the path A -> s A can follow the loss far
// below double precision. The result is a NUMERIC(p) model;
// what it achieves is then certified separately in MPFI.
#pragma once

#include <utility>
#include <vector>

#include "src/model.h"
#include "src/task.h"

namespace sinkcert::search {

struct RefineOptions {
  int max_evaluations = 40;  // residual evaluations (MINPACK maxfev)
};

template <class T>
struct RefineResult {
  Model<T> model;
  T start_max, final_max;  // max |r| over the input set before and after
  int evaluations = 0, iterations = 0;
  int status = 0;  // Eigen::LevenbergMarquardtSpace::Status
};

// The residuals r (ordered input, position i, coordinate d) of a
// single-layer, single-head softmax model at the inputs, and, when `jacobian`
// is given, dr/dtheta with theta = (A row-major, M row-major).
template <class T>
Vector<T> refine_residuals(const Model<T>& model, const Task& task,
                           const std::vector<std::pair<int, Matrix<double>>>& inputs,
                           Matrix<T>* jacobian = nullptr);

// The input set: (trigger j, content (L-1) x (n-3)). T must be in the
// current precision scope (Mpfr). Throws std::invalid_argument unless the
// model is single-layer, single-head softmax of dimension task.n.
template <class T>
RefineResult<T> refine_least_squares(const Model<T>& start, const Task& task,
                                     const std::vector<std::pair<int, Matrix<double>>>& inputs,
                                     const RefineOptions& options = {});

}  // namespace sinkcert::search
