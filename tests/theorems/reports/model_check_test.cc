// SPDX-License-Identifier: MIT
#include "theorems/reports/model_check.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "search/attack.h"
#include "search/paper_recipe.h"
#include "src/constructions.h"
#include "src/limits.h"
#include "src/weight_file.h"
#include "tests/test_util.h"

namespace sinkcert::theorems::reports {
namespace {

// n = 5, L = 4: every step runs in well under a second per model.
constexpr int kN = 5, kL = 4;
// A budget large enough for the bounds to enclose these small models (a
// few seconds on the shared machine), small enough for a unit test.
constexpr double kSeconds = 8;

const Task kTask{kN, kL, TriggerRange::kPaper};

// Adam steps of the trained ReLU model below: enough to move it well away
// from its random start (a fraction of a second at this size).
constexpr long kTrainingSteps = 3000;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

CheckReport run(const Model<double>& m, const Task& task = kTask, double seconds = kSeconds) {
  WeightFile file = weight_file_from_model(m);
  file.path = "mem.json";
  CheckOptions options;
  options.seconds = seconds;
  return check_model(file, task, options);
}

TEST_CASE("the sink family solves the task and sinks, certified") {
  const CheckReport r = run(sink_family<double>(kN, 30.0));
  INFO(r.summary());
  CHECK(r.solves == CheckReport::Solves::kYes);
  CHECK(r.sinks == Decision::kYes);
  CHECK(r.sinks_evidence == "CERTIFIED");
  // E ~ (L - 1) e^(-30) ~ 3e-13, enclosed by the bound
  CHECK(r.worst_case.verdict == Verdict::kEnclosed);
  CHECK(Rational(r.e_upper) <= r.bars.tolerance);
  CHECK(r.e_lower <= r.e_upper);
  CHECK(r.e_upper < 1e-10);
  // the BOS bound applies to a single-layer softmax model: min BOS near 1
  CHECK(r.min_bos.verdict != Verdict::kNotApplicable);
  CHECK(r.min_bos.lower > 0.99);
  CHECK_FALSE(r.relu);
  const std::string s = r.summary();
  CHECK(contains(s, "-> solves the task: E <= "));
  CHECK(contains(s, " <= 5e-3 (tolerance), CERTIFIED\n"));
  CHECK(contains(s, "-> sinks on every input: min BOS >= "));
  CHECK(contains(s, " >= 0.5 (sink bar), CERTIFIED\n"));
  CHECK(contains(s, "[CERTIFIED"));
  CHECK(contains(s, "[NUMERIC(53)]"));
  CHECK(contains(s, "SEARCH(lower bound)"));
  CHECK_FALSE(contains(s, "VERIFIED"));
  // the report's forms carry the same conclusions
  const nlohmann::json j = r.to_json();
  CHECK(j["conclusion"]["solves_task"] == "solves the task");
  CHECK(j["conclusion"]["sinks"] == "sinks");
  CHECK(j["conclusion"]["tolerance"] == "5e-3");
  CHECK(j["conclusion"]["sink_bar"] == "0.5");
  CHECK(j["conclusion"]["solves_text"] == r.solves_text);
  CHECK(j["worst_case_bound"]["verdict"] == "ENCLOSED");
  CHECK(contains(r.markdown(), "](attention_mean_std.png)"));
  CHECK(r.witness_tokens.rows() == kL);
}

TEST_CASE("a random model does not solve the task, with a certified witness") {
  const CheckReport r = run(testing::random_model(kN, AttentionKind::kSoftmax, 1.0, 7));
  INFO(r.summary());
  CHECK(r.solves == CheckReport::Solves::kNo);
  REQUIRE(r.attack);
  // the attack's certified lower bound is a true lower end of E
  CHECK(Rational(r.attack->best.certified) > r.bars.tolerance);
  CHECK(r.e_lower >= r.attack->best.certified);
  CHECK(contains(r.summary(), "-> does not solve the task"));
  CHECK(contains(r.summary(), "at trigger " + std::to_string(r.attack->best.trigger)));
  CHECK_FALSE(contains(r.summary(), "VERIFIED"));
}

TEST_CASE("an attack round longer than its share runs on the triggers that fit it") {
  // n = 16, L = 64: the whole round is expected at 4.7e-7 x 64^3 x 16^2 =
  // 31.5 s; a quarter of 5.6 s takes floor(63 x 1.4 / 31.5) = 2 of the 63
  // triggers, the first and the last
  const CheckReport r = run(testing::random_model(16, AttentionKind::kSoftmax, 0.5, 3),
                            Task{16, 64, TriggerRange::kPaper}, 5.6);
  INFO(r.summary());
  REQUIRE(r.attack);
  REQUIRE(r.attack->per_trigger.size() == 2);
  CHECK(r.attack->per_trigger.front().trigger == 1);
  CHECK(r.attack->per_trigger.back().trigger == 63);
  CHECK(r.attack_note ==
        "round 0 on 2 of 63 triggers, evenly spaced (the whole round: about 31.5 s expected, "
        "more than the attack's 1.4 s)");
  CHECK(contains(r.summary(), "attack: round 0 on 2 of 63 triggers"));
  CHECK(r.to_json()["attack"]["note"] == r.attack_note);
  // its witness is certified: a lower end of E
  CHECK(r.e_lower >= r.attack->best.certified);
}

TEST_CASE("the probe set's worst input, certified, is a lower end of E whatever else runs") {
  // L = 480, gated attention (no vertex move screen): one attack round
  // (L^4 n^2 = 1.3e12 > 2^28) and one box of the bound (L^2 n (L + n) =
  // 5.6e8 > 2^29) are beyond their size limits, and the BOS bound finds no
  // time left after the probes, so the probes are the only inputs
  // evaluated
  const CheckReport r = run(testing::random_model(kN, AttentionKind::kGated, 1.0, 3),
                            Task{kN, 480, TriggerRange::kPaper}, 0.1);
  INFO(r.summary());
  REQUIRE_FALSE(r.attack);
  CHECK(r.worst_case.verdict == Verdict::kNotApplicable);
  // each refusal names the limit the model violates, with its value, and
  // the --L that would fit (n = 5: L^4 n^2 <= 2^28 up to L = 57; one box
  // up to L = 473); L has no limit of its own
  CHECK(r.attack_note ==
        "one round at L = 480 is beyond the attack's work limit layers heads L^4 n^2 <= 2^28 "
        "(here 1.33e+12; src/limits.h); --L 57 or less fits");
  CHECK(r.worst_case.why ==
        "beyond the bound's size limits: one box, L^2 n (L + n) max(1, bits / 512)^1.5 = "
        "5.59e+08 > 2^29 at L = 480; --L 473 or less fits");
  CHECK(r.min_bos.verdict != Verdict::kEnclosed);
  // the certified value at the worst probe: its double value up to the
  // double evaluation's rounding (relative 1e-12, thousands of ulps at L =
  // 480), and it is the report's lower end
  REQUIRE(std::isfinite(r.probe_witness.certified));
  CHECK(r.probe_witness.certified > 0);
  CHECK(std::abs(r.probe_witness.certified - r.bos.error_max) <= 1e-12 * r.bos.error_max);
  CHECK(r.e_lower == r.probe_witness.certified);
  CHECK(r.e_lower_source == "probe set's worst input");
  CHECK(contains(r.summary(), "[CERTIFIED; lower end from the probe set's worst input]"));
  CHECK_FALSE(contains(r.summary(), "0.000e+00 <= E <= inf"));
  // at the small size the attack's witness is at least as bad as the probe's
  const CheckReport small = run(testing::random_model(kN, AttentionKind::kSoftmax, 1.0, 3));
  REQUIRE(small.attack);
  CHECK(small.e_lower >= small.probe_witness.certified);
}

TEST_CASE("check runs the attack wherever `sinkcert attack` would: the screened round's limit") {
  // single-layer softmax at n = 5, L = 65: the screened round's work
  // heads L^3 n^2 = 6.9e6 is within 2^32 (about a second), while the
  // unscreened estimate layers heads L^4 n^2 = 4.5e8 exceeds 2^28, which
  // check once applied to every model
  const Task task{kN, 65, TriggerRange::kPaper};
  WeightFile file =
      weight_file_from_model(testing::random_model(kN, AttentionKind::kSoftmax, 1.0, 5));
  file.path = "mem.json";
  REQUIRE(search::attack_round_fits(task, file.kind, file.attention, 1, 1));
  REQUIRE(search::attack_work(task, 1, 1) > kMaxAttackWork);
  CheckOptions options;
  // the whole round (3.2 s expected) is longer than a quarter of 1 s: it
  // runs on the triggers that fit, 4 of the 64
  options.seconds = 1;
  const CheckReport r = check_model(file, task, options);
  INFO(r.summary());
  REQUIRE(r.attack);
  CHECK(r.attack->per_trigger.size() == 4);
  CHECK(contains(r.attack_note, "round 0 on 4 of 64 triggers"));
  CHECK(r.attack->rounds >= 1);
  CHECK(r.attack->screened_moves > 0);
  // its certified witness is a lower end of E, at least the probes' worst
  CHECK(r.attack->best.certified > 0);
  CHECK(r.e_lower >= r.attack->best.certified);
  CHECK(r.e_lower >= r.probe_witness.certified);
  CHECK(r.witness_tokens.rows() == task.L);
  CHECK_FALSE(contains(r.summary(), "attack: NOT APPLICABLE"));
  CHECK_FALSE(contains(r.summary(), "0.000e+00 <= E <= inf"));
}

TEST_CASE("the ReLU construction: EXACT zero error, no sink; a broken one is caught") {
  const CheckReport r = run(relu_construction<double>(kN));
  INFO(r.summary());
  REQUIRE(r.relu);
  CHECK(r.relu->verdict == Verdict::kVerified);
  CHECK(r.solves == CheckReport::Solves::kYes);
  CHECK(r.solves_evidence == "EXACT");
  CHECK(r.e_lower == 0);
  CHECK(r.e_upper == 0);
  CHECK(r.sinks == Decision::kNo);
  CHECK(contains(r.summary(), "E = 0/1 [EXACT]"));
  CHECK(contains(r.summary(), "-> does not sink"));
  // the BOS bound applies (single layer), the exact checker says NOT VERIFIED
  // when M is off by 1/4 in one entry: the error is exact and nonzero
  Model<double> broken = relu_construction<double>(kN);
  broken.layers[0][0].M(2, 2) = 1.25;
  const CheckReport b = run(broken);
  INFO(b.summary());
  REQUIRE(b.relu);
  CHECK(b.relu->verdict == Verdict::kNotVerified);
  CHECK(b.relu->witness);
  CHECK(b.e_lower > 0);
  CHECK(b.e_lower == b.e_upper);  // exact E, as a double
}

// A ReLU model whose scores read the content: the exact checker does not
// apply, so nothing about E may be EXACT; E comes from the certified bound
// and the attack, and its upper end is above the attack's certified error.
void check_no_exact_e(const CheckReport& r) {
  INFO(r.summary());
  REQUIRE(r.relu);
  CHECK(r.relu->verdict == Verdict::kNotApplicable);
  CHECK(r.e_lower_source != "exact");
  CHECK(r.solves_evidence != "EXACT");
  CHECK_FALSE(contains(r.summary(), "EXACT"));
  CHECK_FALSE(contains(r.markdown(), "[EXACT]"));
  const nlohmann::json j = r.to_json();
  CHECK(j["conclusion"]["evidence"] != "EXACT");
  CHECK_FALSE(contains(j.dump(), "EXACT"));
  CHECK(j["relu_exact"]["verdict"] == "NOT APPLICABLE");
  CHECK_FALSE(j["relu_exact"].contains("max_abs_error"));
  // the enclosure holds the real error the attack certified at its witness
  REQUIRE(r.attack);
  CHECK(r.attack->best.certified > 0);
  CHECK(r.e_upper >= r.attack->best.certified);
  CHECK(r.e_lower <= r.e_upper);
}

TEST_CASE("a hand-made ReLU model whose scores read the content gets no EXACT E") {
  // the ReLU construction with a query-content score: A[2][0] = 1/2
  Model<double> m = relu_construction<double>(kN);
  m.layers[0][0].A(2, kBosFlag) = 0.5;
  check_no_exact_e(run(m));
}

TEST_CASE("a ReLU model trained on the task never gets an EXACT E") {
  // the paper's recipe (search/paper_recipe.h) with ReLU attention, seed 0:
  // Adam from a random start, whose scores read the content
  search::PaperRecipeOptions o = search::paper_recipe_options(1, 1);
  o.attention = AttentionKind::kRelu;
  o.seed = 0;
  o.max_steps = kTrainingSteps;
  const search::PaperRecipeResult trained = search::train_paper_recipe(kTask, o);
  INFO("trained ", trained.steps, " steps, batch l_inf ", trained.final_batch_linf);
  REQUIRE(trained.model.layers[0][0].A(2, kBosFlag) != 0);
  check_no_exact_e(run(trained.model));
}

TEST_CASE("a residual model: the deep bound runs, the BOS bound is NOT APPLICABLE") {
  const Model<double> m =
      testing::random_model(kN, AttentionKind::kSoftmax, 0.5, 3, 2, 2, ModelKind::kResidual);
  const CheckReport r = run(m);
  INFO(r.summary());
  CHECK(r.min_bos.verdict == Verdict::kNotApplicable);
  CHECK(r.worst_case.verdict != Verdict::kNotApplicable);
  CHECK(r.bos.heads.size() == 2);
  CHECK(contains(r.summary(), "layer 1 head 1"));
  CHECK(contains(r.summary(), "min BOS over the whole box: NOT APPLICABLE"));
}

TEST_CASE("the budget is kept and the task must match the file") {
  const CheckReport r = run(testing::random_model(kN, AttentionKind::kSoftmax, 1.0, 11));
  // the timed steps share kSeconds; the rest is fast at this size
  CHECK(r.seconds <= kSeconds * 1.1 + 2);
  WeightFile file = weight_file_from_model(sink_family<double>(kN, 30.0));
  CHECK_THROWS_AS(check_model(file, Task{kN + 1, kL, TriggerRange::kPaper}, CheckOptions{}),
                  std::invalid_argument);
}

}  // namespace
}  // namespace sinkcert::theorems::reports
