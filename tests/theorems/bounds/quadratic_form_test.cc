// SPDX-License-Identifier: MIT
//
// The quadratic-form bounds (quadratic_form.h): the diagonal split holds at
// the box's vertices and random points, is reached to within a factor two,
// and its shift is the diagonal's half sum; the per-vertex joint bound of a
// quadratic and cubic part holds and is below the separate bounds, and
// reaches its value where they do not.
#include "theorems/bounds/quadratic_form.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "tests/theorems/bounds/symbolic_check.h"

namespace sinkcert::theorems::bounds {
namespace {

using testing_symbolic::box_points;
using testing_symbolic::quadratic_value;

TEST_CASE("the diagonal split bounds e^T X e about its shift, is reached, and its shift is exact") {
  PrecisionScope scope(200);
  std::mt19937_64 eng(5);
  std::normal_distribution<double> g(0.0, 1.0);
  constexpr int V = 5;
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> X(V * V);
    for (double& x : X) x = g(eng);
    const DiagonalSplit split = diagonal_split(X, V);
    Mpfr exact_shift(0);
    for (int a = 0; a < V; ++a) exact_shift += Mpfr(X[a * V + a]) / 2;
    CHECK(abs(Mpfr(split.shift) - exact_shift) <= Mpfr(split.shift_error));
    double reached = 0.0;
    for (const std::vector<double>& e : box_points(V, 200, eng)) {
      const Mpfr rest = abs(quadratic_value(X, V, e) - Mpfr(split.shift));
      CHECK(rest <= Mpfr(split.bound));
      reached = std::max(reached, rest.convert_to<double>());
    }
    // the vertices reach at least half of it (the off-diagonal part's worst
    // sign pattern need not be a single vertex's; measured 0.56 at the least)
    constexpr double kReachedShare = 0.5;
    CHECK(reached >= kReachedShare * split.bound);
  }
  // a positive diagonal: at every vertex e^T X e = 2 shift, so |rest| = bound
  const std::vector<double> D{3.0, 0.0, 0.0, 5.0};
  const DiagonalSplit d = diagonal_split(D, 2);
  CHECK(d.shift == 4.0);
  // the bound's raise for rounding: (V^2 + 2) 2u relative, far below 1e-14
  constexpr double kRaise = 1e-14;
  CHECK(d.bound == doctest::Approx(4.0).epsilon(kRaise));
  // the shift's error counts the diagonal's magnitude, not its sum
  const std::vector<double> cancel{1e16, 0.0, 0.0, -1e16 + 2.0};
  CHECK(diagonal_split(cancel, 2).shift_error >= 1.0);
}

TEST_CASE("the quadratic and cubic parts per vertex: below the separate bounds, and reached") {
  PrecisionScope scope(200);
  std::mt19937_64 eng(9);
  std::normal_distribution<double> g(0.0, 1.0);
  // V = 5 symbols; the cubic parts' symbols are 3 and 4
  constexpr int V = 5;
  const std::vector<int> symbols{3, 4};
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> Qd(V * V);
    for (double& x : Qd) x = g(eng);
    std::vector<std::vector<double>> Cs(2, std::vector<double>(V * V));
    for (auto& C : Cs) {
      for (double& x : C) x = g(eng);
    }
    const double joint = vertex_split_bound(Qd, Cs, V);
    double separate = diagonal_split(Qd, V).bound;
    for (const auto& C : Cs) separate += diagonal_split(C, V).bound;
    // the separate bounds' sum, up to the joint bound's rounding raise:
    // 2 (2^M + M + 2) u = 16 u, about 2e-15, times the coefficients' absolute
    // sum, which is within a small multiple of the bound here
    constexpr double kRoundingShare = 1e-12;
    CHECK(joint <= separate * (1 + kRoundingShare));
    for (const std::vector<double>& e : box_points(V, 200, eng)) {
      Mpfr value = quadratic_value(Qd, V, e), shift(0);
      for (int a = 0; a < V; ++a) shift += Mpfr(Qd[a * V + a]) / 2;
      for (int m = 0; m < 2; ++m) {
        value += Mpfr(e[symbols[m]]) * quadratic_value(Cs[m], V, e);
        for (int a = 0; a < V; ++a) shift += Mpfr(e[symbols[m]]) * Mpfr(Cs[m][a * V + a]) / 2;
      }
      CHECK(abs(value - shift) <= Mpfr(joint));
    }
  }
  // (1 + e_4) e_0 e_1 + (1 - e_4) e_2 e_3: 2 at e = (1, 1, 1, 1, any), while
  // the separate bounds add to 4
  std::vector<double> Qd(V * V, 0.0), C(V * V, 0.0);
  Qd[0 * V + 1] = Qd[2 * V + 3] = 1.0;
  C[0 * V + 1] = 1.0;
  C[2 * V + 3] = -1.0;
  const double joint = vertex_split_bound(Qd, {C}, V);
  CHECK(joint >= 2.0);
  // the joint bound's raise for rounding: 2 (2^1 + 1 + 2) u = 10 u times the
  // coefficients' absolute sum 4, about 5e-15 relative to 2
  constexpr double kJointRaise = 1e-12;
  CHECK(joint == doctest::Approx(2.0).epsilon(kJointRaise));
  CHECK(diagonal_split(Qd, V).bound + diagonal_split(C, V).bound ==
        doctest::Approx(4.0).epsilon(kJointRaise));
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
