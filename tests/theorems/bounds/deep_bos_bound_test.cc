// SPDX-License-Identifier: MIT
#include "theorems/bounds/deep_bos_bound.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "src/forward.h"
#include "src/forward_vjp.h"
#include "tests/test_util.h"

namespace sinkcert::theorems::bounds {
namespace {

const Task kTask{5, 4, TriggerRange::kPaper};

// A random residual softmax model, 2 layers x 2 heads, entries of std 0.5:
// attention rows far from uniform and layer 0 moving layer 1's input.
Model<double> deep_model() {
  return testing::random_model(5, AttentionKind::kSoftmax, 0.5, 11, 2, 2, ModelKind::kResidual);
}

// Extremes of a^{l,h}_i0 over non-trigger rows i >= 1 seen in double over
// random contents and random vertices of every trigger (dense sampling: an
// independent check of both ends of the certified enclosures).
struct Sampled {
  double min = INFINITY, max = -INFINITY;
};
std::vector<std::vector<Sampled>> sample_bos(const Model<double>& m, const Task& task,
                                             int samples) {
  std::mt19937_64 eng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<std::vector<Sampled>> out(m.num_layers(), std::vector<Sampled>(m.num_heads()));
  for (int s = 0; s < samples; ++s) {
    for (int j : task.trigger_positions()) {
      Matrix<double> C(task.L - 1, task.content_dim());
      for (int r = 0; r < C.rows(); ++r) {
        for (int c = 0; c < C.cols(); ++c) C(r, c) = s % 2 ? u(eng) : (u(eng) > 0 ? 1.0 : -1.0);
      }
      const auto r = forward(m, make_input<double>(task, j, C), true);
      for (int l = 0; l < m.num_layers(); ++l) {
        for (int h = 0; h < m.num_heads(); ++h) {
          for (int i = 1; i < task.L; ++i) {
            if (i == j) continue;
            const double a = r.attention[l][h](i, 0);
            out[l][h].min = std::min(out[l][h].min, a);
            out[l][h].max = std::max(out[l][h].max, a);
          }
        }
      }
    }
  }
  return out;
}

// Double rounding of a sampled a_i0 in [0, 1]: far below this slack.
constexpr double kDoubleSlack = 1e-12;

DeepBosOptions options_for(int layer, int head) {
  DeepBosOptions o;
  o.layer = layer;
  o.head = head;
  o.relative_gap = 0.01;
  o.max_boxes = 20000;
  o.max_seconds = 10;
  return o;
}

double min_lower(const BosBound& b) { return 1.0 - b.deficit_upper.convert_to<double>(); }

// a_i0 at a bound's witness, in double (independent of the MPFI path).
double witness_mass_double(const Model<double>& m, int layer, int head, int row, int trigger,
                           const std::vector<double>& content) {
  const auto r =
      forward(m, make_input<double>(kTask, trigger, unflatten_content(kTask, content)), true);
  return r.attention[layer][head](row, 0);
}

// Head (l, h)'s min and max BOS bounds, checked against the sampled
// extremes: CERTIFIED, on the right side of every sample, and the minimum
// at layer 0 ENCLOSED. Layer 1 reads layer 0's outputs over the whole box: its branch
// and bound converges slowly, a short budget leaves a valid enclosure.
std::pair<BosBound, MaxBosBound> sampled_bounds(const Model<double>& m, const Sampled& sampled,
                                                int l, int h) {
  DeepBosOptions o = options_for(l, h);
  if (l == 1) o.max_seconds = 2;
  BosBound lo = bound_deep_min_bos(m, kTask, o);
  MaxBosBound hi = bound_deep_max_bos(m, kTask, o);
  if (l == 0) CHECK(lo.verdict == Verdict::kEnclosed);
  CHECK(lo.evidence.label() == "CERTIFIED");
  CHECK(min_lower(lo) <= sampled.min + kDoubleSlack);
  CHECK(hi.mass_upper.convert_to<double>() >= sampled.max - kDoubleSlack);
  return {std::move(lo), std::move(hi)};
}

TEST_CASE("every head's min and max BOS enclose dense sampling; layer 0 to the gap") {
  const Model<double> m = deep_model();
  const auto sampled = sample_bos(m, kTask, 4000);
  for (int l = 0; l < 2; ++l) {
    for (int h = 0; h < 2; ++h) {
      INFO("layer " << l << " head " << h);
      const auto [lo, hi] = sampled_bounds(m, sampled[l][h], l, h);
      if (l == 0) CHECK(hi.verdict == Verdict::kEnclosed);
      // the witnesses are real inputs: their a_i0, recomputed in double,
      // lies in their enclosure
      REQUIRE(lo.witness_trigger != 0);
      REQUIRE(hi.witness_trigger != 0);
      CHECK(lo.witness_row != lo.witness_trigger);
      const double wl =
          witness_mass_double(m, l, h, lo.witness_row, lo.witness_trigger, lo.witness_content);
      CHECK(std::abs(wl - (1.0 - bmp::median(lo.witness_deficit).convert_to<double>())) <
            kDoubleSlack);
      const double wh =
          witness_mass_double(m, l, h, hi.witness_row, hi.witness_trigger, hi.witness_content);
      CHECK(std::abs(wh - bmp::median(hi.witness_mass).convert_to<double>()) < kDoubleSlack);
      if (l == 0) {
        // enclosed to the gap: no sample beats a witness by more than it allows
        CHECK(wl <= sampled[l][h].min + 0.02 * (1 - sampled[l][h].min) + kDoubleSlack);
        CHECK(wh >= sampled[l][h].max * 0.98 - kDoubleSlack);
      }
    }
  }
}

TEST_CASE(
    "off-by-one attention: the extra logit 0 is in both ends (a row-constant shift matters)") {
  // off-by-one softmax a_i0 = e^s_i0 / (1 + sum_m e^s_im): shifting a row's
  // scores together changes it, so a bound built from score differences
  // alone would miss exp(-s_i0) in the odds. Every non-BOS key's score is
  // lowered by 3, so that the odds are mostly that extra term wherever the
  // BOS mass is smallest (on the random model alone the extreme sits where
  // the keys' odds dwarf it, and dropping the term moves the bound by less
  // than the gap)
  Model<double> m = testing::random_model(5, AttentionKind::kSoftmaxOffByOne, 0.5, 11, 2, 2,
                                          ModelKind::kResidual);
  for (auto& layer : m.layers) {
    for (Head<double>& head : layer) {
      for (const int q : {kTriggerFlag, ordinary_flag(5)}) {
        head.A(q, kTriggerFlag) -= 3.0;
        head.A(q, ordinary_flag(5)) -= 3.0;
      }
    }
  }
  const auto sampled = sample_bos(m, kTask, 4000);
  for (int l = 0; l < 2; ++l) {
    for (int h = 0; h < 2; ++h) {
      INFO("layer " << l << " head " << h);
      const BosBound lo = sampled_bounds(m, sampled[l][h], l, h).first;
      // layer 0 to the gap: within twice it of the sampled smallest mass
      if (l == 0) CHECK(min_lower(lo) >= sampled[l][h].min - 0.02 * (1 - sampled[l][h].min));
    }
  }
}

TEST_CASE("no content-content scores: the smallest BOS mass sits at a vertex, and is reached") {
  // layer 0 with the content block of A zero: d_m = x_i^T A (x_m - x_0) is
  // then affine in the query's content for fixed keys and in each key's for
  // a fixed query, so T = sum_m exp(d_m) is convex in each variable alone and
  // its largest value (the smallest a_i0) lies at a vertex, all of which the
  // sampling visits (64 per trigger, 2000 vertex samples each). The query's
  // content enters several d_m, so the plain form alone is loose; to a gap
  // of 1e-6 the bound must hold that vertex and reach it.
  constexpr double kTightGap = 1e-6;
  // how far below the sampled vertex the certified end may lie: the gap
  // times a_i0 (below 1), with room for the deficit's own scale
  constexpr double kReachedVertex = 1e-5;
  Model<double> m = deep_model();
  for (Head<double>& head : m.layers[0]) {
    head.A.block(kFirstContent, kFirstContent, 2, 2).setZero();
  }
  const auto sampled = sample_bos(m, kTask, 4000);
  for (int h = 0; h < 2; ++h) {
    INFO("head " << h);
    DeepBosOptions o = options_for(0, h);
    o.relative_gap = kTightGap;
    const BosBound lo = bound_deep_min_bos(m, kTask, o);
    CHECK(lo.verdict == Verdict::kEnclosed);
    CHECK(min_lower(lo) <= sampled[0][h].min + kDoubleSlack);
    CHECK(min_lower(lo) >= sampled[0][h].min - kReachedVertex);
  }
}

// The min BOS bounds under two option sets, each checked against the
// sampled minimum (both must be valid whatever they differ in).
std::pair<BosBound, BosBound> both_valid(const Model<double>& m, const Sampled& sampled,
                                         const DeepBosOptions& first,
                                         const DeepBosOptions& second) {
  const BosBound a = bound_deep_min_bos(m, kTask, first);
  const BosBound b = bound_deep_min_bos(m, kTask, second);
  CHECK(min_lower(a) <= sampled.min + kDoubleSlack);
  CHECK(min_lower(b) <= sampled.min + kDoubleSlack);
  return {a, b};
}

TEST_CASE("layer 1 without the centred forms of layer 0's outputs: valid, and not tighter") {
  const Model<double> m = deep_model();
  const auto sampled = sample_bos(m, kTask, 2000);
  for (int h = 0; h < 2; ++h) {
    DeepBosOptions plain = options_for(1, h);
    plain.centred_layer_inputs = false;
    plain.symbolic_layer_inputs = false;  // (with them the centred forms are skipped)
    plain.max_boxes = 1;                  // the first pass only (one box per case)
    DeepBosOptions centred = plain;
    centred.centred_layer_inputs = true;
    const auto [p, c] = both_valid(m, sampled[1][h], plain, centred);
    CHECK(c.deficit_upper <= p.deficit_upper);
  }
}

// testing::twin_head_model with layer 1's heads made sinks: their entries
// scaled by 1/10, then +20 on the BOS score of every non-BOS query.
Model<double> twin_sink_model(int n, std::uint64_t seed) {
  Model<double> m = testing::twin_head_model(n, 1e-6, seed);
  for (Head<double>& h : m.layers[1]) {
    h.A *= 0.1;
    h.A(kTriggerFlag, kBosFlag) += 20.0;
    h.A(ordinary_flag(n), kBosFlag) += 20.0;
  }
  return m;
}

TEST_CASE("twin layer-0 heads: the symbolic layer inputs certify layer 1's sink, others cannot") {
  // layer 0 as in the path models (testing::twin_head_model), layer 1's
  // heads sinking (sampled min BOS 0.98)
  const Model<double> m = twin_sink_model(5, 3);
  const auto sampled = sample_bos(m, kTask, 2000);
  // measured on the first pass: deficit bound 0.029 with the symbolic inputs
  // (sampled 0.022) against 1 without; kTighter = 1/4 fails a pass that
  // ignores them
  constexpr double kTighter = 0.25;
  for (int h = 0; h < 2; ++h) {
    CAPTURE(h);
    DeepBosOptions without = options_for(1, h);
    without.symbolic_layer_inputs = false;
    without.max_boxes = 1;  // the first pass only (one box per case)
    DeepBosOptions with = without;
    with.symbolic_layer_inputs = true;
    const auto [a, b] = both_valid(m, sampled[1][h], without, with);
    CHECK(b.deficit_upper.convert_to<double>() <= kTighter * a.deficit_upper.convert_to<double>());
    const MaxBosBound top = bound_deep_max_bos(m, kTask, with);
    CHECK(top.mass_upper.convert_to<double>() >= sampled[1][h].max - kDoubleSlack);
  }
}

// Pointwise enclosure of one box's ends (deep_bos_box_ends): over random
// small boxes (half width kBoxHalfWidth, so a dropped linear term of a
// centred form, of order the half width, exceeds its quadratic slack),
// every vertex, the centre and random points of the box have their Q below
// both ends, and their layer input x^(layer) inside the enclosure the plain
// end reads. `ends_model` is the model the ends are computed on (a broken
// one to check the test fails); the points run through `m`. Returns the
// number of violations; a correct bound has none.
constexpr double kBoxHalfWidth = 0.01;

int box_end_violations(const Model<double>& m, const Model<double>& ends_model,
                       const DeepBosOptions& options, std::uint64_t seed) {
  PrecisionScope scope(80);
  const Model<Mpfi> mi = m.cast<Mpfi>(), ei = ends_model.cast<Mpfi>();
  const int cd = kTask.content_dim();
  std::mt19937_64 eng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int violations = 0;
  for (int trial = 0; trial < 6; ++trial) {
    const int i = 1 + trial % 3, j = i == 3 ? 2 : 3, vars = i * cd;
    ContentBox box{j, std::vector<double>(vars), std::vector<double>(vars), 0};
    for (int v = 0; v < vars; ++v) {
      const double c = (1.0 - kBoxHalfWidth) * u(eng);
      box.lo[v] = c - kBoxHalfWidth;
      box.hi[v] = c + kBoxHalfWidth;
    }
    // the vertices, the centre and 8 random points
    const std::vector<std::vector<double>> points =
        testing::box_sample_points(box.lo, box.hi, 8, eng);
    for (int layer = 0; layer < m.num_layers(); ++layer) {
      for (const bool deficit : {true, false}) {
        const int head = trial % m.num_heads();
        const DeepBosBoxEnds ends = deep_bos_box_ends(ei, layer, head, i, box, deficit, options);
        for (const std::vector<double>& p : points) {
          Matrix<double> C = Matrix<double>::Zero(kTask.L - 1, cd);
          for (int v = 0; v < vars; ++v) C(v / cd, v % cd) = p[v];
          const Matrix<Mpfi> X =
              Matrix<Mpfi>(make_input<double>(kTask, j, C).topRows(i + 1).cast<Mpfi>());
          const Mpfi q = deficit ? deep_point_bos_deficit(mi, layer, head, X, i)
                                 : deep_point_bos_mass(mi, layer, head, X, i);
          violations += bmp::lower(q) > ends.plain;
          violations += bmp::lower(q) > ends.centred;
          const Matrix<Mpfi> x = forward_tape(mi, X).inputs[layer];
          for (int r = 0; r <= i; ++r) {
            for (int d = 0; d < kTask.n; ++d) {
              const Mpfi& e = ends.layer_input(r, d);
              violations +=
                  bmp::lower(x(r, d)) > bmp::upper(e) || bmp::upper(x(r, d)) < bmp::lower(e);
            }
          }
        }
      }
    }
  }
  return violations;
}

TEST_CASE("one box's ends enclose Q and the layer input at every sampled point of the box") {
  DeepBosOptions symbolic, centred, plain;
  symbolic.layer = centred.layer = plain.layer = 0;
  centred.symbolic_layer_inputs = false;  // layer 1 reads layer 0's centred forms
  plain.symbolic_layer_inputs = plain.centred_layer_inputs = false;
  const Model<double> softmax = deep_model();
  for (const DeepBosOptions& o : {symbolic, centred, plain}) {
    CHECK(box_end_violations(softmax, softmax, o, 3) == 0);
  }
  for (const AttentionKind kind :
       {AttentionKind::kRelu, AttentionKind::kSigmoid, AttentionKind::kSoftmaxOffByOne}) {
    INFO(to_string(kind));
    const Model<double> m = testing::random_model(5, kind, 0.5, 12, 2, 2, ModelKind::kResidual);
    CHECK(box_end_violations(m, m, centred, 4) == 0);
    CHECK(box_end_violations(m, m, symbolic, 5) == 0);
  }
  // fed something false: ends computed with layer 0's value maps halved
  Model<double> broken = softmax;
  for (Head<double>& h : broken.layers[0]) h.M *= 0.5;
  CHECK(box_end_violations(softmax, broken, centred, 3) > 0);
  // refused: a box of the wrong size, lo > hi, row 0
  PrecisionScope scope(80);
  const Model<Mpfi> mi = softmax.cast<Mpfi>();
  const ContentBox two{3, {0.0, 0.0}, {0.1, 0.1}, 0};
  CHECK_THROWS_AS(deep_bos_box_ends(mi, 1, 0, 2, two, true, symbolic), std::invalid_argument);
  CHECK_THROWS_AS(
      deep_bos_box_ends(mi, 1, 0, 1, ContentBox{3, {0.2, 0.0}, {0.1, 0.1}, 0}, true, symbolic),
      std::invalid_argument);
  CHECK_THROWS_AS(deep_bos_box_ends(mi, 1, 0, 0, ContentBox{3, {}, {}, 0}, true, symbolic),
                  std::invalid_argument);
  CHECK_NOTHROW(deep_bos_box_ends(mi, 1, 0, 1, two, true, symbolic));
}

TEST_CASE("a box bounded past the deadline never raises the deep BOS bound above its parent's") {
  // As for the deep worst-case bound: a run stopped by its deadline ends at
  // or below the same run stopped by a box budget before its last batch (a
  // batch bounds at most 2 kBoxBatch boxes; identical until then). A deadline that passes inside a
  // box's symbolic pass leaves that box its interval bound (about 1 here): without the parent's
  // bound that would be the run's upper end. n = L = 6, so that a box takes milliseconds and the
  // deadline falls inside one.
  const Task task{6, 6, TriggerRange::kPaper};
  const Model<double> m = twin_sink_model(6, 4);
  int cut = 0;
  for (const double seconds : {0.1, 0.2, 0.4, 0.8}) {
    DeepBosOptions timed;
    timed.layer = 1;
    timed.head = 0;
    timed.relative_gap = 1e-9;
    timed.max_seconds = seconds;
    const BosBound b = bound_deep_min_bos(m, task, timed);
    if (b.boxes < 14 + 2 * kBoxBatch) continue;  // the first pass (14 boxes) and one batch
    DeepBosOptions counted = timed;
    counted.max_seconds = 1e6;
    counted.max_boxes = b.boxes - 2 * kBoxBatch;
    const BosBound before = bound_deep_min_bos(m, task, counted);
    CAPTURE(seconds);
    CAPTURE(b.boxes);
    CHECK(b.deficit_upper <= before.deficit_upper);
    ++cut;
  }
  CHECK(cut > 0);
}

TEST_CASE("a broken bound that drops layer 0's contribution fails against sampling") {
  const Model<double> m = deep_model();
  const auto sampled = sample_bos(m, kTask, 4000);
  int violated = 0;
  for (int h = 0; h < 2; ++h) {
    DeepBosOptions o = options_for(1, h);
    o.drop_layer_for_testing = 0;
    o.max_seconds = 2;
    const BosBound lo = bound_deep_min_bos(m, kTask, o);
    const MaxBosBound hi = bound_deep_max_bos(m, kTask, o);
    if (min_lower(lo) > sampled[1][h].min + kDoubleSlack) ++violated;
    if (hi.mass_upper.convert_to<double>() < sampled[1][h].max - kDoubleSlack) ++violated;
  }
  CHECK(violated > 0);
}

TEST_CASE("one residual layer: the same enclosure as the single-layer BOS bound") {
  Model<double> deep =
      testing::random_model(5, AttentionKind::kSoftmax, 0.7, 12, 1, 2, ModelKind::kResidual);
  Model<double> single = deep;
  single.kind = ModelKind::kSingleLayer;
  for (int h = 0; h < 2; ++h) {
    BosBoundOptions so;
    so.head = h;
    const BosBound s = bound_min_bos(single, kTask, so);
    const BosBound d = bound_deep_min_bos(deep, kTask, options_for(0, h));
    CHECK(d.deficit_lower <= s.deficit_upper);
    CHECK(s.deficit_lower <= d.deficit_upper);
    const MaxBosBound sm = bound_max_bos(single, kTask, so);
    const MaxBosBound dm = bound_deep_max_bos(deep, kTask, options_for(0, h));
    CHECK(dm.mass_lower <= sm.mass_upper);
    CHECK(sm.mass_lower <= dm.mass_upper);
  }
}

TEST_CASE("claims: true ones VERIFIED, false ones NOT VERIFIED with a witness below / above") {
  const Model<double> m = deep_model();
  const auto sampled = sample_bos(m, kTask, 1000);
  const BosBound lo = bound_deep_min_bos(m, kTask, options_for(0, 0));
  const double certified_min = min_lower(lo);
  REQUIRE(certified_min > 1e-3);
  const BosClaimCheck yes = check_deep_min_bos(m, kTask, certified_min - 1e-3, options_for(0, 0));
  CHECK(yes.verdict == Verdict::kVerified);
  CHECK(yes.margin > 0);
  // a false claim on a head of layer 1: its witness is below the claim
  const double false_claim = 0.5 * (sampled[1][0].min + sampled[1][0].max);  // half-way
  DeepBosOptions o = options_for(1, 0);
  o.max_seconds = 5;
  const BosClaimCheck no = check_deep_min_bos(m, kTask, false_claim, o);
  REQUIRE(no.verdict == Verdict::kNotVerified);
  CHECK(1.0 - bmp::upper(no.bound.witness_deficit).convert_to<double>() < false_claim);
  CHECK(witness_mass_double(m, 1, 0, no.bound.witness_row, no.bound.witness_trigger,
                            no.bound.witness_content) < false_claim);
  const MaxBosClaimCheck cap_no = check_deep_max_bos(m, kTask, false_claim, o);
  CHECK(cap_no.verdict == Verdict::kNotVerified);
  const MaxBosBound hi = bound_deep_max_bos(m, kTask, options_for(0, 0));
  const MaxBosClaimCheck cap_yes = check_deep_max_bos(
      m, kTask, std::min(1.0, hi.mass_upper.convert_to<double>() + 1e-3), options_for(0, 0));
  CHECK(cap_yes.verdict == Verdict::kVerified);
  // the report: a claim needs its head; without one every head's line
  CHECK_THROWS_AS(deep_bos_report(m, kTask, BosMode::kMin, 0.5, DeepBosOptions{}),
                  std::invalid_argument);
  DeepBosOptions all;
  all.max_seconds = 4;
  const BosReport r = deep_bos_report(m, kTask, BosMode::kMin, std::nullopt, all);
  CHECK(r.text.find("layer 1, head 1: min BOS in [") != std::string::npos);
  CHECK(r.text.find("VERIFIED") == std::string::npos);
  CHECK(r.json["heads"].size() == 4);
  const BosReport c = deep_bos_report(m, kTask, BosMode::kMin, false_claim, o);
  CHECK(c.verdict == Verdict::kNotVerified);
  CHECK(c.witness.has_value());
  CHECK(c.text.find("verdict: NOT VERIFIED") != std::string::npos);
}

TEST_CASE("a budget of 0.3 s stops the deep BOS bound in time with a valid enclosure") {
  // L = 16: the first pass alone (120 boxes) takes longer than the budget,
  // so the budget, not the gap, ends the run
  const Task task{8, 16, TriggerRange::kPaper};
  const Model<double> m =
      testing::random_model(8, AttentionKind::kSoftmax, 0.7, 5, 2, 2, ModelKind::kResidual);
  DeepBosOptions o = options_for(1, 1);
  o.relative_gap = 1e-9;
  o.max_seconds = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  const BosBound b = bound_deep_min_bos(m, task, o);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(seconds < 2.3);
  CHECK(b.budget_exhausted);
  // the cases left unbounded: D <= 1 is the trivial upper end
  CHECK(b.trivial_upper);
  CHECK(b.deficit_upper == 1);
  // ENCLOSED only where that trivial end closes the gap itself (a witness
  // with a_i0 <= 1e-9 D): 1 - lower <= 1e-9 lower, said in the stop reason
  CAPTURE(b.deficit_lower.convert_to<double>());
  if (b.verdict == Verdict::kEnclosed) {
    CHECK(Mpfr(1) - b.deficit_lower <= Mpfr(o.relative_gap) * b.deficit_lower);
    CHECK(b.stop_reason.find("with the trivial end") != std::string::npos);
  } else {
    CHECK(Mpfr(1) - b.deficit_lower > Mpfr(o.relative_gap) * b.deficit_lower);
  }
  if (b.witness_trigger != 0) CHECK(b.deficit_lower <= b.deficit_upper);
}

TEST_CASE("a budget that bounds nothing: the trivial ends [0, 1], marked, never infinite") {
  const Model<double> m = deep_model();
  DeepBosOptions o = options_for(1, 0);
  o.max_seconds = 0;  // the first pass bounds no case, and no witness is met
  const BosBound b = bound_deep_min_bos(m, kTask, o);
  CHECK(b.boxes == 0);
  CHECK(b.witness_trigger == 0);
  CHECK(b.deficit_lower == 0);
  CHECK(b.deficit_upper == 1);
  CHECK(b.trivial_lower);
  CHECK(b.trivial_upper);
  CHECK(b.verdict == Verdict::kNotEnclosed);
  CHECK(b.evidence.label() == "CERTIFIED");
  CHECK(min_bos_text(b, 12).find("inf") == std::string::npos);
  CHECK(trivial_ends_text(b).find("trivial ends: a_i0 >= 0, a_i0 <= 1") != std::string::npos);
  const MaxBosBound mb = bound_deep_max_bos(m, kTask, o);
  CHECK(mb.mass_lower == 0);
  CHECK(mb.mass_upper == 1);
  CHECK(max_bos_text(mb, 12).find("inf") == std::string::npos);
  // the report, text and JSON, for every head and both modes
  DeepBosOptions all;
  all.max_seconds = 0;
  for (BosMode mode : {BosMode::kMin, BosMode::kMax}) {
    const BosReport r = deep_bos_report(m, kTask, mode, std::nullopt, all);
    CAPTURE(r.text);
    // no infinite end (the relative gap over [0, 1] is infinite, and says so)
    CHECK(r.text.find("[-inf") == std::string::npos);
    CHECK(r.text.find("inf]") == std::string::npos);
    CHECK(r.text.find(" in [0, 1]") != std::string::npos);
    CHECK(r.text.find("trivial ends") != std::string::npos);
    CHECK(r.verdict == Verdict::kNotEnclosed);
    // no head certified to sink, nor not to: undecided
    CHECK(r.text.find("meaning: undecided") != std::string::npos);
    REQUIRE(r.json["heads"].size() == 4);
    for (const auto& h : r.json["heads"]) {
      const auto& e = h[mode == BosMode::kMin ? "min" : "max"];
      CHECK(e["lo_exact"] == "0");
      CHECK(e["hi_exact"] == "1");
      CHECK(e["lo_trivial"] == true);
      CHECK(e["hi_trivial"] == true);
    }
  }
  // claims read the clamped ends: min BOS >= 0 and max BOS <= 1 hold on
  // every input (VERIFIED), min BOS >= 0.5 is left UNDECIDED
  CHECK(check_deep_min_bos(m, kTask, 0.0, o).verdict == Verdict::kVerified);
  CHECK(check_deep_max_bos(m, kTask, 1.0, o).verdict == Verdict::kVerified);
  CHECK(check_deep_min_bos(m, kTask, 0.5, o).verdict == Verdict::kUndecided);
  CHECK(check_deep_max_bos(m, kTask, 0.5, o).verdict == Verdict::kUndecided);
  // ReLU attention: relu(s) / divisor has no upper end, so only a_i0 >= 0 is trivial
  Model<double> relu = m;
  relu.attention = AttentionKind::kRelu;
  const BosBound rb = bound_deep_min_bos(relu, kTask, o);
  CHECK(rb.deficit_upper == 1);
  CHECK(rb.trivial_upper);
  CHECK_FALSE(rb.trivial_lower);
  CHECK(bmp::isinf(rb.deficit_lower));
  CHECK(min_bos_text(rb, 12).find("min BOS in [0") != std::string::npos);
  const MaxBosBound rm = bound_deep_max_bos(relu, kTask, o);
  CHECK(rm.mass_lower == 0);
  CHECK(bmp::isinf(rm.mass_upper));
}

TEST_CASE("a finished bound keeps its own ends: nothing trivial") {
  const BosBound b = bound_deep_min_bos(deep_model(), kTask, options_for(0, 0));
  CHECK_FALSE(b.trivial_lower);
  CHECK_FALSE(b.trivial_upper);
  CHECK(trivial_ends_text(b).empty());
}

TEST_CASE("refused: single-layer models, softpick, a head or layer that does not exist") {
  const Model<double> m = deep_model();
  Model<double> single = m;
  single.kind = ModelKind::kSingleLayer;
  CHECK_THROWS_AS(bound_deep_min_bos(single, kTask, options_for(0, 0)), std::invalid_argument);
  Model<double> softpick = m;
  softpick.attention = AttentionKind::kSoftpick;
  CHECK_THROWS_AS(bound_deep_max_bos(softpick, kTask, options_for(0, 0)), std::invalid_argument);
  CHECK_THROWS_AS(bound_deep_min_bos(m, kTask, options_for(2, 0)), std::invalid_argument);
  CHECK_THROWS_AS(bound_deep_min_bos(m, kTask, options_for(0, 2)), std::invalid_argument);
  CHECK_THROWS_AS(bound_deep_min_bos(m, kTask, options_for(-1, 0)), std::invalid_argument);
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
