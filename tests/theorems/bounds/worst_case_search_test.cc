// SPDX-License-Identifier: MIT
#include "theorems/bounds/worst_case_search.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/part_checks.h"
#include "tests/test_util.h"
#include "tests/thread_rank_group.h"
#include "theorems/bounds/deep_worst_case_bound.h"

namespace sinkcert::theorems::bounds {
namespace {

// The single-layer bound's part codec (worst_case_bound.h), as the driver
// calls it.
struct BoxBoundCodec {
  void write_bound(const BoxBound& b, PartWriter& w) const { write_box_bound(b, w); }
  BoxBound read_bound(PartReader& r) const { return read_box_bound(r); }
};

using test::check_truncations_refused;
using test::same_bits;

// node and offers written as a part (write_box_part), read back into back
// and offers_back (the box given); the part.
template <class Bound, class Codec>
std::vector<double> round_trip(const Codec& codec, const BoxNode<Bound>& node,
                               const std::vector<WitnessOffer>& offers, BoxNode<Bound>& back,
                               std::vector<WitnessOffer>& offers_back) {
  std::vector<double> part;
  PartWriter w(part);
  write_box_part(codec, node, offers, w);
  back = BoxNode<Bound>{node.box, {}, 0, Mpfr(0)};
  PartReader r(part);
  REQUIRE(read_box_part(codec, r, back, offers_back));
  CHECK(same_bits(back.bound.upper, node.bound.upper));
  CHECK(back.bound.position == node.bound.position);
  CHECK(back.bound.coordinate == node.bound.coordinate);
  CHECK(same_bits(back.bound.weight, node.bound.weight));
  CHECK(same_bits(back.rounding, node.rounding));
  CHECK(back.bits == node.bits);
  REQUIRE(offers_back.size() == offers.size());
  for (std::size_t o = 0; o < offers.size(); ++o) {
    CHECK(offers_back[o].trigger == offers[o].trigger);
    CHECK(same_bits(offers_back[o].content, offers[o].content));
    CHECK(same_bits(offers_back[o].e, offers[o].e));
  }
  return part;
}

// Whether reading p as a part of a box of Bound throws.
template <class Bound, class Codec>
bool refused_part(const Codec& codec, const ContentBox& box, const std::vector<double>& p) {
  PartReader rp(p);
  BoxNode<Bound> n{box, {}, 0, Mpfr(0)};
  std::vector<WitnessOffer> o;
  try {
    read_box_part(codec, rp, n, o);
  } catch (const std::runtime_error&) {
    return true;
  }
  return false;
}

TEST_CASE("a bounded box's part reads back bit for bit; a truncated or altered part is refused") {
  const Task task{5, 4, TriggerRange::kPaper};
  PrecisionScope scope(128);
  const Model<Mpfi> model = testing::random_model(5, AttentionKind::kSoftmax, 1.0, 41).cast<Mpfi>();
  const int j = task.trigger_positions().front();
  ContentBox box = full_content_box(task, j);
  for (std::size_t v = 0; v < box.lo.size(); ++v) box.hi[v] = -1.0 + 0.25 * (1 + v % 3);
  BoxNode<BoxBound> node{box, bound_box(model, task, box), 128, Mpfr(0)};
  // an upper end no double holds: a lossy transfer would change it
  node.bound.upper += bmp::ldexp(Mpfr(1), -100);
  REQUIRE(node.bound.upper != Mpfr(node.bound.upper.convert_to<double>()));
  const Mpfi at_vertex = certified_error(model, task, j, node.bound.vertex);
  node.rounding = width_of(at_vertex);
  std::vector<double> centre(box.lo.size());
  for (std::size_t v = 0; v < centre.size(); ++v) centre[v] = 0.5 * (box.lo[v] + box.hi[v]);
  const std::vector<WitnessOffer> offers = {{j, node.bound.vertex, at_vertex},
                                            {j, centre, certified_error(model, task, j, centre)}};
  const BoxBoundCodec codec;
  BoxNode<BoxBound> back;
  std::vector<WitnessOffer> offers_back;
  const std::vector<double> part = round_trip(codec, node, offers, back, offers_back);
  CHECK(same_bits(back.bound.vertex, node.bound.vertex));
  // a box not bounded is the part 0
  std::vector<double> none = {0.0};
  PartReader rn(none);
  CHECK_FALSE(read_box_part(codec, rn, back, offers_back));

  const auto refused = [&](const std::vector<double>& p) {
    return refused_part<BoxBound>(codec, box, p);
  };
  // every truncation, and one value more than written
  check_truncations_refused(part, refused);
  // altered: the bounded flag, the upper end's sign field (precision, kind,
  // sign), a count of witnesses
  std::vector<double> flag = part;
  flag[0] = 2.0;
  CHECK(refused(flag));
  std::vector<double> sign = part;
  sign[3] = 3.0;
  CHECK(refused(sign));
  std::vector<double> fraction = part;
  fraction[1] = 128.5;  // a precision that is no integer
  CHECK(refused(fraction));
}

// The deep bound's part codec (deep_worst_case_bound.h), as the driver
// calls it.
struct DeepBoxBoundCodec {
  void write_bound(const DeepBoxBound& b, PartWriter& w) const { write_deep_box_bound(b, w); }
  DeepBoxBound read_bound(PartReader& r) const { return read_deep_box_bound(r); }
};

TEST_CASE("a deep box's part reads back bit for bit; a truncated or altered part is refused") {
  const Task task{5, 4, TriggerRange::kPaper};
  PrecisionScope scope(128);
  const Model<Mpfi> model =
      testing::random_model(5, AttentionKind::kSoftmax, 1.0, 1, 2, 2, ModelKind::kResidual)
          .cast<Mpfi>();
  const int j = task.trigger_positions().back();
  ContentBox box = full_content_box(task, j);
  for (std::size_t v = 0; v < box.lo.size(); ++v) box.hi[v] = -1.0 + 0.25 * (1 + v % 3);
  BoxNode<DeepBoxBound> node{box, bound_deep_box(model, task, box), 128, Mpfr(0)};
  REQUIRE(!node.bound.witness.empty());
  REQUIRE(!node.bound.weight.empty());
  // ends no double holds (a lossy transfer would change them), both flags set
  node.bound.upper += bmp::ldexp(Mpfr(1), -100);
  node.bound.witness_lower += bmp::ldexp(Mpfr(1), -110);
  REQUIRE(node.bound.upper != Mpfr(node.bound.upper.convert_to<double>()));
  node.bound.cut = true;
  node.bound.symbolic = true;
  node.rounding = node.bound.witness_rounding;
  const std::vector<WitnessOffer> offers = {
      {j, node.bound.witness, Mpfi(node.bound.witness_lower, node.bound.witness_lower)}};
  const DeepBoxBoundCodec codec;
  BoxNode<DeepBoxBound> back;
  std::vector<WitnessOffer> offers_back;
  const std::vector<double> part = round_trip(codec, node, offers, back, offers_back);
  CHECK(same_bits(back.bound.witness_lower, node.bound.witness_lower));
  CHECK(same_bits(back.bound.witness_rounding, node.bound.witness_rounding));
  CHECK(same_bits(back.bound.witness, node.bound.witness));
  CHECK(back.bound.cut);
  CHECK(back.bound.symbolic);
  // flags read as written, not as "any nonzero"
  node.bound.cut = false;
  const std::vector<double> unflagged = round_trip(codec, node, offers, back, offers_back);
  CHECK_FALSE(back.bound.cut);
  CHECK(back.bound.symbolic);

  const auto refused = [&](const std::vector<double>& p) {
    return refused_part<DeepBoxBound>(codec, box, p);
  };
  // every truncation, and one value more than written
  check_truncations_refused(part, refused);
  // a cut flag of 2: found by writing the part with the flag at 0 and 1
  // and finding the one value that differs
  std::size_t at = part.size();
  for (std::size_t k = 0; k < part.size(); ++k) {
    if (part[k] != unflagged[k]) at = k;
  }
  REQUIRE(at < part.size());
  std::vector<double> flag = part;
  flag[at] = 2.0;
  CHECK(refused(flag));
}

// The enclosure's fields that must not depend on ranks or threads.
void check_same(const WorstCaseBound& a, const WorstCaseBound& b) {
  CHECK(same_bits(a.lower, b.lower));
  CHECK(same_bits(a.upper, b.upper));
  CHECK(a.boxes == b.boxes);
  CHECK(a.stop_reason == b.stop_reason);
  CHECK(a.witness_trigger == b.witness_trigger);
  CHECK(same_bits(a.witness_content, b.witness_content));
  REQUIRE(a.per_trigger.size() == b.per_trigger.size());
  for (std::size_t t = 0; t < a.per_trigger.size(); ++t) {
    CHECK(same_bits(a.per_trigger[t].lower, b.per_trigger[t].lower));
    CHECK(same_bits(a.per_trigger[t].upper, b.per_trigger[t].upper));
    CHECK(a.per_trigger[t].boxes == b.per_trigger[t].boxes);
  }
}

TEST_CASE("the box phase split by ranks and threads gives one process's enclosure bit for bit") {
  // content-dependent scores (the vertex bound caps triggers), a box budget
  // that binds long after the first pass (4 triggers), a gap never reached
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m = testing::random_model(5, AttentionKind::kSoftmax, 0.5, 3);
  // the default precision is one for the whole process (Boost's): every
  // simulated rank sets and restores the same 128 bits, never another's
  PrecisionScope scope(128);
  WorstCaseOptions o;
  o.relative_gap = 1e-9;
  o.max_boxes = 120;
  o.max_seconds = 600;
  o.adversary_witnesses = false;  // its decision depends on the time left
  o.threads = 1;
  const WorstCaseBound one = bound_worst_case(m, task, o);
  // the budget is checked before a box is split (its two children may
  // take the count one past it), as in the one-box loop
  CHECK(one.boxes >= 120);
  CHECK(one.boxes <= 121);
  CHECK(one.stop_reason == "budget exhausted (boxes)");
  CHECK(one.lower > 0);
  SUBCASE("two threads") {
    WorstCaseOptions t = o;
    t.threads = 2;
    t.threaded_box_seconds = 0;  // every batch on threads, however quick its boxes
    check_same(one, bound_worst_case(m, task, t));
  }
  SUBCASE("a batch of one box differs in order only: the enclosure is as certified") {
    WorstCaseOptions b = o;
    b.batch = 1;
    const WorstCaseBound single = bound_worst_case(m, task, b);
    CHECK(single.boxes >= 120);
    // both enclose E: their intervals meet
    CHECK(single.lower <= one.upper);
    CHECK(one.lower <= single.upper);
  }
  for (int size : {2, 3}) {
    INFO(size << " ranks");
    const auto run = [&](const WorstCaseOptions& r) { return bound_worst_case(m, task, r); };
    for (const WorstCaseBound& g : test::results_on_ranks<WorstCaseBound>(size, o, run))
      check_same(one, g);
  }
}

TEST_CASE("a residual model: first pass and box phase split by ranks, bit for bit as one process") {
  // entries of order one: every score reads the content; at n = 5, L = 4 the
  // boxes' bounds use the symbolic forms (6 content variables: bisecting
  // the widest), at n = 6, L = 6 the centred forms too (15 variables,
  // L n <= 64) with Baumann forms pruned below the lower end fixed before
  // each batch; a box budget that binds after the first pass (4 and 5
  // triggers), a gap never reached
  struct Size {
    int n, L;
    long boxes;
  };
  for (const Size& size : {Size{5, 4, 40}, Size{6, 6, 12}}) {
    INFO("n = " << size.n << ", L = " << size.L);
    const Task task{size.n, size.L, TriggerRange::kPaper};
    const Model<double> m =
        testing::random_model(size.n, AttentionKind::kSoftmax, 1.0, 1, 2, 2, ModelKind::kResidual);
    PrecisionScope scope(128);  // one for the process: every simulated rank's
    WorstCaseOptions o;
    o.relative_gap = 1e-9;
    o.max_boxes = size.boxes;
    o.max_seconds = 600;
    o.adversary_witnesses = false;
    o.threads = 1;
    const WorstCaseBound one = bound_deep_worst_case(m, task, o);
    CHECK(one.boxes >= size.boxes);
    CHECK(one.boxes <= size.boxes + 1);
    CHECK(one.stop_reason == "budget exhausted (boxes)");
    CHECK(one.lower > 0);
    CHECK(one.upper > one.lower);
    WorstCaseOptions t = o;  // two threads
    t.threads = 2;
    t.threaded_box_seconds = 0;
    check_same(one, bound_deep_worst_case(m, task, t));
    for (int ranks : {2, 3, 5}) {  // 5: more ranks than triggers at L = 4
      INFO(ranks << " ranks");
      const auto run = [&](const WorstCaseOptions& r) { return bound_deep_worst_case(m, task, r); };
      for (const WorstCaseBound& g : test::results_on_ranks<WorstCaseBound>(ranks, o, run))
        check_same(one, g);
    }
  }
}

TEST_CASE("the attack's expected time follows the cost model of the model's kind") {
  // n = 16, L = 64, one head: the screened round's work heads L^3 n^2 = 2^26,
  // the unscreened estimate layers heads L^4 n^2 = 2^32 (64 times more)
  const Task task{16, 64, TriggerRange::kPaper};
  const double screened = 67108864.0;      // 2^26
  const double unscreened = 4294967296.0;  // 2^32
  for (AttentionKind a :
       {AttentionKind::kSoftmax, AttentionKind::kSoftmaxOffByOne, AttentionKind::kRelu,
        AttentionKind::kReluCountAll, AttentionKind::kSigmoid}) {
    INFO(to_string(a));
    CHECK(attack_seconds(task, ModelKind::kSingleLayer, a, 1, 1) ==
          doctest::Approx(kScreenedAttackSecondsPerWork * screened));
  }
  // no screen: softpick, gated, several layers (per layer and head)
  CHECK(attack_seconds(task, ModelKind::kSingleLayer, AttentionKind::kSoftpick, 1, 1) ==
        doctest::Approx(kAttackSecondsPerWork * unscreened));
  CHECK(attack_seconds(task, ModelKind::kSingleLayer, AttentionKind::kGated, 1, 1) ==
        doctest::Approx(kAttackSecondsPerWork * unscreened));
  CHECK(attack_seconds(task, ModelKind::kResidual, AttentionKind::kSoftmax, 2, 2) ==
        doctest::Approx(4 * kAttackSecondsPerWork * unscreened));
}

// Whether verify bound plans the whole round 0 (every trigger of the task)
// with this deadline: attack_triggers keeps them all.
bool whole_round_planned(const Task& task, ModelKind kind, AttentionKind attention, int layers,
                         int heads, const Deadline& deadline) {
  const std::vector<int> all = task.trigger_positions();
  return attack_triggers(task, kind, attention, layers, heads, all,
                         attack_budget_share(layers) * deadline.remaining()) == all;
}

TEST_CASE("a screened round that fits a minute's share is planned, the unscreened one not") {
  // the measurement behind kScreenedAttackSecondsPerWork: 15.7 s at this
  // size; the old estimate (every model by layers heads L^4 n^2) said 512 s
  const Task task{16, 64, TriggerRange::kPaper};
  const Deadline minute = Deadline::after(120);  // a share of 60 s
  CHECK(whole_round_planned(task, ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1, minute));
  CHECK_FALSE(
      whole_round_planned(task, ModelKind::kSingleLayer, AttentionKind::kSoftpick, 1, 1, minute));
  // the expected time is on the safe side of the measured one, and the
  // share decides: a deadline of 10 s leaves 5 s, less than the round's
  CHECK(attack_seconds(task, ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1) > 15.7);
  CHECK_FALSE(whole_round_planned(task, ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1,
                                  Deadline::after(10)));
}

TEST_CASE("beyond n = 16 a screened unit is expected cheaper, and n = L = 64 fits 600 s") {
  // the recipe's n = L = 64 models: softmax 132.5 s and ReLU 76.4 s
  // measured; the estimate stays above both and within half of 600 s, so
  // verify bound --seconds 600 runs the round (at 4.7e-7 per unit it
  // expected 505 s and skipped it)
  const Task task{64, 64, TriggerRange::kReferenceCode};
  const double expected =
      attack_seconds(task, ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1);
  CHECK(expected > 132.5);
  CHECK(expected <= kAttackBudgetShare * 600);
  CHECK(whole_round_planned(task, ModelKind::kSingleLayer, AttentionKind::kRelu, 1, 1,
                            Deadline::after(600)));
  // n = 16 keeps the measured figure's double
  CHECK(screened_attack_seconds_per_work(16) == kScreenedAttackSecondsPerWork);
  CHECK(screened_attack_seconds_per_work(32) < kScreenedAttackSecondsPerWork);
}

TEST_CASE("a deep round: three quarters of the budget, never beyond the attack's work limit") {
  // softmax_4x4_s9 of results/benchmarks/pytorch_models/ (n = L = 16,
  // 4 x 4 heads, work 2^28): expected 32 s (measured 18.8 s); three
  // quarters of a minute take it, the single-layer share (half) would not
  const Task task{16, 16, TriggerRange::kPaper};
  const double expected = attack_seconds(task, ModelKind::kResidual, AttentionKind::kSoftmax, 4, 4);
  CHECK(expected > kAttackBudgetShare * 60);
  CHECK(expected <= kDeepAttackBudgetShare * 60);
  CHECK(whole_round_planned(task, ModelKind::kResidual, AttentionKind::kSoftmax, 4, 4,
                            Deadline::after(60)));
  CHECK(attack_budget_share(1) == kAttackBudgetShare);
  CHECK(attack_budget_share(2) == kDeepAttackBudgetShare);
  // L = 32: 4 x 4 x 32^4 x 16^2 = 2^32 > 2^28, skipped whatever the budget
  const Task longer{16, 32, TriggerRange::kPaper};
  CHECK_FALSE(
      search::attack_round_fits(longer, ModelKind::kResidual, AttentionKind::kSoftmax, 4, 4));
  CHECK_FALSE(whole_round_planned(longer, ModelKind::kResidual, AttentionKind::kSoftmax, 4, 4,
                                  Deadline::after(1e7)));
  CHECK(attack_skipped_note(longer, ModelKind::kResidual, AttentionKind::kSoftmax, 4, 4)
            .find("beyond the attack's work limit") != std::string::npos);
  CHECK(attack_skipped_note(task, ModelKind::kResidual, AttentionKind::kSoftmax, 4, 4)
            .find("would not fit the budget") != std::string::npos);
  // the share it quotes is the one the plan used
  CHECK(attack_skipped_note(task, ModelKind::kResidual, AttentionKind::kSoftmax, 4, 4)
            .find("75 % of the time left allowed") != std::string::npos);
  CHECK(attack_skipped_note(task, ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1)
            .find("50 % of the time left allowed") != std::string::npos);
}

TEST_CASE("attack_triggers: all when the round fits, else as many as fit, evenly spaced") {
  const Task task{16, 128, TriggerRange::kReferenceCode};
  const std::vector<int> all = task.trigger_positions();  // 2..127
  const int J = static_cast<int>(all.size());
  const auto plan = [&](const Task& t, ModelKind kind, int layers, int heads,
                        const std::vector<int>& triggers, double seconds) {
    return attack_triggers(t, kind, AttentionKind::kSoftmax, layers, heads, triggers,
                           attack_budget_share(layers) * seconds);
  };
  // no time limit, within the work limit: every trigger
  CHECK(plan(task, ModelKind::kSingleLayer, 1, 1, all, INFINITY) == all);
  // 300 s: the whole round is expected at 4.7e-7 x 128^3 x 16^2 = 252 s,
  // half of 300 s takes floor(126 x 150 / 252) = 74 of the triggers
  const double expected =
      attack_seconds(task, ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1);
  CHECK(expected == doctest::Approx(252.3).epsilon(0.01));
  const std::vector<int> some = plan(task, ModelKind::kSingleLayer, 1, 1, all, 300);
  CHECK(some.size() == 74);
  CHECK(static_cast<int>(some.size()) == static_cast<int>(std::floor(J * 150 / expected)));
  CHECK(some.front() == all.front());
  CHECK(some.back() == all.back());
  for (std::size_t i = 1; i < some.size(); ++i) {
    CHECK(some[i] > some[i - 1]);
    // evenly spaced: gaps of floor or ceil of (J - 1) / (k - 1)
    const double step = static_cast<double>(J - 1) / static_cast<double>(some.size() - 1);
    CHECK(some[i] - some[i - 1] >= std::floor(step));
    CHECK(some[i] - some[i - 1] <= std::ceil(step));
  }
  // a share that fits one trigger: the last; none: empty
  CHECK(plan(task, ModelKind::kSingleLayer, 1, 1, all, 2 * 1.5 * expected / J) ==
        std::vector<int>{all.back()});
  CHECK(plan(task, ModelKind::kSingleLayer, 1, 1, all, 0).empty());
  // beyond the work limit, whatever the budget: the share the limit allows,
  // 4 x 4 x 32^4 x 16^2 = 2^32 against 2^28, a sixteenth of 30 triggers
  const Task longer{16, 32, TriggerRange::kReferenceCode};
  const std::vector<int> deep =
      plan(longer, ModelKind::kResidual, 4, 4, longer.trigger_positions(), INFINITY);
  CHECK(deep == std::vector<int>{31});
  // a list of the caller's triggers: each costs 1 / J of the whole round,
  // and a share of 3.5 of them keeps 3 of the 5, the ends and the middle
  const std::vector<int> mine{3, 9, 40, 41, 100};
  const std::vector<int> thin =
      plan(task, ModelKind::kSingleLayer, 1, 1, mine, 2 * 3.5 * expected / J);
  CHECK(thin == std::vector<int>{3, 40, 100});
}

TEST_CASE("with_attack_certificate: the attack's certificate raises the lower end, never more") {
  PrecisionScope scope(128);
  const Mpfi e(Mpfr(0.25), Mpfr(0.5));
  CHECK(bmp::lower(with_attack_certificate(e, 0.3)) == Mpfr(0.3));
  CHECK(bmp::upper(with_attack_certificate(e, 0.3)) == Mpfr(0.5));
  CHECK(bmp::lower(with_attack_certificate(e, 0.2)) == Mpfr(0.25));   // looser: unused
  CHECK(bmp::lower(with_attack_certificate(e, 0.75)) == Mpfr(0.25));  // disagrees: unused
  CHECK(bmp::lower(with_attack_certificate(e, std::nan(""))) == Mpfr(0.25));
  const Mpfi nan_e(std::numeric_limits<Mpfr>::quiet_NaN());
  REQUIRE(interval_is_nan(nan_e));
  const Mpfi from_nan = with_attack_certificate(nan_e, 0.3);
  CHECK(bmp::lower(from_nan) == Mpfr(0.3));
  CHECK(bmp::isinf(bmp::upper(from_nan)));
}

}  // namespace
}  // namespace sinkcert::theorems::bounds
