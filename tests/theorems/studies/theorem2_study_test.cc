// SPDX-License-Identifier: MIT
#include "theorems/studies/theorem2_study.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "search/attack.h"
#include "src/constructions.h"
#include "src/input_error.h"
#include "src/output_files.h"
#include "src/weight_file.h"
#include "theorems/reports/theorem2_report.h"

namespace sinkcert::theorems::studies {
namespace {

// BOS statistics of `layers` x `heads` heads over L positions, every
// per-position mean `base`, count 10 (position 0: count 0).
BosStatistics made_up_stats(int layers, int heads, int L, double base) {
  BosStatistics bs;
  for (int l = 0; l < layers; ++l) {
    bs.heads.emplace_back();
    for (int h = 0; h < heads; ++h) {
      HeadBosStatistics hs;
      hs.layer = l;
      hs.head = h;
      hs.per_position.resize(L);
      for (int i = 1; i < L; ++i) {
        hs.per_position[i].count = 10;
        hs.per_position[i].mean = base;
      }
      hs.overall.count = 10 * (L - 1);
      hs.overall.mean = base;
      bs.heads.back().push_back(hs);
    }
  }
  return bs;
}

TEST_CASE("the sink score is the largest per-position mean over layers and heads") {
  BosStatistics bs = made_up_stats(2, 2, 5, 0.3);
  bs.heads[1][0].per_position[3].mean = 0.9;
  // a position without values (count 0) does not count, however large
  bs.heads[0][1].per_position[2].mean = 5.0;
  bs.heads[0][1].per_position[2].count = 0;
  const SinkScore s = sink_score(bs);
  CHECK(s.defined);
  CHECK(s.sigma == 0.9);
  CHECK(s.layer == 1);
  CHECK(s.head == 0);
  CHECK(s.position == 3);
  // the head's overall mean (0.3) is not the score: one position sinks
  CHECK(s.sigma != bs.heads[1][0].overall.mean);
  // NaN is never dropped
  bs.heads[0][0].per_position[1].mean = std::nan("");
  CHECK(std::isnan(sink_score(bs).sigma));
  // no non-trigger position at all: undefined
  BosStatistics empty = made_up_stats(1, 1, 2, 0.3);
  empty.heads[0][0].per_position[1].count = 0;
  CHECK_FALSE(sink_score(empty).defined);
}

Theorem2Study made_up_study(double worst, double sigma) {
  Theorem2Study st;
  Theorem2Run run;
  run.result.worst.value = worst;
  run.result.worst.certified = worst;
  run.stats = made_up_stats(2, 2, 4, sigma);
  run.sink = sink_score(run.stats);
  st.runs.push_back(run);
  Theorem2PathPoint p;
  p.round = 5;
  p.worst_case = worst;
  p.worst_case_double = worst;
  p.sink = run.sink;
  st.path.push_back(p);
  return st;
}

TEST_CASE("the Theorem 2 verdict rule") {
  Theorem2Study good = made_up_study(1e-9, 1 - 1e-9);
  decide_theorem2_verdict(good);
  CHECK(good.verdict == StudyVerdict::kConsistent);
  // a tiny loss with no head sinking anywhere
  Theorem2Study bad = made_up_study(1e-9, 0.4);
  decide_theorem2_verdict(bad);
  CHECK(bad.verdict == StudyVerdict::kCounterexampleCandidate);
  CHECK(bad.reason.find("round 5") != std::string::npos);
  // ... unless that round was rejected by the trust control
  Theorem2Study rejected = made_up_study(1e-9, 0.4);
  rejected.path[0].accepted = false;
  decide_theorem2_verdict(rejected);
  CHECK(rejected.verdict == StudyVerdict::kInconclusive);
  // a tiny loss with a partial sink: neither
  Theorem2Study partial = made_up_study(1e-9, 0.9);
  decide_theorem2_verdict(partial);
  CHECK(partial.verdict == StudyVerdict::kInconclusive);
  // the search did not get low: inconclusive, and it says why
  Theorem2Study high = made_up_study(1e-2, 1 - 1e-9);
  decide_theorem2_verdict(high);
  CHECK(high.verdict == StudyVerdict::kInconclusive);
  CHECK(high.reason.find("needs worst case") != std::string::npos);
  // the certified value decides, not the double one
  Theorem2Study noisy = made_up_study(1e-9, 1 - 1e-9);
  noisy.runs[0].result.worst.certified = 1e-3;
  decide_theorem2_verdict(noisy);
  CHECK(noisy.verdict == StudyVerdict::kInconclusive);
  // L = 2: no non-trigger position
  Theorem2Study vacuous = made_up_study(1e-9, 0.1);
  vacuous.runs[0].sink.defined = false;
  decide_theorem2_verdict(vacuous);
  CHECK(vacuous.verdict == StudyVerdict::kNotApplicable);
}

TEST_CASE("the residual init draws every head") {
  const Model<double> m = residual_normal_init(5, 2, 2, 0.02, 3);
  CHECK(m.kind == ModelKind::kResidual);
  REQUIRE(m.num_layers() == 2);
  REQUIRE(m.num_heads() == 2);
  CHECK(m.layers[0][0].A != m.layers[1][1].A);
  CHECK(m.layers[1][1].M.cwiseAbs().maxCoeff() > 0);
  CHECK(m.layers[1][1].M.cwiseAbs().maxCoeff() < 0.2);  // 10 std: never at 50 draws
  CHECK(residual_normal_init(5, 2, 2, 0.02, 3).layers[1][1].M == m.layers[1][1].M);
}

// A residual one-layer model of two heads: head 0 the softmax sink family
// at beta (it alone solves the task: worst case about (L-1) e^-beta), head
// 1 the score `A1` with value-output `M1`.
Model<double> sink_and_second_head(int n, double beta, const Matrix<double>& A1,
                                   const Matrix<double>& M1) {
  Model<double> m = sink_family<double>(n, beta);
  m.kind = ModelKind::kResidual;
  m.layers[0].push_back(Head<double>{A1, M1});
  return m;
}

TEST_CASE("necessity: a dead head is not necessary, the only working head is") {
  const Task task{5, 4, TriggerRange::kPaper};
  const Matrix<double> A1 = residual_normal_init(5, 1, 1, 1.0, 7).layers[0][0].A;
  const Model<double> m = sink_and_second_head(5, 20, A1, Matrix<double>::Zero(5, 5));
  // the dead head: its ablation is the model itself
  const Necessity dead = necessity(m, task, 0, 1);
  CHECK(dead.worst_case < 1e-6);
  CHECK(dead.ratio == 1);
  CHECK_FALSE(dead.necessary);
  // the sink head: without it the trigger row misses the mean (error >= 1/2
  // on the ordinary flag)
  const Necessity working = necessity(m, task, 0, 0);
  CHECK(working.ablated_worst_case >= 0.5);
  CHECK(working.ratio >= kNecessityFactor);
  CHECK(working.necessary);
  // the model's own worst case handed in gives the same answer; a wrong one
  // is used as given (the ratio follows it)
  const Necessity given = necessity(m, task, 0, 0, {}, working.worst_case);
  CHECK(given.worst_case == working.worst_case);
  CHECK(given.ablated_worst_case == working.ablated_worst_case);
  CHECK(necessity(m, task, 0, 0, {}, working.ablated_worst_case).ratio == 1);
  // the layer of the only working head
  CHECK(necessity(m, task, 0, -1).necessary);
  CHECK(ablated(m, 0, -1).layers[0][0].M.isZero());
  CHECK(ablated(m, 0, 1).layers[0][0].M == m.layers[0][0].M);
}

TEST_CASE("a kept model's worst case: the attack's witness replaces a smaller adversary value") {
  const Task task{5, 4, TriggerRange::kPaper};
  search::MinimaxResult r;
  r.model = residual_normal_init(5, 2, 2, 0.5, 3);
  search::AttackOptions ao;
  const search::AttackResult a = search::attack(r.model, r.model.cast<Rational>(), task, ao);
  REQUIRE(a.best.certified > 0);
  // an adversary value below the attack's: replaced by the attack's witness
  r.worst.certified = a.best.certified / 2;
  r.worst.trigger = 0;
  CHECK(attack_kept_model(r, task, 0) == a.best.certified / 2);
  CHECK(r.worst.certified == a.best.certified);
  CHECK(r.worst.trigger == a.best.trigger);
  CHECK(r.worst.content == a.best.content);
  // a larger one is kept with its witness
  r.worst.certified = 2 * a.best.certified;
  r.worst.trigger = 0;
  CHECK(attack_kept_model(r, task, 0) == 2 * a.best.certified);
  CHECK(r.worst.certified == 2 * a.best.certified);
  CHECK(r.worst.trigger == 0);
  // an uncertified (NaN) one is replaced
  r.worst.certified = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isnan(attack_kept_model(r, task, 0)));
  CHECK(r.worst.certified == a.best.certified);
}

TEST_CASE("the every-head answer: a necessary head that does not sink, in a low-loss model") {
  EveryHeadCandidate k;
  k.source = "made up";
  k.worst_case = 1e-6;
  k.head_max_bos = {0.99, 0.3, 0.4, 0.2};  // l0h0, l0h1, l1h0, l1h1
  const auto nc = [](int l, int h, bool necessary) {
    Necessity n;
    n.layer = l;
    n.head = h;
    n.necessary = necessary;
    return n;
  };
  k.heads = {nc(0, 0, true), nc(0, 1, false), nc(1, 0, true), nc(1, 1, false)};
  k.layers = {nc(0, -1, true), nc(1, -1, true)};
  EveryHeadAnswer a;
  a.candidates = {k};
  decide_every_head(a, 2);
  // head (1, 0) is necessary with BOS mass 0.4; layer 1 none of whose heads sinks
  CHECK(a.head_found);
  CHECK(a.head_layer == 1);
  CHECK(a.head_head == 0);
  CHECK(a.layer_found);
  CHECK(a.layer_layer == 1);
  CHECK(a.summary.find("FOUND (SEARCH)") == 0);
  // the same heads sinking (BOS mass above 1/2): not found
  a.candidates[0].head_max_bos = {0.99, 0.3, 0.6, 0.2};
  decide_every_head(a, 2);
  CHECK_FALSE(a.head_found);
  CHECK_FALSE(a.layer_found);
  CHECK(a.summary.find("NOT FOUND (SEARCH)") == 0);
  // a necessary non-sinking head in a model whose loss is too high: not found
  a.candidates[0].head_max_bos = {0.99, 0.3, 0.4, 0.2};
  a.candidates[0].worst_case = 1e-3;
  decide_every_head(a, 2);
  CHECK_FALSE(a.head_found);
  CHECK_FALSE(a.layer_found);
}

// The loss the small study must reach from the paper's init (a drop of
// orders of magnitude from about 1; printed).
constexpr double kSmallStudyLoss = 1e-3;

TEST_CASE("a small 2 x 2 study runs end to end and writes its files") {
  Theorem2Options o = theorem2_quick_options(Task{5, 4, TriggerRange::kPaper}, 2, 2, 0);
  o.probe_count = 100;
  // one delta, few rounds: the frontier and the every-head search run, briefly
  o.deltas = {0.5};
  o.frontier_rounds = 3;
  o.every_head_searches = 1;
  o.every_head_rounds = 3;
  o.cap_descent_rounds = 3;
  o.cap_fresh_all = true;  // eps_all's fresh start too (off by default)
  // the eps_one point certified (a few boxes suffice at this size: the
  // construction's bounds decide at once)
  o.certify_boxes = 400;
  const Theorem2Study st = run_theorem2_study(o);
  // eps_all and eps_one at delta 0.5, each run or refused with its reason
  REQUIRE(st.frontier.size() == 2u);
  CHECK(st.frontier[0].scope == CapScope::kAll);
  CHECK(st.frontier[1].scope == CapScope::kOne);
  for (const Theorem2FrontierPoint& p : st.frontier) {
    CHECK(p.ceiling == 0.5);
    if (p.not_run.empty() && p.feasible) CHECK(p.capped_bos <= p.ceiling);
    // every start recorded (eps_all: warm and fresh; eps_one: construction,
    // sink, warm, then dead and fresh)
    CHECK(p.starts.size() == (p.scope == CapScope::kAll ? 2u : 5u));
    // the construction and sink starts meet the ceiling 1/2 from their first
    // model on; the sink start's worst case is that of the sink family, far
    // below 1e-6, and the construction is that model unpolished; so the
    // descent starts (dead, fresh) are skipped, each with its reason
    if (p.scope == CapScope::kOne) {
      CHECK(p.starts[0].start == CapStart::kConstruction);
      CHECK(p.starts[0].feasible);
      CHECK(p.starts[0].rounds == 0);
      CHECK(p.starts[0].eps < 1e-6);
      CHECK(p.starts[1].start == CapStart::kSink);
      CHECK(p.starts[1].feasible);
      CHECK(p.starts[1].eps < 1e-6);
      CHECK(p.starts[2].start == CapStart::kWarm);
      CHECK(p.starts[2].skipped.empty());
      CHECK(p.starts[3].start == CapStart::kDead);
      CHECK(p.starts[4].start == CapStart::kFresh);
      for (int k : {3, 4}) {
        CHECK(p.starts[k].skipped.find("already reached") != std::string::npos);
        CHECK(p.starts[k].rounds == 0);
      }
      // certified: some low-loss model holds both claims over the box (the
      // construction does: its capped head's a_i0 <= 1/2 exactly); the kept
      // one is a low-loss start's, possibly not the search's best
      CHECK(p.certificate.attempted);
      CHECK(p.certificate.certified());
      CHECK(p.certificate.loss_upper <= kTheorem2LowLoss);
      CHECK(p.certificate.cap_upper <= p.ceiling);
      CHECK(p.certificate.models_tried >= 1);
      CHECK(p.eps <= p.certificate.loss_upper);
    } else {
      CHECK_FALSE(p.certificate.attempted);  // eps_all: never certified
    }
    if (p.feasible) CHECK(p.witness_capped_bos >= 0);
  }
  // the targeted search of head (0, 0): one candidate, with every head's profile
  REQUIRE(st.every_head.targeted.size() == 1u);
  const EveryHeadCandidate& tk = st.every_head.candidates[st.every_head.targeted[0]];
  CHECK(tk.capped_layer == 0);
  CHECK(tk.capped_head == 0);
  CHECK(tk.profiles.size() == 4u);
  CHECK(st.every_head.candidates.size() >= 1u);
  CHECK(st.every_head.summary.find("FOUND (SEARCH)") != std::string::npos);
  REQUIRE(st.runs.size() == 1);
  const Theorem2Run& r = st.runs[0];
  CHECK(r.result.worst.certified <= kSmallStudyLoss);
  CHECK(r.result.worst.certified > 0);
  CHECK(r.sink.defined);
  CHECK(r.sink.sigma >= 0);
  CHECK(r.sink.sigma <= 1);
  REQUIRE(!st.path.empty());
  for (const Theorem2PathPoint& p : st.path) CHECK(p.head_mean.size() == 4u);
  MESSAGE("2 x 2, n = 5, L = 4: worst case " << r.result.worst.certified << ", sink score "
                                             << r.sink.sigma << ", verdict "
                                             << to_string(st.verdict) << ": " << st.reason);
  const std::string dir =
      (std::filesystem::temp_directory_path() / "sinkcert_theorem2_study_test").string();
  std::filesystem::remove_all(dir);
  RunInfo info{"test", "rev", "2026-12-01T00:00:00Z", 0, "double", {}, nullptr, ""};
  reports::write_theorem2_outputs(st, info, dir);
  for (const char* name : {"theorem2.json", "path.csv", "heads.csv", "frontier.csv",
                           "every_head.csv", "every_head_targeted.csv", "path.dat", "path.gp",
                           "path_start0.weights.json", "targeted_l0h0.weights.json"}) {
    CHECK_MESSAGE(std::filesystem::exists(dir + "/" + name), name);
  }
  // the weight file holds the path model itself (re-checkable by eval)
  const WeightFile w = read_weight_file(dir + "/path_start0.weights.json");
  CHECK(w.metadata["worst_case_loss"].get<double>() == r.result.worst.certified);
  CHECK(w.metadata["worst_case_witness"]["trigger"] == r.result.worst.trigger);
  const std::string csv = to_csv(reports::theorem2_heads_table(st), info);
  CHECK(csv.find("\nstart,init_std,layer,head,mean_bos,min_bos,max_position_mean,max_position\n") !=
        std::string::npos);
  // the appendix reads the study back: verdict, frontier and every-head rows
  const Table appendix = reports::theorem2_appendix_table(dir + "/theorem2.json");
  CHECK(appendix.rows.back()[2].text == to_string(st.verdict));
  CHECK(to_csv(appendix, info).find("eps_all(0.5)") != std::string::npos);
  // the init as the options gave it, and 1 - sigma (sigma itself prints as 1)
  CHECK(appendix.rows[0][1].text == "start 0 (std 0.02): worst case");
  CHECK(appendix.rows[1][1].text == "start 0 (std 0.02): 1 - sink score");
  char one_minus[64];
  std::snprintf(one_minus, sizeof one_minus, "%.3g", 1 - r.sink.sigma);
  CHECK(appendix.rows[1][2].text == one_minus);
  CHECK(to_csv(appendix, info).find("a necessary head that does not sink") != std::string::npos);
  // T2b read back: the targeted search's capped head (0, 0), and every head
  // of the path model when its worst case is low enough to be measured
  const Table t2b_read = reports::theorem2_every_head_appendix_table(dir + "/theorem2.json");
  int targeted_rows = 0, path_rows = 0;
  for (const auto& row : t2b_read.rows) {
    if (row[0].text == "targeted, capped head") {
      ++targeted_rows;
      CHECK(row[1].text == "0");
      CHECK(row[2].text == "0");
      CHECK(row[3].text.rfind(st.every_head.head_found ? "FOUND" : "NOT FOUND", 0) == 0);
    }
    if (row[0].text == "path start 0") ++path_rows;
  }
  CHECK(targeted_rows == 1);
  CHECK(path_rows == (r.result.worst.certified <= kEveryHeadLoss ? 4 : 0));
  if (st.frontier[1].feasible) {
    const WeightFile e = read_weight_file(dir + "/eps_one_delta0.5.weights.json");
    CHECK(e.metadata["worst_case_loss"].get<double>() == st.frontier[1].eps);
  }
  const Table t2b = reports::theorem2_targeted_table(st);
  REQUIRE(t2b.rows.size() == 1u);
  CHECK((t2b.rows[0][2].text == "FOUND" || t2b.rows[0][2].text == "NOT FOUND"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("head profiles, the certified BOS at a witness, the dead start and head roles") {
  const Task task{5, 4, TriggerRange::kPaper};
  // head 0: the sink family (a_i0 near 1); head 1: A = 0 (uniform, a_i0 =
  // 1/(i+1): 1/2, 1/3, 1/4 at i = 1, 2, 3)
  const Model<double> m =
      sink_and_second_head(5, 20, Matrix<double>::Zero(5, 5), Matrix<double>::Zero(5, 5));
  const ProbeSet probes = make_probe_set(task, 50);
  const std::vector<HeadProfile> p = head_profiles(m, probes);
  REQUIRE(p.size() == 2u);
  CHECK(p[0].max > 0.99);
  CHECK(p[0].low_fraction == 0);
  CHECK(p[1].max == 0.5);
  CHECK(p[1].low_fraction == 1);
  // the mean over the (probe, position) pairs, counted independently
  double sum = 0;
  long count = 0;
  for (const Sample& smp : probes.samples) {
    for (int i = 1; i < task.L; ++i) {
      if (i == smp.trigger) continue;
      sum += 1.0 / (i + 1);
      ++count;
    }
  }
  CHECK(std::abs(p[1].mean - sum / count) < 1e-15);
  // at an input: head 1's largest a_i0 (i = 1 not the trigger) is 1/2 exactly,
  // enclosed; head 0's is near 1; the trigger's row is left out
  const Matrix<double> C = Matrix<double>::Constant(task.L - 1, task.content_dim(), 1.0);
  CHECK(certified_capped_bos_at(m, task, 2, C, {{0, 1}}) == 0.5);
  const double third = certified_capped_bos_at(m, task, 1, C, {{0, 1}});
  CHECK(third >= 1.0 / 3);  // rounded up: never below the true 1/3
  CHECK(third < 1.0 / 3 + 1e-15);
  CHECK(certified_capped_bos_at(m, task, 2, C, {{0, 0}, {0, 1}}) > 0.99);
  // the dead start: A = M = 0 of that head only
  const Model<double> k = killed(m, 0, 0);
  CHECK(k.layers[0][0].A.isZero());
  CHECK(k.layers[0][0].M.isZero());
  CHECK(k.layers[0][1].A == m.layers[0][1].A);
  CHECK(head_profiles(k, probes)[0].max == 0.5);
  // the sink start: head (0, 1) the sink family, the capped head (0, 0) and
  // the others zero; its worst case about (L-1) e^-20 (SEARCH: a lower bound)
  const Model<double> sk = sink_start(5, 2, 2, 0, 0, kSinkStartBeta);
  CHECK(sk.layers[0][0].A.isZero());
  CHECK(sk.layers[0][0].M.isZero());
  CHECK(sk.layers[1][1].M.isZero());
  CHECK_FALSE(sk.layers[0][1].A.isZero());
  const double sink_worst = search::maximize_error(sk, task).best.certified;
  CHECK(sink_worst > 0);
  CHECK(sink_worst < 3 * std::exp(-kSinkStartBeta) * 1.01);
  CHECK(head_profiles(sk, probes)[0].max == 0.5);
  CHECK(head_profiles(sk, probes)[1].max > 0.999);
  // the capped head other than (0, 0): the sink goes to head (0, 0)
  CHECK_FALSE(sink_start(5, 2, 2, 1, 0, kSinkStartBeta).layers[0][0].A.isZero());
  CHECK_THROWS_AS(sink_start(5, 1, 1, 0, 0, kSinkStartBeta), std::invalid_argument);
  // roles
  Necessity yes, no;
  yes.necessary = true;
  CHECK(head_role(no, p[1]) == "not necessary");
  CHECK(head_role(yes, p[1]) == "necessary, no sink");
  CHECK(head_role(yes, p[0]) == "necessary, sinks");
  CHECK(head_role(yes, HeadProfile{0.9, 0.4, 0.8}) == "necessary but not sinking on average");
}

TEST_CASE("the certification of a capped model: both claims, and each one failing") {
  const Task task{5, 4, TriggerRange::kPaper};
  // Boxes per bound: the sink start's bounds decide in a handful (its
  // attention is saturated or uniform); the budget only has to exceed that.
  const long boxes = 400;
  const double seconds = 120;  // safety only
  // the sink start with head (0, 0) capped: E about (L-1) e^-20 <= 1e-6 and
  // head (0, 0) uniform, a_i0 = 1/(i+1) <= 1/2 exactly: both hold at 1/2
  const Model<double> sk = sink_start(5, 2, 2, 0, 0, kSinkStartBeta);
  const FrontierCertificate ok = certify_capped_model(sk, task, 0, 0, 0.5, boxes, seconds);
  CHECK(ok.attempted);
  CHECK(ok.loss == Verdict::kVerified);
  CHECK(ok.loss_upper <= kTheorem2LowLoss);
  // the upper end is at least the adversary's worst case (a lower bound)
  CHECK(ok.loss_upper >= search::maximize_error(sk, task).best.certified);
  CHECK(ok.cap == Verdict::kVerified);
  CHECK(ok.cap_upper == 0.5);
  CHECK(ok.certified());
  // a false cap: head (0, 1) sinks (a_i0 near 1), so max BOS <= 1/2 is NOT
  // VERIFIED (the witness's a_i0 exceeds it)
  const FrontierCertificate sinks = certify_capped_model(sk, task, 0, 1, 0.5, boxes, seconds);
  CHECK(sinks.cap == Verdict::kNotVerified);
  CHECK(sinks.cap_upper > 0.99);
  CHECK_FALSE(sinks.certified());
  // a false loss claim: the sink head at beta = 5 has E about 3 e^-5 ~ 2e-2
  // (the adversary finds it), so E <= 1e-6 is NOT VERIFIED
  const Model<double> warm = sink_start(5, 2, 2, 0, 0, 5.0);
  const FrontierCertificate loose = certify_capped_model(warm, task, 0, 0, 0.5, boxes, seconds);
  CHECK(loose.loss == Verdict::kNotVerified);
  CHECK(loose.loss_upper > 1e-3);
  CHECK(loose.cap == Verdict::kVerified);
  CHECK_FALSE(loose.certified());
}

TEST_CASE("Theorem 2 study figures: captions say what they show and at which evidence level") {
  const Task task{16, 16, TriggerRange::kPaper};
  for (const char* name : {"path", "frontier"}) {
    const Figure f = reports::theorem2_figure_frame(name, task, 2, 2);
    CHECK(f.name == name);
    CHECK(f.caption.find("residual softmax 2 x 2, n = 16, L = 16") != std::string::npos);
    CHECK(figure_caption(f).find("Evidence: ") != std::string::npos);
  }
  CHECK(reports::theorem2_figure_frame("path", task, 4, 1).caption.find("4 x 1") !=
        std::string::npos);
  CHECK(reports::theorem2_figure_frame("frontier", task, 2, 2).evidence == kFrontierPointMeaning);
  CHECK_THROWS_AS(reports::theorem2_figure_frame("nuance", task, 2, 2), std::invalid_argument);
}

TEST_CASE("the appendix table of a study not run, and of a malformed file") {
  const std::string dir =
      (std::filesystem::temp_directory_path() / "sinkcert_theorem2_appendix_test").string();
  std::filesystem::remove_all(dir);
  const Table none = reports::theorem2_appendix_table(dir + "/theorem2.json");
  REQUIRE(none.rows.size() == 1u);
  CHECK(none.rows[0][2].text == "not found: the study was not run");
  const Table none_b = reports::theorem2_every_head_appendix_table(dir + "/theorem2.json");
  REQUIRE(none_b.rows.size() == 1u);
  CHECK(none_b.rows[0][3].text == "not found: the study was not run");
  std::filesystem::create_directories(dir);
  write_file_atomically(dir + "/theorem2.json", "{\"task\": {\"n\": 5}}\n");
  CHECK_THROWS_AS(reports::theorem2_appendix_table(dir + "/theorem2.json"), InputError);
  CHECK_THROWS_AS(reports::theorem2_every_head_appendix_table(dir + "/theorem2.json"), InputError);
  std::filesystem::remove_all(dir);
}

// A theorem2.json's every-head part, hand-made: one path model with a
// necessary head that does not sink (a counterexample to "every head
// sinks"), one with a head that sinks, and a targeted search with no
// feasible model.
TEST_CASE("T2b says FOUND only for a necessary head without a sink in a low-loss model") {
  const auto head = [](int l, int h, bool necessary, double max_bos, const char* role) {
    return nlohmann::json{{"layer", l},
                          {"head", h},
                          {"necessary", necessary},
                          {"max_bos", max_bos},
                          {"mean_bos", 0.3},
                          {"low_bos_fraction", 0.9},
                          {"ratio", 1e3},
                          {"role", role},
                          {"worst_case", 1e-6},
                          {"ablated_worst_case", 1e-3}};
  };
  nlohmann::json j;
  j["task"] = {{"n", 5}, {"L", 4}};
  j["model"] = {{"layers", 2}, {"heads", 2}};
  nlohmann::json cands = nlohmann::json::array();
  cands.push_back({{"source", "path start 0"},
                   {"worst_case", 1e-6},
                   {"capped_head", nullptr},
                   {"heads", {head(0, 0, true, 0.4, "necessary, no sink")}}});
  cands.push_back({{"source", "path start 1"},
                   {"worst_case", 1e-6},
                   {"capped_head", nullptr},
                   {"heads", {head(0, 1, true, 0.99, "necessary, sinks")}}});
  // the same head in a model whose loss is above the question's: not FOUND
  cands.push_back({{"source", "path start 2"},
                   {"worst_case", 1e-2},
                   {"capped_head", nullptr},
                   {"heads", {head(0, 0, true, 0.4, "necessary, no sink")}}});
  cands.push_back({{"source", "targeted: layer 1 head 1"},
                   {"worst_case", nullptr},
                   {"capped_head", {{"layer", 1}, {"head", 1}}},
                   {"head_profiles", nlohmann::json::array()},
                   {"heads", nlohmann::json::array()}});
  j["every_head"] = {{"candidates", cands}, {"summary", "hand-made"}};
  const std::string dir =
      (std::filesystem::temp_directory_path() / "sinkcert_theorem2_t2b_test").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_file_atomically(dir + "/theorem2.json", j.dump());
  const Table t = reports::theorem2_every_head_appendix_table(dir + "/theorem2.json");
  REQUIRE(t.rows.size() == 4u);
  CHECK(t.rows[0][3].text == "FOUND");
  CHECK(t.rows[1][3].text == "necessary, sinks");
  CHECK(t.rows[2][3].text == "NOT FOUND: worst case above 0.0001 (necessary, no sink)");
  CHECK(t.rows[3][0].text == "targeted, capped head");
  CHECK(t.rows[3][3].text == "NOT FOUND: no feasible model");
  CHECK(t.rows[3][6].text == "-");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sinkcert::theorems::studies
