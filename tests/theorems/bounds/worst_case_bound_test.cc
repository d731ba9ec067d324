// SPDX-License-Identifier: MIT
#include "theorems/bounds/worst_case_bound.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>

#include "src/constructions.h"
#include "src/elapsed.h"
#include "src/forward.h"
#include "src/json_reader.h"
#include "src/linf_error.h"
#include "tests/test_util.h"
#include "tests/worst_case_claims.h"

namespace sinkcert::theorems::bounds {
namespace {

// The sink family's worst case on T(n, L): a non-trigger row L-1 holds
// (L-1) / (e^beta + L-1) off BOS and, at content +1, that error (constructions.h).
Mpfr sink_worst_case(int L, double beta) { return Mpfr(L - 1) / (bmp::exp(Mpfr(beta)) + (L - 1)); }

// Largest e(X) seen in double over random contents and vertices: a lower
// bound on E that any certified upper bound must clear.
double sampled_worst(const Model<double>& m, const Task& task, int samples, std::uint64_t seed) {
  std::mt19937_64 eng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double worst = 0.0;
  for (int s = 0; s < samples; ++s) {
    for (int j : task.trigger_positions()) {
      Matrix<double> C(task.L - 1, task.content_dim());
      for (int r = 0; r < C.rows(); ++r) {
        for (int c = 0; c < C.cols(); ++c) C(r, c) = s % 2 ? u(eng) : (u(eng) > 0 ? 1.0 : -1.0);
      }
      const Matrix<double> X = make_input<double>(task, j, C);
      const auto out = forward(m, X, false).output;
      worst = std::max(worst, linf_error(out, make_target(X, j, TargetKind::kPlain)).value);
    }
  }
  return worst;
}

TEST_CASE("sink family, beta = 10, n = 5, L = 4: certified within 1%") {
  const Task task{5, 4, TriggerRange::kPaper};
  WorstCaseOptions options;
  options.relative_gap = 0.01;
  const WorstCaseBound b = bound_worst_case(sink_family<double>(5, 10.0), task, options);
  CHECK(b.verdict == Verdict::kEnclosed);
  CHECK(b.relative_gap <= 0.01);
  // scores read flags only: one box per trigger suffices
  CHECK(b.boxes == 3);
  PrecisionScope high(1024);
  const Mpfr truth = sink_worst_case(4, 10.0);
  CHECK(b.lower <= truth);
  CHECK(b.upper >= truth);
  CHECK(b.evidence.label() == "CERTIFIED");
  // without a claim: ENCLOSED, never VERIFIED, and what it means for the task
  const std::string text = summary_text(b, task, options.relative_gap);
  CHECK(text.find("VERIFIED") == std::string::npos);
  CHECK(text.find("\nverdict: ENCLOSED E in [1.36181e-04, 1.36182e-04]") != std::string::npos);
  CHECK(task_meaning(b) == "solves the task: E <= 1.362e-04 <= 5e-3 (tolerance), CERTIFIED");
  // the bar is the run's: below E, the same enclosure does not solve it
  WorstCaseBound strict = b;
  strict.bars = VerdictBars("1e-4", kDefaultSinkBar);
  CHECK(task_meaning(strict) ==
        "does not solve the task: E >= 1.361e-04 > 1e-4 (tolerance), CERTIFIED");
  const nlohmann::json j = to_json(b, task, options.relative_gap);
  CHECK(j["verdict"] == "ENCLOSED");
  CHECK(j["lo"].get<double>() <= j["hi"].get<double>());
  CHECK(Mpfr(j["lo_exact"].get<std::string>()) == b.lower);  // exact: the same MPFR value
  const auto x = witness_input(b, task);
  REQUIRE(x.has_value());
  CHECK((*x)(b.witness_trigger, kTriggerFlag) == 1.0);
}

TEST_CASE("E near 0 over the whole box reads as solving the task; a budget cut is NOT ENCLOSED") {
  const Task task{5, 4, TriggerRange::kPaper};
  WorstCaseOptions options;
  options.relative_gap = 0.01;
  // beta = 30: E = 3 / (e^30 + 3) ~ 2.8e-13, below a tolerance of 1e-6
  options.bars = VerdictBars("1e-6", kDefaultSinkBar);
  const WorstCaseBound b = bound_worst_case(sink_family<double>(5, 30.0), task, options);
  CHECK(task_meaning(b).rfind("solves the task: E <= 2.80", 0) == 0);
  CHECK(task_meaning(b).find(" <= 1e-6 (tolerance), CERTIFIED") != std::string::npos);
  options.bars = VerdictBars();
  // a content-dependent random model cannot reach 1e-6 in 4 boxes
  options.max_boxes = 4;
  options.relative_gap = 1e-6;
  const WorstCaseBound cut =
      bound_worst_case(testing::random_model(5, AttentionKind::kSoftmax, 0.8, 3), task, options);
  CHECK(cut.verdict == Verdict::kNotEnclosed);
  CHECK(summary_text(cut, task, options.relative_gap).find("verdict: NOT ENCLOSED E in [") !=
        std::string::npos);
}

TEST_CASE("a claimed bound below the known worst case is refused with a witness") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m = sink_family<double>(5, 10.0);
  const double truth = sink_worst_case(4, 10.0).convert_to<double>();
  WorstCaseOptions options;
  const UpperBoundCheck low = check_upper_bound(m, task, 0.99 * truth, options);
  CHECK(low.verdict == Verdict::kNotVerified);
  CHECK(low.margin > 0.0);
  REQUIRE(low.bound.witness_content.size() == 6u);
  // the witness really exceeds the claim (re-evaluated independently)
  PrecisionScope scope(128);
  const Mpfr witness_error = certified_error_lower(m.cast<Mpfi>(), task, low.bound.witness_trigger,
                                                   low.bound.witness_content);
  CHECK(witness_error > Mpfr(0.99 * truth));
  const UpperBoundCheck high = check_upper_bound(m, task, 1.01 * truth, options);
  CHECK(high.verdict == Verdict::kVerified);
}

// Box budget of the content-dependent case: about twice the 129 boxes it
// needs, so the verdict depends on the search, not on the machine's speed.
constexpr long kBoxBudget = 256;

TEST_CASE("content-dependent scores (A of std 0.2): gap within 10% and the bound is sound") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m = testing::random_model(5, AttentionKind::kSoftmax, 0.2, 21);
  WorstCaseOptions options;
  options.relative_gap = 0.10;
  // a deterministic budget: the search needs 129 boxes (measured); the clock
  // never binds
  options.max_boxes = kBoxBudget;
  options.max_seconds = 1e9;
  const WorstCaseBound b = bound_worst_case(m, task, options);
  INFO("boxes " << b.boxes << " seconds " << b.seconds << " gap " << b.relative_gap);
  CHECK(b.verdict == Verdict::kEnclosed);
  CHECK(b.boxes <= kBoxBudget);
  // the same search with a quarter of the boxes it needs is undecided
  options.max_boxes = 32;
  const WorstCaseBound cut = bound_worst_case(m, task, options);
  CHECK(cut.verdict == Verdict::kNotEnclosed);
  CHECK(cut.budget_exhausted);
  CHECK(cut.stop_reason == "budget exhausted (boxes)");
  CHECK(b.relative_gap <= 0.10);
  CHECK(b.boxes > 3);
  const double sampled = sampled_worst(m, task, 400, 5);
  // double rounding of the sampled value: far below this slack
  constexpr double kDoubleSlack = 1e-12;
  CHECK(b.upper.convert_to<double>() >= sampled - kDoubleSlack);
}

TEST_CASE("bound_box on sub-boxes of content-dependent models: every term's result, sound") {
  // The box bound tightens only the terms that can attain the maximum
  // (worst_case_bound.h): its result must be that of tightening every term,
  // and above the error at every sampled point of the box. Random sub-boxes
  // (every coordinate a random interval of width 1/128 to 1/4), strong
  // content-dependent scores (A of std 1), one and two heads, several sizes.
  std::mt19937_64 eng(17);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int boxes = 0;
  for (const auto& [n, L, heads] :
       {std::tuple{5, 4, 1}, std::tuple{7, 6, 1}, std::tuple{6, 5, 2}}) {
    const Task task{n, L, TriggerRange::kPaper};
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const Model<double> m =
          testing::random_model(n, AttentionKind::kSoftmax, 1.0, 40 + seed, 1, heads);
      const Model<Mpfi> mi = m.cast<Mpfi>();
      for (int j : task.trigger_positions()) {
        ContentBox box = full_content_box(task, j);
        for (std::size_t v = 0; v < box.lo.size(); ++v) {
          // small boxes, where the centred forms tighten (on wide ones the
          // plain enclosures win and no rule is tested)
          const double width = std::ldexp(1.0, -2 - static_cast<int>(6 * u(eng)));
          box.lo[v] = -1.0 + (2.0 - width) * u(eng);
          box.hi[v] = box.lo[v] + width;
        }
        const BoxBound b = bound_box(mi, task, box);
        // the same bound, term and vertex as tightening every term
        const BoxBound every = bound_box(mi, task, box, true);
        CHECK(b.upper == every.upper);
        CHECK(b.position == every.position);
        CHECK(b.coordinate == every.coordinate);
        CHECK(b.vertex == every.vertex);
        CHECK(b.weight == every.weight);
        ++boxes;
        double worst = 0.0;
        for (int s = 0; s < 64; ++s) {
          std::vector<double> content(box.lo.size());
          for (std::size_t v = 0; v < content.size(); ++v) {
            // vertices for even samples, interior points for odd ones
            const double t = s % 2 ? u(eng) : (u(eng) > 0.5 ? 1.0 : 0.0);
            content[v] = box.lo[v] + t * (box.hi[v] - box.lo[v]);
          }
          worst = std::max(worst, certified_error_lower(mi, task, j, content).convert_to<double>());
        }
        INFO("n " << n << " L " << L << " heads " << heads << " seed " << seed << " j " << j);
        CHECK(b.upper >= Mpfr(worst));
        CHECK(b.position >= 0);
        CHECK(b.position < L);
        for (std::size_t v = 0; v < box.lo.size(); ++v) {
          CHECK(b.vertex[v] >= box.lo[v]);
          CHECK(b.vertex[v] <= box.hi[v]);
        }
      }
    }
  }
  CHECK(boxes == 4 * (3 + 5 + 4));
}

TEST_CASE("a score shift shared by every key of a row costs the bound nothing") {
  // The sink family plus 0.5 x_i[2] (x_k[0] + x_k[1] + x_k[n-1]): every token
  // has exactly one flag, so all scores of row i move by 0.5 c_i and the
  // softmax, hence E, is the sink family's. Per-score interval ranges would
  // widen each score by +-0.5 (the bound ~ e^2 times E in the first box); the
  // score-difference enclosure cancels the shift, so one box per trigger
  // certifies E to 1 %.
  const Task task{5, 4, TriggerRange::kPaper};
  Model<double> m = sink_family<double>(5, 10.0);
  for (int q : {kBosFlag, kTriggerFlag, ordinary_flag(5)}) m.layers[0][0].A(kFirstContent, q) = 0.5;
  WorstCaseOptions options;
  options.relative_gap = 0.01;
  options.adversary_witnesses = false;
  const WorstCaseBound b = bound_worst_case(m, task, options);
  CHECK(b.verdict == Verdict::kEnclosed);
  CHECK(b.boxes == 3);
  PrecisionScope high(1024);
  const Mpfr truth = sink_worst_case(4, 10.0);
  CHECK(b.lower <= truth);
  CHECK(b.upper >= truth);
}

TEST_CASE("an MPFR model beyond double: the sink family at beta = 60 is bounded at its own value") {
  // (L-1) e^-60 ~ 2.6e-26: in double the model is the same, but its loss is
  // below double's resolution of outputs near 1; in MPFR the bound holds it.
  const Task task{5, 4, TriggerRange::kPaper};
  PrecisionScope scope(256);
  const Model<Mpfr> m = sink_family<Mpfr>(5, Mpfr(60));
  WorstCaseOptions options;
  options.bits = 256;
  options.relative_gap = 0.01;
  options.adversary_witnesses = false;
  const WorstCaseBound b = bound_worst_case(m, task, options);
  CHECK(b.verdict == Verdict::kEnclosed);
  PrecisionScope high(1024);
  const Mpfr truth = sink_worst_case(4, 60.0);
  CHECK(b.lower <= truth);
  CHECK(b.upper >= truth);
  CHECK(b.upper <= truth * Mpfr(1.01));
}

// A NaN enclosure bounds nothing. A model with a NaN entry (here in M, so
// every output coordinate 2 of every box is NaN) must never be given a
// finite upper bound: the term counts as +inf, the box is never pruned.
// (MPFR's exponent range is so large that doubles such as 1e308 in A or M
// overflow nothing: those models get finite, valid bounds; see below.)
TEST_CASE("a NaN in the interval evaluation never gives a finite upper bound") {
  const Task task{5, 4, TriggerRange::kPaper};
  PrecisionScope scope(128);
  Model<Mpfr> m = sink_family<Mpfr>(5, Mpfr(10));
  m.layers[0][0].M(2, 2) = std::numeric_limits<Mpfr>::quiet_NaN();
  const BoxBound box = bound_box(m.cast<Mpfi>(), task, full_content_box(task, 1));
  CHECK(bmp::isinf(box.upper));
  WorstCaseOptions options;
  options.max_boxes = 40;
  options.adversary_witnesses = false;
  const WorstCaseBound b = bound_worst_case(m, task, options);
  CHECK(bmp::isinf(b.upper));
  CHECK(b.verdict != Verdict::kEnclosed);
  CHECK(b.lower >= 0);
  const std::string text = summary_text(b, task, options.relative_gap);
  CHECK(text.find("E <= inf") != std::string::npos);
  CHECK(text.find("no finite upper bound") != std::string::npos);
}

TEST_CASE("entries of 1e308 give a finite bound that is still sound") {
  const Task task{5, 4, TriggerRange::kPaper};
  Matrix<double> A(5, 5), M = Matrix<double>::Constant(5, 5, 1e308);
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 5; ++c) A(r, c) = (r + c) % 2 ? -1e308 : 1e308;
  }
  const Model<double> m = single_head_model<double>(AttentionKind::kSoftmax, A, M);
  WorstCaseOptions options;
  options.max_boxes = 40;
  options.adversary_witnesses = false;
  const WorstCaseBound b = bound_worst_case(m, task, options);
  PrecisionScope scope(128);
  CHECK(b.lower > Mpfr(1e308));
  CHECK(b.upper >= b.lower);
  // every vertex of the box of trigger 1 is below the upper bound
  for (int v = 0; v < 64; ++v) {
    std::vector<double> content(6);
    for (int m_ = 0; m_ < 6; ++m_) content[m_] = (v >> m_) & 1 ? 1.0 : -1.0;
    CHECK(certified_error_lower(m.cast<Mpfi>(), task, 1, content) <= b.upper);
  }
}

// The sink family at beta = 100: E = 3 / (e^100 + 3) ~ 1.1e-43, but at 128
// bits the trigger row's a_jk - 1/j is enclosed only to ~1e-38 (rounding),
// at every point: bisection cannot help, 64 more bits can.
TEST_CASE("sink family at beta = 100: rounding limits 128 bits, the precision is raised") {
  const Task task{5, 4, TriggerRange::kPaper};
  WorstCaseOptions options;
  options.adversary_witnesses = false;
  const WorstCaseBound b = bound_worst_case(sink_family<double>(5, 100.0), task, options);
  CHECK(b.verdict == Verdict::kEnclosed);
  CHECK_FALSE(b.budget_exhausted);
  CHECK_FALSE(b.precision_floor);
  CHECK(b.bits_requested == 128);
  // 192 bits requested, 194 allocated (scalar_traits.h): the bits used
  const int used = bits_for_digits10(digits10_for_bits(192));
  CHECK(b.bits == used);
  CHECK(b.evidence.bits == used);
  PrecisionScope high(1024);
  const Mpfr truth = sink_worst_case(4, 100.0);
  CHECK(b.lower <= truth);
  CHECK(b.upper >= truth);
  const std::string text = summary_text(b, task, options.relative_gap);
  CHECK(text.find("precision raised from 128 to " + std::to_string(used)) != std::string::npos);
  CHECK(text.find("precision: " + std::to_string(used) + " bits") != std::string::npos);
}

TEST_CASE("at the precision cap the report names the precision floor and the bits needed") {
  const Task task{5, 4, TriggerRange::kPaper};
  WorstCaseOptions options;
  options.adversary_witnesses = false;
  options.max_bits = 128;  // no raise allowed
  const WorstCaseBound b = bound_worst_case(sink_family<double>(5, 100.0), task, options);
  CHECK(b.verdict == Verdict::kNotEnclosed);
  CHECK(b.precision_floor);
  CHECK_FALSE(b.budget_exhausted);
  CHECK(b.bits == 128);
  // the rounding width ~1e-38 against 0.5 * 0.01 * 1.1e-43: 2^18 more, so
  // 128 + 64 bits
  CHECK(b.bits_suggested == 192);
  CHECK(b.boxes == 3);  // no bisection of boxes that rounding limits
  PrecisionScope high(1024);
  CHECK(b.upper >= sink_worst_case(4, 100.0));
  const std::string text = summary_text(b, task, options.relative_gap);
  CHECK(text.find("precision floor") != std::string::npos);
  CHECK(text.find("--bits 192") != std::string::npos);
  CHECK(text.find("budget") == std::string::npos);
}

TEST_CASE("bisect refuses a coordinate at adjacent doubles") {
  ContentBox box{1, {-1.0, 0.5}, {1.0, std::nextafter(0.5, 1.0)}, 0};
  ContentBox left, right;
  CHECK_FALSE(bisect(box, 1, left, right));
  CHECK(left.lo.empty());  // untouched
  REQUIRE(bisect(box, 0, left, right));
  CHECK(left.hi[0] == 0.0);
  CHECK(right.lo[0] == 0.0);
  CHECK(left.depth == 1);
  CHECK(right.hi[1] == box.hi[1]);
}

// One content variable (n = 4, L = 2) and a model whose softmax saturates
// between adjacent doubles (A of 1e308): bisection reaches a box at
// adjacent doubles whose bound rounding does not limit. The search must stop
// there, not split it into itself until the budget runs out.
TEST_CASE("a box at adjacent doubles stops the search instead of looping") {
  const Task task{4, 2, TriggerRange::kPaper};
  Matrix<double> A(4, 4), M = Matrix<double>::Constant(4, 4, 1e308);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) A(r, c) = (r + c) % 2 ? -1e308 : 1e308;
  }
  WorstCaseOptions options;
  options.adversary_witnesses = false;
  options.max_boxes = 100000;
  // no gap but 0 stops it (with the default gap the values' hull,
  // value_hull_bound.h, closes it before any box is that small)
  options.relative_gap = 0;
  const WorstCaseBound b =
      bound_worst_case(single_head_model<double>(AttentionKind::kSoftmax, A, M), task, options);
  CHECK(b.box_unsplittable);
  CHECK_FALSE(b.budget_exhausted);
  CHECK(b.boxes < 5000);
  CHECK(b.bits == 128);  // more precision would not help: not raised
  CHECK(b.stop_reason.find("adjacent doubles") != std::string::npos);
}

// The exact model a weight file denotes: beta = 100/7 is not a double. Its
// entries are enclosed in MPFI, so the bound encloses the exact model's E,
// and not that of the model rounded to double (E differs by ~1e-15
// relative, the enclosure is ~1e-38 wide).
TEST_CASE("an exact rational model is bounded as itself") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Rational beta(100, 7);
  const Model<Rational> m = sink_family<Rational>(5, beta);
  WorstCaseOptions options;
  options.adversary_witnesses = false;
  const WorstCaseBound b = bound_worst_case(m, task, options);
  CHECK(b.verdict == Verdict::kEnclosed);
  PrecisionScope high(1024);
  const Mpfr truth = Mpfr(3) / (bmp::exp(scalar_cast<Mpfr>(beta)) + 3);
  CHECK(b.lower <= truth);
  CHECK(b.upper >= truth);
  const Mpfr rounded = Mpfr(3) / (bmp::exp(Mpfr(scalar_cast<double>(beta))) + 3);
  CHECK_FALSE((b.lower <= rounded && rounded <= b.upper));
  const UpperBoundCheck claim =
      check_upper_bound(m, task, 1.01 * truth.convert_to<double>(), options);
  CHECK(claim.verdict == Verdict::kVerified);
}

TEST_CASE("multi-layer models are refused") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m =
      testing::random_model(5, AttentionKind::kSoftmax, 0.5, 1, 2, 1, ModelKind::kResidual);
  CHECK_THROWS_AS(bound_worst_case(m, task, WorstCaseOptions{}), std::invalid_argument);
}

// max e(X) over a grid of (steps + 1)^V contents in double, every trigger
// (V = content variables, small): an independent lower bound on E.
double grid_worst(const Model<double>& m, const Task& task, int steps) {
  const int vars = content_variables(task);
  double worst = 0.0;
  std::vector<int> index(vars, 0);
  while (true) {
    std::vector<double> flat(vars);
    for (int v = 0; v < vars; ++v) flat[v] = -1.0 + 2.0 * index[v] / steps;
    for (int j : task.trigger_positions()) {
      const Matrix<double> X = make_input<double>(task, j, unflatten_content(task, flat));
      const auto out = forward(m, X, false).output;
      worst = std::max(worst, linf_error(out, make_target(X, j, TargetKind::kPlain)).value);
    }
    int v = 0;
    while (v < vars && ++index[v] > steps) index[v++] = 0;
    if (v == vars) return worst;
  }
}

WorstCaseOptions gap_and_boxes(double gap, long boxes) {
  WorstCaseOptions options;
  options.relative_gap = gap;
  options.max_boxes = boxes;
  return options;
}

TEST_CASE("gated attention: enclosed within 1%, above a grid's worst, false claims refused") {
  // n = 4, L = 3: two content variables, so a 101 x 101 grid sees E
  const Task task{4, 3, TriggerRange::kPaper};
  const Model<double> m = testing::random_model(4, AttentionKind::kGated, 0.8, 3);
  const WorstCaseOptions options = gap_and_boxes(0.01, 4000);
  const WorstCaseBound b = bound_worst_case(m, task, options);
  CHECK(b.verdict == Verdict::kEnclosed);
  CHECK(b.relative_gap <= 0.01);
  const double grid = grid_worst(m, task, 100);
  MESSAGE("gated: " << b.lower << " <= E <= " << b.upper << ", grid " << grid << ", " << b.boxes
                    << " boxes");
  CHECK(b.upper >= Mpfr(grid));
  // the grid is within 1% of E here: the lower bound is not far below it
  CHECK(b.lower >= Mpfr(0.99 * grid));
  REQUIRE(b.per_trigger.size() == 2);
  for (const TriggerBound& t : b.per_trigger) CHECK(t.upper <= b.upper);
  const UpperBoundCheck refused = check_upper_bound(m, task, 0.98 * grid, options);
  CHECK(refused.verdict == Verdict::kNotVerified);
  CHECK(refused.bound.witness_trigger > 0);
  const UpperBoundCheck accepted = check_upper_bound(m, task, 1.02 * grid, options);
  CHECK(accepted.verdict == Verdict::kVerified);
}

TEST_CASE("gated attention at n = 5, L = 4: the bound clears every sampled input") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m = testing::random_model(5, AttentionKind::kGated, 0.5, 1);
  const WorstCaseBound b = bound_worst_case(m, task, gap_and_boxes(0.05, 300));
  CHECK(b.upper >= Mpfr(sampled_worst(m, task, 200, 7)));
  CHECK(b.lower <= b.upper);
}

TEST_CASE("the per-trigger enclosures cover the run's and each holds its own witnesses") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m = testing::random_model(5, AttentionKind::kSoftmax, 0.2, 2);
  const WorstCaseBound b = bound_worst_case(m, task, gap_and_boxes(0.01, 200));
  REQUIRE(b.per_trigger.size() == 3);
  Mpfr top_lower(0), top_upper(0);
  long boxes = 0;
  for (const TriggerBound& t : b.per_trigger) {
    CHECK(t.lower <= t.upper);
    if (t.lower > top_lower) top_lower = t.lower;
    if (t.upper > top_upper) top_upper = t.upper;
    boxes += t.boxes;
  }
  CHECK(top_lower == b.lower);
  CHECK(top_upper <= b.upper);
  CHECK(boxes == b.boxes);
  CHECK(summary_text(b, task, 0.01).find("  trigger j = 3: ") != std::string::npos);
}

// A run stopped by its deadline may overrun it by the work between two
// checks, milliseconds at these sizes: 2 s plus 10 % of the budget leaves a
// factor of hundreds for a loaded machine, so the wall-time check only
// catches a deadline that is ignored (the tests check the mechanism: the
// result says the budget ran out, and the enclosure is still true).
constexpr double kOverrunSeconds = 2.0;
constexpr double kOverrunShare = 0.1;
// A budget far shorter than the run needs (a relative gap of 1e-9 on
// content-dependent scores takes minutes of boxes).
constexpr double kTinyBudget = 0.2;

// n = 6, L = 6: content-dependent softmax scores, so the gap closes slowly.
Model<double> slow_softmax() { return testing::random_model(6, AttentionKind::kSoftmax, 0.5, 3); }

TEST_CASE("a budget of 0.2 s stops the run in time with a true enclosure") {
  const Task task{6, 6, TriggerRange::kPaper};
  const Model<double> m = slow_softmax();
  WorstCaseOptions o;
  o.relative_gap = 1e-9;
  o.max_boxes = 1000000000;
  o.max_seconds = kTinyBudget;
  const auto t0 = std::chrono::steady_clock::now();
  const WorstCaseBound b = bound_worst_case(m, task, o);
  CHECK(seconds_since(t0) <= (1 + kOverrunShare) * kTinyBudget + kOverrunSeconds);
  CHECK(b.budget_exhausted);
  CHECK(b.stop_reason == "budget exhausted (seconds)");
  CHECK(b.verdict == Verdict::kNotEnclosed);
  // true: above the error at every vertex of the box (2^15 per trigger; the
  // 3^15-point grid cost this test a minute), and the lower end is attained
  CHECK(b.lower <= b.upper);
  for (const TriggerBound& t : b.per_trigger) {
    CHECK(t.upper.convert_to<double>() >= testing::grid_max(m, task, t.trigger, 2));
  }
  REQUIRE(b.witness_trigger > 0);
  PrecisionScope scope(128);
  CHECK(certified_error_lower(m.cast<Mpfi>(), task, b.witness_trigger, b.witness_content) >=
        b.lower);
}

TEST_CASE("a budget too short for the whole attack: its round on the triggers that fit") {
  // n = 16, L = 32: the whole round is expected at 4.7e-7 x 32^3 x 16^2 =
  // 3.9 s (measured 1.9 s on a trained model), half of 2 s takes about
  // 31 x 1 / 3.9, 7 of the 31 triggers
  const Task task{16, 32, TriggerRange::kPaper};
  const Model<double> m = testing::random_model(16, AttentionKind::kSoftmax, 0.5, 7);
  WorstCaseOptions o;
  o.max_seconds = 2;
  const WorstCaseBound b = bound_worst_case(m, task, o);
  INFO(b.budget_note);
  CHECK(b.budget_note.find("the attack's round 0 on ") != std::string::npos);
  CHECK(b.budget_note.find(" of 31 triggers, evenly spaced (the whole round: about ") !=
        std::string::npos);
  CHECK(b.budget_note.find(" s expected, more than 50 % of the time left)") != std::string::npos);
  CHECK(b.budget_note.find("witnesses skipped") == std::string::npos);
  // its witnesses are certified: the lower end is at least the best of them
  REQUIRE(std::isfinite(b.attack_lower));
  CHECK(b.attack_lower > 0);
  CHECK(b.lower >= b.attack_lower);
  CHECK(b.lower <= b.upper);
  // the report's attack line and the JSON say how many it searched
  CHECK(b.attack_triggers >= 1);
  CHECK(b.attack_triggers < 31);
  const std::string k = std::to_string(b.attack_triggers);
  CHECK(b.budget_note.find("round 0 on " + k + " of 31 triggers") != std::string::npos);
  CHECK(summary_text(b, task, o.relative_gap)
            .find("attack (round 0, seed 0, on " + k + " of 31 triggers; its witnesses offered") !=
        std::string::npos);
  CHECK(to_json(b, task, o.relative_gap)["attack_triggers"] == b.attack_triggers);
}

TEST_CASE("a deadline passed before the first pass: every trigger bounded by its values' hull") {
  const Task task{6, 6, TriggerRange::kPaper};
  const Model<double> m = slow_softmax();
  WorstCaseOptions o;
  o.max_seconds = 0;
  const WorstCaseBound b = bound_worst_case(m, task, o);
  CHECK(b.budget_exhausted);
  CHECK(b.lower == 0);  // no witness: the attack did not fit either
  CHECK(b.boxes == 0);
  CHECK(b.triggers_unbounded == 0);
  CHECK(b.budget_note.find("attack's witnesses skipped") != std::string::npos);
  const std::string all = std::to_string(task.trigger_positions().size());
  CHECK(b.budget_note.find(all + " of " + all + " triggers bounded by the values' hull alone") !=
        std::string::npos);
  // each trigger's upper end is its hull bound, above the grid's maximum,
  // and E's the largest
  const Mpfr hull_max = testing::check_hull_upper_ends(m, task, b);
  for (const TriggerBound& t : b.per_trigger) {
    CHECK(t.upper.convert_to<double>() >= testing::grid_max(m, task, t.trigger, 2));
  }
  CHECK(b.upper == hull_max);
  const std::string text = summary_text(b, task, o.relative_gap);
  CHECK(text.find("budget: ") != std::string::npos);
  CHECK(text.find("no finite upper bound") == std::string::npos);
  // a claim above the hull is verified, one below it neither verified nor
  // refuted
  const double h = hull_max.convert_to<double>();
  CHECK(check_upper_bound(m, task, 2 * h, o).verdict == Verdict::kVerified);
  CHECK(check_upper_bound(m, task, h / 2, o).verdict == Verdict::kUndecided);
}

TEST_CASE("a deadline passed before the first pass: relu triggers unbounded, nothing claimed") {
  const Task task{6, 6, TriggerRange::kPaper};
  const Model<double> m = testing::random_model(6, AttentionKind::kRelu, 0.5, 3);
  WorstCaseOptions o;
  o.max_seconds = 0;
  const WorstCaseBound b = bound_worst_case(m, task, o);
  CHECK(bmp::isinf(b.upper));
  const std::string all = std::to_string(task.trigger_positions().size());
  CHECK(b.triggers_unbounded == static_cast<int>(task.trigger_positions().size()));
  CHECK(b.budget_note.find(all + " of " + all + " triggers not bounded") != std::string::npos);
  CHECK(summary_text(b, task, o.relative_gap).find("no finite upper bound") != std::string::npos);
  CHECK(check_upper_bound(m, task, 1e6, o).verdict == Verdict::kUndecided);
}

TEST_CASE("within a tiny budget a false claim is still refuted by the attack's witness") {
  const Task task{6, 6, TriggerRange::kPaper};
  const Model<double> m = slow_softmax();
  WorstCaseOptions o;
  o.max_seconds = kTinyBudget;
  // E > 0 for this model: the claim E <= 0 is false
  const UpperBoundCheck c = check_upper_bound(m, task, 0.0, o);
  CHECK(c.verdict == Verdict::kNotVerified);
  CHECK(c.bound.witness_trigger > 0);
  CHECK(c.bound.lower > 0);
}

TEST_CASE("progress lines carry the elapsed time and the certified enclosure") {
  const Task task{6, 6, TriggerRange::kPaper};
  std::vector<std::string> lines;
  WorstCaseOptions o;
  o.relative_gap = 1e-9;
  o.max_boxes = 40;  // the box budget ends the run: reproducible
  o.max_seconds = kNoTimeLimit;
  o.progress = [&](const std::string& line) { lines.push_back(line); };
  o.progress_seconds = 0;  // a line at every chance
  bound_worst_case(slow_softmax(), task, o);
  bool first_pass = false, loop = false;
  for (const std::string& l : lines) {
    first_pass = first_pass || l.find("first pass: ") != std::string::npos;
    loop = loop || (l.find(" boxes, E in [") != std::string::npos &&
                    l.find("[CERTIFIED]") != std::string::npos);
  }
  CHECK(first_pass);
  CHECK(loop);
  CHECK(lines.front().find(" s: ") != std::string::npos);
}

// A matrix of decimal literals, each the exact rational it denotes (as a
// weight file's entries are read).
Matrix<Rational> decimals(int n, const std::vector<std::vector<const char*>>& rows) {
  Matrix<Rational> A = Matrix<Rational>::Constant(n, n, Rational(0));
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) A(r, c) = internal::parse_decimal(rows[r][c]);
  }
  return A;
}

// Single layer, softmax, n = 4, three heads: heads 0 and 1 share one A and
// write +11.5 and -6.8 times the trigger flag into coordinate 3 (nearly
// cancelling), head 2 reads the query's trigger flag against the ordinary
// flag. Trigger 1's worst case is large but its boxes fall below the
// witness of another trigger early, so all of them are pruned.
Model<Rational> pruned_trigger_model() {
  const Matrix<Rational> A = decimals(4, {{"0", "0", "0", "0"},
                                          {"0", "-2024.4851600000002", "5698.400000000001", "0"},
                                          {"0", "0", "-4000", "0"},
                                          {"40000", "0", "0", "0"}});
  Matrix<Rational> M0 = Matrix<Rational>::Constant(4, 4, Rational(0)), M1 = M0, M2 = M0;
  M0(3, 1) = internal::parse_decimal("11.5");
  M1(3, 1) = internal::parse_decimal("-6.8");
  Matrix<Rational> A2 = Matrix<Rational>::Constant(4, 4, Rational(0));
  A2(1, 3) = Rational(30);
  M2(2, 3) = Rational(10);
  Model<Rational> m;
  m.kind = ModelKind::kSingleLayer;
  m.attention = AttentionKind::kSoftmax;
  m.n = 4;
  m.layers.push_back({Head<Rational>{A, M0}, Head<Rational>{A, M1}, Head<Rational>{A2, M2}});
  return m;
}

TEST_CASE("a trigger whose boxes were all pruned keeps a true upper end") {
  const Task task{4, 3, TriggerRange::kPaper};
  const Model<Rational> m = pruned_trigger_model();
  WorstCaseOptions o;
  o.relative_gap = 1e-6;
  o.max_boxes = 400;  // the box budget ends the run: reproducible
  o.max_seconds = kNoTimeLimit;
  const WorstCaseBound b = bound_worst_case(m, task, o);
  // the error at trigger 1, content (0.7123000000000002, -1), certified:
  // e >= 4.6685436006558771861 (eval --certify 20)
  PrecisionScope high(256);
  const Mpfr at_point = certified_error_lower(m.cast<Mpfi>(), task, 1, {0.7123000000000002, -1.0});
  CHECK(at_point > Mpfr("4.66854360065587718"));
  bool seen = false;
  for (const TriggerBound& t : b.per_trigger) {
    INFO("trigger ", t.trigger, ": [", t.lower.str(20), ", ", t.upper.str(20), "]");
    CHECK(t.lower <= t.upper);
    if (t.trigger != 1) continue;
    seen = true;
    // its upper end bounds every error of trigger 1, this one too
    CHECK(t.upper >= at_point);
    CHECK(t.upper >= Mpfr("4.6685436006558771861"));
  }
  CHECK(seen);
  CHECK(b.upper >= at_point);
}

// Theorem 3's ReLU model, n = 5, with one more score: an ordinary query
// puts s = 0.1000000000000000001 on BOS, whose value e_0 lands in
// coordinate 0 of row 1: E = 0.1000000000000000001 exactly, just above 0.1
// and far below the double 0.1 = 0.1000000000000000055511...
Model<Rational> relu_just_above_tenth() {
  Model<Rational> m = relu_construction<Rational>(5);
  m.layers[0][0].A(ordinary_flag(5), kBosFlag) = internal::parse_decimal("0.1000000000000000001");
  return m;
}

TEST_CASE("a claim is the exact decimal written, not the double nearest it") {
  const Task task{5, 4, TriggerRange::kPaper};
  WorstCaseOptions o;
  o.max_boxes = 200;
  o.max_seconds = kNoTimeLimit;
  // E <= 0.1 is false: E = 0.1000000000000000001
  const UpperBoundCheck c = check_upper_bound(relu_just_above_tenth(), task, 0.1, o);
  INFO(summary_text(c, task));
  CHECK(c.verdict == Verdict::kNotVerified);
  CHECK(c.bound.witness_trigger > 0);
  CHECK(c.bound.lower > Mpfr("0.1"));
  CHECK(summary_text(c, task).find("claim: E <= 0.1\n") != std::string::npos);
  CHECK(to_json(c, task)["claim"] == "E <= 0.1");
  // the true claim one digit further is VERIFIED
  const UpperBoundCheck t = check_upper_bound(relu_just_above_tenth(), task, 0.11, o);
  CHECK(t.verdict == Verdict::kVerified);
}

}  // namespace
}  // namespace sinkcert::theorems::bounds

namespace sinkcert::theorems::bounds {
namespace {

// A box's bound in double intervals first: on a softmax model with
// content-dependent scores it is kept, holds every sampled point's error
// and equals MPFI's bound to rounding; on the sink family at beta = 100
// (E ~ 1e-43, below double's rounding of the 1/j terms) it is refused and
// the MPFI bound is returned unchanged.
TEST_CASE("bound_box_double_first: kept where double's rounding is small, refused below it") {
  const Task task{6, 5, TriggerRange::kPaper};
  PrecisionScope scope(128);
  const Model<double> model = testing::random_model(task.n, AttentionKind::kSoftmax, 0.7, 21);
  const Model<Mpfi> exact_model = model.cast<Mpfi>();
  std::mt19937_64 eng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int j : task.trigger_positions()) {
    ContentBox box = full_content_box(task, j);
    for (int split = 0; split < 3; ++split) {
      bool used = false;
      const BoxBound fast = bound_box_double_first(exact_model, task, box, 0.01, &used);
      const BoxBound slow = bound_box(exact_model, task, box);
      CAPTURE(j);
      CAPTURE(split);
      CHECK(used);
      // both certified; they differ by rounding alone (relative 1e-9 is
      // far above double's 2^-52 per operation times O(L n) operations)
      CHECK(fast.upper >= slow.upper * (1 - 1e-9));
      CHECK(fast.upper <= slow.upper * (1 + 1e-9));
      CHECK(fast.position == slow.position);
      CHECK(fast.coordinate == slow.coordinate);
      // every point of the box has its error below the bound
      for (int s = 0; s < 50; ++s) {
        std::vector<double> content(box.lo.size());
        for (std::size_t m = 0; m < content.size(); ++m) {
          content[m] = box.lo[m] + (box.hi[m] - box.lo[m]) * (0.5 + 0.5 * u(eng));
        }
        CHECK(certified_error_lower(exact_model, task, j, content) <= fast.upper);
      }
      ContentBox left, right;
      REQUIRE(bisect(box, split, left, right));
      box = left;
    }
  }
  const Model<Mpfi> sink = sink_family<double>(5, 100.0).cast<Mpfi>();
  const Task small{5, 4, TriggerRange::kPaper};
  bool used = true;
  const BoxBound b = bound_box_double_first(sink, small, full_content_box(small, 2), 0.01, &used);
  CHECK_FALSE(used);
  CHECK(b.upper == bound_box(sink, small, full_content_box(small, 2)).upper);
}

TEST_CASE("the softmax vertex bound's time leaves the first pass its boxes at twice their pace") {
  // little left to bound: 0.8 of the time left
  CHECK(vertex_bound_seconds(100, 10, 0.1) == doctest::Approx(80));
  CHECK(vertex_bound_seconds(100, 0, 5.0) == doctest::Approx(80));
  // 30 boxes of 1 s keep 60 s (at n = 16, L = 64 a box takes about 0.5 s
  // and the share alone left the last 29 of 62 triggers unbounded)
  CHECK(vertex_bound_seconds(100, 30, 1.0) == doctest::Approx(100 - kFirstPassMargin * 30));
  // none when they need all of it
  CHECK(vertex_bound_seconds(100, 60, 1.0) == 0);
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
