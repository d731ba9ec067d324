// SPDX-License-Identifier: MIT
#include "search/least_squares_refiner.h"

#include <unsupported/Eigen/NonLinearOptimization>

#include <stdexcept>

#include "src/attention.h"

namespace sinkcert::search {

namespace {

// The residual functor in Eigen's NonLinearOptimization form. theta holds A
// then M, each row-major (A[p,q] at p n + q); residuals are ordered input by
// input, then position i, then coordinate d.
// theta = (A row-major, M row-major): A[p,q] at p n + q, M[p,q] at n^2 + p n + q.
template <class T>
Vector<T> theta_of(const Head<T>& head) {
  const Eigen::Index nn = head.A.size();
  Vector<T> theta(2 * nn);
  theta.head(nn) = head.A.transpose().reshaped();
  theta.tail(nn) = head.M.transpose().reshaped();
  return theta;
}

template <class T>
Head<T> head_of(const Vector<T>& theta, int n) {
  const Eigen::Index nn = static_cast<Eigen::Index>(n) * n;
  Head<T> head{theta.head(nn).reshaped(n, n).transpose(), theta.tail(nn).reshaped(n, n).transpose()};
  return head;
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
    const Head<T> head = head_of(theta, n);
    const Matrix<T>& A = head.A;
    const Matrix<T>& M = head.M;
    if (J) J->setZero(values(), inputs());
    std::vector<T> s(L), a(L);
    int row = 0;
    for (std::size_t x = 0; x < X_.size(); ++x) {
      const Matrix<T>& X = X_[x];
      // Z(k, d) = z_k[d] = (M x_k)_d
      const Matrix<T> Z = X * M.transpose();
      for (int i = 0; i < L; ++i, row += n) {
        // s_ik = x_i^T A x_k
        const Vector<T> q = A.transpose() * X.row(i).transpose();
        for (int k = 0; k <= i; ++k) s[k] = q.dot(X.row(k));
        attention_row(AttentionKind::kSoftmax, i, s.data(), a.data());
        // V_i = sum_k a_ik x_k,  f_i = M V_i = sum_k a_ik z_k
        Vector<T> V = Vector<T>::Constant(n, T(0));
        for (int k = 0; k <= i; ++k) V += a[k] * X.row(k).transpose();
        const Vector<T> f = M * V;
        for (int d = 0; d < n; ++d) r(row + d) = f(d) - Y_[x](i, d);
        if (!J) continue;
        // G_i[d, q] = sum_k a_ik (z_k[d] - f_i[d]) x_k[q]
        Matrix<T> G = Matrix<T>::Constant(n, n, T(0));
        for (int k = 0; k <= i; ++k) {
          for (int d = 0; d < n; ++d) {
            const T g = a[k] * (Z(k, d) - f(d));
            for (int qq = 0; qq < n; ++qq) G(d, qq) += g * X(k, qq);
          }
        }
        for (int d = 0; d < n; ++d) {
          // dr_{i,d}/dA[p,q] = x_i[p] G_i[d,q]
          for (int p = 0; p < n; ++p) {
            if (X(i, p) == T(0)) continue;
            for (int qq = 0; qq < n; ++qq) (*J)(row + d, p * n + qq) = X(i, p) * G(d, qq);
          }
          // dr_{i,d}/dM[d,e] = V_i[e]
          for (int e = 0; e < n; ++e) (*J)(row + d, nn + d * n + e) = V(e);
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
  if (model.kind != ModelKind::kSingleLayer || model.num_layers() != 1 ||
      model.num_heads() != 1 || model.attention != AttentionKind::kSoftmax ||
      model.n != task.n) {
    throw std::invalid_argument(
        "least-squares refinement: needs a single-layer, single-head softmax model of dimension "
        "n = " + std::to_string(task.n));
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
        "least-squares refinement: " + std::to_string(functor.values()) +
        " residuals for " + std::to_string(functor.inputs()) +
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
  out.model.layers[0][0] = head_of(theta, task.n);
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
template RefineResult<Mpfr> refine_least_squares(
    const Model<Mpfr>&, const Task&, const std::vector<std::pair<int, Matrix<double>>>&,
    const RefineOptions&);

}  // namespace sinkcert::search
