// SPDX-License-Identifier: MIT
//
// Checks shared by the tests of the bounds that cap verify bound's boxes
// (relu_vertex_bound_test, softmax_vertex_bound_test): an enclosure b of a
// model's worst case must hold the grid's maximum for every trigger, a
// claim at 0.9 x its lower bound must be refuted with a witness, and one at
// 1.01 x its upper bound verified. And (worst_case_bound_test,
// deep_worst_case_bound_test) a run whose first pass reached no trigger:
// each trigger's upper end is its values' hull bound.
#pragma once

#include <doctest/doctest.h>

#include "tests/test_util.h"
#include "theorems/bounds/value_hull_bound.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::testing {

inline void check_enclosure_and_claims(const Model<double>& m, const Task& task,
                                       const theorems::bounds::WorstCaseOptions& o,
                                       const theorems::bounds::WorstCaseBound& b) {
  using theorems::bounds::check_upper_bound;
  using theorems::bounds::UpperBoundCheck;
  // every trigger's enclosure holds the grid's maximum
  for (const theorems::bounds::TriggerBound& t : b.per_trigger) {
    CHECK(t.upper >= Mpfr(grid_max(m, task, t.trigger, 5)));
  }
  // a claim below the certified lower bound: NOT VERIFIED with the witness
  const double lower = b.lower.convert_to<double>();
  const UpperBoundCheck wrong = check_upper_bound(m, task, 0.9 * lower, o);
  CHECK(wrong.verdict == Verdict::kNotVerified);
  CHECK(wrong.bound.witness_trigger != 0);
  const UpperBoundCheck right = check_upper_bound(m, task, 1.01 * b.upper.convert_to<double>(), o);
  CHECK(right.verdict == Verdict::kVerified);
}

// Checks that every trigger's upper end in b is its values' hull bound (at
// b's precision) and returns the largest of them.
template <class T>
Mpfr check_hull_upper_ends(const Model<T>& m, const Task& task,
                           const theorems::bounds::WorstCaseBound& b) {
  const PrecisionScope bits(b.bits);
  const Model<Mpfi> enclosed = m.template cast<Mpfi>();
  Mpfr largest(0);
  for (const theorems::bounds::TriggerBound& t : b.per_trigger) {
    const Mpfr hull = theorems::bounds::value_hull_bound(enclosed, task, t.trigger);
    CHECK(t.upper == hull);
    if (hull > largest) largest = hull;
  }
  return largest;
}

}  // namespace sinkcert::testing
