// SPDX-License-Identifier: MIT
#include "search/paper_recipe.h"

#include <doctest/doctest.h>

#include "tests/test_util.h"

namespace sinkcert::search {
namespace {

using testing::near;
using testing::random_model;

// Central differences with step kStep have truncation error O(kStep^2 f''')
// ~ 1e-10 and rounding error O(eps / kStep) ~ 1e-11 on an O(1) loss; the
// comparison allows kFiniteDifference relative-or-absolute.
constexpr double kStep = 1e-5;
constexpr double kFiniteDifference = 1e-7;

TEST_CASE("the MSE gradient matches central differences") {
  const Task task{5, 4, TriggerRange::kPaper};
  Model<double> m = random_model(task.n, AttentionKind::kSoftmax, 0.5, 2);
  TaskSampler sampler(task, 3);
  std::vector<Sample> batch;
  for (int s = 0; s < 4; ++s) batch.push_back(sampler.next());
  Matrix<double> gA, gM, tmpA, tmpM;
  mse_and_gradient(m, batch, &gA, &gM);
  for (int which = 0; which < 2; ++which) {
    for (int r = 0; r < task.n; ++r) {
      for (int c = 0; c < task.n; ++c) {
        Model<double> p = m, q = m;
        Matrix<double>& P = which == 0 ? p.layers[0][0].A : p.layers[0][0].M;
        Matrix<double>& Q = which == 0 ? q.layers[0][0].A : q.layers[0][0].M;
        P(r, c) += kStep;
        Q(r, c) -= kStep;
        const double fd =
            (mse_and_gradient(p, batch, &tmpA, &tmpM) - mse_and_gradient(q, batch, &tmpA, &tmpM)) /
            (2 * kStep);
        CHECK(near(fd, which == 0 ? gA(r, c) : gM(r, c), kFiniteDifference));
      }
    }
  }
}

TEST_CASE("the recipe lowers the batch MSE and stops on its criterion") {
  const Task task{5, 4, TriggerRange::kPaper};
  PaperRecipeOptions o;
  o.max_steps = 300;
  o.batch = 16;
  o.lr = 1e-2;
  o.stop_linf = 0;  // never met: runs all steps
  const PaperRecipeResult r = train_paper_recipe(task, o);
  CHECK(r.steps == 300);
  CHECK(!r.reached);
  CHECK(r.final_batch_mse < 0.05);
  o.stop_linf = 10;  // met at once
  CHECK(train_paper_recipe(task, o).steps == 1);
}

}  // namespace
}  // namespace sinkcert::search
