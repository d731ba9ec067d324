// SPDX-License-Identifier: MIT
#include "search/recipe_kernel.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "search/paper_recipe.h"
#include "tests/test_util.h"

namespace sinkcert::search {
namespace {

using testing::head_difference;
using testing::near;
using testing::random_model;

// Each compilation of the kernel computes the generic reverse pass's sums in
// another order (the AVX2 one with fused multiply-adds): over 37 sequences
// of n = 5, L = 4 the differences are a few hundred ulps of the largest
// entry at most (measured ~1e-15 relative); kSameGradient = 1e-12 relative
// leaves room while any wrong term (O(1e-3) relative or more) fails it.
constexpr double kSameGradient = 1e-12;

// The compilations this build and CPU run.
std::vector<RecipeIsa> runnable() {
  std::vector<RecipeIsa> isas{RecipeIsa::kBaseline};
  if (avx2_kernel_available()) isas.push_back(RecipeIsa::kAvx2);
  return isas;
}

// Sets SINKCERT_RECIPE_ISA for the scope of the object (unset: nullptr).
struct IsaVariable : testing::ScopedVariable {
  explicit IsaVariable(const char* value) : ScopedVariable("SINKCERT_RECIPE_ISA", value) {}
};

TEST_CASE("every compilation of the kernel gives the generic reverse pass's gradient") {
  const Task task{5, 4, TriggerRange::kPaper};
  TaskSampler sampler(task, 4);
  std::vector<Sample> batch;
  for (int s = 0; s < 37; ++s) batch.push_back(sampler.next());
  for (const RecipeIsa isa : runnable()) {
    for (const AttentionKind attention : {AttentionKind::kSoftmax, AttentionKind::kRelu}) {
      for (const int layers : {1, 2}) {
        CAPTURE(to_string(isa));
        CAPTURE(to_string(attention));
        CAPTURE(layers);
        const ModelKind kind = layers == 1 ? ModelKind::kSingleLayer : ModelKind::kResidual;
        const Model<double> m = random_model(task.n, attention, 0.7, 5, layers, 2, kind);
        HeadGradients generic, batched, threaded;
        const double mse = mse_and_gradient(m, batch, &generic);
        CHECK(near(mse, mse_and_gradient_batched(m, batch, &batched, nullptr, 1, isa),
                   kSameGradient));
        CHECK(head_difference(generic, batched) < kSameGradient);
        // the same sums in the same order on two threads
        mse_and_gradient_batched(m, batch, &threaded, nullptr, 2, isa);
        CHECK(head_difference(batched, threaded) == 0);
        // a model that differs in one entry of one A gives another gradient
        Model<double> other = m;
        other.layers[layers - 1][0].A(1, 2) += 1e-3;
        HeadGradients changed;
        mse_and_gradient_batched(other, batch, &changed, nullptr, 1, isa);
        CHECK(head_difference(generic, changed) > kSameGradient);
      }
    }
  }
}

TEST_CASE("the kernel's compilation is chosen by the option, then the variable, then the CPU") {
  const bool avx2 = avx2_kernel_available();
  {
    const IsaVariable unset(nullptr);
    CHECK(resolve_recipe_isa(RecipeIsa::kBaseline) == RecipeIsa::kBaseline);
    CHECK(resolve_recipe_isa(RecipeIsa::kAuto) == (avx2 ? RecipeIsa::kAvx2 : RecipeIsa::kBaseline));
    if (avx2) {
      CHECK(resolve_recipe_isa(RecipeIsa::kAvx2) == RecipeIsa::kAvx2);
    } else {
      CHECK_THROWS_AS(resolve_recipe_isa(RecipeIsa::kAvx2), std::invalid_argument);
    }
  }
  {
    const IsaVariable baseline("baseline");
    CHECK(resolve_recipe_isa(RecipeIsa::kAuto) == RecipeIsa::kBaseline);
    // an explicit option wins over the variable
    if (avx2) CHECK(resolve_recipe_isa(RecipeIsa::kAvx2) == RecipeIsa::kAvx2);
  }
  {
    const IsaVariable asked("avx2");
    if (avx2) {
      CHECK(resolve_recipe_isa(RecipeIsa::kAuto) == RecipeIsa::kAvx2);
    } else {
      CHECK_THROWS_AS(resolve_recipe_isa(RecipeIsa::kAuto), std::invalid_argument);
    }
  }
  {
    const IsaVariable bad("sse9");
    try {
      resolve_recipe_isa(RecipeIsa::kAuto);
      FAIL("a bad SINKCERT_RECIPE_ISA was taken");
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      CHECK(what.find("SINKCERT_RECIPE_ISA") != std::string::npos);
      CHECK(what.find("sse9") != std::string::npos);
      CHECK(what.find("\"baseline\" or \"avx2\"") != std::string::npos);
    }
  }
}

TEST_CASE("a recipe run names the kernel it ran") {
  const IsaVariable unset(nullptr);
  const Task task{5, 4, TriggerRange::kPaper};
  PaperRecipeOptions o;
  o.batch = 8;
  o.max_steps = 2;
  o.isa = RecipeIsa::kBaseline;
  CHECK(train_paper_recipe(task, o).kernel == "baseline");
  o.isa = RecipeIsa::kAuto;
  CHECK(train_paper_recipe(task, o).kernel == to_string(resolve_recipe_isa(RecipeIsa::kAuto)));
  o.generic_gradient = true;
  CHECK(train_paper_recipe(task, o).kernel == "generic");
}

}  // namespace
}  // namespace sinkcert::search
