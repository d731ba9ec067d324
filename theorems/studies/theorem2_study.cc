// SPDX-License-Identifier: MIT
#include "theorems/studies/theorem2_study.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>

#include "search/attack.h"
#include "src/constructions.h"
#include "src/evidence.h"
#include "src/forward.h"
#include "src/scalar_traits.h"
#include "theorems/bounds/deep_bos_bound.h"
#include "theorems/bounds/deep_worst_case_bound.h"

namespace sinkcert::theorems::studies {

namespace {

using search::MinimaxOptions;
using search::MinimaxRecord;

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
  o.frontier_rounds = 8;
  o.every_head_searches = layers * heads;
  o.every_head_rounds = 15;
  o.cap_descent_rounds = 30;
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
        << format_double(best->sink.sigma) << " (layer " << best->sink.layer << ", head "
        << best->sink.head << ", position " << best->sink.position << ")";
  } else {
    st.verdict = StudyVerdict::kInconclusive;
    why << "the best path model (start " << best->start << ") has worst case (SEARCH, lower bound) "
        << format_bound(best->result.worst.certified, true, 6) << " and sink score "
        << format_double(best->sink.sigma)
        << "; CONSISTENT needs worst case <= " << kTheorem2LowLoss
        << " with sink score >= " << format_double(kTheorem2SinkScore);
  }
  st.reason = why.str();
}

std::string to_string(CapScope scope) { return scope == CapScope::kAll ? "all" : "one"; }

std::string to_string(CapStart start) {
  switch (start) {
    case CapStart::kWarm:
      return "warm";
    case CapStart::kFresh:
      return "fresh";
    case CapStart::kDead:
      return "dead";
    case CapStart::kSink:
      return "sink";
    case CapStart::kConstruction:
      return "construction";
  }
  return "?";
}

Model<double> sink_start(int n, int layers, int heads, int layer, int head, double beta) {
  if (layers * heads < 2) throw std::invalid_argument("the sink start needs a second head");
  // every head zero: A = 0 (uniform attention), M = 0 (no output)
  Model<double> m;
  m.kind = ModelKind::kResidual;
  m.attention = AttentionKind::kSoftmax;
  m.n = n;
  m.layers.assign(layers,
                  std::vector<Head<double>>(
                      heads, Head<double>{Matrix<double>::Zero(n, n), Matrix<double>::Zero(n, n)}));
  const int t = (layer * heads + head == 0) ? 1 : 0;  // the first other head
  const Model<double> family = sink_family<double>(n, beta);
  m.layers[t / heads][t % heads] = family.layers[0][0];
  return m;
}

Model<double> killed(const Model<double>& model, int layer, int head) {
  Model<double> out = model;
  // A^{layer,head} = 0: uniform attention; M^{layer,head} = 0: no output
  out.layers[layer][head].A.setZero();
  out.layers[layer][head].M.setZero();
  return out;
}

namespace {

// The smallest double >= x.
double rounded_up(const Mpfr& x) { return mpfr_get_d(x.backend().data(), MPFR_RNDU); }

}  // namespace

FrontierCertificate certify_capped_model(const Model<double>& model, const Task& task, int layer,
                                         int head, double ceiling, long boxes, double seconds) {
  FrontierCertificate c;
  c.attempted = true;
  // E <= kTheorem2LowLoss over the whole box
  bounds::WorstCaseOptions wo;
  wo.max_boxes = boxes;
  wo.max_seconds = seconds;
  wo.threads = 1;
  const bounds::UpperBoundCheck loss =
      bounds::check_deep_upper_bound(model, task, kTheorem2LowLoss, wo);
  c.loss = loss.verdict;
  c.loss_upper = rounded_up(loss.bound.upper);
  // max over the box of a^{layer,head}_i0 <= ceiling
  bounds::DeepBosOptions bo;
  bo.layer = layer;
  bo.head = head;
  bo.max_boxes = boxes;
  bo.max_seconds = seconds;
  const bounds::MaxBosClaimCheck cap = bounds::check_deep_max_bos(model, task, ceiling, bo);
  c.cap = cap.verdict;
  c.cap_upper = rounded_up(cap.bound.mass_upper);
  c.bits = std::max(loss.bound.bits, cap.bound.bits);
  return c;
}

double certified_capped_bos_at(const Model<double>& model, const Task& task, int trigger,
                               const Matrix<double>& content,
                               const std::vector<std::pair<int, int>>& capped) {
  // MPFI at the adversary's first precision: the model's doubles and the
  // content are binary rationals, enclosed exactly; the result is the
  // largest upper end, rounded up
  const std::lock_guard<std::mutex> lock(search::precision_mutex());
  PrecisionScope scope(search::kCertifyStartBits);
  const Model<Mpfi> m = model.cast<Mpfi>();
  const Matrix<Mpfi> X = make_input<Mpfi>(task, trigger, matrix_cast<Mpfi>(content));
  const auto r = forward(m, X, true);
  double best = -std::numeric_limits<double>::infinity();
  for (const auto& [l, h] : capped) {
    for (int i = 1; i < task.L; ++i) {
      if (i == trigger) continue;
      // max over the capped terms of upper(a^{l,h}_{i0})
      const Mpfr u = bmp::upper(r.attention[l][h](i, 0));
      if (bmp::isnan(u)) return std::numeric_limits<double>::quiet_NaN();
      best = std::max(best, mpfr_get_d(u.backend().data(), MPFR_RNDU));
    }
  }
  return best;
}

std::vector<HeadProfile> head_profiles(const Model<double>& model, const ProbeSet& probes) {
  const int L = probes.task.L, heads = model.num_layers() * model.num_heads();
  std::vector<HeadProfile> out(heads);
  std::vector<long> count(heads, 0), low(heads, 0);
  for (const Sample& smp : probes.samples) {
    const auto r = forward(model, smp.X, true);
    for (int l = 0; l < model.num_layers(); ++l) {
      for (int h = 0; h < model.num_heads(); ++h) {
        const int t = l * model.num_heads() + h;
        for (int i = 1; i < L; ++i) {
          if (i == smp.trigger) continue;
          const double a = r.attention[l][h](i, 0);
          out[t].max = count[t] == 0 ? a : std::max(out[t].max, a);
          out[t].mean += a;
          low[t] += a <= kNoSinkScore;
          ++count[t];
        }
      }
    }
  }
  for (int t = 0; t < heads; ++t) {
    // mean = (1/N) sum a_i0; low_fraction = #{a_i0 <= kNoSinkScore} / N
    if (count[t] == 0) continue;
    out[t].mean /= static_cast<double>(count[t]);
    out[t].low_fraction = static_cast<double>(low[t]) / static_cast<double>(count[t]);
  }
  return out;
}

std::string head_role(const Necessity& nc, const HeadProfile& p) {
  if (!nc.necessary) return "not necessary";
  if (p.max <= kNoSinkScore) return "necessary, no sink";
  if (p.mean <= kNoSinkScore) return "necessary but not sinking on average";
  return "necessary, sinks";
}

Model<double> ablated(const Model<double>& model, int layer, int head) {
  Model<double> out = model;
  for (int h = 0; h < out.num_heads(); ++h) {
    // M^{layer,h} = 0 for the head (or every head of the layer)
    if (head < 0 || h == head) out.layers[layer][h].M.setZero();
  }
  return out;
}

Necessity necessity(const Model<double>& model, const Task& task, int layer, int head,
                    const search::AdversaryOptions& adversary,
                    std::optional<double> model_worst_case) {
  Necessity nc;
  nc.layer = layer;
  nc.head = head;
  nc.worst_case = model_worst_case ? *model_worst_case
                                   : search::maximize_error(model, task, adversary).best.certified;
  nc.ablated_worst_case =
      search::maximize_error(ablated(model, layer, head), task, adversary).best.certified;
  // ratio = E_search(ablated) / E_search(model)
  nc.ratio = nc.worst_case > 0
                 ? nc.ablated_worst_case / nc.worst_case
                 : (nc.ablated_worst_case > 0 ? std::numeric_limits<double>::infinity() : 1.0);
  nc.necessary = nc.ratio >= kNecessityFactor;
  return nc;
}

double max_probe_bos(const BosStatistics& stats, int layer, int head) {
  return stats.heads[layer][head].overall.quantiles.back();
}

bool answers_every_head(double worst_case, bool necessary, double max_bos) {
  return worst_case <= kEveryHeadLoss && necessary && max_bos <= kNoSinkScore;
}

void decide_every_head(EveryHeadAnswer& a, int heads) {
  a.head_found = a.layer_found = false;
  for (std::size_t c = 0; c < a.candidates.size(); ++c) {
    const EveryHeadCandidate& k = a.candidates[c];
    if (!(k.worst_case <= kEveryHeadLoss)) continue;
    for (const Necessity& nc : k.heads) {
      const double bos = k.head_max_bos[nc.layer * heads + nc.head];
      if (!a.head_found && answers_every_head(k.worst_case, nc.necessary, bos)) {
        a.head_found = true;
        a.head_candidate = static_cast<int>(c);
        a.head_layer = nc.layer;
        a.head_head = nc.head;
      }
    }
    for (const Necessity& nc : k.layers) {
      bool none_sinks = true;
      for (int h = 0; h < heads; ++h) {
        none_sinks = none_sinks && k.head_max_bos[nc.layer * heads + h] <= kNoSinkScore;
      }
      if (!a.layer_found && nc.necessary && none_sinks) {
        a.layer_found = true;
        a.layer_candidate = static_cast<int>(c);
        a.layer_layer = nc.layer;
      }
    }
  }
  std::ostringstream why;
  const auto head_part = [&](bool found, int c, const std::string& what) {
    if (found) {
      const EveryHeadCandidate& k = a.candidates[c];
      why << "FOUND (SEARCH) a necessary " << what << " that does not sink, in " << k.source
          << " (worst case " << format_bound(k.worst_case, true, 4) << ", SEARCH lower bound)";
    } else {
      why << "NOT FOUND (SEARCH): no necessary " << what << " without a sink";
    }
  };
  head_part(a.head_found, a.head_candidate,
            a.head_found ? "head (layer " + std::to_string(a.head_layer) + ", head " +
                               std::to_string(a.head_head) + ")"
                         : "head");
  why << "; ";
  head_part(a.layer_found, a.layer_candidate,
            a.layer_found ? "layer (" + std::to_string(a.layer_layer) + ")" : "layer");
  int low = 0;
  for (const EveryHeadCandidate& k : a.candidates) low += k.worst_case <= kEveryHeadLoss;
  why << "; " << a.candidates.size() << " candidate models (" << low
      << " with worst case <= " << kEveryHeadLoss << "), " << a.searches << " capped searches, "
      << std::fixed << std::setprecision(1) << a.seconds << " s";
  a.summary = why.str();
}

// The attack's round 0 on a kept model (header comment): result.worst
// becomes the attack's best witness when that certifies larger. Returns the
// adversary's own certified value.
double attack_kept_model(search::MinimaxResult& result, const Task& task, std::uint64_t seed) {
  const double adversary = result.worst.certified;
  search::AttackOptions ao;
  ao.seed = seed;
  const search::AttackResult a =
      search::attack(result.model, result.model.cast<Rational>(), task, ao);
  if (a.best.certified > adversary || std::isnan(adversary)) result.worst = a.best;
  return adversary;
}

nlohmann::json certificate_json(const FrontierCertificate& c, double ceiling) {
  if (!c.attempted) return nullptr;
  return {{"loss_claim", kTheorem2LowLoss},
          {"loss_verdict", to_string(c.loss)},
          {"loss_upper", c.loss_upper},
          {"cap_claim", ceiling},
          {"cap_verdict", to_string(c.cap)},
          {"cap_upper", c.cap_upper},
          {"certified", c.certified()},
          {"models_tried", c.models_tried},
          {"evidence", Evidence::certified(c.bits).label()}};
}

namespace {

// The minimax settings every search of the study shares (seeds apart).
MinimaxOptions study_minimax_options(const Theorem2Options& o) {
  MinimaxOptions mo;
  mo.initial_per_trigger = o.initial_per_trigger;
  mo.max_per_trigger = o.max_per_trigger;
  mo.lm_iterations = o.lm_iterations;
  mo.deep_threads = o.threads;
  mo.dense_isa = o.dense_isa;
  mo.ranks = o.ranks;
  mo.adversary.ranks = o.ranks;
  return mo;
}

// m with the A of the capped heads (every head, or (layer, head)) scaled by
// the largest gamma in [0, 1] whose ceiling statistic is <= ceiling
// (theorems/studies/frontier.h, scaled_to_meet).
Model<double> capped_warm_start(const Model<double>& m, const ProbeSet& probes, double ceiling,
                                std::optional<std::pair<int, int>> head) {
  return scaled_to_meet(
      m,
      [&](const Model<double>& x) {
        return search::max_position_mean_probe_bos(x, probes, head) <= ceiling;
      },
      head);
}

struct CappedSearch {
  CapScope scope = CapScope::kAll;
  int layer = 0, head = 0;
  double delta = 0;
  int rounds = 0;          // the warm start's
  int descent_rounds = 0;  // the fresh and dead starts'
  double time_limit = 0;
  std::vector<CapStart> starts;
  std::uint64_t fresh_seed = 0;      // of the fresh start's init
  bool descent_when_needed = false;  // Theorem2Options::cap_descent_when_needed
};

// The minimax with the ceiling 1 - delta on the capped heads: Lawson for
// every head (its value is positive by Theorem 2), least squares for one
// head (it may reach 0), from each start of c.starts (header comment); the
// best feasible result by worst case is kept (ties: the earlier start).
Theorem2FrontierPoint capped_minimax(const Model<double>& best, const Theorem2Options& o,
                                     const ProbeSet& probes, const ProbeSet& ceiling_probes,
                                     const CappedSearch& c, const StudyProgress& say) {
  Theorem2FrontierPoint p;
  p.scope = c.scope;
  p.layer = c.layer;
  p.head = c.head;
  p.delta = c.delta;
  p.ceiling = 1 - c.delta;
  p.witness_capped_bos = std::numeric_limits<double>::quiet_NaN();
  std::optional<std::pair<int, int>> capped;
  if (c.scope == CapScope::kOne) capped = std::pair{c.layer, c.head};
  char name[96];
  std::snprintf(
      name, sizeof name, "eps_%s delta %.3g%s", to_string(c.scope).c_str(), c.delta,
      capped
          ? (" (layer " + std::to_string(c.layer) + " head " + std::to_string(c.head) + ")").c_str()
          : "");
  bool have = false;
  // feasible results with E_search <= kTheorem2LowLoss, the certification's candidates
  std::vector<std::pair<CapStart, Theorem2FrontierPoint>> low;
  for (const CapStart start : c.starts) {
    if ((start == CapStart::kDead || start == CapStart::kSink ||
         start == CapStart::kConstruction) &&
        (!capped || o.layers * o.heads < 2)) {
      continue;
    }
    const bool descent = start == CapStart::kDead || start == CapStart::kFresh;
    if (c.descent_when_needed && descent && have && p.feasible && p.eps <= kTheorem2LowLoss) {
      // a cheap start already reached the low-loss level (header comment)
      CapStartRecord rec;
      rec.start = start;
      rec.skipped = "the " + to_string(p.start) + " start already reached worst case " +
                    format_bound(p.eps, true, 4) + " <= 1e-6 (kTheorem2LowLoss)";
      static_assert(kTheorem2LowLoss == 1e-6, "the reason above names the level");
      p.starts.push_back(rec);
      if (say) say(std::string(name) + " from " + to_string(start) + ": skipped, " + rec.skipped);
      continue;
    }
    Model<double> init;
    if (start == CapStart::kWarm) {
      init = capped_warm_start(best, ceiling_probes, p.ceiling, capped);
    } else if (start == CapStart::kFresh) {
      init = residual_normal_init(o.task.n, o.layers, o.heads, o.cap_fresh_std, c.fresh_seed);
    } else if (start == CapStart::kDead) {
      init = killed(best, c.layer, c.head);
    } else {  // sink, construction
      init = sink_start(o.task.n, o.layers, o.heads, c.layer, c.head, kSinkStartBeta);
    }
    FrontierSearch fs;
    fs.delta = c.delta;
    fs.surrogate =
        c.scope == CapScope::kAll ? search::Surrogate::kLawson : search::Surrogate::kLeastSquares;
    fs.target_loss = c.scope == CapScope::kAll ? 0 : o.path_target;
    fs.head = capped;
    // the warm and sink starts are near their answer: the frontier's rounds
    // (the construction: none, its worst case only)
    fs.rounds = start == CapStart::kConstruction                       ? 0
                : start == CapStart::kWarm || start == CapStart::kSink ? c.rounds
                                                                       : c.descent_rounds;
    fs.time_limit = c.time_limit;
    const MinimaxOptions mo =
        frontier_minimax_options(o.seed, fs, ceiling_probes, study_minimax_options(o));
    const std::string who = std::string(name) + " from " + to_string(start);
    Theorem2FrontierPoint q = p;
    try {
      run_frontier_point(init, o.task, mo, q, [&](const MinimaxRecord& r, const Model<double>&) {
        char buf[400];
        std::snprintf(buf, sizeof buf,
                      "%s round %d: worst case %s (SEARCH lower bound)%s, capped BOS %.6f "
                      "(ceiling %.6f), %.1f s",
                      who.c_str(), r.round, format_bound(r.worst_case, true, 4).c_str(),
                      double_note(r.double_disagrees, r.worst_case_double).c_str(), r.ceiling_bos,
                      p.ceiling, r.elapsed);
        if (say) say(buf);
      });
    } catch (const std::invalid_argument& e) {
      p.not_run = e.what();
      p.result.model = init;
      p.result.feasible = false;
      p.result.stop_reason = "not run: " + p.not_run;
      if (say) say(std::string(name) + ": not run (" + p.not_run + ")");
      return p;
    }
    CapStartRecord rec;
    rec.adversary_eps = q.eps;
    if (q.feasible) {
      attack_kept_model(q.result, o.task, o.seed);
      take_worst_case(q);
      if (say && q.eps > rec.adversary_eps) {
        say(who + ": the attack raises the worst case to " + format_bound(q.eps, true, 4) +
            " (SEARCH lower bound)");
      }
    }
    rec.start = start;
    rec.eps = q.eps;
    rec.feasible = q.feasible;
    rec.converged = q.converged;
    rec.rounds = static_cast<int>(q.result.history.size());
    rec.seconds = q.result.seconds;
    rec.stop_reason = q.result.stop_reason;
    p.starts.push_back(rec);
    if (say) {
      char buf[300];
      std::snprintf(buf, sizeof buf, "%s: worst case %s (SEARCH lower bound), %s, %s", who.c_str(),
                    format_bound(q.eps, true, 4).c_str(),
                    q.feasible ? "feasible" : "NO feasible model", q.result.stop_reason.c_str());
      say(buf);
    }
    // keep the best feasible result (a feasible one beats any infeasible one)
    const bool better = !have || (q.feasible && (!p.feasible || q.eps < p.eps));
    if (q.feasible && q.eps <= kTheorem2LowLoss) low.push_back({start, q});
    if (better) {
      std::vector<CapStartRecord> starts = std::move(p.starts);
      p = std::move(q);
      p.starts = std::move(starts);
      p.start = start;
      have = true;
    }
  }
  if (capped && o.certify_boxes > 0 && !low.empty()) {
    // certification (header comment): the low-loss feasible models, best
    // first (ties: the earlier start); the first with both claims VERIFIED
    // is kept, else the search's best with its own certificate
    std::stable_sort(low.begin(), low.end(),
                     [](const auto& a, const auto& b) { return a.second.eps < b.second.eps; });
    int tried = 0;
    std::optional<FrontierCertificate> best_certificate;
    for (auto& [start, q] : low) {
      ++tried;
      const FrontierCertificate cert = certify_capped_model(
          q.result.model, o.task, c.layer, c.head, p.ceiling, o.certify_boxes, o.certify_seconds);
      if (say) {
        char buf[400];
        std::snprintf(buf, sizeof buf,
                      "%s, model from %s: E <= %.3g %s (E <= %.4e), capped head's max BOS <= "
                      "%.6g %s (max BOS <= %.9f) [CERTIFIED]",
                      name, to_string(start).c_str(), kTheorem2LowLoss,
                      to_string(cert.loss).c_str(), cert.loss_upper, p.ceiling,
                      to_string(cert.cap).c_str(), cert.cap_upper);
        say(buf);
      }
      if (start == p.start) best_certificate = cert;
      if (cert.certified()) {
        std::vector<CapStartRecord> starts = std::move(p.starts);
        p = std::move(q);
        p.starts = std::move(starts);
        p.start = start;
        p.certificate = cert;
        break;
      }
    }
    if (!p.certificate.certified() && best_certificate) p.certificate = *best_certificate;
    p.certificate.models_tried = tried;
  }
  std::vector<std::pair<int, int>> capped_heads;
  for (int l = 0; l < o.layers; ++l)
    for (int h = 0; h < o.heads; ++h)
      if (!capped || *capped == std::pair{l, h}) capped_heads.emplace_back(l, h);
  p.capped_bos = search::max_position_mean_probe_bos(p.result.model, ceiling_probes, capped);
  p.sink = sink_score(bos_statistics(p.result.model, probes));
  if (p.feasible) {
    p.witness_capped_bos = certified_capped_bos_at(p.result.model, o.task, p.result.worst.trigger,
                                                   p.result.worst.content, capped_heads);
  }
  if (say) {
    char buf[500];
    std::snprintf(buf, sizeof buf,
                  "%s: worst case of the capped model %s (SEARCH, lower bound on that model's "
                  "E)%s, from %s, capped BOS %.6f (at the witness %.6f CERTIFIED), sink score "
                  "%.6f, %s%s",
                  name, format_bound(p.eps, true, 5).c_str(),
                  double_note(p.double_disagrees, p.eps_double).c_str(), to_string(p.start).c_str(),
                  p.capped_bos, p.witness_capped_bos, p.sink.sigma,
                  p.feasible ? "feasible" : "NO feasible model",
                  p.converged ? ", converged" : ", not converged");
    say(buf);
  }
  return p;
}

// A candidate of the every-head question: its worst case by the
// necessity adversary and, when that is <= kEveryHeadLoss, the necessity of
// every head and layer (the ablations are skipped otherwise: the candidate
// cannot answer the question).
EveryHeadCandidate every_head_candidate(const std::string& source, const Model<double>& m,
                                        const Theorem2Options& o, const ProbeSet& probes) {
  EveryHeadCandidate k;
  k.source = source;
  k.model = m;
  search::AdversaryOptions ao;
  ao.seed = o.seed;
  ao.ranks = o.ranks;
  k.worst_case = search::maximize_error(m, o.task, ao).best.certified;
  const BosStatistics bs = bos_statistics(m, probes);
  for (int l = 0; l < m.num_layers(); ++l)
    for (int h = 0; h < m.num_heads(); ++h) k.head_max_bos.push_back(max_probe_bos(bs, l, h));
  k.profiles = head_profiles(m, probes);
  if (!(k.worst_case <= kEveryHeadLoss)) return k;
  for (int l = 0; l < m.num_layers(); ++l) {
    for (int h = 0; h < m.num_heads(); ++h)
      k.heads.push_back(necessity(m, o.task, l, h, ao, k.worst_case));
    k.layers.push_back(necessity(m, o.task, l, -1, ao, k.worst_case));
  }
  return k;
}

}  // namespace

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
  const ProbeSet ceiling_probes =
      make_probe_set(o.task, std::min(o.ceiling_probe_count, o.probe_count));

  // 1. descent path
  for (std::size_t s = 0; s < o.init_stds.size(); ++s) {
    Theorem2Run run;
    run.start = static_cast<int>(s);
    run.init_std = o.init_stds[s];
    const std::uint64_t seed = o.seed * 1000 + s;
    const Model<double> init =
        residual_normal_init(o.task.n, o.layers, o.heads, run.init_std, seed);
    const MinimaxOptions mo = path_minimax_options(seed, o.path_target, o.path_rounds,
                                                   o.path_time_limit, study_minimax_options(o));
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
    run.adversary_worst_case = attack_kept_model(run.result, o.task, o.seed);
    if (run.result.worst.certified > run.adversary_worst_case) {
      say("path start " + std::to_string(run.start) + ": the attack raises the worst case to " +
          format_bound(run.result.worst.certified, true, 4) + " (SEARCH lower bound)");
    }
    run.stats = bos_statistics(run.result.model, probes);
    run.sink = sink_score(run.stats);
    st.runs.push_back(std::move(run));
  }
  std::size_t best = 0;
  for (std::size_t k = 1; k < st.runs.size(); ++k) {
    if (st.runs[k].result.worst.certified < st.runs[best].result.worst.certified) best = k;
  }
  const Theorem2Run& path_best = st.runs[best];
  // eps_one caps the head where the best path model attains sigma
  const int one_layer = path_best.sink.layer, one_head = path_best.sink.head;

  // 2. frontiers, decreasing delta: eps_all, then eps_one
  std::vector<double> deltas = o.deltas;
  std::sort(deltas.rbegin(), deltas.rend());
  // eps_all: warm (and fresh); eps_one: the cheap starts first, then the
  // descents (header comment)
  std::vector<CapStart> all_starts = {CapStart::kWarm};
  if (o.cap_fresh_start && o.cap_fresh_all) all_starts.push_back(CapStart::kFresh);
  std::vector<CapStart> one_starts;
  if (o.cap_sink_start) {
    one_starts.push_back(CapStart::kConstruction);
    one_starts.push_back(CapStart::kSink);
  }
  one_starts.push_back(CapStart::kWarm);
  if (o.cap_dead_start) one_starts.push_back(CapStart::kDead);
  if (o.cap_fresh_start) one_starts.push_back(CapStart::kFresh);
  // the fresh starts' inits: seeds o.seed * 1000 + 500 + k, k counting the
  // capped searches (the path starts use o.seed * 1000 + s, s < 500)
  std::uint64_t fresh_seeds = 0;
  const auto next_fresh_seed = [&] { return o.seed * 1000 + 500 + fresh_seeds++; };
  if (path_best.sink.defined) {
    for (CapScope scope : {CapScope::kAll, CapScope::kOne}) {
      for (double delta : deltas) {
        CappedSearch c;
        c.scope = scope;
        c.layer = one_layer;
        c.head = one_head;
        c.delta = delta;
        c.rounds = o.frontier_rounds;
        c.descent_rounds = o.cap_descent_rounds;
        c.time_limit = o.frontier_time_limit;
        c.starts = scope == CapScope::kAll ? all_starts : one_starts;
        c.descent_when_needed = scope == CapScope::kOne && o.cap_descent_when_needed;
        c.fresh_seed = next_fresh_seed();
        st.frontier.push_back(
            capped_minimax(path_best.result.model, o, probes, ceiling_probes, c, say));
      }
    }
  }

  // 3. the every-head question: the path and frontier models, then the
  // targeted searches: one head capped at kNoSinkScore from a fresh init
  // (the cap enforced for the whole descent), head by head
  const auto t_every = std::chrono::steady_clock::now();
  EveryHeadAnswer& every = st.every_head;
  for (const Theorem2Run& r : st.runs) {
    every.candidates.push_back(
        every_head_candidate("path start " + std::to_string(r.start), r.result.model, o, probes));
  }
  for (const Theorem2FrontierPoint& p : st.frontier) {
    if (!p.feasible) continue;
    char name[96];
    std::snprintf(name, sizeof name, "eps_%s delta %g", to_string(p.scope).c_str(), p.delta);
    every.candidates.push_back(every_head_candidate(name, p.result.model, o, probes));
  }
  decide_every_head(every, o.heads);
  for (int t = 0;
       path_best.sink.defined && every.searches < o.every_head_searches && t < o.layers * o.heads;
       ++t) {
    const int l = t / o.heads, h = t % o.heads;
    CappedSearch c;
    c.scope = CapScope::kOne;
    c.layer = l;
    c.head = h;
    c.delta = 1 - kNoSinkScore;
    c.rounds = o.every_head_rounds;
    c.descent_rounds = std::max(o.every_head_rounds, o.cap_descent_rounds);
    c.time_limit = o.every_head_time_limit;
    // the whole descent under the cap (fresh), and the polish of a model in
    // which another head sinks (sink: the capped head starts dead, A = M = 0)
    c.starts = {CapStart::kFresh};
    if (o.cap_sink_start) c.starts.push_back(CapStart::kSink);
    c.fresh_seed = next_fresh_seed();
    const Theorem2FrontierPoint p =
        capped_minimax(path_best.result.model, o, probes, ceiling_probes, c, say);
    if (!p.not_run.empty()) break;
    ++every.searches;
    EveryHeadCandidate k = every_head_candidate(
        "targeted: layer " + std::to_string(l) + " head " + std::to_string(h) + " capped at " +
            format_double(kNoSinkScore) + " from " + to_string(p.start),
        p.result.model, o, probes);
    k.capped_layer = l;
    k.capped_head = h;
    // an infeasible search's model is its init: no candidate for the question
    if (!p.feasible) k.worst_case = std::numeric_limits<double>::infinity();
    every.targeted.push_back(static_cast<int>(every.candidates.size()));
    every.candidates.push_back(std::move(k));
    decide_every_head(every, o.heads);
  }
  every.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_every).count();
  decide_every_head(every, o.heads);
  say("every head: " + every.summary);

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
  j["evidence"] = {
      {"worst_case", search_label + ": the witness of the larger of the minimax's adversary and "
                                    "the attack (round 0), re-evaluated in MPFI, lower end "
                                    "rounded down; adversary_worst_case and adversary_eps: the "
                                    "adversary's alone"},
      {"worst_case_double", numeric + ": the same witness evaluated in double"},
      {"sampled", numeric},
      {"sink_score", numeric},
      {"bos", numeric}};
  j["options"] = {{"path_target", st.options.path_target},
                  {"path_rounds", st.options.path_rounds},
                  {"path_time_limit_seconds", st.options.path_time_limit},
                  {"initial_per_trigger", st.options.initial_per_trigger},
                  {"max_per_trigger", st.options.max_per_trigger},
                  {"lm_iterations", st.options.lm_iterations},
                  {"deltas", st.options.deltas},
                  {"ceiling_probe_count", st.options.ceiling_probe_count},
                  {"frontier_rounds", st.options.frontier_rounds},
                  {"frontier_time_limit_seconds", st.options.frontier_time_limit},
                  {"every_head_searches", st.options.every_head_searches},
                  {"every_head_rounds", st.options.every_head_rounds},
                  {"every_head_time_limit_seconds", st.options.every_head_time_limit},
                  {"init_stds", st.options.init_stds},
                  {"cap_fresh_start", st.options.cap_fresh_start},
                  {"cap_fresh_all", st.options.cap_fresh_all},
                  {"cap_descent_when_needed", st.options.cap_descent_when_needed},
                  {"cap_dead_start", st.options.cap_dead_start},
                  {"cap_sink_start", st.options.cap_sink_start},
                  {"sink_start_beta", kSinkStartBeta},
                  {"cap_fresh_std", st.options.cap_fresh_std},
                  {"cap_descent_rounds", st.options.cap_descent_rounds},
                  {"certify_boxes", st.options.certify_boxes},
                  {"dense_kernels", search::to_string(st.options.dense_isa)},
                  {"certify_time_limit_seconds", st.options.certify_seconds}};
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
                    {"init", "normal std " + format_double(r.init_std)},
                    {"worst_case", r.result.worst.certified},
                    {"worst_case_evidence", search_label},
                    {"adversary_worst_case", r.adversary_worst_case},
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
  json fr = json::array();
  for (const Theorem2FrontierPoint& p : st.frontier) {
    json starts = json::array();
    for (const CapStartRecord& r : p.starts) {
      starts.push_back({{"start", to_string(r.start)},
                        {"eps", r.eps},
                        {"adversary_eps", r.adversary_eps},
                        {"feasible", r.feasible},
                        {"converged", r.converged},
                        {"rounds", r.rounds},
                        {"stop_reason", r.stop_reason},
                        {"skipped", r.skipped.empty() ? json(nullptr) : json(r.skipped)},
                        {"seconds", r.seconds}});
    }
    fr.push_back(
        {{"capped", to_string(p.scope)},
         {"capped_head",
          p.scope == CapScope::kOne ? json{{"layer", p.layer}, {"head", p.head}} : json(nullptr)},
         {"delta", p.delta},
         {"bos_ceiling", p.ceiling},
         {"eps", p.eps},
         {"eps_evidence", search_label},
         {"eps_double", p.eps_double},
         {"eps_double_disagrees", p.double_disagrees},
         {"capped_bos", p.capped_bos},
         {"witness_capped_bos", p.witness_capped_bos},
         {"certificate", certificate_json(p.certificate, p.ceiling)},
         {"start", to_string(p.start)},
         {"starts", starts},
         {"sink_score", sink_json(p.sink)},
         {"feasible", p.feasible},
         {"converged", p.converged},
         {"not_run", p.not_run.empty() ? json(nullptr) : json(p.not_run)},
         {"stop_reason", p.result.stop_reason},
         {"rounds", p.result.history.size()},
         {"seconds", p.result.seconds}});
  }
  j["frontier"] = {
      {"eps_all",
       "minimax with b^{l,h}_i <= 1 - delta for every head (l, h) and position i >= 1 "
       "(b: the probe mean of a^{l,h}_{i0} over the probes whose trigger is not i); "
       "Theorem 2 predicts it stays away from 0"},
      {"eps_one",
       "the same with only one head capped (the head where the best path model "
       "attains sigma); Theorem 2 allows it to reach 0"},
      {"eps", kFrontierPointMeaning},
      {"capped_bos", numeric + ": the largest b^{l,h}_i over the capped heads, on the "
                               "ceiling's probes (the first ceiling_probe_count of the probe set)"},
      {"witness_capped_bos",
       Evidence::certified(search::kCertifyStartBits).label() +
           " at the witness input of eps only: the capped heads' largest a^{l,h}_{i0} (i >= 1, "
           "i != trigger) enclosed in MPFI, upper end rounded up"},
      {"starts",
       "warm: the best path model with the capped heads' A scaled to meet the ceiling; fresh: "
       "a fresh normal init, the ceiling enforced from round 1; dead: the best path model with "
       "the capped head's A = M = 0; sink: the softmax sink family (beta = sink_start_beta) as "
       "the first other head, every other head zero; construction: the sink start without "
       "descent; the point keeps the best feasible (with certify_boxes: the first low-loss "
       "feasible model whose certificate holds)"},
      {"certificate",
       "eps_one with certify_boxes > 0: the deep bounds' verdicts over the whole content box "
       "on the kept model, E <= loss_claim and the capped head's max a_i0 <= cap_claim, with "
       "each bound's upper end rounded up (CERTIFIED); null when not attempted"},
      {"points", fr}};
  const EveryHeadAnswer& a = st.every_head;
  json cands = json::array();
  for (const EveryHeadCandidate& k : a.candidates) {
    json heads = json::array(), layers = json::array();
    const auto nec = [](const Necessity& n) {
      return json{{"layer", n.layer},           {"head", n.head < 0 ? json(nullptr) : json(n.head)},
                  {"worst_case", n.worst_case}, {"ablated_worst_case", n.ablated_worst_case},
                  {"ratio", n.ratio},           {"necessary", n.necessary}};
    };
    for (const Necessity& n : k.heads) {
      json h = nec(n);
      const HeadProfile& pr = k.profiles[n.layer * st.options.heads + n.head];
      h["max_bos"] = pr.max;
      h["mean_bos"] = pr.mean;
      h["low_bos_fraction"] = pr.low_fraction;
      h["role"] = head_role(n, pr);
      heads.push_back(h);
    }
    for (const Necessity& n : k.layers) layers.push_back(nec(n));
    json profiles = json::array();
    for (const HeadProfile& pr : k.profiles) {
      profiles.push_back(
          {{"max_bos", pr.max}, {"mean_bos", pr.mean}, {"low_bos_fraction", pr.low_fraction}});
    }
    cands.push_back({{"source", k.source},
                     {"capped_head", k.capped_layer < 0 ? json(nullptr)
                                                        : json{{"layer", k.capped_layer},
                                                               {"head", k.capped_head}}},
                     {"head_profiles", profiles},
                     {"worst_case", k.worst_case},
                     {"head_max_bos", k.head_max_bos},
                     {"heads", heads},
                     {"layers", layers}});
  }
  j["every_head"] = {
      {"question",
       "a model with worst case <= " + format_double(kEveryHeadLoss) +
           " with a necessary head (M^{l,h} = 0 raises the worst case at least " +
           format_double(kNecessityFactor) +
           "-fold) whose BOS mass is <= " + format_double(kNoSinkScore) +
           " at every non-trigger position of every probe; likewise a necessary layer none of "
           "whose heads sinks"},
      {"evidence", search_label +
                       ": worst cases by the adversary (the same options and seed for a model "
                       "and its ablation), BOS masses NUMERIC(53) on the probe set; found or "
                       "not found within the budget below"},
      {"head_found", a.head_found},
      {"layer_found", a.layer_found},
      {"head_hit",
       a.head_found
           ? json{{"candidate", a.head_candidate}, {"layer", a.head_layer}, {"head", a.head_head}}
           : json(nullptr)},
      {"layer_hit", a.layer_found ? json{{"candidate", a.layer_candidate}, {"layer", a.layer_layer}}
                                  : json(nullptr)},
      {"targeted", a.targeted},
      {"capped_searches", a.searches},
      {"seconds", a.seconds},
      {"summary", a.summary},
      {"candidates", cands}};
  j["verdict"] = to_string(st.verdict);
  j["verdict_reason"] = st.reason;
  j["seconds"] = st.seconds;
  j[kProvenanceKey] = to_json(info);
  return j;
}

}  // namespace sinkcert::theorems::studies
