// SPDX-License-Identifier: MIT
#include "theorems/bounds/quadratic_form.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "theorems/bounds/symbolic_form.h"

namespace sinkcert::theorems::bounds {

namespace {

// diagonal_split's tile: 32 x 32 doubles (8 KB) of the column it reads
constexpr int kSplitTile = 32;

}  // namespace

// diagonal_split and vertex_split_bound: the header states what they bound.

DiagonalSplit diagonal_split(const std::vector<double>& X, int V) {
  double diagonal = 0.0, diagonal_abs = 0.0;
  for (int a = 0; a < V; ++a) {
    const double x = X[static_cast<std::size_t>(a) * V + a];
    diagonal += 0.5 * x;
    diagonal_abs += 0.5 * std::fabs(x);
  }
  // sum_a |X_aa| / 2 + sum_{a<b} |X_ab + X_ba|, in tiles of kSplitTile rows
  // and columns (X_ba is read down a column, whose tile stays in cache) and
  // four running sums: the raise below bounds the roundings of a sum of
  // these terms in any order (no term passes through more than V^2 additions)
  const auto at = [&X, V](int a, int b) { return X[static_cast<std::size_t>(a) * V + b]; };
  double s0 = diagonal_abs, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  for (int a0 = 0; a0 < V; a0 += kSplitTile) {
    const int a1 = std::min(V, a0 + kSplitTile);
    for (int b0 = a0; b0 < V; b0 += kSplitTile) {
      const int b1 = std::min(V, b0 + kSplitTile);
      for (int a = a0; a < a1; ++a) {
        int b = std::max(b0, a + 1);
        for (; b + 4 <= b1; b += 4) {
          s0 += std::fabs(at(a, b) + at(b, a));
          s1 += std::fabs(at(a, b + 1) + at(b + 1, a));
          s2 += std::fabs(at(a, b + 2) + at(b + 2, a));
          s3 += std::fabs(at(a, b + 3) + at(b + 3, a));
        }
        for (; b < b1; ++b) s0 += std::fabs(at(a, b) + at(b, a));
      }
    }
  }
  const double sum = (s0 + s1) + (s2 + s3);
  const double raise = (static_cast<double>(V) * V + 2.0) * 2.0 * kUnitRoundoff;
  DiagonalSplit out;
  out.bound = add_up(mul_up(sum, 1.0 + raise), kTiny);
  out.shift = diagonal;
  out.shift_error =
      add_up(mul_up(mul_up(diagonal_abs, 1.0 + raise), (V + 1.0) * kUnitRoundoff), kTiny);
  return out;
}

double vertex_split_bound(const std::vector<double>& Qd, const std::vector<std::vector<double>>& Cs,
                          int V) {
  const int M = static_cast<int>(Cs.size());
  const std::size_t VV = static_cast<std::size_t>(V) * V;
  // B at the vertex lambda = (-1, ..., -1)
  std::vector<double> B = Qd;
  double S = 0.0;
  for (std::size_t t = 0; t < VV; ++t) S += std::fabs(Qd[t]);
  for (const std::vector<double>& C : Cs) {
    for (std::size_t t = 0; t < VV; ++t) {
      B[t] -= C[t];
      S += std::fabs(C[t]);
    }
  }
  std::vector<int> sign(M, -1);
  double worst = diagonal_split(B, V).bound;
  for (unsigned long step = 1; step < (1UL << M); ++step) {
    // Gray code: flip the symbol of the lowest set bit of step
    const int m = __builtin_ctzl(step);
    const double f = sign[m] < 0 ? 2.0 : -2.0;
    sign[m] = -sign[m];
    const std::vector<double>& C = Cs[m];
    for (std::size_t t = 0; t < VV; ++t) B[t] += f * C[t];
    worst = std::max(worst, diagonal_split(B, V).bound);
  }
  // S summed naively from (M + 1) VV terms: raised by ((M + 1) VV + 2) u
  const double roundings = std::ldexp(1.0, M) + M + 2.0;
  const double raise = ((M + 1.0) * static_cast<double>(VV) + 2.0) * kUnitRoundoff;
  return add_up(worst, mul_up(mul_up(S, 1.0 + raise), 2.0 * roundings * kUnitRoundoff));
}

}  // namespace sinkcert::theorems::bounds
