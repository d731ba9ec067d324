// SPDX-License-Identifier: MIT
#include "theorems/bounds/bos_box_search.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "tests/part_checks.h"
#include "tests/test_util.h"
#include "tests/thread_rank_group.h"
#include "theorems/bounds/deep_bos_bound.h"

namespace sinkcert::theorems::bounds {
namespace {

using test::check_truncations_refused;
using test::same_bits;

TEST_CASE("a BOS box's part reads back bit for bit; a truncated or altered part is refused") {
  PrecisionScope scope(128);
  BosNode node{1, 2, ContentBox{3, {-1.0, 0.25}, {0.5, 1.0}, 2}, Mpfr(0), 128, Mpfr(0), {}};
  // ends no double holds: a lossy transfer would change them
  node.upper = Mpfr(1) / Mpfr(3);
  node.rounding = bmp::ldexp(Mpfr(1), -120) / Mpfr(7);
  node.slope = {0.125, 3.5e-300};
  const std::vector<BosOffer> offers = {{{0.5, -1.0}, Mpfi(Mpfr(1) / Mpfr(7), Mpfr(2) / Mpfr(7))},
                                        {{1.0, 1.0}, Mpfi(Mpfr(0.25))}};
  std::vector<double> part;
  PartWriter w(part);
  write_bos_part(node, offers, w);
  BosNode back{1, 2, node.box, Mpfr(0), 0, Mpfr(0), {}};
  std::vector<BosOffer> offers_back;
  PartReader r(part);
  REQUIRE(read_bos_part(r, back, offers_back));
  CHECK(same_bits(back.upper, node.upper));
  CHECK(same_bits(back.rounding, node.rounding));
  CHECK(back.bits == 128);
  CHECK(same_bits(back.slope, node.slope));
  REQUIRE(offers_back.size() == 2);
  for (std::size_t o = 0; o < 2; ++o) {
    CHECK(same_bits(offers_back[o].first, offers[o].first));
    CHECK(same_bits(offers_back[o].second, offers[o].second));
  }
  std::vector<double> none = {0.0};
  PartReader rn(none);
  CHECK_FALSE(read_bos_part(rn, back, offers_back));
  const auto refused = [&](const std::vector<double>& p) {
    PartReader rp(p);
    BosNode n;
    std::vector<BosOffer> o;
    try {
      read_bos_part(rp, n, o);
    } catch (const std::runtime_error&) {
      return true;
    }
    return false;
  };
  // every truncation, and one value more than written
  check_truncations_refused(part, refused);
  std::vector<double> flag = part;
  flag[0] = 2.0;
  CHECK(refused(flag));
  none.push_back(0.0);  // a part 0 with something after it
  CHECK(refused(none));
}

TEST_CASE("the split: the largest score at even depth, the widest at odd depth or with no score") {
  BosNode node;
  node.box = ContentBox{1, {-1.0, -1.0, 0.0}, {1.0, 0.0, 1.0}, 0};
  node.slope = {0.5, 2.0, 1.0};
  CHECK(choose_bos_split(node) == 1);
  node.box.depth = 1;
  CHECK(choose_bos_split(node) == 0);  // widths 2, 1, 1
  node.box.depth = 2;
  node.slope = {0.0, 0.0, 0.0};
  CHECK(choose_bos_split(node) == 0);
  node.box.lo[0] = node.box.hi[0] = 0.5;  // not splittable
  node.slope = {9.0, 0.0, 0.0};
  CHECK(choose_bos_split(node) == 1);  // no positive score left: the widest (ties: the first)
  node.box.lo = node.box.hi;
  CHECK(choose_bos_split(node) == -1);
}

// The enclosure's fields that must not depend on ranks or threads.
void check_same(const BosBound& a, const BosBound& b) {
  CHECK(same_bits(a.deficit_lower, b.deficit_lower));
  CHECK(same_bits(a.deficit_upper, b.deficit_upper));
  CHECK(a.boxes == b.boxes);
  CHECK(a.stop_reason == b.stop_reason);
  CHECK(a.witness_head == b.witness_head);
  CHECK(a.witness_row == b.witness_row);
  CHECK(a.witness_trigger == b.witness_trigger);
  CHECK(same_bits(a.witness_content, b.witness_content));
  CHECK(same_bits(a.witness_deficit, b.witness_deficit));
}

// run(options) under 1 process with 1 and 2 threads, and under 2, 3 and
// 5 simulated ranks: the same enclosure, bit for bit.
template <class Options, class Run>
void check_ranks(const Options& o, const Run& run) {
  const BosBound one = run(o);
  CHECK(one.stop_reason == "budget exhausted (boxes)");
  CHECK(one.boxes >= o.max_boxes);
  SUBCASE("two threads") {
    Options t = o;
    t.threads = 2;
    t.threaded_box_seconds = 0;
    check_same(one, run(t));
  }
  for (int size : {2, 3, 5}) {
    INFO(size << " ranks");
    for (const BosBound& g : test::results_on_ranks<BosBound>(size, o, run)) check_same(one, g);
  }
}

TEST_CASE("single-layer BOS: first pass and box phase split by ranks, one process's bits") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m = testing::random_model(5, AttentionKind::kSoftmax, 0.8, 5, 1, 2);
  PrecisionScope scope(128);  // one for the process: every simulated rank's
  BosBoundOptions o;
  o.relative_gap = 1e-12;
  o.max_boxes = 60;
  o.max_seconds = 600;
  o.threads = 1;
  check_ranks(o, [&](const BosBoundOptions& x) { return bound_min_bos(m, task, x); });
}

TEST_CASE("residual BOS: first pass and box phase split by ranks, one process's bits") {
  // layer 1 reads layer 0's output: the symbolic layer inputs, their
  // per-trigger whole-box streams shared by threads
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m =
      testing::random_model(5, AttentionKind::kSoftmax, 0.5, 11, 2, 2, ModelKind::kResidual);
  PrecisionScope scope(128);
  DeepBosOptions o;
  o.layer = 1;
  o.head = 1;
  o.relative_gap = 1e-12;
  o.max_boxes = 40;
  o.max_seconds = 600;
  o.threads = 1;
  check_ranks(o, [&](const DeepBosOptions& x) { return bound_deep_min_bos(m, task, x); });
  SUBCASE("maximum mode") {
    // the maximum mode's fields in the minimum mode's (what check_same reads)
    const auto max_run = [&](const DeepBosOptions& x) {
      const MaxBosBound b = bound_deep_max_bos(m, task, x);
      BosBound as;
      static_cast<BoxSearchOutcome&>(as) = b;
      as.deficit_lower = b.mass_lower;
      as.deficit_upper = b.mass_upper;
      as.witness_head = b.witness_head;
      as.witness_row = b.witness_row;
      as.witness_trigger = b.witness_trigger;
      as.witness_content = b.witness_content;
      as.witness_deficit = b.witness_mass;
      return as;
    };
    check_ranks(o, max_run);
  }
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
