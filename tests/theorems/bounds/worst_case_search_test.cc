// SPDX-License-Identifier: MIT
#include "theorems/bounds/worst_case_search.h"

#include <doctest/doctest.h>

namespace sinkcert::theorems {
namespace {

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

TEST_CASE("a screened round that fits a minute's share is planned, the unscreened one not") {
  // the measurement behind kScreenedAttackSecondsPerWork: 15.7 s at this
  // size; the old estimate (every model by layers heads L^4 n^2) said 512 s
  const Task task{16, 64, TriggerRange::kPaper};
  const Deadline minute = Deadline::after(120);  // a share of 60 s
  CHECK(attack_fits(task, ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1, minute));
  CHECK_FALSE(attack_fits(task, ModelKind::kSingleLayer, AttentionKind::kSoftpick, 1, 1, minute));
  // the expected time is on the safe side of the measured one, and the
  // share decides: a deadline of 10 s leaves 5 s, less than the round's
  CHECK(attack_seconds(task, ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1) > 15.7);
  CHECK_FALSE(attack_fits(task, ModelKind::kSingleLayer, AttentionKind::kSoftmax, 1, 1,
                          Deadline::after(10)));
}

}  // namespace
}  // namespace sinkcert::theorems
