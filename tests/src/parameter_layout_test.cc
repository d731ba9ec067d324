// SPDX-License-Identifier: MIT
//
// The theta layout (src/parameter_layout.h) and the content layout
// (src/task.h), each pinned by explicit indices and round trips.
#include "src/parameter_layout.h"

#include <doctest/doctest.h>

#include "src/task.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

TEST_CASE("theta: A row-major then M row-major per head, heads in (layer, head) order") {
  const int n = 3;
  const Model<double> m =
      testing::random_model(n, AttentionKind::kSoftmax, 1.0, 4, 2, 2, ModelKind::kResidual);
  const Vector<double> theta = pack_theta(m);
  REQUIRE(theta.size() == 4 * head_parameter_count(n));
  CHECK(head_parameter_count(n) == 18);
  // head t = 2 l + h at offset 18 t: A[p, q] at p n + q, M[p, q] at 9 + p n + q
  for (int l = 0; l < 2; ++l) {
    for (int h = 0; h < 2; ++h) {
      const int offset = 18 * (2 * l + h);
      CHECK(theta(offset + 1 * n + 2) == m.layers[l][h].A(1, 2));
      CHECK(theta(offset + 2 * n + 1) == m.layers[l][h].A(2, 1));
      CHECK(theta(offset + 9 + 0 * n + 2) == m.layers[l][h].M(0, 2));
    }
  }
  // round trip
  Model<double> back = m;
  for (auto& layer : back.layers)
    for (auto& head : layer) head.A.setZero(), head.M.setZero();
  unpack_theta(theta, back);
  for (int l = 0; l < 2; ++l) {
    for (int h = 0; h < 2; ++h) {
      CHECK(back.layers[l][h].A == m.layers[l][h].A);
      CHECK(back.layers[l][h].M == m.layers[l][h].M);
    }
  }
  // a theta of the wrong length is refused
  CHECK_THROWS_AS(unpack_theta(Vector<double>(theta.head(18)), back), std::invalid_argument);
  // one head: pack_head and unpack_head agree with the model packing
  std::vector<double> one(18);
  pack_head(m.layers[1][0], one.data());
  for (int t = 0; t < 18; ++t) CHECK(one[t] == theta(36 + t));
  const Head<double> h = unpack_head(one.data(), n);
  CHECK(h.A == m.layers[1][0].A);
  CHECK(h.M == m.layers[1][0].M);
  // and the transposed reading (column-major) would not match
  CHECK(unpack_row_major(one.data(), n) != m.layers[1][0].A.transpose());
}

TEST_CASE("content layout: C(k-1, c) = X(k, 2 + c), variable (k-1)(n-3) + c") {
  const Task task{6, 4, TriggerRange::kPaper};
  CHECK(content_variables(task) == 9);
  CHECK(content_variable(task, 1, 0) == 0);
  CHECK(content_variable(task, 2, 1) == 4);
  CHECK(content_variable(task, 3, 2) == 8);
  Matrix<double> C(3, 3);
  for (int k = 0; k < 3; ++k)
    for (int c = 0; c < 3; ++c) C(k, c) = 10 * (k + 1) + c;  // 10 k' + c, k' the position
  const Matrix<double> X = make_input<double>(task, 2, C);
  CHECK(X(2, kFirstContent + 1) == 21);
  CHECK(content_of(task, X) == C);
  const std::vector<double> flat = flatten_content(C);
  for (int k = 1; k < task.L; ++k)
    for (int c = 0; c < task.content_dim(); ++c)
      CHECK(flat[content_variable(task, k, c)] == 10 * k + c);
  CHECK(unflatten_content(task, flat) == C);
  // the flags are not content
  CHECK(content_of(task, X).cwiseAbs().minCoeff() >= 10);
}

}  // namespace
}  // namespace sinkcert
