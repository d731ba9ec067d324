// SPDX-License-Identifier: MIT
#include "search/dense_kernel.h"

#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <vector>

#include "search/recipe_kernel.h"
#include "tests/test_util.h"

namespace sinkcert::search {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The kernels sum in blocked orders (the AVX2 one with fused multiply-adds)
// where the reference below sums in long double, row by row: with entries
// of order 1 and at most 300 terms the differences are a few ulps of the
// largest sum (measured below 1e-15 relative); kSameSums = 1e-13 leaves
// room while a missing or doubled term (order 1e-2 relative or more) fails.
constexpr double kSameSums = 1e-13;

std::vector<DenseIsa> runnable() {
  std::vector<DenseIsa> isas{DenseIsa::kBaseline};
  if (avx2_kernel_available()) isas.push_back(DenseIsa::kAvx2);
  return isas;
}

RowMatrix random_rows(int rows, int width, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  RowMatrix J(rows, width);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < width; ++j) J(i, j) = normal(gen);
  return J;
}

// Sets SINKCERT_DENSE_ISA for the scope of the object (unset: nullptr).
struct IsaVariable : testing::ScopedVariable {
  explicit IsaVariable(const char* value) : ScopedVariable("SINKCERT_DENSE_ISA", value) {}
};

TEST_CASE("gram adds J^T J to the upper triangle, J^T r and |r|^2, in every compilation") {
  // widths across the kernels' packet and block sizes, two chunks per call
  for (const int width : {1, 7, 33, 130}) {
    const RowMatrix J1 = random_rows(300, width, 1), J2 = random_rows(57, width, 2);
    const Eigen::VectorXd r1 = random_rows(300, 1, 3), r2 = random_rows(57, 1, 4);
    // reference in long double, over both chunks
    std::vector<long double> G(static_cast<std::size_t>(width) * width, 0), g(width, 0);
    long double S = 0;
    for (const auto& [J, r] : {std::pair{&J1, &r1}, std::pair{&J2, &r2}}) {
      for (int t = 0; t < J->rows(); ++t) {
        S += static_cast<long double>((*r)(t)) * (*r)(t);
        for (int a = 0; a < width; ++a) {
          g[a] += static_cast<long double>((*J)(t, a)) * (*r)(t);
          for (int b = a; b < width; ++b) {
            G[static_cast<std::size_t>(b) * width + a] +=
                static_cast<long double>((*J)(t, a)) * (*J)(t, b);
          }
        }
      }
    }
    for (const DenseIsa isa : runnable()) {
      CAPTURE(to_string(isa));
      CAPTURE(width);
      const DenseKernel& k = dense_kernel(isa);
      // the strict lower triangle starts at a marker the kernel must not touch
      Eigen::MatrixXd Gk = Eigen::MatrixXd::Constant(width, width, 7.0);
      Gk.triangularView<Eigen::Upper>().setZero();
      Eigen::VectorXd gk = Eigen::VectorXd::Zero(width);
      double Sk = 0;
      k.gram(Gk.data(), gk.data(), &Sk, J1.data(), r1.data(), 300, width);
      k.gram(Gk.data(), gk.data(), &Sk, J2.data(), r2.data(), 57, width);
      double scale = 0;
      for (long double v : G) scale = std::max(scale, std::abs(static_cast<double>(v)));
      for (int b = 0; b < width; ++b) {
        for (int a = 0; a < width; ++a) {
          if (a > b) {
            CHECK(Gk(a, b) == 7.0);
          } else {
            CHECK(std::abs(Gk(a, b) - static_cast<double>(G[b * width + a])) <= kSameSums * scale);
          }
        }
        CHECK(std::abs(gk(b) - static_cast<double>(g[b])) <= kSameSums * 300 * width);
      }
      CHECK(std::abs(Sk - static_cast<double>(S)) <= kSameSums * static_cast<double>(S));
    }
  }
}

TEST_CASE("cholesky factors a positive definite matrix, refuses an indefinite one, and solves") {
  const int size = 90;
  const RowMatrix B = random_rows(size, size, 5);
  const Eigen::MatrixXd C = B.transpose() * B + Eigen::MatrixXd::Identity(size, size);
  const Eigen::VectorXd b = random_rows(size, 1, 6);
  for (const DenseIsa isa : runnable()) {
    CAPTURE(to_string(isa));
    const DenseKernel& k = dense_kernel(isa);
    Eigen::MatrixXd F = C;
    REQUIRE(k.cholesky(F.data(), size));
    const Eigen::MatrixXd L = F.triangularView<Eigen::Lower>();
    // L L^T = C to a few ulps of |C| (kSameSums relative)
    CHECK((L * L.transpose() - C).cwiseAbs().maxCoeff() <= kSameSums * C.cwiseAbs().maxCoeff());
    Eigen::VectorXd y = b;
    k.lower_solve(F.data(), size, y.data());
    // L y = b
    CHECK((L * y - b).cwiseAbs().maxCoeff() <= kSameSums * 1e3);
    // an indefinite matrix: C with one negative direction
    Eigen::MatrixXd D = C;
    D(size / 2, size / 2) = -1.0;
    CHECK_FALSE(k.cholesky(D.data(), size));
  }
}

TEST_CASE("the compilations agree, and the choice is resolved or refused with its reason") {
  CHECK(parse_dense_isa("baseline") == DenseIsa::kBaseline);
  CHECK(parse_dense_isa("avx2") == DenseIsa::kAvx2);
  CHECK(parse_dense_isa("avx2+fma") == DenseIsa::kAvx2);
  CHECK(parse_dense_isa("auto") == DenseIsa::kAuto);
  CHECK_THROWS_WITH_AS(parse_dense_isa("sse"), doctest::Contains("\"baseline\""),
                       std::invalid_argument);
  {
    IsaVariable v("neon");
    CHECK_THROWS_WITH_AS(resolve_dense_isa(DenseIsa::kAuto),
                         doctest::Contains("SINKCERT_DENSE_ISA"), std::invalid_argument);
  }
  {
    IsaVariable v("baseline");
    CHECK(resolve_dense_isa(DenseIsa::kAuto) == DenseIsa::kBaseline);
  }
  {
    IsaVariable v(nullptr);
    CHECK(resolve_dense_isa(DenseIsa::kAuto) ==
          (avx2_kernel_available() ? DenseIsa::kAvx2 : DenseIsa::kBaseline));
  }
  if (!avx2_kernel_available()) {
    CHECK_THROWS_AS(dense_kernel(DenseIsa::kAvx2), std::invalid_argument);
    return;
  }
  // the two compilations are different code (not one function twice) that
  // gives the same sums
  CHECK((dense_kernel(DenseIsa::kAvx2).gram != dense_kernel(DenseIsa::kBaseline).gram));
  const int width = 64;
  const RowMatrix J = random_rows(256, width, 8);
  const Eigen::VectorXd r = random_rows(256, 1, 9);
  Eigen::MatrixXd G[2];
  Eigen::VectorXd g[2];
  double S[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    G[k] = Eigen::MatrixXd::Zero(width, width);
    g[k] = Eigen::VectorXd::Zero(width);
    dense_kernel(k == 0 ? DenseIsa::kBaseline : DenseIsa::kAvx2)
        .gram(G[k].data(), g[k].data(), &S[k], J.data(), r.data(), 256, width);
  }
  CHECK((G[0] - G[1]).cwiseAbs().maxCoeff() <= kSameSums * G[0].cwiseAbs().maxCoeff());
  CHECK((g[0] - g[1]).cwiseAbs().maxCoeff() <= kSameSums * g[0].cwiseAbs().maxCoeff());
}

}  // namespace
}  // namespace sinkcert::search
