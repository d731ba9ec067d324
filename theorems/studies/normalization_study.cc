// SPDX-License-Identifier: MIT
#include "theorems/studies/normalization_study.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "search/minimax.h"
#include "src/bos_statistics.h"
#include "src/input_error.h"
#include "src/json_reader.h"
#include "src/output_files.h"
#include "theorems/bounds/bos_bound.h"
#include "theorems/bounds/worst_case_bound.h"
#include "theorems/exact/relu_exact_checker.h"
#include "theorems/studies/frontier.h"

namespace sinkcert::theorems::studies {

namespace {

using search::MinimaxOptions;

// A double at or above (up) / at or below (down) an MPFR value.
double up_double(const Mpfr& x) { return mpfr_get_d(x.backend().data(), MPFR_RNDU); }
double down_double(const Mpfr& x) { return mpfr_get_d(x.backend().data(), MPFR_RNDD); }

std::string num(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// A BOS mass near 1 as "1 - 2.1e-11" (its double would print 1).
std::string bos_text(double mass) {
  return mass > 0.999 ? "1 - " + num(1 - mass, 3) : num(mass, 6);
}

bounds::BosBoundOptions bos_options(const NormalizationOptions& o) {
  bounds::BosBoundOptions b;
  b.max_boxes = o.bos_boxes;
  b.max_seconds = bounds::kNoTimeLimit;
  return b;
}

// The max-BOS half of a certificate.
void certify_cap(const Model<double>& model, const Task& task, double cap,
                 const NormalizationOptions& o, ModelCertificate& c) {
  c.cap = cap;
  const bounds::MaxBosClaimCheck check = bounds::check_max_bos(model, task, cap, bos_options(o));
  c.cap_verdict = check.verdict;
  {
    PrecisionScope scope(std::max(check.bound.bits, 128) * 2);
    c.bos_lower = check.bound.witness_trigger == 0 ? 0.0 : down_double(check.bound.mass_lower);
    c.bos_upper = up_double(check.bound.mass_upper);
  }
  c.bos_status = bounds::stop_status(check.bound, !bmp::isinf(check.bound.mass_upper));
  c.bos_boxes = check.bound.boxes;
  c.bits = std::max(c.bits, check.bound.bits);
}

}  // namespace

std::string to_string(NormalizationVerdict verdict) {
  switch (verdict) {
    case NormalizationVerdict::kSinkNeeded:
      return "sink needed";
    case NormalizationVerdict::kSinkFreeSolution:
      return "sink-free solution";
    case NormalizationVerdict::kInconclusive:
      return "inconclusive";
  }
  throw std::logic_error("unknown normalization verdict");
}

NormalizationOptions normalization_options(const Task& task, AttentionKind attention,
                                           std::uint64_t seed, bool quick) {
  NormalizationOptions o;
  o.task = task;
  o.attention = attention;
  o.seed = seed;
  o.quick = quick;
  o.certify_frontier = task.n <= kCertifyMaxN && task.L <= kCertifyMaxL;
  if (quick) {
    o.starts = 2;
    o.path_rounds = 40;
    o.deltas = {0.5, 0.2, 0.05};
    o.frontier_rounds = 8;
    o.probe_count = 500;
    o.worst_case_boxes = 4000;
    o.bos_boxes = 2000;
    o.cap_steps = 4;
  }
  return o;
}

ModelCertificate certify_model(const Model<double>& model, const Task& task, double cap,
                               const NormalizationOptions& o, double worst_claim) {
  ModelCertificate c;
  c.attempted = true;
  try {
    certify_cap(model, task, cap, o, c);
  } catch (const std::invalid_argument& e) {
    c.refused = e.what();  // "BOS bound: ..."
    return c;
  }
  bounds::WorstCaseOptions w;
  w.max_boxes = o.worst_case_boxes;
  w.max_seconds = bounds::kNoTimeLimit;
  w.relative_gap = o.worst_case_gap;
  try {
    // a claim stops as soon as it is decided; a bound once the gap is reached
    bounds::WorstCaseBound b;
    if (worst_claim >= 0) {
      b = bounds::check_upper_bound(model, task, worst_claim, w).bound;
    } else {
      b = bounds::bound_worst_case(model, task, w);
    }
    PrecisionScope scope(std::max(b.bits, 128) * 2);
    c.worst_lower = b.witness_trigger == 0 ? 0.0 : down_double(b.lower);
    c.worst_upper = bmp::isinf(b.upper) ? INFINITY : up_double(b.upper);
    c.worst_status = bounds::stop_status(b, !bmp::isinf(b.upper));
    c.worst_boxes = b.boxes;
    c.bits = std::max(c.bits, b.bits);
  } catch (const std::invalid_argument& e) {
    c.refused = e.what();  // "worst-case bound: ..."
  }
  return c;
}

std::optional<SinkFreeCandidate> construction_for(AttentionKind attention, int n) {
  const int o = ordinary_flag(n);
  const double b = kConstructionBeta;
  Matrix<double> A = Matrix<double>::Zero(n, n);
  Matrix<double> M = Matrix<double>::Identity(n, n);
  SinkFreeCandidate c;
  switch (attention) {
    case AttentionKind::kSoftmax:
      return std::nullopt;
    case AttentionKind::kRelu:
    case AttentionKind::kReluCountAll:
    case AttentionKind::kSoftpick:
      // s_ik = x_i[1] (x_k[n-1] + x_k[1])
      A(kTriggerFlag, o) = 1;
      A(kTriggerFlag, kTriggerFlag) = 1;
      c.name = "Theorem 3 scores x_i[1] (x_k[n-1] + x_k[1]), M = I";
      break;
    case AttentionKind::kSoftmaxOffByOne:
    case AttentionKind::kSigmoid:
      // s_ik = b (x_i[1] (x_k[1] + x_k[n-1] - x_k[0]) - x_i[n-1] (x_k[0] + x_k[1] + x_k[n-1]))
      A(kTriggerFlag, kTriggerFlag) = b;
      A(kTriggerFlag, o) = b;
      A(kTriggerFlag, kBosFlag) = -b;
      A(o, kBosFlag) = -b;
      A(o, kTriggerFlag) = -b;
      A(o, o) = -b;
      M(kBosFlag, kBosFlag) = 0;
      c.name =
          "flag scores b (x_i[1] (x_k[1] + x_k[n-1] - x_k[0]) - x_i[n-1]), b = 20, "
          "M = I - e_0 e_0^T";
      break;
    case AttentionKind::kGated: {
      A(kTriggerFlag, o) = b;
      A(kTriggerFlag, kTriggerFlag) = b;
      M(kBosFlag, kBosFlag) = 0;
      c.name =
          "scores b x_i[1] (x_k[n-1] + x_k[1]), M = I - e_0 e_0^T, gate b (x_i[1] - "
          "x_i[n-1]), b = 20";
      break;
    }
  }
  c.model = single_head_model<double>(attention, A, M);
  if (attention == AttentionKind::kGated) {
    Matrix<double> G = Matrix<double>::Zero(n, n);
    for (int r = 0; r < n; ++r) {
      G(r, kTriggerFlag) = b;
      G(r, o) = -b;
    }
    c.model.layers[0][0].G = G;
  }
  return c;
}

SinkFreeCandidate check_sink_free(const std::string& name, const Model<double>& model,
                                  const Task& task, const NormalizationOptions& o) {
  SinkFreeCandidate c;
  c.name = name;
  c.model = model;
  if (model.attention == AttentionKind::kRelu) {
    const exact::ReluCertificate r = exact::check_relu_exact(model.cast<Rational>(), task);
    if (r.verdict == Verdict::kVerified || r.verdict == Verdict::kNotVerified) {
      c.verdict = r.verdict;
      c.evidence = "EXACT";
      c.reason = r.verdict == Verdict::kVerified
                     ? "zero error over the whole box and zero BOS attention (verify relu)"
                     : "exact check failed: " + r.reason;
      return c;
    }
  }
  c.cert = certify_model(model, task, kSinkFreeBos, o, kSinkFreeLoss);
  const ModelCertificate& k = c.cert;
  std::ostringstream why;
  if (!k.refused.empty()) {
    c.verdict = Verdict::kUndecided;
    c.evidence = "none";
    c.reason = "not certified: " + k.refused;
    return c;
  }
  c.evidence = "CERTIFIED";
  if (k.cap_verdict == Verdict::kNotVerified || k.worst_lower > kSinkFreeLoss) {
    c.verdict = Verdict::kNotVerified;
    if (k.cap_verdict == Verdict::kNotVerified) {
      why << "BOS mass " << num(k.bos_lower, 6) << " > " << kSinkFreeBos
          << " at a witness (CERTIFIED); ";
    }
    if (k.worst_lower > kSinkFreeLoss) {
      why << "worst case >= " << num(k.worst_lower, 6) << " > " << kSinkFreeLoss
          << " (CERTIFIED); ";
    }
  } else if (k.cap_verdict == Verdict::kVerified && k.worst_upper <= kSinkFreeLoss) {
    c.verdict = Verdict::kVerified;
    why << "worst case <= " << num(k.worst_upper, 6) << ", max BOS <= " << num(k.bos_upper, 6)
        << " (CERTIFIED)";
  } else {
    c.verdict = Verdict::kUndecided;
    why << "not decided within the box budgets: worst case in [" << num(k.worst_lower, 6) << ", "
        << num(k.worst_upper, 6) << "] (" << k.worst_status << "), max BOS in ["
        << num(k.bos_lower, 6) << ", " << num(k.bos_upper, 6) << "] (" << k.bos_status << ")";
  }
  c.reason = why.str();
  if (!c.reason.empty() && c.reason.back() == ' ') c.reason.resize(c.reason.size() - 2);
  return c;
}

void decide_normalization_verdict(NormalizationStudy& st) {
  for (const SinkFreeCandidate& c : st.candidates) {
    if (c.verdict == Verdict::kVerified) {
      st.verdict = NormalizationVerdict::kSinkFreeSolution;
      st.evidence = c.evidence;
      st.reason = c.name + ": " + c.reason;
      return;
    }
  }
  std::ostringstream why;
  bool ok = true;
  for (const SinkFreeCandidate& c : st.candidates) {
    why << "candidate (" << c.name << ") " << to_string(c.verdict) << ": " << c.reason << "; ";
  }
  if (!st.search_refused.empty()) {
    ok = false;
    why << "no search: " << st.search_refused << "; ";
  } else {
    const NormPathRun* best = st.best_start >= 0 && st.best_start < static_cast<int>(st.path.size())
                                  ? &st.path[st.best_start]
                                  : nullptr;
    if (!best || !(best->worst_case <= kPathLowLoss) || best->bos_mean < kPathSinkMass) {
      ok = false;
      why << "the path did not reach worst case <= " << kPathLowLoss
          << " with mean BOS >= " << kPathSinkMass;
      if (best) {
        why << " (it reached " << format_bound(best->worst_case, true, 4)
            << " SEARCH(lower bound), mean BOS " << bos_text(best->bos_mean) << ")";
      }
      why << "; ";
    }
    if (st.frontier.empty()) {
      ok = false;
      why << "no frontier point; ";
    }
    for (const NormFrontierPoint& p : st.frontier) {
      if (!p.feasible) {
        ok = false;
        why << "delta " << p.delta << ": no feasible model; ";
      } else if (!(p.eps_search >= kCandidateLoss)) {
        ok = false;
        why << "delta " << p.delta << ": frontier model worst case "
            << format_bound(p.eps_search, true, 4) << " < " << kCandidateLoss << " (SEARCH); ";
      }
    }
    // by decreasing delta: eps must not fall as delta grows
    for (std::size_t k = 1; k < st.frontier.size(); ++k) {
      const NormFrontierPoint &big = st.frontier[k - 1], &small = st.frontier[k];
      if (big.feasible && small.feasible &&
          small.eps_search > big.eps_search * (1 + kMonotoneSlack)) {
        ok = false;
        why << "frontier worst case falls as delta grows (delta " << small.delta << ": "
            << format_bound(small.eps_search, true, 4) << ", delta " << big.delta << ": "
            << format_bound(big.eps_search, true, 4) << "); ";
      }
    }
  }
  if (ok) {
    st.verdict = NormalizationVerdict::kSinkNeeded;
    st.evidence = Evidence::search(Bound::kLower).label();
    std::ostringstream yes;
    yes << "the path reached worst case "
        << format_bound(st.path[st.best_start].worst_case, true, 4)
        << " (SEARCH, lower bound) with mean BOS " << bos_text(st.path[st.best_start].bos_mean)
        << "; every frontier model's worst case (SEARCH, lower bound) >= " << kCandidateLoss
        << " and none falls as delta grows";
    int certified = 0;
    for (const NormFrontierPoint& p : st.frontier) certified += p.cert.certified() ? 1 : 0;
    yes << "; " << certified << " of " << st.frontier.size()
        << " points carry a CERTIFIED upper bound on eps*(delta)";
    st.reason = yes.str();
    return;
  }
  st.verdict = NormalizationVerdict::kInconclusive;
  st.evidence = "none";
  st.reason = why.str();
  if (st.reason.size() >= 2) st.reason.resize(st.reason.size() - 2);
}

NormalizationStudy run_normalization_study(const NormalizationOptions& o,
                                           const StudyProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto say = [&](const std::string& s) {
    if (progress) progress(to_string(o.attention) + ": " + s);
  };
  o.task.validate();
  if (o.task.trigger_positions().empty()) {
    throw std::invalid_argument("normalization study: the task has no trigger position");
  }
  NormalizationStudy st;
  st.options = o;
  const ProbeSet probes = make_probe_set(o.task, o.probe_count);

  // 1. descent path
  Model<double> best_model;
  for (int s = 0; s < o.starts && st.search_refused.empty(); ++s) {
    NormPathRun run;
    run.start = s;
    run.init_std = kPaperInitStd * std::pow(kInitGrowth, s);
    const Model<double> init = normal_init(o.attention, o.task.n, run.init_std, o.seed * 1000 + s);
    const MinimaxOptions mo =
        path_minimax_options(o.seed * 1000 + s, o.path_target, o.path_rounds, bounds::kNoTimeLimit);
    search::MinimaxResult r;
    try {
      r = search::minimax(init, o.task, mo);
    } catch (const std::invalid_argument& e) {
      st.search_refused = std::string("the minimax refused: ") + e.what();
      break;
    }
    const BosStatistics bs = bos_statistics(r.model, probes);
    run.worst_case = r.worst.certified;
    run.bos_mean = bs.heads[0][0].overall.mean;
    run.bos_min = bs.heads[0][0].overall.min;
    run.stop_reason = r.stop_reason;
    run.rounds = static_cast<int>(r.history.size());
    say("path start " + std::to_string(s) + ": worst case " +
        format_bound(run.worst_case, true, 4) + " SEARCH(lower bound), mean BOS " +
        bos_text(run.bos_mean));
    if (st.best_start < 0 || run.worst_case < st.path[st.best_start].worst_case) {
      st.best_start = s;
      best_model = r.model;
    }
    st.path.push_back(run);
  }

  // 2-3. frontier, certified
  if (st.search_refused.empty() && st.best_start >= 0) {
    std::vector<double> deltas = o.deltas;
    std::sort(deltas.begin(), deltas.end(), std::greater<double>());
    for (double delta : deltas) {
      NormFrontierPoint p;
      p.delta = delta;
      p.ceiling = 1 - delta;
      FrontierSearch fs;
      fs.delta = delta;
      fs.rounds = o.frontier_rounds;
      fs.time_limit = bounds::kNoTimeLimit;
      FrontierRecord record;
      record.delta = delta;
      run_frontier_point(scaled_to_ceiling(best_model, probes, p.ceiling), o.task,
                         frontier_minimax_options(o.seed, fs, probes), record);
      const search::MinimaxResult& r = record.result;
      p.feasible = record.feasible;
      p.converged = record.converged;
      p.eps_search = record.eps;
      p.rounds = static_cast<int>(r.history.size());
      p.mean_bos = search::mean_probe_bos(r.model, probes);
      p.model = r.model;
      // the same model as the previous point (the search often returns one
      // sink-free model for every delta), whose certified BOS mass is below
      // this (larger) ceiling: its bounds hold as they are
      const NormFrontierPoint* prev = st.frontier.empty() ? nullptr : &st.frontier.back();
      const bool same_model = prev && p.feasible && prev->gamma == 1 && prev->cert.certified() &&
                              prev->cert.bos_upper <= p.ceiling &&
                              prev->model.layers[0][0].A == p.model.layers[0][0].A &&
                              prev->model.layers[0][0].M == p.model.layers[0][0].M &&
                              prev->model.layers[0][0].G == p.model.layers[0][0].G;
      if (o.certify_frontier && same_model) {
        p.cert = prev->cert;
        p.cert.cap = p.ceiling;
      } else if (o.certify_frontier && p.feasible) {
        // the cap at every non-trigger position: gamma = 1, else bisection
        p.cert = certify_model(p.model, o.task, p.ceiling, o);
        if (p.cert.refused.empty() && p.cert.cap_verdict != Verdict::kVerified) {
          const double lo = largest_gamma(o.cap_steps, [&](double gamma) {
            ModelCertificate c;
            certify_cap(with_scaled_A(r.model, gamma), o.task, p.ceiling, o, c);
            return c.cap_verdict == Verdict::kVerified;
          });
          p.gamma = lo;
          p.model = with_scaled_A(r.model, lo);
          p.cert = certify_model(p.model, o.task, p.ceiling, o);
        }
      }
      char buf[400];
      std::snprintf(buf, sizeof buf,
                    "frontier delta %g: model worst case %s SEARCH(lower bound), mean BOS %.6f, "
                    "%s; gamma %g, eps*(delta) <= %s %s",
                    delta, format_bound(p.eps_search, true, 4).c_str(), p.mean_bos,
                    p.feasible ? "feasible" : "NO feasible model", p.gamma,
                    p.cert.certified() ? format_bound(p.cert.worst_upper, false, 4).c_str()
                                       : "(not certified)",
                    p.cert.certified() ? "CERTIFIED" : "");
      say(buf);
      st.frontier.push_back(std::move(p));
    }
  }

  // 4. sink-free candidates
  if (auto c = construction_for(o.attention, o.task.n)) {
    SinkFreeCandidate checked = check_sink_free(c->name, c->model, o.task, o);
    say("candidate: " + to_string(checked.verdict) + " (" + checked.evidence +
        "): " + checked.reason);
    st.candidates.push_back(std::move(checked));
  }
  // a frontier model whose certified cap is at most 1/2 and whose certified
  // worst case is tiny is a sink-free solution found by the search
  for (const NormFrontierPoint& p : st.frontier) {
    if (p.cert.certified() && p.ceiling <= kSinkFreeBos && p.cert.worst_upper <= kSinkFreeLoss) {
      SinkFreeCandidate c;
      c.name =
          "frontier model at delta " + num(p.delta, 6) + " (A scaled by " + num(p.gamma, 6) + ")";
      c.model = p.model;
      c.verdict = Verdict::kVerified;
      c.evidence = "CERTIFIED";
      c.cert = p.cert;
      c.reason = "worst case <= " + num(p.cert.worst_upper, 6) +
                 ", max BOS <= " + num(p.cert.bos_upper, 6) + " (CERTIFIED)";
      say("candidate: " + c.name + ": VERIFIED (CERTIFIED): " + c.reason);
      st.candidates.push_back(std::move(c));
    }
  }
  decide_normalization_verdict(st);
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

namespace {

nlohmann::json double_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json certificate_json(const ModelCertificate& c) {
  if (!c.attempted) return {{"attempted", false}};
  nlohmann::json j = {{"attempted", true}, {"evidence", "CERTIFIED"}};
  if (!c.refused.empty()) j["refused"] = c.refused;
  j["worst_case"] = {{"lower", c.worst_lower},
                     {"upper", double_or_null(c.worst_upper)},
                     {"status", c.worst_status},
                     {"boxes", c.worst_boxes}};
  j["max_bos"] = {{"cap", c.cap},           {"verdict", to_string(c.cap_verdict)},
                  {"lower", c.bos_lower},   {"upper", double_or_null(c.bos_upper)},
                  {"status", c.bos_status}, {"boxes", c.bos_boxes}};
  j["bits"] = c.bits;
  j["certified"] = c.certified();
  return j;
}

// The row's frontier cell: "delta: eps* <= U" per certified point.
std::string frontier_cell(const NormalizationStudy& st, bool certified) {
  std::ostringstream s;
  for (const NormFrontierPoint& p : st.frontier) {
    if (s.tellp() > 0) s << "; ";
    s << p.delta << ": ";
    if (certified) {
      s << (p.cert.certified() ? format_bound(p.cert.worst_upper, false, 3)
            : p.cert.attempted ? "not certified"
                               : "not attempted");
    } else {
      s << (p.feasible ? format_bound(p.eps_search, true, 3) : "infeasible");
    }
  }
  return s.str().empty() ? "none" : s.str();
}

}  // namespace

nlohmann::json to_json(const NormalizationStudy& st, const RunInfo& info) {
  using nlohmann::json;
  const std::string search_label = Evidence::search(Bound::kLower).label();
  const std::string numeric = Evidence::numeric(53).label();
  const NormalizationOptions& o = st.options;
  json j;
  j["study"] = "normalization: which attention kinds need a sink";
  j["attention"] = to_string(o.attention);
  j["task"] = {{"n", o.task.n}, {"L", o.task.L}, {"trigger_range", to_string(o.task.range)}};
  j["parametrization"] = search::kParametrization;
  j["options"] = {{"seed", o.seed},
                  {"quick", o.quick},
                  {"starts", o.starts},
                  {"path_target", o.path_target},
                  {"path_rounds", o.path_rounds},
                  {"deltas", o.deltas},
                  {"frontier_rounds", o.frontier_rounds},
                  {"probe_count", o.probe_count},
                  {"probe_seed", kDefaultProbeSeed},
                  {"certify_frontier", o.certify_frontier},
                  {"worst_case_boxes", o.worst_case_boxes},
                  {"worst_case_gap", o.worst_case_gap},
                  {"bos_boxes", o.bos_boxes},
                  {"cap_steps", o.cap_steps}};
  j["evidence"] = {
      {"path.worst_case", search_label + " on that model's E (witness certified in MPFI)"},
      {"path.bos", numeric + " over the probe set"},
      {"frontier.eps_search",
       search_label +
           " on the search's frontier model's E (before the scaling by gamma); no bound on eps*"},
      {"frontier.eps_upper",
       "CERTIFIED upper bound on eps*(delta) when certificate.certified: the scaled model's worst "
       "case bounded from above and its BOS mass <= 1 - delta at every non-trigger position over "
       "the whole box"}};
  if (!st.search_refused.empty()) j["search_refused"] = st.search_refused;
  json path = json::array();
  for (const NormPathRun& r : st.path) {
    path.push_back({{"start", r.start},
                    {"init_std", r.init_std},
                    {"worst_case", r.worst_case},
                    {"bos_mean", r.bos_mean},
                    {"bos_min", r.bos_min},
                    {"stop_reason", r.stop_reason},
                    {"rounds", r.rounds}});
  }
  j["path"] = path;
  j["best_start"] = st.best_start;
  json fr = json::array();
  for (const NormFrontierPoint& p : st.frontier) {
    fr.push_back({{"delta", p.delta},
                  {"bos_ceiling", p.ceiling},
                  {"eps_search", p.eps_search},
                  {"mean_bos", p.mean_bos},
                  {"feasible", p.feasible},
                  {"converged", p.converged},
                  {"rounds", p.rounds},
                  {"gamma", p.gamma},
                  {"eps_upper", p.cert.certified() ? json(p.cert.worst_upper) : json(nullptr)},
                  {"certificate", certificate_json(p.cert)}});
  }
  j["frontier"] = fr;
  json cands = json::array();
  for (const SinkFreeCandidate& c : st.candidates) {
    cands.push_back(
        {{"name", c.name},
         {"verdict", to_string(c.verdict)},
         {"evidence", c.evidence},
         {"reason", c.reason},
         {"certificate", certificate_json(c.cert)},
         {"weights", nlohmann::json::parse(weight_file_text(weight_file_from_model(c.model)))}});
  }
  j["candidates"] = cands;
  j["verdict"] = to_string(st.verdict);
  j["verdict_evidence"] = st.evidence;
  j["verdict_reason"] = st.reason;
  j["seconds"] = st.seconds;
  j[kProvenanceKey] = to_json(info);
  return j;
}

std::vector<Cell> normalization_columns() {
  return {"attention",
          "verdict",
          "evidence",
          "path worst case [SEARCH(lower bound)]",
          "path mean BOS [NUMERIC(53)]",
          "frontier model worst case by delta [SEARCH(lower bound)]",
          "eps*(delta) upper bound by delta [CERTIFIED]",
          "sink-free candidate"};
}

std::vector<Cell> normalization_row(const NormalizationStudy& st) {
  std::string path_worst = "no search", path_bos = "no search";
  if (st.best_start >= 0) {
    path_worst = format_bound(st.path[st.best_start].worst_case, true, 4);
    path_bos = bos_text(st.path[st.best_start].bos_mean);
  }
  // the candidate that decided the verdict, else every candidate's outcome
  std::string candidate;
  const auto label = [](const SinkFreeCandidate& c) {
    return c.name.rfind("frontier", 0) == 0 ? c.name : std::string("construction");
  };
  for (const SinkFreeCandidate& c : st.candidates) {
    if (c.verdict != Verdict::kVerified) continue;
    candidate = label(c) + ": VERIFIED (" + c.evidence + ")";
    if (c.evidence == "CERTIFIED") {
      candidate += ", worst case <= " + format_bound(c.cert.worst_upper, false, 3) +
                   ", max BOS <= " + format_bound(c.cert.bos_upper, false, 3);
    }
    break;
  }
  if (candidate.empty()) {
    for (const SinkFreeCandidate& c : st.candidates) {
      if (!candidate.empty()) candidate += "; ";
      candidate += label(c) + ": " + to_string(c.verdict) + " (" + c.evidence + "): " + c.reason;
    }
  }
  if (candidate.empty()) candidate = "none";
  std::string verdict = to_string(st.verdict);
  if (st.verdict == NormalizationVerdict::kInconclusive && !st.search_refused.empty()) {
    verdict += ": " + st.search_refused;
  }
  return {to_string(st.options.attention),
          verdict,
          st.evidence,
          path_worst,
          path_bos,
          st.search_refused.empty() ? frontier_cell(st, false) : "no search",
          st.search_refused.empty() ? frontier_cell(st, true) : "no search",
          candidate};
}

namespace {

// "Which attention kinds need a sink (n = 5, L = 4, triggers paper, seed 0):
// per kind, ..." (no task part when task is null).
std::string table_caption(const Task* task, std::uint64_t seed, bool quick) {
  std::ostringstream cap;
  cap << "Which attention kinds need a sink";
  if (task) {
    cap << " (n = " << task->n << ", L = " << task->L << ", triggers " << to_string(task->range)
        << ", seed " << seed << (quick ? ", quick" : "") << ")";
  }
  cap << ": per kind, the descent path's lowest worst case and BOS mass, the frontier under a BOS "
         "cap 1 - delta, and a sink-free candidate.";
  return cap.str();
}

}  // namespace

Table normalization_table(const std::vector<NormalizationStudy>& studies) {
  Table t;
  t.name = "normalizations";
  t.columns = normalization_columns();
  // the long cells wrap (landscape page, 4pt column gaps)
  t.alignment = "lp{2.4cm}p{2.8cm}p{2.8cm}p{2.8cm}p{2.8cm}p{2.4cm}p{2.4cm}";
  t.landscape = true;
  t.caption = studies.empty() ? table_caption(nullptr, 0, false)
                              : table_caption(&studies[0].options.task, studies[0].options.seed,
                                              studies[0].options.quick);
  for (const NormalizationStudy& st : studies) t.rows.push_back(normalization_row(st));
  t.notes = {
      "sink-free solution: a model with certified worst case <= 1e-6 and certified BOS mass <= "
      "0.5 at every non-trigger position over the whole box (EXACT for relu: verify relu); its "
      "weight file is sink_free_<kind>.json.",
      "sink needed: the path reached a low worst case with a sink, and the frontier models' worst "
      "cases (SEARCH lower bounds on those models) stay >= 1e-6 and do not fall as delta grows.",
      "eps*(delta) upper bound: the frontier model with A scaled until its BOS mass is certified "
      "<= 1 - delta at every non-trigger position, its worst case certified from above; 'not "
      "certified' when a bound did not close within its box budget.",
      "frontier model worst case: SEARCH lower bound on that model's E, no bound on eps*(delta)."};
  return t;
}

namespace {

Table normalization_table_from_sweep_of(const std::string& path, const std::string& name,
                                        RunInfo* info) {
  const nlohmann::json j = internal::read_json_file(path);
  const auto expect = [&](bool ok, const std::string& field, const std::string& what) {
    if (!ok) throw InputError(path, field, what);
  };
  expect(j.is_object() && j.contains("grid") && j["grid"].is_object() &&
             j["grid"].value("study", "") == "normalization",
         "grid.study", "\"normalization\" (the merged table of a normalization sweep)");
  std::vector<std::string> columns = {"study", "attention", "n", "L", "trigger range", "seed"};
  for (const std::string& c : normalization_summary_columns()) columns.push_back(c);
  expect(j.contains("columns") && j["columns"] == nlohmann::json(columns), "columns",
         nlohmann::json(columns).dump());
  expect(j.contains("rows") && j["rows"].is_array() && !j["rows"].empty(), "rows",
         "a non-empty array");
  const nlohmann::json& first = j["rows"][0];
  Table t = normalization_table({});
  t.name = name;
  for (std::size_t r = 0; r < j["rows"].size(); ++r) {
    const nlohmann::json& row = j["rows"][r];
    const std::string field = "rows[" + std::to_string(r) + "]";
    expect(row.is_array() && row.size() == columns.size(), field,
           std::to_string(columns.size()) + " cells");
    for (std::size_t c = 0; c < row.size(); ++c) {
      expect(row[c].is_string(), field, "text cells");
      // one task and seed: the table's rows differ in the kind only
      if (c >= 2 && c <= 5) expect(row[c] == first[c], field, "the task and seed of rows[0]");
    }
    std::vector<Cell> cells = {row[1].get<std::string>()};
    for (std::size_t c = 6; c < row.size(); ++c) cells.emplace_back(row[c].get<std::string>());
    t.rows.push_back(std::move(cells));
  }
  Task task;
  try {
    task = Task{std::stoi(first[2].get<std::string>()), std::stoi(first[3].get<std::string>()),
                parse_trigger_range(first[4].get<std::string>())};
  } catch (const std::exception&) {
    expect(false, "rows[0]", "n, L and trigger range of a task");
  }
  const bool quick = j["grid"].contains("options") && j["grid"]["options"].is_object() &&
                     j["grid"]["options"].value("quick", false);
  t.caption = table_caption(&task, std::stoull(first[5].get<std::string>()), quick);
  t.caption += " Made by sinkcert sweep (" + j["grid"].value("file", std::string("a grid")) + ").";
  const std::string grid_caption = j["grid"].value("caption", std::string());
  if (!grid_caption.empty()) t.caption += " " + grid_caption;
  // the weight files: in each configuration's result
  t.notes[0] =
      "sink-free solution: a model with certified worst case <= 1e-6 and certified BOS mass <= "
      "0.5 at every non-trigger position over the whole box (EXACT for relu: verify relu); its "
      "weight file is under sink_free_weights in configs/<key>.json beside the sweep's table.";
  if (info != nullptr) *info = run_info_from_json(provenance_of(j));
  return t;
}

}  // namespace

Table normalization_table_from_sweep(const std::string& path, const std::string& name,
                                     RunInfo* info) {
  return internal::reading_json(
      path, [&] { return normalization_table_from_sweep_of(path, name, info); });
}

std::optional<WeightFile> sink_free_weights(const NormalizationStudy& st) {
  if (st.verdict != NormalizationVerdict::kSinkFreeSolution) return std::nullopt;
  for (const SinkFreeCandidate& c : st.candidates) {
    if (c.verdict != Verdict::kVerified) continue;
    const Task& task = st.options.task;
    std::ostringstream recheck;
    if (c.evidence == "EXACT") {
      recheck << "sinkcert verify relu --weights FILE --L " << task.L;
    } else {
      recheck << "sinkcert verify bound --weights FILE --L " << task.L << " --claim "
              << kSinkFreeLoss << "; the BOS cap: bos_bound.h, bounds::check_max_bos(model, task, "
              << kSinkFreeBos << ")";
    }
    nlohmann::json meta = {
        {"description", "sink-free solution of T(n, L): " + c.name},
        {"task", {{"n", task.n}, {"L", task.L}, {"trigger_range", to_string(task.range)}}},
        {"certified", c.reason},
        {"evidence", c.evidence},
        {"recheck", recheck.str()}};
    return weight_file_from_model(c.model, meta);
  }
  return std::nullopt;
}

NormalizationEntry run_normalization_entry(AttentionKind attention, const Task& task,
                                           std::uint64_t seed, bool quick, const RunInfo& info,
                                           const StudyProgress& progress) {
  const NormalizationStudy st =
      run_normalization_study(normalization_options(task, attention, seed, quick), progress);
  NormalizationEntry e;
  e.result = to_json(st, info);
  if (auto w = sink_free_weights(st)) {
    e.result["sink_free_weights"] = nlohmann::json::parse(weight_file_text(*w));
  }
  e.row = normalization_row(st);
  e.row.erase(e.row.begin());  // the attention: a sweep axis
  return e;
}

std::vector<std::string> normalization_summary_columns() {
  std::vector<std::string> out;
  for (const Cell& c : normalization_columns()) out.push_back(c.text);
  out.erase(out.begin());
  return out;
}

std::vector<std::string> write_normalization_outputs(const std::vector<NormalizationStudy>& studies,
                                                     const RunInfo& info, const std::string& dir) {
  std::vector<std::string> written = write_table(normalization_table(studies), info, dir);
  nlohmann::json all = {{"studies", nlohmann::json::array()}, {kProvenanceKey, to_json(info)}};
  for (const NormalizationStudy& st : studies) all["studies"].push_back(to_json(st, info));
  const std::string studies_path = dir + "/studies.json";
  write_file_atomically(studies_path, all.dump(2) + "\n");
  written.push_back(studies_path);
  for (const NormalizationStudy& st : studies) {
    if (auto w = sink_free_weights(st)) {
      const std::string path = dir + "/sink_free_" + to_string(st.options.attention) + ".json";
      write_weight_file(path, *w);
      written.push_back(path);
    }
  }
  return written;
}

}  // namespace sinkcert::theorems::studies
