// SPDX-License-Identifier: MIT
//
// Checks shared by the tests of the symbolic forms through the layers: the
// content at the forms' symbols, and how far outside its form phi falls at
// sampled points (vertices among them); and, for the quadratic-form bounds,
// e^T X e in MPFR and the points of [-1, 1]^V they must hold at.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "src/forward.h"
#include "tests/test_util.h"
#include "theorems/bounds/symbolic_form.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::theorems::bounds::testing_symbolic {

// The content at eps: x_m = centre_m + radius_m eps_m, as the forms' variables.
inline std::vector<double> content_at(const ContentBox& box, const std::vector<double>& eps) {
  std::vector<double> x(eps.size());
  for (std::size_t m = 0; m < x.size(); ++m) {
    const double c = 0.5 * (box.lo[m] + box.hi[m]);
    x[m] = std::clamp(c + (box.hi[m] - c) * eps[m], box.lo[m], box.hi[m]);
  }
  return x;
}

// max over samples and terms of |phi(x(eps)) - (c + g . eps)| - r - sum of
// the fresh symbols' |g| (at most the double rounding of phi: sound at the
// samples), vertices among the samples.
inline double worst_excess(const Model<double>& m, const Task& task, const ContentBox& box,
                           const std::vector<bounds::SymbolicForm>& phi, int samples) {
  std::mt19937_64 eng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int vars = static_cast<int>(box.lo.size());
  double worst = -INFINITY;
  for (int s = 0; s < samples; ++s) {
    std::vector<double> eps(vars);
    for (double& e : eps) e = s % 2 == 0 ? (u(eng) < 0 ? -1.0 : 1.0) : u(eng);
    const std::vector<double> x = content_at(box, eps);
    // eps of the clamped point (the same unless an end rounded)
    for (int v = 0; v < vars; ++v) {
      const double c = 0.5 * (box.lo[v] + box.hi[v]), h = box.hi[v] - c;
      eps[v] = h > 0 ? (x[v] - c) / h : 0.0;
    }
    const Matrix<double> X = make_input<double>(task, box.trigger, unflatten_content(task, x));
    const Matrix<double> e =
        forward(m, X, false).output - make_target(X, box.trigger, TargetKind::kResidual);
    for (int i = 0; i < task.L; ++i) {
      for (int d = 0; d < task.n; ++d) {
        const SymbolicForm& f = phi[i * task.n + d];
        double lin = f.c, fresh = 0;
        for (std::size_t v = 0; v < f.g.size(); ++v) {
          if (v < eps.size()) {
            lin += f.g[v] * eps[v];
          } else {
            fresh += std::fabs(f.g[v]);
          }
        }
        worst = std::max(worst, std::fabs(e(i, d) - lin) - f.r - fresh);
      }
    }
  }
  return worst;
}

// A box of the given width in every variable, at one of four offsets.
inline ContentBox random_box(const Task& task, std::mt19937_64& eng, int trigger, double width) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  ContentBox box = full_content_box(task, trigger);
  for (std::size_t v = 0; v < box.lo.size(); ++v) {
    box.lo[v] = -1.0 + (2.0 - width) * std::floor(u(eng) * 4) / 4;
    box.hi[v] = box.lo[v] + width;
  }
  return box;
}

// The largest sup |phi_{i,d}| the forms give.
inline double form_sup(const std::vector<bounds::SymbolicForm>& phi) {
  double worst = 0.0;
  for (const SymbolicForm& f : phi) {
    const SymbolicRange r = symbolic_range(f);
    worst = std::max({worst, std::fabs(r.lo), std::fabs(r.hi)});
  }
  return worst;
}

// e^T X e for a row-major V x V matrix X, in MPFR at 200 bits (exact for the
// small integers and dyadic points below, and within 2^-190 otherwise).
inline Mpfr quadratic_value(const std::vector<double>& X, int V, const std::vector<double>& e) {
  Mpfr s(0);
  for (int a = 0; a < V; ++a) {
    for (int b = 0; b < V; ++b) s += Mpfr(X[a * V + b]) * Mpfr(e[a]) * Mpfr(e[b]);
  }
  return s;
}

// The points of [-1, 1]^V a split must hold at: every vertex, the centre,
// then random points.
inline std::vector<std::vector<double>> box_points(int V, int random, std::mt19937_64& eng) {
  return testing::box_sample_points(std::vector<double>(V, -1.0), std::vector<double>(V, 1.0),
                                    random, eng);
}

}  // namespace sinkcert::theorems::bounds::testing_symbolic
