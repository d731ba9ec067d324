// SPDX-License-Identifier: MIT
#include "theorems/theorem2_study.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

#include "src/evidence.h"

namespace sinkcert::theorems {

namespace {

using search::MinimaxOptions;
using search::MinimaxRecord;

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// " (the double value 3.33e-16 differs in the first digit)" when flagged.
std::string double_note(bool disagrees, double double_value) {
  if (!disagrees) return "";
  char buf[96];
  std::snprintf(buf, sizeof buf, " (the double value %.3e differs in the first digit)",
                double_value);
  return buf;
}

void fill_heads(const BosStatistics& bs, std::vector<double>& mean, std::vector<double>& min) {
  mean.clear();
  min.clear();
  for (const auto& layer : bs.heads) {
    for (const HeadBosStatistics& h : layer) {
      mean.push_back(h.overall.mean);
      min.push_back(h.overall.min);
    }
  }
}

nlohmann::json sink_json(const SinkScore& s) {
  if (!s.defined) return nullptr;
  return {{"sigma", s.sigma}, {"layer", s.layer}, {"head", s.head}, {"position", s.position}};
}

}  // namespace

Theorem2Options theorem2_quick_options(const Task& task, int layers, int heads,
                                       std::uint64_t seed) {
  Theorem2Options o;
  o.task = task;
  o.layers = layers;
  o.heads = heads;
  o.seed = seed;
  o.init_stds = {0.02};
  o.path_rounds = 30;
  o.probe_count = 200;
  return o;
}

SinkScore sink_score(const BosStatistics& stats) {
  SinkScore s;
  for (const auto& layer : stats.heads) {
    for (const HeadBosStatistics& h : layer) {
      for (std::size_t i = 1; i < h.per_position.size(); ++i) {
        const BosSummary& p = h.per_position[i];
        if (p.count == 0) continue;
        // NaN wins: a NaN mean makes the score NaN
        if (!s.defined || std::isnan(p.mean) || p.mean > s.sigma) {
          if (s.defined && std::isnan(s.sigma)) continue;
          s.sigma = p.mean;
          s.layer = h.layer;
          s.head = h.head;
          s.position = static_cast<int>(i);
          s.defined = true;
        }
      }
    }
  }
  return s;
}

Model<double> residual_normal_init(int n, int layers, int heads, double std, std::uint64_t seed) {
  std::mt19937_64 eng(seed);
  std::normal_distribution<double> normal(0.0, std);
  Model<double> m;
  m.kind = ModelKind::kResidual;
  m.attention = AttentionKind::kSoftmax;
  m.n = n;
  for (int l = 0; l < layers; ++l) {
    m.layers.emplace_back();
    for (int h = 0; h < heads; ++h) {
      Head<double> head{Matrix<double>(n, n), Matrix<double>(n, n)};
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) head.A(r, c) = normal(eng);
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) head.M(r, c) = normal(eng);
      m.layers.back().push_back(std::move(head));
    }
  }
  return m;
}

void decide_theorem2_verdict(Theorem2Study& st) {
  std::ostringstream why;
  if (st.runs.empty()) {
    st.verdict = StudyVerdict::kInconclusive;
    st.reason = "no path was run";
    return;
  }
  if (!st.runs[0].sink.defined) {
    st.verdict = StudyVerdict::kNotApplicable;
    st.reason = "no non-trigger position i >= 1 (L = 2): the sink score of Theorem 2 is undefined";
    return;
  }
  for (const Theorem2PathPoint& p : st.path) {
    if (p.accepted && p.worst_case < kCandidateLoss && p.sink.defined &&
        p.sink.sigma <= kNoSinkScore) {
      st.verdict = StudyVerdict::kCounterexampleCandidate;
      why << "path start " << p.start << " round " << p.round << ": worst case (SEARCH, lower "
          << "bound) " << format_bound(p.worst_case, true, 6) << " < " << kCandidateLoss
          << " with sink score " << p.sink.sigma << " <= " << kNoSinkScore;
      st.reason = why.str();
      return;
    }
  }
  const Theorem2Run* best = nullptr;
  for (const Theorem2Run& r : st.runs) {
    if (!best || r.result.worst.certified < best->result.worst.certified) best = &r;
  }
  if (best->result.worst.certified <= kTheorem2LowLoss && best->sink.sigma >= kTheorem2SinkScore) {
    st.verdict = StudyVerdict::kConsistent;
    why << "path start " << best->start << " reached worst case (SEARCH, lower bound) "
        << format_bound(best->result.worst.certified, true, 6) << " with sink score "
        << fmt(best->sink.sigma) << " (layer " << best->sink.layer << ", head " << best->sink.head
        << ", position " << best->sink.position << ")";
  } else {
    st.verdict = StudyVerdict::kInconclusive;
    why << "the best path model (start " << best->start << ") has worst case (SEARCH, lower bound) "
        << format_bound(best->result.worst.certified, true, 6) << " and sink score "
        << fmt(best->sink.sigma) << "; CONSISTENT needs worst case <= " << kTheorem2LowLoss
        << " with sink score >= " << fmt(kTheorem2SinkScore);
  }
  st.reason = why.str();
}

Theorem2Study run_theorem2_study(const Theorem2Options& o, const StudyProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  o.task.validate();
  if (o.layers < 1 || o.heads < 1) throw std::invalid_argument("layers and heads must be >= 1");
  Theorem2Study st;
  st.options = o;
  const ProbeSet probes = make_probe_set(o.task, o.probe_count);
  for (std::size_t s = 0; s < o.init_stds.size(); ++s) {
    Theorem2Run run;
    run.start = static_cast<int>(s);
    run.init_std = o.init_stds[s];
    const std::uint64_t seed = o.seed * 1000 + s;
    const Model<double> init =
        residual_normal_init(o.task.n, o.layers, o.heads, run.init_std, seed);
    MinimaxOptions mo;
    mo.seed = seed;
    mo.adversary.seed = seed;
    mo.target_loss = o.path_target;
    mo.time_limit_seconds = o.path_time_limit;
    mo.max_rounds = o.path_rounds;
    mo.initial_per_trigger = o.initial_per_trigger;
    mo.max_per_trigger = o.max_per_trigger;
    mo.lm_iterations = o.lm_iterations;
    run.result =
        search::minimax(init, o.task, mo, [&](const MinimaxRecord& r, const Model<double>& m) {
          const BosStatistics bs = bos_statistics(m, probes);
          Theorem2PathPoint p;
          p.start = run.start;
          p.round = r.round;
          p.event = r.event;
          p.accepted = r.accepted;
          p.elapsed = r.elapsed;
          p.worst_case = r.worst_case;
          p.worst_case_double = r.worst_case_double;
          p.double_disagrees = r.double_disagrees;
          p.sampled_max = bs.error_max;
          p.sampled_mean = bs.error_mean;
          p.sink = sink_score(bs);
          fill_heads(bs, p.head_mean, p.head_min);
          p.active_size = r.active_size;
          p.max_abs_A = r.max_abs_A;
          st.path.push_back(p);
          char buf[400];
          std::snprintf(buf, sizeof buf,
                        "path start %d round %d: worst case %s (SEARCH lower bound)%s, sampled "
                        "%.3e, sink score %.9f (layer %d head %d position %d), active set %d, "
                        "%.1f s",
                        run.start, r.round, format_bound(r.worst_case, true, 4).c_str(),
                        double_note(r.double_disagrees, r.worst_case_double).c_str(), bs.error_max,
                        p.sink.sigma, p.sink.layer, p.sink.head, p.sink.position, r.active_size,
                        r.elapsed);
          say(buf);
        });
    run.stats = bos_statistics(run.result.model, probes);
    run.sink = sink_score(run.stats);
    st.runs.push_back(std::move(run));
  }
  decide_theorem2_verdict(st);
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

nlohmann::json to_json(const Theorem2Study& st, const RunInfo& info) {
  using nlohmann::json;
  const std::string search_label = Evidence::search(Bound::kLower).label();
  const std::string numeric = Evidence::numeric(53).label();
  json j;
  j["claim"] =
      "Theorem 2: a residual multi-layer softmax model with vanishing worst-case loss sinks in at "
      "least one layer, at some position (sigma -> 1 as E -> 0)";
  j["task"] = {{"n", st.options.task.n},
               {"L", st.options.task.L},
               {"trigger_range", to_string(st.options.task.range)},
               {"target", "residual"}};
  j["model"] = {{"kind", "residual"},
                {"attention", "softmax"},
                {"layers", st.options.layers},
                {"heads", st.options.heads}};
  j["parametrization"] = search::kDeepParametrization;
  j["probe_set"] = {{"count", st.options.probe_count}, {"seed", kDefaultProbeSeed}};
  j["sink_score"] =
      "sigma = max over layers l, heads h and non-trigger positions i >= 1 of the probe-set mean "
      "of a^{l,h}_{i0} (the mean over the probes in which i is not the trigger)";
  j["evidence"] = {{"worst_case", search_label + ": the adversary's witness re-evaluated in MPFI, "
                                                 "lower end rounded down"},
                   {"worst_case_double", numeric + ": the same witness evaluated in double"},
                   {"sampled", numeric},
                   {"sink_score", numeric},
                   {"bos", numeric}};
  j["options"] = {{"path_target", st.options.path_target},
                  {"path_rounds", st.options.path_rounds},
                  {"path_time_limit_seconds", st.options.path_time_limit},
                  {"initial_per_trigger", st.options.initial_per_trigger},
                  {"max_per_trigger", st.options.max_per_trigger},
                  {"lm_iterations", st.options.lm_iterations}};
  json runs = json::array();
  for (const Theorem2Run& r : st.runs) {
    json h = json::array();
    for (const Theorem2PathPoint& p : st.path) {
      if (p.start != r.start) continue;
      h.push_back({{"round", p.round},
                   {"event", p.event},
                   {"accepted", p.accepted},
                   {"worst_case", p.worst_case},
                   {"worst_case_double", p.worst_case_double},
                   {"worst_case_double_disagrees", p.double_disagrees},
                   {"sampled_max", p.sampled_max},
                   {"sampled_mean", p.sampled_mean},
                   {"sink_score", sink_json(p.sink)},
                   {"head_mean_bos", p.head_mean},
                   {"head_min_bos", p.head_min},
                   {"active_size", p.active_size},
                   {"max_abs_A", p.max_abs_A},
                   {"elapsed", p.elapsed}});
    }
    runs.push_back({{"start", r.start},
                    {"init", "normal std " + fmt(r.init_std)},
                    {"worst_case", r.result.worst.certified},
                    {"worst_case_evidence", search_label},
                    {"worst_case_double", r.result.worst.value},
                    {"worst_case_double_disagrees", r.result.worst.double_disagrees},
                    {"witness",
                     {{"trigger", r.result.worst.trigger},
                      {"position", r.result.worst.position},
                      {"coordinate", r.result.worst.coordinate}}},
                    {"sink_score", sink_json(r.sink)},
                    {"stop_reason", r.result.stop_reason},
                    {"converged", r.result.converged},
                    {"seconds", r.result.seconds},
                    {"bos_statistics", to_json(r.stats)},
                    {"history", h}});
  }
  j["path"] = runs;
  j["not_yet_studied"] =
      "the frontiers eps_all(delta) and eps_one(delta) and the every-head question are not part "
      "of this study yet";
  j["verdict"] = to_string(st.verdict);
  j["verdict_reason"] = st.reason;
  j["seconds"] = st.seconds;
  j["run_info"] = to_json(info);
  return j;
}

}  // namespace sinkcert::theorems
