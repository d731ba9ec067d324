// SPDX-License-Identifier: MIT
#include "search/paper_recipe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "src/forward_vjp.h"

namespace sinkcert::search {

namespace {

// PyTorch's Adam defaults.
constexpr double kBeta1 = 0.9;
constexpr double kBeta2 = 0.999;
constexpr double kAdamEps = 1e-8;
// The paper's init scale.
constexpr double kInitStd = 0.02;

struct Adam {
  Matrix<double> m, v;
  void step(Matrix<double>& w, const Matrix<double>& g, double lr, long t) {
    if (m.size() == 0) {
      m = Matrix<double>::Zero(w.rows(), w.cols());
      v = m;
    }
    // m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
    m = kBeta1 * m + (1 - kBeta1) * g;
    v = kBeta2 * v + (1 - kBeta2) * g.cwiseProduct(g);
    // w -= lr mhat / (sqrt(vhat) + eps)
    const double c1 = 1 - std::pow(kBeta1, t), c2 = 1 - std::pow(kBeta2, t);
    w.array() -= lr * (m.array() / c1) / ((v.array() / c2).sqrt() + kAdamEps);
  }
};

}  // namespace

double mse_and_gradient(const Model<double>& model, const std::vector<Sample>& samples,
                        Matrix<double>* gA, Matrix<double>* gM, double* max_abs) {
  const int n = model.n;
  gA->setZero(n, n);
  gM->setZero(n, n);
  double sum = 0, worst = 0;
  long count = 0;
  for (const Sample& s : samples) {
    // r = f(X) - y
    const ForwardTape<double> tape = forward_tape(model, s.X);
    const Matrix<double> r = tape.output - make_target(s.X, s.trigger, TargetKind::kPlain);
    sum += r.squaredNorm();
    worst = std::max(worst, r.cwiseAbs().maxCoeff());
    count += r.size();
    // d(sum r^2 / 2)/d(A, M): the reverse pass with cotangent r
    const ForwardGradient<double> g = forward_vjp(model, tape, r, nullptr, /*weights=*/true);
    *gA += g.dheads[0][0].A;
    *gM += g.dheads[0][0].M;
  }
  // l = sum r^2 / count: dl = (2 / count) sum r dr
  *gA *= 2.0 / count;
  *gM *= 2.0 / count;
  if (max_abs) *max_abs = worst;
  return sum / count;
}

PaperRecipeResult train_paper_recipe(const Task& task, const PaperRecipeOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const int n = task.n;
  std::mt19937_64 eng(o.seed);
  std::normal_distribution<double> normal(0.0, kInitStd);
  Matrix<double> WQ(n, n), WK(n, n), WV(n, n), WO(n, n);
  for (Matrix<double>* W : {&WQ, &WK, &WV, &WO})
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) (*W)(r, c) = normal(eng);
  Adam aq, ak, av, ao;
  TaskSampler sampler(task, o.seed);
  PaperRecipeResult res;
  std::vector<Sample> batch(o.batch);
  Matrix<double> gA, gM;
  for (long t = 1; t <= o.max_steps; ++t) {
    for (Sample& s : batch) s = sampler.next();
    // A = W_Q^T W_K, M = W_O W_V
    const Model<double> m =
        single_head_model<double>(AttentionKind::kSoftmax, WQ.transpose() * WK, WO * WV);
    double linf = 0;
    res.final_batch_mse = mse_and_gradient(m, batch, &gA, &gM, &linf);
    res.final_batch_linf = linf;
    res.steps = t;
    res.model = m;
    if (linf < o.stop_linf) {
      res.reached = true;
      break;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >
        o.time_limit_seconds) {
      break;
    }
    const Matrix<double> gQ = WK * gA.transpose(), gK = WQ * gA;
    const Matrix<double> gO = gM * WV.transpose(), gV = WO.transpose() * gM;
    aq.step(WQ, gQ, o.lr, t);
    ak.step(WK, gK, o.lr, t);
    ao.step(WO, gO, o.lr, t);
    av.step(WV, gV, o.lr, t);
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace sinkcert::search
