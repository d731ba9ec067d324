// SPDX-License-Identifier: MIT
#include "src/task.h"

#include <doctest/doctest.h>

#include <set>

namespace sinkcert {
namespace {

TEST_CASE("trigger positions under both conventions") {
  CHECK(Task{5, 4, TriggerRange::kPaper}.trigger_positions() == std::vector<int>{1, 2, 3});
  CHECK(Task{5, 4, TriggerRange::kReferenceCode}.trigger_positions() == std::vector<int>{2, 3});
  CHECK(Task{3, 2, TriggerRange::kPaper}.trigger_positions() == std::vector<int>{1});
  CHECK(Task{3, 2, TriggerRange::kReferenceCode}.trigger_positions().empty());
  CHECK(parse_trigger_range("reference-code") == TriggerRange::kReferenceCode);
  CHECK_THROWS_AS(parse_trigger_range("papers"), std::invalid_argument);
  CHECK_THROWS_AS(Task({2, 4, TriggerRange::kPaper}).validate(), std::invalid_argument);
  CHECK_THROWS_AS(Task({5, 1, TriggerRange::kPaper}).validate(), std::invalid_argument);
}

TEST_CASE("sampled inputs are valid task inputs under both conventions") {
  for (TriggerRange range : {TriggerRange::kPaper, TriggerRange::kReferenceCode}) {
    const Task task{7, 9, range};
    TaskSampler sampler(task, 123);
    std::set<int> seen;
    for (int s = 0; s < 500; ++s) {
      const Sample sample = sampler.next();
      CHECK(validate_input(sample.X, task.n) == sample.trigger);
      seen.insert(sample.trigger);
    }
    const auto positions = task.trigger_positions();
    // 500 draws over at most 8 positions: every position appears.
    CHECK(seen == std::set<int>(positions.begin(), positions.end()));
  }
}

TEST_CASE("no trigger position: sampling is an error, not a silent default") {
  TaskSampler sampler(Task{5, 2, TriggerRange::kReferenceCode}, 1);
  CHECK_THROWS_AS(sampler.next(), std::invalid_argument);
}

TEST_CASE("the sampler's stream is pinned") {
  // The engine is std::mt19937_64, whose 10000th output for the default seed
  // 5489 the C++ standard fixes ([rand.predef]).
  std::mt19937_64 reference;
  reference.discard(9999);
  CHECK(reference() == 9981545732273789042ULL);
  // Our documented mapping (w >> 11) * 2^-53 * 2 - 1, first values for seed 0.
  std::mt19937_64 engine(0);
  TaskSampler sampler(Task{5, 4, TriggerRange::kPaper}, 0);
  for (int k = 0; k < 3; ++k) {
    const double expected = static_cast<double>(engine() >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    CHECK(sampler.next_content() == expected);
  }
  // Pinned literally so that a change of mapping is caught, too.
  TaskSampler pinned(Task{5, 4, TriggerRange::kPaper}, 0);
  const Sample s = pinned.next();
  CHECK(s.trigger == 1);
  CHECK(s.X(1, 2) == 0.98429041925965755);
}

TEST_CASE("targets: plain and residual") {
  const Task task{5, 4, TriggerRange::kPaper};
  Matrix<double> C(3, 2);
  C << 0.5, -1, 0.25, 1, -0.5, 0;
  const Matrix<double> X = make_input(task, 2, C);
  const Matrix<double> Y = make_target(X, 2, TargetKind::kPlain);
  // y_2 = (x_1 + x_2) / 2 = (0, 0.5, 0.375, 0, 0.5)
  CHECK(Y(2, 1) == 0.5);
  CHECK(Y(2, 2) == 0.375);
  CHECK(Y(2, 3) == 0.0);
  CHECK(Y(2, 4) == 0.5);
  CHECK(Y.row(1).isZero());
  CHECK(Y.row(3).isZero());
  const Matrix<double> R = make_target(X, 2, TargetKind::kResidual);
  CHECK(R.row(3) == X.row(3));
  CHECK(R(2, 2) == X(2, 2) + 0.375);
}

TEST_CASE("validate_input names the row and column of the first defect") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Matrix<double> good = make_input<double>(task, 2, Matrix<double>::Zero(3, 2));
  auto message = [&](Matrix<double> X) {
    try {
      validate_input(X, 5);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(message(good) == "accepted");
  Matrix<double> X = good;
  X(0, 0) = 0;
  CHECK(message(X).find("tokens[0][0]") != std::string::npos);
  X = good;
  X(3, 1) = 1;
  X(3, 4) = 0;
  CHECK(message(X).find("second trigger") != std::string::npos);
  X = good;
  X(2, 1) = 0;
  X(2, 4) = 1;
  CHECK(message(X).find("no trigger") != std::string::npos);
  X = good;
  X(1, 3) = 1.5;
  CHECK(message(X).find("tokens[1][3]: content must lie in [-1, 1]") != std::string::npos);
  X = good;
  X(1, 4) = 0.5;
  CHECK(message(X).find("tokens[1][4]") != std::string::npos);
  X = good;
  X(1, 2) = std::nan("");
  CHECK(message(X).find("finite") != std::string::npos);
}

}  // namespace
}  // namespace sinkcert
