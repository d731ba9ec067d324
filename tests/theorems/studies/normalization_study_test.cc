// SPDX-License-Identifier: MIT
#include "theorems/studies/normalization_study.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "src/constructions.h"

namespace sinkcert::theorems::studies {
namespace {

const Task kTask{5, 4, TriggerRange::kPaper};

// Small budgets: the constructions read flags only, so one box per trigger
// decides them.
NormalizationOptions small_options(AttentionKind kind) {
  NormalizationOptions o = normalization_options(kTask, kind, 0, true);
  o.worst_case_boxes = 400;
  o.bos_boxes = 400;
  return o;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE(
    "constructions: certified sink-free for off-by-one, sigmoid, softpick, gated; EXACT for relu") {
  for (AttentionKind kind :
       {AttentionKind::kSoftmaxOffByOne, AttentionKind::kSigmoid, AttentionKind::kSoftpick,
        AttentionKind::kGated, AttentionKind::kRelu}) {
    const auto c = construction_for(kind, kTask.n);
    REQUIRE(c);
    const SinkFreeCandidate checked =
        check_sink_free(c->name, c->model, kTask, small_options(kind));
    INFO(to_string(kind) << ": " << checked.reason);
    CHECK(checked.verdict == Verdict::kVerified);
    CHECK(checked.evidence == (kind == AttentionKind::kRelu ? "EXACT" : "CERTIFIED"));
    if (kind != AttentionKind::kRelu) {
      CHECK(checked.cert.worst_upper <= kSinkFreeLoss);
      CHECK(checked.cert.bos_upper <= kSinkFreeBos);
    }
  }
  CHECK_FALSE(construction_for(AttentionKind::kSoftmax, kTask.n));
}

TEST_CASE("false claims: a sink, a wrong normalization, an unsupported kind are not sink-free") {
  // the softmax sink family: tiny loss, but its BOS mass is ~1, not <= 1/2
  const SinkFreeCandidate sink = check_sink_free("sink family", sink_family<double>(5, 20.0), kTask,
                                                 small_options(AttentionKind::kSoftmax));
  CHECK(sink.verdict == Verdict::kNotVerified);
  CHECK(contains(sink.reason, "BOS mass"));
  // relu-count-all divides by i + 1: Theorem 3's scores leave an error of order 1/(j (j+1))
  const auto count_all = construction_for(AttentionKind::kReluCountAll, kTask.n);
  REQUIRE(count_all);
  const SinkFreeCandidate wrong = check_sink_free(count_all->name, count_all->model, kTask,
                                                  small_options(AttentionKind::kReluCountAll));
  CHECK(wrong.verdict == Verdict::kNotVerified);
  CHECK(contains(wrong.reason, "worst case"));
  // a relu model whose BOS attention is not zero: the exact check says NOT VERIFIED
  Model<double> leaky = relu_construction<double>(5);
  leaky.layers[0][0].A(ordinary_flag(5), kBosFlag) = 1;  // s_i0 = 1 at ordinary rows
  const SinkFreeCandidate leak =
      check_sink_free("leaky", leaky, kTask, small_options(AttentionKind::kRelu));
  CHECK(leak.verdict == Verdict::kNotVerified);
  CHECK(leak.evidence == "EXACT");
  // gated with its gate matrix zeroed: g_i = sigmoid(0) = 1/2 halves every head output, so the
  // trigger row's output is half its target
  auto gated = construction_for(AttentionKind::kGated, kTask.n);
  REQUIRE(gated);
  gated->model.layers[0][0].G.setZero();
  const SinkFreeCandidate g =
      check_sink_free(gated->name, gated->model, kTask, small_options(AttentionKind::kGated));
  CHECK(g.verdict == Verdict::kNotVerified);
  CHECK(contains(g.reason, "worst case"));
}

// A made-up study: a path with a sink and a frontier that does not fall.
NormalizationStudy sinking_study() {
  NormalizationStudy st;
  st.options = small_options(AttentionKind::kSoftmax);
  st.path.push_back({0, 0.02, 1e-11, 1 - 1e-9, 1 - 1e-8, "target", 10});
  st.best_start = 0;
  for (double delta : {0.5, 0.2, 0.05}) {
    NormFrontierPoint p;
    p.delta = delta;
    p.ceiling = 1 - delta;
    p.feasible = true;
    p.eps_search = 0.1 * delta;
    st.frontier.push_back(p);
  }
  return st;
}

TEST_CASE("verdict: sink needed, and each condition that breaks it") {
  NormalizationStudy st = sinking_study();
  decide_normalization_verdict(st);
  CHECK(st.verdict == NormalizationVerdict::kSinkNeeded);
  CHECK(st.evidence == "SEARCH(lower bound)");

  NormalizationStudy low = sinking_study();
  low.frontier[0].eps_search = 1e-9;  // a capped model with a tiny loss
  decide_normalization_verdict(low);
  CHECK(low.verdict == NormalizationVerdict::kInconclusive);
  CHECK(contains(low.reason, "delta 0.5"));

  NormalizationStudy falling = sinking_study();
  falling.frontier[2].eps_search = 1.0;  // larger at delta 0.05 than at 0.2
  decide_normalization_verdict(falling);
  CHECK(falling.verdict == NormalizationVerdict::kInconclusive);
  CHECK(contains(falling.reason, "falls as delta grows"));

  NormalizationStudy no_sink = sinking_study();
  no_sink.path[0].bos_mean = 0.3;
  decide_normalization_verdict(no_sink);
  CHECK(no_sink.verdict == NormalizationVerdict::kInconclusive);
  CHECK(contains(no_sink.reason, "path did not reach"));

  NormalizationStudy refused = sinking_study();
  refused.search_refused = "the minimax refused: gated";
  decide_normalization_verdict(refused);
  CHECK(refused.verdict == NormalizationVerdict::kInconclusive);
  CHECK(contains(refused.reason, "gated"));

  NormalizationStudy freed = sinking_study();
  SinkFreeCandidate c;
  c.name = "made up";
  c.model = construction_for(AttentionKind::kRelu, kTask.n)->model;
  c.verdict = Verdict::kVerified;
  c.evidence = "CERTIFIED";
  freed.candidates.push_back(c);
  decide_normalization_verdict(freed);
  CHECK(freed.verdict == NormalizationVerdict::kSinkFreeSolution);
  CHECK(freed.evidence == "CERTIFIED");
  CHECK(sink_free_weights(freed));
  CHECK_FALSE(sink_free_weights(st));
}

TEST_CASE(
    "study at a tiny size: relu is sink-free (EXACT), gated by its construction (CERTIFIED)") {
  NormalizationOptions o = small_options(AttentionKind::kRelu);
  o.starts = 1;
  o.path_rounds = 3;
  o.deltas = {0.5};
  o.frontier_rounds = 2;
  o.probe_count = 50;
  const NormalizationStudy relu = run_normalization_study(o);
  CHECK(relu.verdict == NormalizationVerdict::kSinkFreeSolution);
  CHECK(relu.evidence == "EXACT");
  REQUIRE(relu.frontier.size() == 1);
  const RunInfo info = make_run_info({"test"}, 0, "double");
  const nlohmann::json j = to_json(relu, info);
  CHECK(j["verdict"] == "sink-free solution");
  CHECK(j["path"].size() == 1);
  CHECK(normalization_row(relu).size() == normalization_columns().size());
  CHECK(normalization_summary_columns().size() + 1 == normalization_columns().size());

  NormalizationOptions g = o;
  g.attention = AttentionKind::kGated;
  const NormalizationStudy gated = run_normalization_study(g);
  // the minimax searches the gate too; the construction is certified
  CHECK(gated.path.size() == 1);
  CHECK(gated.search_refused.empty());
  REQUIRE(gated.frontier.size() == 1);
  CHECK(gated.frontier[0].model.layers[0][0].G.rows() == o.task.n);
  CHECK(gated.verdict == NormalizationVerdict::kSinkFreeSolution);
  CHECK(gated.evidence == "CERTIFIED");
}

TEST_CASE("study at a tiny size: softmax's frontier is certified and no candidate exists") {
  NormalizationOptions o = small_options(AttentionKind::kSoftmax);
  o.starts = 1;
  o.path_rounds = 20;
  o.deltas = {0.5, 0.2};
  o.frontier_rounds = 4;
  o.probe_count = 100;
  const NormalizationStudy st = run_normalization_study(o);
  CHECK(st.candidates.empty());
  CHECK(st.verdict != NormalizationVerdict::kSinkFreeSolution);
  REQUIRE(st.frontier.size() == 2);
  for (const NormFrontierPoint& p : st.frontier) {
    INFO("delta " << p.delta);
    CHECK(p.feasible);
    // a certified point: the cap VERIFIED and the bound at least the search value
    if (p.cert.certified()) {
      CHECK(p.cert.bos_upper <= p.ceiling);
      CHECK(p.cert.worst_upper >= p.cert.worst_lower);
    } else {
      CHECK(!p.cert.worst_status.empty());
    }
  }
}

}  // namespace
}  // namespace sinkcert::theorems::studies

namespace sinkcert::theorems::studies {
namespace {

TEST_CASE("sweep entry: JSON with the weight file of a sink-free solution, and its summary row") {
  const Task tiny{4, 3, TriggerRange::kPaper};
  const RunInfo info = make_run_info({"test"}, 0, "double");
  const NormalizationEntry relu =
      run_normalization_entry(AttentionKind::kRelu, tiny, 0, true, info);
  CHECK(relu.result["verdict"] == "sink-free solution");
  CHECK(relu.result.contains("sink_free_weights"));
  CHECK(relu.result["sink_free_weights"]["attention"] == "relu");
  CHECK(relu.row.size() == normalization_summary_columns().size());
  const NormalizationEntry gated =
      run_normalization_entry(AttentionKind::kGated, tiny, 0, true, info);
  CHECK(gated.result["verdict"] == "sink-free solution");
  CHECK(gated.result["sink_free_weights"]["attention"] == "gated");
}

}  // namespace
}  // namespace sinkcert::theorems::studies
