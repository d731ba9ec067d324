// SPDX-License-Identifier: MIT
#include "theorems/studies/theorem1_study.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <random>
#include <sstream>

#include "search/attack.h"
#include "src/elapsed.h"
#include "src/evidence.h"
#include "src/forward.h"
#include "src/linf_error.h"
#include "src/parallel_tasks.h"
#include "src/table_writer.h"

namespace sinkcert::theorems::studies {

namespace {

using search::MinimaxOptions;
using search::MinimaxRecord;
using search::MinimaxResult;

}  // namespace

std::string format_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string double_note(bool disagrees, double double_value) {
  if (!disagrees) return "";
  char buf[96];
  std::snprintf(buf, sizeof buf, " (the double value %.3e differs in the first digit)",
                double_value);
  return buf;
}

namespace {

std::vector<NuancePoint> nuance_of(const std::string& name, const Model<double>& m,
                                   const Theorem1Options& o) {
  std::vector<NuancePoint> out;
  const Task& task = o.task;
  for (double t : o.content_scales) {
    TaskSampler sampler(task, kDefaultProbeSeed);
    NuancePoint p{name, t, 0, 2, 0};
    long count = 0;
    for (int s = 0; s < o.nuance_samples; ++s) {
      Sample smp = sampler.next();
      // content scaled by t
      smp.X.block(1, kFirstContent, task.L - 1, task.content_dim()) *= t;
      const auto r = forward(m, smp.X, true);
      const Matrix<double> Y = make_target(smp.X, smp.trigger, TargetKind::kPlain);
      p.error_max = std::max(p.error_max, linf_error<double>(r.output, Y).value);
      for (int i = 1; i < task.L; ++i) {
        if (i == smp.trigger) continue;
        const double b = r.attention[0][0](i, 0);
        p.bos_mean += b;
        p.bos_min = std::min(p.bos_min, b);
        ++count;
      }
    }
    p.bos_mean /= static_cast<double>(count);
    out.push_back(p);
  }
  return out;
}

void fit_slope(Theorem1Study& st) {
  // log eps = a + slope log delta, least squares over feasible points
  std::vector<double> x, y;
  for (const FrontierPoint& p : st.frontier) {
    if (p.feasible && p.eps > 0) {
      x.push_back(std::log(p.delta));
      y.push_back(std::log(p.eps));
    }
  }
  const std::size_t m = x.size();
  if (m < 3) return;
  double mx = 0, my = 0;
  for (std::size_t k = 0; k < m; ++k) {
    mx += x[k] / m;
    my += y[k] / m;
  }
  double sxx = 0, sxy = 0;
  for (std::size_t k = 0; k < m; ++k) {
    sxx += (x[k] - mx) * (x[k] - mx);
    sxy += (x[k] - mx) * (y[k] - my);
  }
  st.slope = sxy / sxx;
  double ssr = 0;
  for (std::size_t k = 0; k < m; ++k) {
    const double e = y[k] - (my + st.slope * (x[k] - mx));
    ssr += e * e;
  }
  // stderr(slope) = sqrt(SSR / (m - 2) / Sxx)
  st.slope_stderr = std::sqrt(ssr / static_cast<double>(m - 2) / sxx);
}

}  // namespace

Model<double> normal_init(AttentionKind kind, int n, double std, std::uint64_t seed) {
  std::mt19937_64 eng(seed);
  std::normal_distribution<double> normal(0.0, std);
  Matrix<double> A(n, n), M(n, n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) A(r, c) = normal(eng);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) M(r, c) = normal(eng);
  Model<double> m = single_head_model<double>(kind, A, M);
  // gated attention: the gate W_g, drawn after A and M (the other kinds'
  // draws unchanged)
  if (kind == AttentionKind::kGated) {
    Matrix<double> G(n, n);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) G(r, c) = normal(eng);
    m.layers[0][0].G = G;
  }
  return m;
}

Model<double> scaled_to_ceiling(const Model<double>& m, const ProbeSet& probes, double ceiling) {
  return scaled_to_meet(
      m, [&](const Model<double>& x) { return search::mean_probe_bos(x, probes) <= ceiling; },
      std::pair{0, 0});
}

Model<double> with_scaled_A(const Model<double>& m, double gamma) {
  return with_scaled_A(m, gamma, std::pair{0, 0});
}

std::string to_string(StudyVerdict verdict) {
  switch (verdict) {
    case StudyVerdict::kConsistent:
      return "CONSISTENT";
    case StudyVerdict::kCounterexampleCandidate:
      return "COUNTEREXAMPLE CANDIDATE";
    case StudyVerdict::kInconclusive:
      return "INCONCLUSIVE";
    case StudyVerdict::kNotApplicable:
      return "NOT APPLICABLE";
  }
  throw std::logic_error("unknown study verdict");
}

StudyVerdict study_verdict_from_string(const std::string& text) {
  for (StudyVerdict v : {StudyVerdict::kConsistent, StudyVerdict::kCounterexampleCandidate,
                         StudyVerdict::kInconclusive, StudyVerdict::kNotApplicable}) {
    if (to_string(v) == text) return v;
  }
  throw std::invalid_argument("not a study verdict: \"" + text + "\"");
}

std::string format_bound(double value, bool lower_bound, int digits) {
  if (std::isnan(value)) return "nan";
  // the precision is process-wide: not while a worker thread certifies
  const std::lock_guard<std::mutex> lock(search::precision_mutex());
  PrecisionScope scope(64);  // holds the double exactly
  return lower_bound ? format_down(Mpfr(value), digits) : format_up(Mpfr(value), digits);
}

void decide_verdict(Theorem1Study& st) {
  std::ostringstream why;
  if (!st.runs.empty() && st.runs[0].stats.heads[0][0].overall.count == 0) {
    st.verdict = StudyVerdict::kNotApplicable;
    st.reason = "no non-trigger position i >= 1 (L = 2): the BOS mass of Theorem 1 is undefined";
    return;
  }
  for (const FrontierPoint& p : st.frontier) {
    if (p.feasible && p.eps < kCandidateLoss) {
      st.verdict = StudyVerdict::kCounterexampleCandidate;
      why << "delta " << p.delta << ": worst case (SEARCH, lower bound) "
          << format_bound(p.eps, true, 6) << " < " << kCandidateLoss << " with mean BOS "
          << p.bos_mean << " <= " << p.ceiling;
      st.reason = why.str();
      return;
    }
  }
  bool ok = true;
  for (const FrontierPoint& p : st.frontier) {
    if (!p.feasible) {
      ok = false;
      why << "delta " << p.delta << ": no feasible model found; ";
    }
  }
  // frontier sorted by decreasing delta: eps must not grow as delta shrinks
  for (std::size_t k = 1; k < st.frontier.size(); ++k) {
    const FrontierPoint &big = st.frontier[k - 1], &small = st.frontier[k];
    if (big.feasible && small.feasible && small.eps > big.eps * (1 + kMonotoneSlack)) {
      ok = false;
      why << "frontier model worst case at delta " << small.delta << " = "
          << format_bound(small.eps, true, 6) << " > at delta " << big.delta << " = "
          << format_bound(big.eps, true, 6) << " (SEARCH, lower bounds); ";
    }
  }
  // worst cases as reported: certified at the witness (SEARCH, lower bound)
  const PathRun* best = nullptr;
  for (const PathRun& r : st.runs) {
    if (!best || r.result.worst.certified < best->result.worst.certified) best = &r;
  }
  const double path_bos = best ? best->stats.heads[0][0].overall.mean : 0;
  if (!best || !(best->result.worst.certified <= kPathLowLoss) || path_bos < kPathSinkMass) {
    ok = false;
    why << "path did not reach worst case <= " << kPathLowLoss
        << " with mean BOS >= " << kPathSinkMass << "; ";
  }
  if (ok) {
    st.verdict = StudyVerdict::kConsistent;
    why << "every frontier model's worst case (SEARCH, lower bound) >= " << kCandidateLoss
        << " and they shrink with delta (slope " << st.slope << " +- " << st.slope_stderr
        << "); path worst case (SEARCH, lower bound) "
        << format_bound(best->result.worst.certified, true, 6) << " with mean BOS " << path_bos;
  } else {
    st.verdict = StudyVerdict::kInconclusive;
  }
  st.reason = why.str();
}

namespace {

nlohmann::json record_json(const MinimaxRecord& r) {
  return {{"round", r.round},
          {"event", r.event},
          {"worst_case", r.worst_case},
          {"worst_case_double", r.worst_case_double},
          {"worst_case_double_disagrees", r.double_disagrees},
          {"active_max", r.active_max},
          {"active_size", r.active_size},
          {"elapsed", r.elapsed},
          {"mean_bos", r.mean_bos},
          {"accepted", r.accepted}};
}

// The final certification's fields of a path run or frontier point, only
// when the attack ran (a study without it writes the JSON it always did).
void add_final_certification(nlohmann::json& j, const std::string& key,
                             const FinalCertification& fc) {
  if (!fc.attacked) return;
  j[key + "_found_by"] = fc.found_by;
  j[key + "_minimax_adversary"] = fc.minimax_worst_case;
  j[key + "_attack"] = std::isnan(fc.attack_worst_case) ? nlohmann::json(nullptr)
                                                        : nlohmann::json(fc.attack_worst_case);
  j[key + "_attack_cpu_seconds"] = fc.seconds;
}

}  // namespace

Theorem1Options quick_options(const Task& task, std::uint64_t seed) {
  Theorem1Options o;
  o.task = task;
  o.seed = seed;
  o.starts = 2;
  o.frontier_rounds = 15;
  o.probe_count = 500;
  o.nuance_samples = 50;
  return o;
}

FinalCertification recertify_worst_case(const Model<double>& m, const Task& task,
                                        std::uint64_t seed, search::Witness& worst) {
  const double cpu0 = thread_cpu_seconds();
  FinalCertification fc;
  fc.attacked = true;
  fc.minimax_worst_case = worst.certified;
  search::AttackOptions ao;
  ao.seed = seed;
  const search::AttackResult a = search::attack(m, m.cast<Rational>(), task, ao);
  fc.attack_worst_case = a.best.certified;
  // E_reported = max(E_minimax, E_attack); ties keep the minimax's witness,
  // and an uncertified (NaN) attack value never wins
  if (a.best.certified > worst.certified ||
      (std::isnan(worst.certified) && !std::isnan(a.best.certified))) {
    worst = a.best;
    for (std::size_t t = 0; t < a.per_trigger.size(); ++t) {
      if (a.per_trigger[t].trigger == a.best.trigger) {
        fc.found_by = "attack: " + search::to_string(a.found_by[t]);
      }
    }
  }
  fc.seconds = thread_cpu_seconds() - cpu0;
  return fc;
}

Theorem1Study run_theorem1_study(const Theorem1Options& o, const StudyProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  std::mutex say_mutex;
  const auto say = [&](const std::string& s) {
    if (!progress) return;
    const std::lock_guard<std::mutex> lock(say_mutex);
    progress(s);
  };
  o.task.validate();
  Theorem1Study st;
  st.options = o;
  const ProbeSet probes = make_probe_set(o.task, o.probe_count);
  // the minimax settings every search of the study shares
  MinimaxOptions base;
  base.compressed_rows = o.compressed_rows;
  auto phase_start = t0;
  const auto end_phase = [&](const std::string& name) {
    st.phase_seconds.emplace_back(name, seconds_since(phase_start));
    phase_start = std::chrono::steady_clock::now();
  };

  // 1. descent path: one task per start, its points gathered in start order
  st.runs.resize(static_cast<std::size_t>(std::max(0, o.starts)));
  std::vector<std::vector<PathPoint>> path_points(st.runs.size());
  std::vector<double> path_cpu(st.runs.size());
  run_tasks(o.starts, o.threads, [&](int s) {
    const double cpu0 = thread_cpu_seconds();
    PathRun& run = st.runs[static_cast<std::size_t>(s)];
    run.start = s;
    run.init_std = kPaperInitStd * std::pow(kInitGrowth, s);
    const Model<double> init = normal_init(o.attention, o.task.n, run.init_std, o.seed * 1000 + s);
    const MinimaxOptions mo = path_minimax_options(o.seed * 1000 + s, o.path_target, o.path_rounds,
                                                   o.path_time_limit, base);
    run.result =
        search::minimax(init, o.task, mo, [&](const MinimaxRecord& r, const Model<double>& m) {
          const BosStatistics bs = bos_statistics(m, probes);
          PathPoint p;
          p.start = s;
          p.round = r.round;
          p.event = r.event;
          p.elapsed = r.elapsed;
          p.worst_case = r.worst_case;
          p.worst_case_double = r.worst_case_double;
          p.double_disagrees = r.double_disagrees;
          p.sampled_max = bs.error_max;
          p.sampled_mean = bs.error_mean;
          p.bos_mean = bs.heads[0][0].overall.mean;
          p.bos_min = bs.heads[0][0].overall.min;
          p.active_size = r.active_size;
          p.max_abs_A = r.max_abs_A;
          path_points[static_cast<std::size_t>(s)].push_back(p);
          char buf[320];
          std::snprintf(buf, sizeof buf,
                        "path start %d round %d: worst case %s (SEARCH lower bound)%s, sampled "
                        "%.3e, mean BOS %.9f, active set %d, %.1f s",
                        s, r.round, format_bound(r.worst_case, true, 4).c_str(),
                        double_note(r.double_disagrees, r.worst_case_double).c_str(), bs.error_max,
                        p.bos_mean, r.active_size, r.elapsed);
          say(buf);
        });
    run.stats = bos_statistics(run.result.model, probes);
    search::AdversaryOptions ao;
    ao.seed = o.seed;
    run.min_bos = search::minimize_bos_mass(run.result.model, o.task, ao);
    path_cpu[static_cast<std::size_t>(s)] = thread_cpu_seconds() - cpu0;
  });
  for (std::size_t s = 0; s < st.runs.size(); ++s) {
    st.path.insert(st.path.end(), path_points[s].begin(), path_points[s].end());
    st.profile.push_back({"path", "start " + std::to_string(s), path_cpu[s]});
  }
  end_phase("path");
  // the frontier's start: the best path model by the minimax's own worst case
  std::size_t best = 0;
  for (std::size_t k = 1; k < st.runs.size(); ++k) {
    if (st.runs[k].result.worst.certified < st.runs[best].result.worst.certified) best = k;
  }
  const Model<double>& best_path = st.runs[best].result.model;

  // 2. frontier: one task per delta (ascending), and the path model's BOS
  // mass against content as the last task. Each point starts from the path
  // model with A scaled down to meet the ceiling: the path model itself is
  // saturated (BOS mass 1 - 1e-11), where the ceiling's gradient vanishes.
  std::vector<double> deltas = o.deltas;
  std::sort(deltas.begin(), deltas.end());
  const int point_count = static_cast<int>(deltas.size());
  std::vector<FrontierPoint> points(deltas.size());
  std::vector<std::vector<NuancePoint>> point_nuance(deltas.size());
  std::vector<double> frontier_cpu(deltas.size()), nuance_cpu(deltas.size() + 1);
  run_tasks(point_count + 1, o.threads, [&](int k) {
    const double cpu0 = thread_cpu_seconds();
    if (k == point_count) {
      st.nuance = nuance_of("path", best_path, o);
      nuance_cpu[deltas.size()] = thread_cpu_seconds() - cpu0;
      return;
    }
    const double delta = deltas[static_cast<std::size_t>(k)];
    FrontierPoint& p = points[static_cast<std::size_t>(k)];
    p.delta = delta;
    p.ceiling = 1 - delta;
    const Model<double> warm = scaled_to_ceiling(best_path, probes, p.ceiling);
    FrontierSearch fs;
    fs.delta = delta;
    fs.rounds = o.frontier_rounds;
    fs.time_limit = o.frontier_time_limit;
    const MinimaxOptions mo = frontier_minimax_options(o.seed, fs, probes, base);
    run_frontier_point(warm, o.task, mo, p, [&](const MinimaxRecord& r, const Model<double>&) {
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "frontier delta %.3g round %d: worst case %s (SEARCH lower bound)%s, mean "
                    "BOS %.6f (ceiling %.6f), active set %d, %.1f s",
                    delta, r.round, format_bound(r.worst_case, true, 4).c_str(),
                    double_note(r.double_disagrees, r.worst_case_double).c_str(), r.mean_bos,
                    p.ceiling, r.active_size, r.elapsed);
      say(buf);
    });
    p.bos_mean = search::mean_probe_bos(p.result.model, probes);
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "frontier delta %.3g: worst case of the frontier model %s (SEARCH, lower bound "
                  "on that model's E)%s, mean BOS %.6f, %s",
                  delta, format_bound(p.eps, true, 5).c_str(),
                  double_note(p.double_disagrees, p.eps_double).c_str(), p.bos_mean,
                  p.feasible ? "feasible" : "NO feasible model");
    say(buf);
    const double cpu1 = thread_cpu_seconds();
    frontier_cpu[static_cast<std::size_t>(k)] = cpu1 - cpu0;
    if (p.feasible && (p.delta == 0.5 || p.delta == 0.05)) {
      char name[64];
      std::snprintf(name, sizeof name, "frontier delta=%g", p.delta);
      point_nuance[static_cast<std::size_t>(k)] = nuance_of(name, p.result.model, o);
    }
    nuance_cpu[static_cast<std::size_t>(k)] = thread_cpu_seconds() - cpu1;
  });
  // decreasing delta
  for (int k = point_count - 1; k >= 0; --k) {
    const auto u = static_cast<std::size_t>(k);
    st.frontier.push_back(std::move(points[u]));
    st.nuance.insert(st.nuance.end(), point_nuance[u].begin(), point_nuance[u].end());
    st.profile.push_back({"frontier", "delta " + format_double(deltas[u]), frontier_cpu[u]});
  }
  st.profile.push_back({"nuance", "path", nuance_cpu[deltas.size()]});
  for (int k = point_count - 1; k >= 0; --k) {
    const auto u = static_cast<std::size_t>(k);
    if (!point_nuance[u].empty()) {
      st.profile.push_back({"nuance", "frontier delta " + format_double(deltas[u]), nuance_cpu[u]});
    }
  }
  end_phase("frontier and nuance");

  // 4. final certification: path starts, then frontier points (decreasing delta)
  if (o.attack) {
    const int runs = static_cast<int>(st.runs.size());
    run_tasks(runs + point_count, o.threads, [&](int k) {
      char buf[320];
      if (k < runs) {
        PathRun& r = st.runs[static_cast<std::size_t>(k)];
        r.final_certification =
            recertify_worst_case(r.result.model, o.task, o.seed, r.result.worst);
        std::snprintf(buf, sizeof buf,
                      "final certification, path start %d: worst case %s (SEARCH lower bound, "
                      "%s; minimax adversary %s, attack %s)",
                      k, format_bound(r.result.worst.certified, true, 4).c_str(),
                      r.final_certification.found_by.c_str(),
                      format_bound(r.final_certification.minimax_worst_case, true, 4).c_str(),
                      format_bound(r.final_certification.attack_worst_case, true, 4).c_str());
      } else {
        FrontierPoint& p = st.frontier[static_cast<std::size_t>(k - runs)];
        p.final_certification =
            recertify_worst_case(p.result.model, o.task, o.seed, p.result.worst);
        take_worst_case(p);
        std::snprintf(buf, sizeof buf,
                      "final certification, frontier delta %.3g: worst case %s (SEARCH lower "
                      "bound, %s; minimax adversary %s, attack %s)",
                      p.delta, format_bound(p.eps, true, 4).c_str(),
                      p.final_certification.found_by.c_str(),
                      format_bound(p.final_certification.minimax_worst_case, true, 4).c_str(),
                      format_bound(p.final_certification.attack_worst_case, true, 4).c_str());
      }
      say(buf);
    });
    for (const PathRun& r : st.runs) {
      st.profile.push_back({"final certification", "path start " + std::to_string(r.start),
                            r.final_certification.seconds});
    }
    for (const FrontierPoint& p : st.frontier) {
      st.profile.push_back({"final certification", "frontier delta " + format_double(p.delta),
                            p.final_certification.seconds});
    }
    end_phase("final certification");
  }
  fit_slope(st);
  decide_verdict(st);
  st.seconds = seconds_since(t0);
  return st;
}

nlohmann::json to_json(const Theorem1Study& st, const RunInfo& info) {
  using nlohmann::json;
  const std::string search_label = Evidence::search(Bound::kLower).label();
  const std::string numeric = Evidence::numeric(53).label();
  json j;
  j["claim"] =
      "Theorem 1: single-layer softmax, E -> 0 implies BOS mass -> 1 at non-trigger positions";
  j["task"] = {{"n", st.options.task.n},
               {"L", st.options.task.L},
               {"trigger_range", to_string(st.options.task.range)}};
  j["parametrization"] = search::kParametrization;
  j["probe_set"] = {{"count", st.options.probe_count}, {"seed", kDefaultProbeSeed}};
  j["evidence"] = {{"worst_case", search_label + ": the adversary's witness re-evaluated in MPFI, "
                                                 "lower end rounded down"},
                   {"worst_case_double", numeric + ": the same witness evaluated in double"},
                   {"sampled", numeric},
                   {"bos", numeric},
                   {"eps", kFrontierPointMeaning}};
  if (st.options.attack) {
    j["evidence"]["final_certification"] =
        search_label +
        ": worst_case and eps are the larger of the minimax adversary's certified worst case "
        "(*_minimax_adversary) and the attack's (*_attack; search/attack.h, round 0, certified "
        "on the exact model), *_found_by says whose witness it is";
  }
  json runs = json::array();
  for (const PathRun& r : st.runs) {
    json h = json::array();
    for (const auto& rec : r.result.history) h.push_back(record_json(rec));
    runs.push_back(
        {{"start", r.start},
         {"init", "normal std " + format_double(r.init_std)},
         {"worst_case", r.result.worst.certified},
         {"worst_case_evidence", search_label},
         {"worst_case_double", r.result.worst.value},
         {"worst_case_double_disagrees", r.result.worst.double_disagrees},
         {"witness",
          {{"trigger", r.result.worst.trigger},
           {"position", r.result.worst.position},
           {"coordinate", r.result.worst.coordinate}}},
         {"stop_reason", r.result.stop_reason},
         {"seconds", r.result.seconds},
         {"bos_statistics", to_json(r.stats)},
         {"min_bos_search",
          {{"value", r.min_bos.best.value <= 1 ? json(r.min_bos.best.certified) : json(nullptr)},
           {"evidence", r.min_bos.evidence.label() +
                            ": upper end of the MPFI enclosure at the witness, rounded up"},
           {"value_double", r.min_bos.best.value <= 1 ? json(r.min_bos.best.value) : json(nullptr)},
           {"double_disagrees", r.min_bos.best.double_disagrees},
           {"trigger", r.min_bos.best.trigger},
           {"position", r.min_bos.best.position}}},
         {"history", h}});
    add_final_certification(runs.back(), "worst_case", r.final_certification);
  }
  j["path"] = runs;
  json fr = json::array();
  for (const FrontierPoint& p : st.frontier) {
    fr.push_back({{"delta", p.delta},
                  {"bos_ceiling", p.ceiling},
                  {"eps", p.eps},
                  {"eps_evidence", search_label},
                  {"eps_double", p.eps_double},
                  {"eps_double_disagrees", p.double_disagrees},
                  {"mean_bos", p.bos_mean},
                  {"mean_bos_evidence", numeric},
                  {"feasible", p.feasible},
                  {"converged", p.converged},
                  {"stop_reason", p.result.stop_reason},
                  {"rounds", p.result.history.size()},
                  {"seconds", p.result.seconds}});
    add_final_certification(fr.back(), "eps", p.final_certification);
  }
  j["frontier"] = fr;
  j["frontier_fit"] = {{"model",
                        "log eps = a + slope log delta (least squares, feasible points); eps: "
                        "SEARCH lower bounds on the frontier models' E, not eps*(delta)"},
                       {"slope", st.slope},
                       {"slope_stderr", st.slope_stderr},
                       {"uncertainty",
                        "standard error of the fit within this run; spread across "
                        "seeds needs separate runs"}};
  json nu = json::array();
  for (const NuancePoint& p : st.nuance) {
    nu.push_back({{"model", p.model},
                  {"content_scale", p.scale},
                  {"bos_mean", p.bos_mean},
                  {"bos_min", p.bos_min},
                  {"sampled_error_max", p.error_max}});
  }
  j["with_high_probability"] = {{"evidence", numeric}, {"points", nu}};
  j["verdict"] = to_string(st.verdict);
  j["verdict_reason"] = st.reason;
  j["seconds"] = st.seconds;
  json phases = json::object();
  for (const auto& [phase, seconds] : st.phase_seconds) phases[phase] = seconds;
  j["phase_wall_seconds"] = phases;
  json tasks = json::array();
  for (const TaskTime& t : st.profile) {
    tasks.push_back({{"phase", t.phase}, {"task", t.task}, {"cpu_seconds", t.cpu_seconds}});
  }
  j["task_cpu_seconds"] = tasks;
  j[kProvenanceKey] = to_json(info);
  return j;
}

nlohmann::json without_time_keys(const nlohmann::json& j) {
  if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      if (k.find("seconds") != std::string::npos || k == "elapsed" || k == kProvenanceKey ||
          k == "run_info")
        continue;
      out[k] = without_time_keys(it.value());
    }
    return out;
  }
  if (!j.is_array()) return j;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : j) out.push_back(without_time_keys(e));
  return out;
}

}  // namespace sinkcert::theorems::studies
