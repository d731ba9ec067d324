// SPDX-License-Identifier: MIT
#include "search/least_squares_refiner.h"

#include <stdexcept>
#include <unsupported/Eigen/NonLinearOptimization>

#include "src/forward_vjp.h"
#include "src/parameter_layout.h"

namespace sinkcert::search {

namespace {

// The residual functor in Eigen's NonLinearOptimization form. theta is the
// head packed as src/parameter_layout.h says (A row-major, then M
// row-major); residuals are ordered input by input, then position i, then
// coordinate d.
template <class T>
Vector<T> theta_of(const Head<T>& head) {
  Vector<T> theta(head_parameter_count(static_cast<int>(head.A.rows())));
  pack_head(head, theta.data());
  return theta;
}

template <class T>
class ResidualFunctor {
 public:
  using Scalar = T;
  enum { InputsAtCompileTime = Eigen::Dynamic, ValuesAtCompileTime = Eigen::Dynamic };
  using InputType = Vector<T>;
  using ValueType = Vector<T>;
  using JacobianType = Matrix<T>;

  ResidualFunctor(const Task& task, const std::vector<Matrix<T>>& X,
                  const std::vector<Matrix<T>>& Y)
      : task_(task), X_(X), Y_(Y) {}

  int inputs() const { return 2 * task_.n * task_.n; }
  int values() const { return static_cast<int>(X_.size()) * task_.L * task_.n; }

  int operator()(const Vector<T>& theta, Vector<T>& r) const {
    evaluate(theta, r, nullptr);
    return 0;
  }
  int df(const Vector<T>& theta, Matrix<T>& J) const {
    Vector<T> r(values());
    evaluate(theta, r, &J);
    return 0;
  }

 private:
  void evaluate(const Vector<T>& theta, Vector<T>& r, Matrix<T>* J) const {
    const int n = task_.n, L = task_.L, nn = n * n;
    const Head<T> head = unpack_head(theta.data(), n);
    if (J) J->setZero(values(), inputs());
    Matrix<T> dA(n, n), dM(n, n);
    std::vector<T> packed(2 * nn);
    int row = 0;
    for (std::size_t x = 0; x < X_.size(); ++x) {
      const Matrix<T>& X = X_[x];
      for (int i = 0; i < L; ++i, row += n) {
        const HeadRow<T> taped = head_row_forward(AttentionKind::kSoftmax, head, X, i);
        // f_i = M V_i
        const Vector<T> f = matrix_product(head.M, taped.mixed);
        for (int d = 0; d < n; ++d) r(row + d) = f(d) - Y_[x](i, d);
        if (!J) continue;
        // row (i, d) of the Jacobian: the reverse pass with cotangent e_d on
        // f_i, all d at once: dr/dA = x_i w_d^T, dr/dM = e_d V_i^T
        const Matrix<T> W = head_row_output_jacobian(AttentionKind::kSoftmax, head.M, X, taped, &f);
        for (int d = 0; d < n; ++d) {
          dA.setConstant(T(0));
          dM.setConstant(T(0));
          for (int p = 0; p < n; ++p) {
            if (X(i, p) == T(0)) continue;
            for (int q = 0; q < n; ++q) dA(p, q) = X(i, p) * W(d, q);
          }
          dM.row(d) = taped.mixed.transpose();
          pack_row_major(dA, packed.data());
          pack_row_major(dM, packed.data() + nn);
          for (int t = 0; t < 2 * nn; ++t) (*J)(row + d, t) = packed[t];
        }
      }
    }
  }

  const Task& task_;
  const std::vector<Matrix<T>>& X_;
  const std::vector<Matrix<T>>& Y_;
};

template <class T>
void check_model(const Model<T>& model, const Task& task) {
  if (model.kind != ModelKind::kSingleLayer || model.num_layers() != 1 || model.num_heads() != 1 ||
      model.attention != AttentionKind::kSoftmax || model.n != task.n) {
    throw std::invalid_argument(
        "least-squares refinement: needs a single-layer, single-head softmax model of dimension "
        "n = " +
        std::to_string(task.n));
  }
}

template <class T>
void build_inputs(const Task& task, const std::vector<std::pair<int, Matrix<double>>>& inputs,
                  std::vector<Matrix<T>>& X, std::vector<Matrix<T>>& Y) {
  for (const auto& [j, C] : inputs) {
    X.push_back(make_input<T>(task, j, Matrix<T>(C.template cast<T>())));
    Y.push_back(make_target(X.back(), j, TargetKind::kPlain));
  }
}

template <class T>
T max_abs(const Vector<T>& v) {
  T m = T(0);
  for (Eigen::Index t = 0; t < v.size(); ++t) m = max_of(m, abs_of(v(t)));
  return m;
}

}  // namespace

template <class T>
Vector<T> refine_residuals(const Model<T>& model, const Task& task,
                           const std::vector<std::pair<int, Matrix<double>>>& inputs,
                           Matrix<T>* jacobian) {
  check_model(model, task);
  std::vector<Matrix<T>> X, Y;
  build_inputs(task, inputs, X, Y);
  const ResidualFunctor<T> functor(task, X, Y);
  const Vector<T> theta = theta_of(model.layers[0][0]);
  Vector<T> r(functor.values());
  functor(theta, r);
  if (jacobian) functor.df(theta, *jacobian);
  return r;
}

template <class T>
RefineResult<T> refine_least_squares(const Model<T>& start, const Task& task,
                                     const std::vector<std::pair<int, Matrix<double>>>& inputs,
                                     const RefineOptions& options) {
  check_model(start, task);
  std::vector<Matrix<T>> X, Y;
  build_inputs(task, inputs, X, Y);
  ResidualFunctor<T> functor(task, X, Y);
  if (functor.values() < functor.inputs()) {
    throw std::invalid_argument(
        "least-squares refinement: " + std::to_string(functor.values()) + " residuals for " +
        std::to_string(functor.inputs()) +
        " parameters; give at least as many residuals (inputs x L x n) as parameters (2 n^2)");
  }
  Vector<T> theta = theta_of(start.layers[0][0]);
  RefineResult<T> out;
  Vector<T> r(functor.values());
  functor(theta, r);
  out.start_max = max_abs(r);

  Eigen::LevenbergMarquardt<ResidualFunctor<T>, T> lm(functor);
  lm.parameters.maxfev = options.max_evaluations;
  // Tolerances 0: stop on the evaluation budget or when a step cannot
  // reduce the sum of squares at the working precision (MINPACK's own
  // epsilon tests), never on a relative tolerance that a sink's slow
  // exp(-scale) decrease would trip.
  lm.parameters.ftol = T(0);
  lm.parameters.xtol = T(0);
  lm.parameters.gtol = T(0);
  out.status = static_cast<int>(lm.minimize(theta));
  out.evaluations = static_cast<int>(lm.nfev);
  out.iterations = static_cast<int>(lm.iter);

  functor(theta, r);
  out.final_max = max_abs(r);
  out.model = start;
  out.model.layers[0][0] = unpack_head(theta.data(), task.n);
  return out;
}

template Vector<double> refine_residuals(const Model<double>&, const Task&,
                                         const std::vector<std::pair<int, Matrix<double>>>&,
                                         Matrix<double>*);
template Vector<Mpfr> refine_residuals(const Model<Mpfr>&, const Task&,
                                       const std::vector<std::pair<int, Matrix<double>>>&,
                                       Matrix<Mpfr>*);
template RefineResult<double> refine_least_squares(
    const Model<double>&, const Task&, const std::vector<std::pair<int, Matrix<double>>>&,
    const RefineOptions&);
template RefineResult<Mpfr> refine_least_squares(const Model<Mpfr>&, const Task&,
                                                 const std::vector<std::pair<int, Matrix<double>>>&,
                                                 const RefineOptions&);

}  // namespace sinkcert::search
