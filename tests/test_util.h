// SPDX-License-Identifier: MIT
//
// Shared test utilities: relative-or-absolute comparison (NaN and inf aware)
// and random models.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "src/constructions.h"
#include "src/forward.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert::testing {

// A per-process scratch directory under the system temp dir, removed (with
// its contents) when the object is destroyed.
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

// Sets the environment variable `name` to `value` (nullptr: unset) for the
// scope of the object, and unsets it afterwards.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedVariable() { unsetenv(name_.c_str()); }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  std::string name_;
};

// |a - b| <= tol * max(1, |a|, |b|); NaN never matches; equal infinities match.
inline bool near(double a, double b, double tol) {
  if (std::isnan(a) || std::isnan(b)) return false;
  if (std::isinf(a) || std::isinf(b)) return a == b;
  const double scale = std::max({1.0, std::abs(a), std::abs(b)});
  return std::abs(a - b) <= tol * scale;
}

// An n x n matrix of i.i.d. normal(0, scale) entries, row by row (as
// score matrices A whose row-1 logits read the content).
inline Matrix<double> random_scores(int n, double scale, unsigned seed) {
  std::mt19937 eng(seed);
  std::normal_distribution<double> g(0.0, scale);
  Matrix<double> A(n, n);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) A(a, b) = g(eng);
  return A;
}

// A model (single-layer by default; `layers` x `heads`, residual when asked)
// with i.i.d. normal(0, std) entries of every A and M (and, for gated
// attention, of every gate G, drawn after A and M of its head).
inline Model<double> random_model(int n, AttentionKind kind, double std, std::uint64_t seed,
                                  int layers = 1, int heads = 1,
                                  ModelKind model_kind = ModelKind::kSingleLayer) {
  std::mt19937_64 eng(seed);
  std::normal_distribution<double> normal(0.0, std);
  Model<double> m;
  m.kind = model_kind;
  m.attention = kind;
  m.n = n;
  for (int l = 0; l < layers; ++l) {
    m.layers.emplace_back();
    for (int h = 0; h < heads; ++h) {
      Head<double> head{Matrix<double>(n, n), Matrix<double>(n, n)};
      for (int r = 0; r < n; ++r) {
        for (int c = 0; c < n; ++c) {
          head.A(r, c) = normal(eng);
          head.M(r, c) = normal(eng);
        }
      }
      if (kind == AttentionKind::kGated) {
        head.G = Matrix<double>(n, n);
        for (int t = 0; t < head.G.size(); ++t) head.G.data()[t] = normal(eng);
      }
      m.layers.back().push_back(head);
    }
  }
  return m;
}

// A 2 x 2 residual softmax model whose layer-0 heads nearly agree, the
// shape of the Theorem 2 path models' layer 0: head 1's A is head 0's plus
// a row-constant part d f^T (f the flags' indicator: f . x = 1 for every
// token, so no softmax row sees it) plus noise of std `noise`; its M is
// -M_0 + v f^T (the same value for every token) plus noise. Each head's
// output is far from affine in the content, their sum nearly constant.
// Entries of std 0.8 otherwise.
inline Model<double> twin_head_model(int n, double noise, std::uint64_t seed) {
  Model<double> m = random_model(n, AttentionKind::kSoftmax, 0.8, seed, 2, 2, ModelKind::kResidual);
  std::mt19937_64 eng(seed + 100);
  std::normal_distribution<double> g(0.0, 1.0);
  Vector<double> f = Vector<double>::Zero(n);
  f(kBosFlag) = f(kTriggerFlag) = f(ordinary_flag(n)) = 1.0;
  Vector<double> d(n), v(n);
  for (int e = 0; e < n; ++e) {
    d(e) = g(eng);
    v(e) = 0.3 * g(eng);
  }
  Head<double>& h0 = m.layers[0][0];
  Head<double>& h1 = m.layers[0][1];
  h1.A = h0.A + d * f.transpose();
  h1.M = -h0.M + v * f.transpose();
  for (int r = 0; r < n; ++r) {
    for (int e = 0; e < n; ++e) {
      h1.A(r, e) += noise * g(eng);
      h1.M(r, e) += noise * g(eng);
    }
  }
  return m;
}

// The ReLU construction with M = I + eps e_2 v^T, v_c = +1 (even content
// coordinate c), -1 (odd), eps = 1/8. At the trigger row the error in
// coordinate 2 is eps |(1/j) sum_{k<=j} v . c_k| <= eps (n - 3), with equality
// exactly at the vertices c_k = s v (one sign s for all k <= j); every other
// row outputs 0 = its target. At n = 7: worst case 1/2.
template <class T>
Model<T> perturbed_relu(int n) {
  Model<T> m = relu_construction<T>(n);
  for (int c = 0; c < n - 3; ++c) {
    m.layers[0][0].M(kFirstContent, kFirstContent + c) += (c % 2 == 0 ? T(1) : T(-1)) / T(8);
  }
  return m;
}

template <class U, class T>
Matrix<U> cast_matrix(const Matrix<T>& X) {
  return X.unaryExpr([](const T& x) { return U(x); });
}

// Calls visit(j, C) for every trigger position j of the task and every vertex
// C in {-1, +1}^((L-1) x (n-3)) of the content box: 2^((L-1)(n-3)) inputs per
// trigger (64 at n = 5, L = 4). Independent of the adversary, for tests that
// need the true worst vertex.
template <class Visit>
void for_each_content_vertex(const Task& task, Visit visit) {
  const int rows = task.L - 1, cols = task.content_dim(), bits = rows * cols;
  for (int j : task.trigger_positions()) {
    for (long mask = 0; mask < (1L << bits); ++mask) {
      Matrix<double> C(rows, cols);
      for (int p = 0; p < bits; ++p) C(p / cols, p % cols) = (mask >> p) & 1 ? 1.0 : -1.0;
      visit(j, C);
    }
  }
}

// The points a pointwise-enclosure test checks in the box [lo, hi]: every
// vertex (2^dim of them), the centre, then `random` uniform points.
inline std::vector<std::vector<double>> box_sample_points(const std::vector<double>& lo,
                                                          const std::vector<double>& hi, int random,
                                                          std::mt19937_64& eng) {
  const int dim = static_cast<int>(lo.size());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::vector<double>> out;
  for (long mask = 0; mask < (1L << dim); ++mask) {
    std::vector<double> p(dim);
    for (int v = 0; v < dim; ++v) p[v] = (mask >> v) & 1 ? hi[v] : lo[v];
    out.push_back(p);
  }
  for (int s = 0; s <= random; ++s) {
    std::vector<double> p(dim);
    for (int v = 0; v < dim; ++v) p[v] = lo[v] + (s == 0 ? 0.5 : u(eng)) * (hi[v] - lo[v]);
    out.push_back(p);
  }
  return out;
}

// max |a - b| / max |a| over every head's A and M of two lists of heads
// [l][h] (gradients, say).
inline double head_difference(const std::vector<std::vector<Head<double>>>& a,
                              const std::vector<std::vector<Head<double>>>& b) {
  double diff = 0, scale = 0;
  for (std::size_t l = 0; l < a.size(); ++l) {
    for (std::size_t h = 0; h < a[l].size(); ++h) {
      diff = std::max({diff, (a[l][h].A - b[l][h].A).cwiseAbs().maxCoeff(),
                       (a[l][h].M - b[l][h].M).cwiseAbs().maxCoeff()});
      scale = std::max({scale, a[l][h].A.cwiseAbs().maxCoeff(), a[l][h].M.cwiseAbs().maxCoeff()});
    }
  }
  return diff / scale;
}

// max |f(X) - y| over the grid with `points` values per content variable
// (the vertices among them) for trigger j: a lower bound on E_j.
inline double grid_max(const Model<double>& model, const Task& task, int j, int points) {
  const int vars = content_variables(task);
  std::vector<int> idx(vars, 0);
  double best = 0;
  for (;;) {
    std::vector<double> flat(vars);
    for (int v = 0; v < vars; ++v) flat[v] = -1.0 + 2.0 * idx[v] / (points - 1);
    const Matrix<double> X = make_input<double>(task, j, unflatten_content(task, flat));
    const Matrix<double> E =
        forward(model, X, false).output - make_target(X, j, TargetKind::kPlain);
    best = std::max(best, E.cwiseAbs().maxCoeff());
    int v = 0;
    while (v < vars && ++idx[v] == points) idx[v++] = 0;
    if (v == vars) break;
  }
  return best;
}

}  // namespace sinkcert::testing
