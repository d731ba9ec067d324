// SPDX-License-Identifier: MIT
#include "theorems/bounds/relu_vertex_bound.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "src/forward.h"
#include "tests/test_util.h"
#include "tests/worst_case_claims.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::theorems::bounds {
namespace {

using testing::grid_max;
using testing::random_model;

// A single-head ReLU model of T(5, 4) with the sign structure the bound
// needs: the flag-flag scores of a trigger query are 3, of an ordinary one
// -3, A[0,0] = -1; every other entry of A and all of M are i.i.d. normal
// with std `content_std` (at 0.2 the content terms, 10 entries of A, move a
// score by well under 3 for these seeds).
Model<double> signed_relu_model(double content_std, std::uint64_t seed) {
  Model<double> m = random_model(5, AttentionKind::kRelu, content_std, seed);
  Matrix<double>& A = m.layers[0][0].A;
  for (const int k : {kBosFlag, kTriggerFlag, ordinary_flag(5)}) {
    A(kTriggerFlag, k) = 3.0;
    A(ordinary_flag(5), k) = -3.0;
  }
  A(kBosFlag, kBosFlag) = -1.0;
  return m;
}

// A trigger's cap lies above the maximum of e(X) over a grid of `points`
// values per variable (every row), and within `tight` of it; returns that
// maximum.
double check_cap_near_grid(const Model<double>& m, const Task& task, const TriggerCap& cap,
                           int points, double tight) {
  CAPTURE(cap.trigger);
  const double grid = grid_max(m, task, cap.trigger, points);
  const double upper = cap.upper.convert_to<double>();
  CHECK(upper >= grid);
  CHECK(upper <= grid * (1 + tight));
  return grid;
}

// Every trigger's cap lies above the maximum of e(X) over a grid of
// `points` values per variable; returns whether, for some trigger from
// `first` on, that maximum exceeds the vertices' (the grid of 2 points), so
// that the caps were checked against a worst case inside the box.
bool caps_cover_interior_grid(const Model<double>& m, const Task& task, int points, int first) {
  const ReluVertexBound b = relu_vertex_bound(m, task, task.trigger_positions());
  REQUIRE(b.applies);
  bool interior = false;
  for (const TriggerCap& cap : b.caps) {
    CAPTURE(cap.trigger);
    const double grid = grid_max(m, task, cap.trigger, points);
    if (cap.trigger >= first && grid_max(m, task, cap.trigger, 2) < grid) interior = true;
    CHECK(cap.upper.convert_to<double>() >= grid);
  }
  return interior;
}

// verify bound with the vertex bound's caps reaches a 5 % gap at once, its
// enclosure holds the grid, and claims are decided on both sides.
void check_verify_bound_closes(const Model<double>& m, const Task& task) {
  WorstCaseOptions o;
  o.relative_gap = 0.05;
  o.max_boxes = 1000;
  const WorstCaseBound b = bound_worst_case(m, task, o);
  CHECK(b.stop_reason == "requested gap reached");
  CHECK(b.note.find("capped by its trigger's ReLU vertex bound") != std::string::npos);
  testing::check_enclosure_and_claims(m, task, o, b);
}

TEST_CASE("the vertex bound lies above every grid point's error, and close to the largest") {
  const Task task{5, 4, TriggerRange::kPaper};
  // 7 values per variable, 6 variables: 117649 inputs per trigger
  constexpr int kGrid = 7;
  // The curvature corrections are second order in the content entries:
  // at std 0.2 the measured excess over the grid's maximum is below 3 %;
  // kTight = 10 % fails a bound that lost the exchangeability or the
  // vertex structure (those are first order, tens of per cent).
  constexpr double kTight = 0.10;
  for (const double std : {0.05, 0.2}) {
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      CAPTURE(std);
      CAPTURE(seed);
      const Model<double> m = signed_relu_model(std, seed);
      const ReluVertexBound b = relu_vertex_bound(m, task, task.trigger_positions());
      REQUIRE(b.applies);
      REQUIRE(b.caps.size() == 3);
      for (const TriggerCap& cap : b.caps) check_cap_near_grid(m, task, cap, kGrid, kTight);
    }
  }
}

TEST_CASE("the curvature corrections cover a worst case inside the box") {
  // A trigger query's score falls with a key's first content coordinate x
  // (A[1,2] = -0.8) while that key's value in coordinate 2 is x / 3
  // (M[2,2] = 1/3): with the flag score 3 the key term s v - x is about
  // (3 - 0.8 x)(x / 3) - x = -0.27 x^2, largest at x = 0, inside the box
  // (the trigger's own content q likewise).
  // The vertex values alone are then below the grid's maximum (checked
  // below, so this test does exercise the corrections); the corrected
  // bound is above it.
  // M = I / 3 but for small noise (the model nearly solves the task, so
  // the error is this term's and not the target's).
  const Task task{5, 4, TriggerRange::kPaper};
  constexpr int kGrid = 9;  // includes 0, +-1/4, +-1/2, +-3/4
  Model<double> m = signed_relu_model(0.01, 1);
  for (int c = kTriggerFlag; c < 5; ++c) m.layers[0][0].M(c, c) = 1.0 / 3;
  m.layers[0][0].A(kTriggerFlag, kFirstContent) = -0.8;
  // and the BOS key adds 3 (0.3) to coordinate 2: the positive side, where
  // the key and self terms are largest at x = 0, is the worse one
  m.layers[0][0].M(kFirstContent, kBosFlag) = 0.3;
  CHECK(caps_cover_interior_grid(m, task, kGrid, 1));
}

TEST_CASE("a key's worst content inside its zonotope's edge, or inside a piece of x_d") {
  // Output coordinate d = 2 (content 0). A trigger query scores an ordinary
  // key F - s x_c (x_c the key's content c), the key's value in d is
  // x_c + p0, so the key term (F - s x_c)(x_c + p0) - x_d is concave in x_c
  // with its maximum at x_c = (F - s p0 - [c = 0]) / (2 s), inside the box
  // and on the 7-point grid, not at an end of x_d's 8 pieces:
  //  - c = 0 = d (F = 9, s = 4, p0 = 8/3: x_c = -1/3, inside the piece
  //    [-1/2, -1/4]; kappa h^2 covers it);
  //  - c = 1 != d (F = 5, s = 2, p0 = 11/6: x_c = 1/3, inside an edge of the
  //    zonotope over the key's other content; the edge's stationary point
  //    covers it).
  // A[c,1] = +s cancels the query's own curvature along q_c, so the query's
  // correction does not cover a missed key maximum (the flag scores F of a
  // trigger query and -6 of an ordinary one keep the signs over the box).
  const Task task{5, 4, TriggerRange::kPaper};
  constexpr int kGrid = 7;  // -1, -2/3, -1/3, 0, 1/3, 2/3, 1
  const int ord = ordinary_flag(5);
  for (const int c : {0, 1}) {
    CAPTURE(c);
    const double F = c == 0 ? 9.0 : 5.0, slope = c == 0 ? 4.0 : 2.0;
    Model<double> m = signed_relu_model(0.01, 3);
    Matrix<double>& A = m.layers[0][0].A;
    Matrix<double>& M = m.layers[0][0].M;
    for (const int k : {kBosFlag, ord, kTriggerFlag}) {
      A(kTriggerFlag, k) = F;
      A(ord, k) = -6.0;
    }
    A(kTriggerFlag, kFirstContent + c) = -slope;
    A(kFirstContent + c, kTriggerFlag) = slope;
    M(kFirstContent, kFirstContent + c) = 1.0;
    M(kFirstContent, ord) = c == 0 ? 8.0 / 3 : 11.0 / 6;
    // (trigger 1 has no ordinary key)
    CHECK(caps_cover_interior_grid(m, task, kGrid, 2));
  }
}

TEST_CASE("terms of either sign: each trigger-row term kept or dropped, other rows' BOS term") {
  // Every pattern of trigger-row signs (BOS, ordinary, self score each +3 or
  // -3 at the flags), with an ordinary query's BOS score and A[0,0] either
  // negative (those rows' error 0) or positive with a large BOS value
  // M[.,0] = 2 (their output is that value times a ReLU score of about 2,
  // more than row j's error for some patterns). The bound must lie above
  // the grid's maximum over all rows, and within kTight of it (the trigger
  // row as in the test above, at content std 0.1; the other rows' bound is
  // exact at a vertex).
  const Task task{5, 4, TriggerRange::kPaper};
  constexpr int kGrid = 5;  // includes the vertices
  constexpr double kTight = 0.10;
  const int ord = ordinary_flag(5);
  int dominated_by_other_rows = 0;
  for (int pattern = 0; pattern < 8; ++pattern) {
    for (const bool other_rows_positive : {false, true}) {
      CAPTURE(pattern);
      CAPTURE(other_rows_positive);
      Model<double> m = signed_relu_model(0.1, 10 + pattern);
      Matrix<double>& A = m.layers[0][0].A;
      A(kTriggerFlag, kBosFlag) = pattern & 1 ? 3.0 : -3.0;
      A(kTriggerFlag, ord) = pattern & 2 ? 3.0 : -3.0;
      A(kTriggerFlag, kTriggerFlag) = pattern & 4 ? 3.0 : -3.0;
      A(ord, kBosFlag) = other_rows_positive ? 2.0 : -3.0;
      A(kBosFlag, kBosFlag) = other_rows_positive ? 0.4 : -1.0;
      if (other_rows_positive) m.layers[0][0].M.col(kBosFlag).setConstant(2.0);
      const ReluVertexBound b = relu_vertex_bound(m, task, task.trigger_positions());
      REQUIRE(b.applies);
      for (const TriggerCap& cap : b.caps) {
        const double grid = check_cap_near_grid(m, task, cap, kGrid, kTight);
        // row j alone at its vertices: the other rows decide the maximum
        Model<double> quiet = m;
        quiet.layers[0][0].A(ord, kBosFlag) = -3.0;
        quiet.layers[0][0].A(kBosFlag, kBosFlag) = -1.0;
        if (grid > grid_max(quiet, task, cap.trigger, kGrid)) ++dominated_by_other_rows;
      }
    }
  }
  // the other rows' term was exercised, not only present
  CHECK(dominated_by_other_rows > 0);
}

TEST_CASE("verify bound on a model whose trigger ignores BOS and whose other rows read it") {
  // the sign structure of a ReLU model trained by the paper's recipe that
  // the first version of the bound refused: a trigger query's BOS score <= 0,
  // an ordinary query's and the BOS row's > 0
  const Task task{5, 4, TriggerRange::kPaper};
  Model<double> m = signed_relu_model(0.2, 4);
  m.layers[0][0].A(kTriggerFlag, kBosFlag) = -0.1 - 2 * 0.2 * 3;  // below its content radius
  m.layers[0][0].A(ordinary_flag(5), kBosFlag) = 0.02;
  m.layers[0][0].A(kBosFlag, kBosFlag) = 5e-4;
  REQUIRE(relu_vertex_bound(m, task, task.trigger_positions()).applies);
  check_verify_bound_closes(m, task);
}

TEST_CASE("the vertex bound says why it does not apply") {
  const Task task{5, 4, TriggerRange::kPaper};
  const std::vector<int> triggers = task.trigger_positions();
  CHECK(
      !relu_vertex_bound(random_model(5, AttentionKind::kSoftmax, 0.3, 1), task, triggers).applies);
  // entries so large that the double arithmetic overflows: refused, not
  // a cap that silently lost the overflowed cells (the signs still hold)
  {
    Model<double> big = signed_relu_model(0.05, 1);
    big.layers[0][0].A *= 1e160;
    big.layers[0][0].M *= 1e160;
    const ReluVertexBound b = relu_vertex_bound(big, task, triggers);
    CHECK_FALSE(b.applies);
    CHECK(b.reason.find("overflowed double") != std::string::npos);
  }
  // an ordinary query that scores a key above 0 somewhere
  Model<double> m = signed_relu_model(0.05, 1);
  m.layers[0][0].A(ordinary_flag(5), kTriggerFlag) = 0.01;
  const ReluVertexBound b = relu_vertex_bound(m, task, triggers);
  CHECK(!b.applies);
  CHECK(b.reason.find("ordinary query's score of a trigger key") != std::string::npos);
  // a trigger query whose score of the BOS key can reach 0
  m = signed_relu_model(0.05, 1);
  m.layers[0][0].A(kTriggerFlag, kBosFlag) = 0.0;
  CHECK(relu_vertex_bound(m, task, triggers).reason ==
        "a trigger query's score of a BOS key changes sign over the box");
}

TEST_CASE("verify bound with the vertex bound: the gap closes at once, a false claim is refuted") {
  const Task task{5, 4, TriggerRange::kPaper};
  check_verify_bound_closes(signed_relu_model(0.2, 2), task);
}

TEST_CASE("a deadline passed: the root cells' caps, still above every grid point") {
  // Stopped before any split, the caps come from the root cells, whose
  // bounds use every first-order allowance of the header (the query's free
  // coordinates moving the keys' scores, Taylor's remainder of the self
  // term, the corner bound): a mutant that drops one of them falls below
  // the grid on these models.
  const Task task{5, 4, TriggerRange::kPaper};
  constexpr int kGrid = 7;
  int below_vertex_caps = 0;
  for (const double std : {0.05, 0.2}) {
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      CAPTURE(std);
      CAPTURE(seed);
      const Model<double> m = signed_relu_model(std, seed);
      const ReluVertexBound full = relu_vertex_bound(m, task, task.trigger_positions());
      const ReluVertexBound b =
          relu_vertex_bound(m, task, task.trigger_positions(), Deadline::after(0));
      REQUIRE(b.applies);
      CHECK(b.deadline_passed);
      CHECK(b.cells == 0);
      CHECK(b.stop == "the deadline");
      REQUIRE(b.caps.size() == full.caps.size());
      for (std::size_t t = 0; t < b.caps.size(); ++t) {
        CAPTURE(b.caps[t].trigger);
        CHECK(b.caps[t].upper.convert_to<double>() >= grid_max(m, task, b.caps[t].trigger, kGrid));
        // the split search lowers the root's bound
        if (full.caps[t].upper < b.caps[t].upper) ++below_vertex_caps;
      }
    }
  }
  CHECK(below_vertex_caps > 0);
  // the bound that uses it, with no time: its note says so, its enclosure
  // holds the grid
  const Model<double> m = signed_relu_model(0.2, 1);
  WorstCaseOptions o;
  o.max_seconds = 0;
  const WorstCaseBound w = bound_worst_case(m, task, o);
  CHECK(w.budget_note.find("ReLU vertex bound cut short") != std::string::npos);
  for (const int j : task.trigger_positions()) CHECK(w.upper >= grid_max(m, task, j, 5));
}

TEST_CASE("a cubic's gap above its chord: the largest over a fine grid, never below it") {
  // against (1 - t^2)(-p3 t - p2) on 20001 points of [-1, 1] (spacing 1e-4:
  // the grid misses the maximum by at most |h''| 1e-8 / 8 <= 1e-8 for these
  // coefficients); coefficients of either sign, the cubic term dominant or not
  constexpr int kPoints = 20001;
  constexpr double kGridSlack = 1e-8;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  int cubic_mattered = 0;
  for (int i = 0; i < 300; ++i) {
    const double p3 = i % 7 == 0 ? 0.0 : normal(rng), p2 = (i % 3 == 0 ? 0.1 : 1.0) * normal(rng);
    CAPTURE(p3);
    CAPTURE(p2);
    double grid = 0;
    for (int k = 0; k < kPoints; ++k) {
      const double t = -1.0 + 2.0 * k / (kPoints - 1);
      grid = std::max(grid, (1 - t * t) * (-p3 * t - p2));
    }
    const double gap = cubic_chord_gap(p3, p2);
    CHECK(gap >= grid);
    CHECK(gap <= grid + kGridSlack);
    CHECK(gap <= std::max(0.0, 3 * std::abs(p3) - p2) + kGridSlack);
    if (gap > std::max(0.0, -p2) + 0.01) ++cubic_mattered;
  }
  // the cubic term changed the answer on some draws (p2's part alone is max(0, -p2))
  CHECK(cubic_mattered > 0);
}

TEST_CASE("stopped after a few cells, the frontier of mixed depths still bounds the grid") {
  // Trigger j = 1 (no ordinary key), output coordinate d = 2 (content 0).
  // The model makes its error, on the side sigma = -1,
  //   -F = 2.4 + 0.4 q_1 - 0.5 q_1 q_0^2   (+ noise of order 0.01):
  // BOS adds (6 + q_1)(-0.4); the self term is ys (q_0 / 6) - q_0 with
  // ys = 6 + 3 q_1 q_0, so S = 0.5 q_1 q_0^2. Along q_0 it is the
  // quadratic p2 q_0^2 with p2 = -0.5 q_1 (on the side -1), concave for
  // q_1 > 0: the largest error, 2.8, is at q_0 = 0, q_1 = 1, inside the
  // box. The search splits q_0 first (A[c0, o] = 5 weighs it; no ordinary
  // key reads it at j = 1), so a cell with q_0 = +-1 fixed and q_1 free must
  // add the chord gap at p2's worst over q_1 (0.5), not at its centre (0):
  // Taylor's formula over q_1 at q_0 = +-1 gives only 2.4 + 0.1. Caps of
  // searches cut after 1 to 55 cells, and of the whole search.
  const Task task{5, 4, TriggerRange::kPaper};
  constexpr int kGrid = 7;  // includes 0 and +-1
  const int ord = ordinary_flag(5);
  const int c0 = kFirstContent, c1 = kFirstContent + 1;
  Model<double> m = signed_relu_model(0.01, 1);
  Matrix<double>& A = m.layers[0][0].A;
  Matrix<double>& M = m.layers[0][0].M;
  for (const int k : {kBosFlag, ord, kTriggerFlag}) {
    A(kTriggerFlag, k) = k == ord ? 10.0 : 6.0;
    A(ord, k) = k == ord ? -10.0 : -6.0;
  }
  for (const int r : {kTriggerFlag, c0, c1})
    for (const int c : {kTriggerFlag, c0, c1})
      if (r != kTriggerFlag || c != kTriggerFlag) A(r, c) = 0.0;
  A(c1, c0) = 3.0;
  A(c0, kBosFlag) = 0.0;
  A(c1, kBosFlag) = 1.0;
  A(c0, ord) = 5.0;
  M(c0, kBosFlag) = -0.4;
  M(c0, kTriggerFlag) = 0.0;
  M(c0, c0) = 1.0 / 6;
  M(c0, c1) = 0.0;
  const double grid = grid_max(m, task, 1, kGrid);
  // the worst case is inside the box (the vertices give about 2.5)
  REQUIRE(grid > grid_max(m, task, 1, 2) + 0.2);
  for (const long cells : {1L, 2L, 3L, 5L, 8L, 13L, 21L, 34L, 55L, kMaxCellsSplit}) {
    CAPTURE(cells);
    const ReluVertexBound b = relu_vertex_bound(m, task, {1}, Deadline{}, ProgressSink{}, cells);
    REQUIRE(b.applies);
    REQUIRE(b.caps.size() == 1);
    CHECK(b.caps[0].upper.convert_to<double>() >= grid);
  }
}

TEST_CASE("the sign conditions: never accepted when a vertex of the box breaks them") {
  // n = 6: three content coordinates, so every score's extremes over the
  // box (bilinear in the query's and key's contents, so at vertices) are
  // found by enumerating the 2^3 x 2^3 vertex pairs. Flag-flag scores as in
  // signed_relu_model, content entries growing until the signs break: the
  // bound applies only when every vertex pair keeps them; and the joined
  // linear terms accept models the plain sum of |entries| would refuse.
  const int n = 6, cd = 3;
  const Task task{n, 4, TriggerRange::kPaper};
  const int ord = ordinary_flag(n);
  const auto score = [&](const Matrix<double>& A, int fq, int fk, int vq, int vk) {
    Eigen::VectorXd q = Eigen::VectorXd::Zero(n), x = Eigen::VectorXd::Zero(n);
    q(fq) = 1;
    x(fk) = 1;
    for (int c = 0; c < cd; ++c) {
      if (fq != kBosFlag) q(kFirstContent + c) = (vq >> c) & 1 ? 1.0 : -1.0;
      if (fk != kBosFlag) x(kFirstContent + c) = (vk >> c) & 1 ? 1.0 : -1.0;
    }
    return q.dot(A * x);
  };
  int accepted = 0, accepted_beyond_crude = 0, refused = 0;
  for (std::uint64_t seed = 1; seed <= 80; ++seed) {
    // linear (flag x content) entries large, content x content ones small
    // content x content entries small (0.02) or of the linear terms' size
    Model<double> m = random_model(n, AttentionKind::kRelu, seed % 2 ? 0.02 : 0.1, seed);
    Matrix<double>& A = m.layers[0][0].A;
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 0.05 + 0.01 * static_cast<double>(seed));
    for (const int f : {kTriggerFlag, ord})
      for (int c = 0; c < cd; ++c) {
        A(f, kFirstContent + c) = normal(rng);
        A(kFirstContent + c, f) = normal(rng);
      }
    for (const int k : {kBosFlag, ord, kTriggerFlag}) {
      A(kTriggerFlag, k) = 3.0;
      A(ord, k) = -0.5;
    }
    A(kBosFlag, kBosFlag) = -1.0;
    bool holds = true;
    double crude_hi = -1e300;
    for (const int fk : {ord, kTriggerFlag}) {
      double radius = 0;
      for (int c = 0; c < cd; ++c) {
        radius += std::abs(A(kFirstContent + c, fk)) + std::abs(A(ord, kFirstContent + c));
        for (int c2 = 0; c2 < cd; ++c2)
          radius += std::abs(A(kFirstContent + c, kFirstContent + c2));
      }
      crude_hi = std::max(crude_hi, A(ord, fk) + radius);
      for (int vq = 0; vq < 1 << cd; ++vq)
        for (int vk = 0; vk < 1 << cd; ++vk) holds = holds && score(A, ord, fk, vq, vk) <= 0;
    }
    for (const int fk : {kBosFlag, ord, kTriggerFlag})
      for (int vq = 0; vq < 1 << cd; ++vq)
        for (int vk = 0; vk < 1 << cd; ++vk)
          holds = holds && score(A, kTriggerFlag, fk, vq, vk) > 0;
    CAPTURE(seed);
    const ReluVertexBound b = relu_vertex_bound(m, task, task.trigger_positions());
    if (b.applies) {
      CHECK(holds);
      ++accepted;
      if (crude_hi > 0) ++accepted_beyond_crude;
    } else {
      ++refused;
    }
  }
  // content x content terms alone, 0.3 on the diagonal: an ordinary query
  // scores an ordinary key -0.5 + 0.3 q . x, which reaches 0.4 at q = x; no
  // x_i's coefficient keeps one sign (|b_i| = 0 < r_i = 0.3), so the joined
  // bound keeps their whole range and refuses
  {
    Model<double> m = random_model(n, AttentionKind::kRelu, 0.0, 1);
    Matrix<double>& A = m.layers[0][0].A;
    A.setZero();
    for (const int k : {kBosFlag, ord, kTriggerFlag}) {
      A(kTriggerFlag, k) = 3.0;
      A(ord, k) = -0.5;
    }
    A(kBosFlag, kBosFlag) = -1.0;
    for (int c = 0; c < cd; ++c) A(kFirstContent + c, kFirstContent + c) = 0.3;
    CHECK(score(A, ord, ord, 7, 7) > 0);
    const ReluVertexBound b = relu_vertex_bound(m, task, task.trigger_positions());
    CHECK_FALSE(b.applies);
    CHECK(b.reason.find("ordinary query's score of a ordinary key") != std::string::npos);
  }
  // both sides exercised, and the joined bound did accept more than the crude one
  CHECK(accepted > 0);
  CHECK(refused > 0);
  CHECK(accepted_beyond_crude > 0);
}

TEST_CASE("a larger model: the split search's caps lie above sampled and attacked inputs") {
  // n = 9, L = 4: 6 content coordinates per token; the search splits the
  // query's cells down to vertices. Its caps must lie above the error at
  // random inputs and at every vertex of the trigger's and keys' content
  // shared by all tokens (2^6 inputs, a common worst case of such models).
  const int n = 9;
  const Task task{n, 4, TriggerRange::kPaper};
  Model<double> m = random_model(n, AttentionKind::kRelu, 0.03, 7);
  Matrix<double>& A = m.layers[0][0].A;
  for (const int k : {kBosFlag, ordinary_flag(n), kTriggerFlag}) {
    A(kTriggerFlag, k) = 3.0;
    A(ordinary_flag(n), k) = -3.0;
  }
  A(kBosFlag, kBosFlag) = -1.0;
  for (int c = kTriggerFlag; c < n; ++c) m.layers[0][0].M(c, c) += 1.0 / 3;
  const ReluVertexBound b = relu_vertex_bound(m, task, task.trigger_positions());
  REQUIRE(b.applies);
  CHECK(b.cells > 0);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const int vars = content_variables(task);
  for (const TriggerCap& cap : b.caps) {
    CAPTURE(cap.trigger);
    double seen = 0;
    for (int s = 0; s < 4000; ++s) {
      std::vector<double> flat(vars);
      for (double& v : flat)
        v = s < 64 ? ((s >> (&v - flat.data()) % 6) & 1 ? 1.0 : -1.0) : unit(rng);
      const Matrix<double> X = make_input<double>(task, cap.trigger, unflatten_content(task, flat));
      const Matrix<double> E =
          forward(m, X, false).output - make_target(X, cap.trigger, TargetKind::kPlain);
      seen = std::max(seen, E.cwiseAbs().maxCoeff());
    }
    CHECK(cap.upper.convert_to<double>() >= seen);
  }
}

}  // namespace
}  // namespace sinkcert::theorems::bounds

namespace sinkcert::theorems::bounds {
namespace {

// A ReLU model of T(7, 4) (4 content coordinates) whose trigger row keeps
// exactly the terms asked for, with content x content block eps * C and
// M's row d = 1 (the trigger flag, target 1/j) equal to c on the trigger
// and ordinary flags: the trigger row's error is then
//   (1/j) [ c (A11 + eps q^T C q) - 1 + sum_k c (A1o + eps q^T C x_k) ]
// (a kept term only), every other row 0 (their only positive score would be
// BOS's, here -1). With c = 3 it is above 1, the largest error of any other
// coordinate (the target's mean of contents, M's other rows being 0).
Model<double> content_product_model(const Eigen::Matrix4d& C, bool keys, bool self) {
  constexpr double kEps = 0.05, kC = 3.0;
  Model<double> m = random_model(7, AttentionKind::kRelu, 0.0, 1);
  Matrix<double>& A = m.layers[0][0].A;
  Matrix<double>& M = m.layers[0][0].M;
  A.setZero();
  M.setZero();
  const int o = ordinary_flag(7);
  A.block(kFirstContent, kFirstContent, 4, 4) = kEps * C;
  for (const int k : {kBosFlag, kTriggerFlag, o}) A(o, k) = -3.0;
  A(kTriggerFlag, kBosFlag) = A(kBosFlag, kBosFlag) = -1.0;
  A(kTriggerFlag, kTriggerFlag) = self ? 1.0 : -3.0;
  A(kTriggerFlag, o) = keys ? 1.0 : -3.0;
  M(kTriggerFlag, kTriggerFlag) = M(kTriggerFlag, o) = kC;
  return m;
}

// The caps of the root cells alone, and of a frontier cut after `cells`
// splits, lie above the largest error over the vertices (where this
// model's worst case is), and the root's within `tight` of it: so a
// first-order allowance that is too small shows.
void check_caps_against_vertices(const Model<double>& m, double tight) {
  const Task task{7, 4, TriggerRange::kPaper};
  const ReluVertexBound root =
      relu_vertex_bound(m, task, task.trigger_positions(), Deadline::after(0));
  REQUIRE(root.applies);
  for (const TriggerCap& cap : root.caps) {
    CAPTURE(cap.trigger);
    const double vertices = grid_max(m, task, cap.trigger, 2);
    CHECK(cap.upper.convert_to<double>() >= vertices);
    CHECK(cap.upper.convert_to<double>() <= vertices * (1 + tight));
  }
  for (const long cells : {1L, 2L, 3L, 5L, 9L}) {
    CAPTURE(cells);
    const ReluVertexBound cut =
        relu_vertex_bound(m, task, task.trigger_positions(), Deadline{}, ProgressSink{}, cells);
    for (const TriggerCap& cap : cut.caps) {
      CAPTURE(cap.trigger);
      CHECK(cap.upper.convert_to<double>() >= grid_max(m, task, cap.trigger, 2));
    }
  }
}

TEST_CASE("the spectral allowances: exact where the content x content block makes them so") {
  // The free query coordinates move a key's score by dq^T (eps C) x; over
  // the box its largest value eps max ||C x||_1 is 8 eps for the 4 x 4
  // Hadamard matrix, which is sqrt(4 * 4) ||eps C||_2 (the spectral form,
  // tight) and half of sum |eps C| (the entrywise form): the root cap is
  // the vertices' maximum, and a spectral allowance missing sqrt(|F|), the
  // column part or the flag column part falls below it.
  Eigen::Matrix4d hadamard;
  hadamard << 1, 1, 1, 1, 1, -1, 1, -1, 1, 1, -1, -1, 1, -1, -1, 1;
  // The root is exact on these models but for the rounding allowance,
  // 2^-30 (16 R_A R_M + 4) = 1.3e-6 here (R_A = sum |A| < 15, R_M = 6),
  // against caps >= 1.
  constexpr double kTight = 1e-5;
  check_caps_against_vertices(content_product_model(hadamard, true, false), kTight);
  // The self term's quadratic part eps q^T J q (J all ones) is largest,
  // 16 eps, at q = +-1: both |F| ||eps J||_2 and sum |eps J| are exact.
  const Eigen::Matrix4d ones = Eigen::Matrix4d::Ones();
  check_caps_against_vertices(content_product_model(ones, false, true), kTight);
  // both at once: the root decouples the self term's q from the keys', so
  // only the cut frontiers are checked against the vertices, and the root
  // against a looser 50 %
  check_caps_against_vertices(content_product_model(ones, true, true), 0.5);
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
