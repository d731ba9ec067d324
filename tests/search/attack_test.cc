// SPDX-License-Identifier: MIT
#include "search/attack.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "src/constructions.h"
#include "src/evaluation.h"
#include "src/input_file.h"
#include "tests/test_util.h"

namespace sinkcert::search {
namespace {

using testing::near;
using testing::perturbed_relu;
using testing::random_model;
using testing::ScratchDir;

// A certified value of an exactly known quantity, rounded to double in its
// bound's direction from a 128-bit enclosure: within one ulp of the value.
constexpr double kOneUlp = 2.3e-16;

TEST_CASE("attack: the ReLU construction's worst case 0, certified on the exact model") {
  const Task task{6, 5, TriggerRange::kPaper};
  const Model<Rational> exact = relu_construction<Rational>(task.n);
  const AttackResult r = attack(exact.cast<double>(), exact, task, {});
  CHECK(r.evidence.label() == "SEARCH(lower bound)");
  CHECK(r.per_trigger.size() == 4);
  for (const Witness& w : r.per_trigger) CHECK(w.certified == 0.0);
  CHECK(r.best.certified == 0.0);
}

TEST_CASE("attack: the perturbed construction's worst case 1/2, a true lower bound") {
  const Task task{7, 5, TriggerRange::kPaper};
  const Model<Rational> exact = perturbed_relu<Rational>(task.n);
  for (bool vertex : {true, false}) {
    CAPTURE(vertex);
    AttackOptions o;
    o.vertex_search = vertex;
    const AttackResult r = attack(exact.cast<double>(), exact, task, o);
    // E = 1/2: the certified lower bound is at most E and within an ulp of it
    CHECK(r.best.certified <= 0.5);
    CHECK(near(r.best.certified, 0.5, kOneUlp));
    CHECK(r.best.position == r.best.trigger);
    CHECK(r.best.coordinate == kFirstContent);
    CHECK(r.best.certified_bits >= kCertifyStartBits);
  }
}

// Certification is on the model the file denotes, not the double model
// searched: a double model that differs from the exact one by 2^-20 in M
// moves the certified value by that much, and the certified value follows
// the exact model.
TEST_CASE("attack: certification re-evaluates the witness on the exact model") {
  const Task task{7, 5, TriggerRange::kPaper};
  const Model<Rational> exact = perturbed_relu<Rational>(task.n);
  Model<double> searched = exact.cast<double>();
  searched.layers[0][0].M(kFirstContent, kFirstContent) += std::ldexp(1.0, -20);
  const AttackResult r = attack(searched, exact, task, {});
  CHECK(r.best.certified <= 0.5);
  CHECK(near(r.best.certified, 0.5, kOneUlp));
  // the double value is the searched model's, above 1/2 by about 2^-20
  CHECK(r.best.value > 0.5 + std::ldexp(1.0, -22));
}

TEST_CASE("attack --bos: the sink family's smallest BOS mass e^2 / (e^2 + 4), an upper bound") {
  const Task task{5, 5, TriggerRange::kPaper};
  const Model<Rational> exact = sink_family<Rational>(task.n, Rational(2));
  AttackOptions o;
  o.quantity = WitnessQuantity::kBosMass;
  const AttackResult r = attack(exact.cast<double>(), exact, task, o);
  const double e2 = std::exp(2.0);
  // the true minimum (row 4, any trigger j != 4), computed in double
  const double truth = e2 / (e2 + 4);
  CHECK(r.evidence.label() == "SEARCH(upper bound)");
  CHECK(r.best.position == 4);
  CHECK(near(r.best.certified, truth, 4 * kOneUlp));
  // the trigger j = 4 has only rows 1..3 as non-trigger rows: a larger minimum
  CHECK(r.per_trigger.back().trigger == 4);
  CHECK(r.per_trigger.back().certified > truth + 0.01);
  CHECK(r.best.trigger != 4);
}

TEST_CASE("attack: at least the gradient adversary's value per trigger, and deterministic") {
  const Task task{6, 5, TriggerRange::kPaper};
  for (ModelKind mk : {ModelKind::kSingleLayer, ModelKind::kResidual}) {
    CAPTURE(to_string(mk));
    const Model<double> m = random_model(task.n, AttentionKind::kSoftmax, 0.8, 9,
                                         mk == ModelKind::kResidual ? 2 : 1, 2, mk);
    AttackOptions o;
    o.seed = 5;
    const AttackResult a = attack(m, m.cast<Rational>(), task, o);
    AdversaryOptions ao;
    ao.seed = 5;
    const AdversaryResult adv = maximize_error(m, task, ao);
    REQUIRE(a.per_trigger.size() == adv.per_trigger.size());
    for (std::size_t t = 0; t < a.per_trigger.size(); ++t) {
      CHECK(a.per_trigger[t].trigger == adv.per_trigger[t].trigger);
      CHECK(a.per_trigger[t].value >= adv.per_trigger[t].value);
    }
    const AttackResult b = attack(m, m.cast<Rational>(), task, o);
    for (std::size_t t = 0; t < a.per_trigger.size(); ++t) {
      CHECK(a.per_trigger[t].value == b.per_trigger[t].value);
      CHECK(a.per_trigger[t].certified == b.per_trigger[t].certified);
      CHECK(a.per_trigger[t].content == b.per_trigger[t].content);
    }
    CHECK(a.rounds == 1);
  }
}

// A model where only the shared starts find the worst case (n = 5, L = 4,
// softmax, normal std 3, seed 13): without sharing across triggers the
// default round stops at 14.51 at trigger 1; with it, it reaches 16.04, the
// best of trigger 1's 64 vertices. A time budget then returns at least the
// default round's certified value at every trigger.
TEST_CASE("attack: only the shared starts reach trigger 1's best vertex; a budget only adds") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Model<double> m = random_model(task.n, AttentionKind::kSoftmax, 3.0, 13);
  std::vector<double> brute(task.L, -1.0);
  testing::for_each_content_vertex(task, [&](int j, const Matrix<double>& C) {
    brute[j] = std::max(brute[j], score_error(m, task, j, C).value);
  });
  AttackOptions o;
  o.seed = 13;
  const AttackResult a = attack(m, m.cast<Rational>(), task, o);
  CHECK(a.rounds == 1);
  REQUIRE(a.per_trigger.front().trigger == 1);
  CHECK(a.per_trigger.front().value >= brute[1]);
  CHECK(a.found_by.front() == FoundBy::kShared);
  AttackOptions unshared = o;
  unshared.vertex.shared_rounds = 0;
  CHECK(attack(m, m.cast<Rational>(), task, unshared).per_trigger.front().value < 0.95 * brute[1]);
  o.seconds = 0.5;
  const AttackResult b = attack(m, m.cast<Rational>(), task, o);
  CHECK(b.rounds > 1);
  REQUIRE(b.per_trigger.size() == a.per_trigger.size());
  for (std::size_t t = 0; t < a.per_trigger.size(); ++t) {
    CHECK(b.per_trigger[t].certified >= a.per_trigger[t].certified);
  }
  CHECK(b.best.certified >= a.best.certified);
}

TEST_CASE("attack: the witness file reproduces the value through read_input_file") {
  const Task task{6, 5, TriggerRange::kReferenceCode};
  const Model<double> m = random_model(task.n, AttentionKind::kSoftmax, 0.8, 3);
  const AttackResult r = attack(m, m.cast<Rational>(), task, {});
  ScratchDir dir("attack_test");
  const std::string path = (dir.path / "witness.json").string();
  write_input_file(path, witness_tokens(task, r.best));
  const InputFile in = read_input_file(path, task.n);
  CHECK(in.trigger == r.best.trigger);
  const Evaluation<double> e = evaluate(m, in.tokens_as<double>(), in.trigger);
  CHECK(e.error.value == r.best.value);
  CHECK(e.error.position == r.best.position);
  CHECK(e.error.coordinate == r.best.coordinate);
  // another trigger's witness is a different input with a different value
  const Witness& other = r.per_trigger.front().trigger == r.best.trigger ? r.per_trigger.back()
                                                                         : r.per_trigger.front();
  CHECK(evaluate(m, witness_tokens(task, other), other.trigger).error.value != r.best.value);
}

TEST_CASE("attack: bad dimensions and triggers are refused") {
  const Task task{6, 5, TriggerRange::kPaper};
  const Model<double> m = random_model(task.n, AttentionKind::kSoftmax, 0.8, 3);
  const Model<double> small = random_model(5, AttentionKind::kSoftmax, 0.8, 3);
  CHECK_THROWS_AS(attack(small, small.cast<Rational>(), task, {}), std::invalid_argument);
  AttackOptions o;
  o.triggers = {5};
  CHECK_THROWS_AS(attack(m, m.cast<Rational>(), task, o), std::invalid_argument);
}

TEST_CASE("summary_text and to_json name the evidence and the witness") {
  const Task task{7, 5, TriggerRange::kPaper};
  const Model<Rational> exact = perturbed_relu<Rational>(task.n);
  const AttackResult r = attack(exact.cast<double>(), exact, task, {});
  const std::string text = summary_text(r);
  // 1/2 certified as 0.49999999999999994 or 0.5, printed rounded down
  CHECK((text.find("worst case found: E >= 4.99999e-01 SEARCH(lower bound)") != std::string::npos ||
         text.find("worst case found: E >= 5.00000e-01 SEARCH(lower bound)") != std::string::npos));
  const nlohmann::json j = to_json(r);
  CHECK(j["evidence"] == "SEARCH(lower bound)");
  CHECK(j["per_trigger"].size() == 4);
  CHECK(j["best"]["coordinate"] == kFirstContent);
}

}  // namespace
}  // namespace sinkcert::search
