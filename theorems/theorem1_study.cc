// SPDX-License-Identifier: MIT
#include "theorems/theorem1_study.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <sstream>

#include "src/evidence.h"
#include "src/forward.h"
#include "src/linf_error.h"
#include "src/subprocess.h"
#include "src/table_writer.h"
#include "src/weight_file.h"

namespace sinkcert::theorems {

namespace {

using search::MinimaxOptions;
using search::MinimaxRecord;
using search::MinimaxResult;

// Init scale of start s: the paper's std 0.02 times kInitGrowth^s.
constexpr double kPaperInitStd = 0.02;
constexpr double kInitGrowth = 5.0;
// The path must end with a sink: mean non-trigger BOS mass at least this
// (the acceptance's 1 - 1e-5) for the verdict CONSISTENT.
constexpr double kPathSinkMass = 1 - 1e-5;
// ... and a worst case (search) at most this.
constexpr double kPathLowLoss = 1e-6;

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// What a frontier point is (JSON field description, CSV header, plot).
constexpr const char* kFrontierPointMeaning =
    "worst case of the frontier model at delta: SEARCH(lower bound) on that model's E, certified "
    "at the adversary's witness; no bound on eps*(delta), for which the model witnesses an upper "
    "bound only once its E is certified from above and its BOS cap over the whole box";

// " (double value 3.33e-16 differs in the first digit)" when flagged.
std::string double_note(bool disagrees, double double_value) {
  if (!disagrees) return "";
  char buf[96];
  std::snprintf(buf, sizeof buf, " (the double value %.3e differs in the first digit)",
                double_value);
  return buf;
}

// The adversary's witness input: trigger and content rows (exact doubles).
nlohmann::json witness_json(const search::Witness& w) {
  nlohmann::json rows = nlohmann::json::array();
  for (int r = 0; r < w.content.rows(); ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (int c = 0; c < w.content.cols(); ++c) row.push_back(w.content(r, c));
    rows.push_back(row);
  }
  return {{"trigger", w.trigger}, {"content", rows}};
}

Model<double> normal_init(int n, double std, std::uint64_t seed) {
  std::mt19937_64 eng(seed);
  std::normal_distribution<double> normal(0.0, std);
  Matrix<double> A(n, n), M(n, n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) A(r, c) = normal(eng);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) M(r, c) = normal(eng);
  return single_head_model<double>(AttentionKind::kSoftmax, A, M);
}

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

// The model with A scaled by the largest gamma in [0, 1] (bisection to
// kBisectionSteps halvings) whose mean probe BOS mass is <= ceiling.
constexpr int kBisectionSteps = 40;
Model<double> scaled_to_ceiling(const Model<double>& m, const ProbeSet& probes, double ceiling) {
  const auto with = [&](double g) {
    Model<double> out = m;
    out.layers[0][0].A *= g;
    return out;
  };
  if (search::mean_probe_bos(m, probes) <= ceiling) return m;
  double lo = 0, hi = 1;
  for (int k = 0; k < kBisectionSteps; ++k) {
    const double mid = 0.5 * (lo + hi);
    (search::mean_probe_bos(with(mid), probes) <= ceiling ? lo : hi) = mid;
  }
  return with(lo);
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

std::string format_bound(double value, bool lower_bound, int digits) {
  if (std::isnan(value)) return "nan";
  PrecisionScope scope(64);  // holds the double exactly
  return lower_bound ? format_down(Mpfr(value), digits) : format_up(Mpfr(value), digits);
}

void decide_verdict(Theorem1Study& st) {
  std::ostringstream why;
  if (!st.runs.empty() && st.runs[0].stats.heads[0][0].overall.count == 0) {
    st.verdict = "NOT APPLICABLE";
    st.reason = "no non-trigger position i >= 1 (L = 2): the BOS mass of Theorem 1 is undefined";
    return;
  }
  for (const FrontierPoint& p : st.frontier) {
    if (p.feasible && p.eps < kCandidateLoss) {
      st.verdict = "COUNTEREXAMPLE CANDIDATE";
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
    st.verdict = "CONSISTENT";
    why << "every frontier model's worst case (SEARCH, lower bound) >= " << kCandidateLoss
        << " and they shrink with delta (slope " << st.slope << " +- " << st.slope_stderr
        << "); path worst case (SEARCH, lower bound) "
        << format_bound(best->result.worst.certified, true, 6) << " with mean BOS " << path_bos;
  } else {
    st.verdict = "INCONCLUSIVE";
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

std::string csv_header(const RunInfo& info, const std::string& what) {
  std::ostringstream s;
  s << "# " << what << "\n";
  s << "# command: " << info.command_line << "\n# revision: " << info.revision
    << "\n# time: " << info.time_utc << "\n# seed: " << info.seed
    << "\n# precision: " << info.precision << "\n";
  return s.str();
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

Theorem1Study run_theorem1_study(const Theorem1Options& o, const StudyProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  o.task.validate();
  Theorem1Study st;
  st.options = o;
  const ProbeSet probes = make_probe_set(o.task, o.probe_count);

  // 1. descent path
  for (int s = 0; s < o.starts; ++s) {
    PathRun run;
    run.start = s;
    run.init_std = kPaperInitStd * std::pow(kInitGrowth, s);
    const Model<double> init = normal_init(o.task.n, run.init_std, o.seed * 1000 + s);
    MinimaxOptions mo;
    mo.seed = o.seed * 1000 + s;
    mo.adversary.seed = o.seed * 1000 + s;
    mo.target_loss = o.path_target;
    mo.time_limit_seconds = o.path_time_limit;
    mo.max_rounds = o.path_rounds;
    mo.probes = nullptr;
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
          st.path.push_back(p);
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
    st.runs.push_back(std::move(run));
  }
  std::size_t best = 0;
  for (std::size_t k = 1; k < st.runs.size(); ++k) {
    if (st.runs[k].result.worst.certified < st.runs[best].result.worst.certified) best = k;
  }
  st.nuance = nuance_of("path", st.runs[best].result.model, o);

  // 2. frontier. Each point starts from the path model with A scaled down
  // to meet the ceiling: the path model itself is saturated (BOS mass
  // 1 - 1e-11), where the ceiling's gradient vanishes.
  std::vector<double> deltas = o.deltas;
  std::sort(deltas.begin(), deltas.end());
  std::vector<FrontierPoint> points;
  for (double delta : deltas) {
    FrontierPoint p;
    p.delta = delta;
    p.ceiling = 1 - delta;
    const Model<double> warm = scaled_to_ceiling(st.runs[best].result.model, probes, p.ceiling);
    MinimaxOptions mo;
    mo.seed = o.seed;
    mo.adversary.seed = o.seed;
    mo.surrogate = search::Surrogate::kLawson;
    mo.bos_ceiling = p.ceiling;
    mo.probes = &probes;
    mo.max_rounds = o.frontier_rounds;
    mo.time_limit_seconds = o.frontier_time_limit;
    mo.target_loss = 0;
    p.result = search::minimax(warm, o.task, mo, [&](const MinimaxRecord& r, const Model<double>&) {
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "frontier delta %.3g round %d: worst case %s (SEARCH lower bound)%s, mean "
                    "BOS %.6f (ceiling %.6f), active set %d, %.1f s",
                    delta, r.round, format_bound(r.worst_case, true, 4).c_str(),
                    double_note(r.double_disagrees, r.worst_case_double).c_str(), r.mean_bos,
                    p.ceiling, r.active_size, r.elapsed);
      say(buf);
    });
    p.feasible = p.result.feasible;
    p.converged = p.result.converged;
    p.eps = p.result.worst.certified;
    p.eps_double = p.result.worst.value;
    p.double_disagrees = p.result.worst.double_disagrees;
    p.bos_mean = search::mean_probe_bos(p.result.model, probes);
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "frontier delta %.3g: worst case of the frontier model %s (SEARCH, lower bound "
                  "on that model's E)%s, mean BOS %.6f, %s",
                  delta, format_bound(p.eps, true, 5).c_str(),
                  double_note(p.double_disagrees, p.eps_double).c_str(), p.bos_mean,
                  p.feasible ? "feasible" : "NO feasible model");
    say(buf);
    points.push_back(std::move(p));
  }
  std::reverse(points.begin(), points.end());  // decreasing delta
  st.frontier = std::move(points);
  for (const FrontierPoint& p : st.frontier) {
    if (p.feasible && (p.delta == 0.5 || p.delta == 0.05)) {
      char name[64];
      std::snprintf(name, sizeof name, "frontier delta=%g", p.delta);
      const auto more = nuance_of(name, p.result.model, o);
      st.nuance.insert(st.nuance.end(), more.begin(), more.end());
    }
  }
  fit_slope(st);
  decide_verdict(st);
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

nlohmann::json to_json(const Theorem1Study& st, const RunInfo& info) {
  using nlohmann::json;
  const std::string search_label = Evidence::search("lower bound").label();
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
  json runs = json::array();
  for (const PathRun& r : st.runs) {
    json h = json::array();
    for (const auto& rec : r.result.history) h.push_back(record_json(rec));
    runs.push_back(
        {{"start", r.start},
         {"init", "normal std " + fmt(r.init_std)},
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
  j["verdict"] = st.verdict;
  j["verdict_reason"] = st.reason;
  j["seconds"] = st.seconds;
  j["run_info"] = to_json(info);
  return j;
}

std::string path_csv(const Theorem1Study& st, const RunInfo& info) {
  std::ostringstream s;
  s << csv_header(info,
                  "Theorem 1 descent path; worst_case SEARCH(lower bound, certified at the "
                  "witness), worst_case_double and others NUMERIC(53); double_disagrees = 1 where "
                  "the two differ in the first significant digit");
  s << "start,round,event,elapsed_s,worst_case,sampled_max,sampled_mean,bos_mean,bos_min,"
       "active_size,max_abs_A,worst_case_double,double_disagrees\n";
  for (const PathPoint& p : st.path) {
    s << p.start << ',' << p.round << ',' << p.event << ',' << fmt(p.elapsed) << ','
      << fmt(p.worst_case) << ',' << fmt(p.sampled_max) << ',' << fmt(p.sampled_mean) << ','
      << fmt(p.bos_mean) << ',' << fmt(p.bos_min) << ',' << p.active_size << ',' << fmt(p.max_abs_A)
      << ',' << fmt(p.worst_case_double) << ',' << (p.double_disagrees ? 1 : 0) << '\n';
  }
  return s.str();
}

std::string frontier_csv(const Theorem1Study& st, const RunInfo& info) {
  std::ostringstream s;
  s << csv_header(info, std::string("Theorem 1 frontier; frontier_model_worst_case: ") +
                            kFrontierPointMeaning +
                            "; mean_bos and frontier_model_worst_case_double NUMERIC(53); "
                            "double_disagrees = 1 where the two differ in the first digit");
  s << "delta,bos_ceiling,frontier_model_worst_case,mean_bos,feasible,converged,"
       "frontier_model_worst_case_double,double_disagrees\n";
  for (const FrontierPoint& p : st.frontier) {
    s << fmt(p.delta) << ',' << fmt(p.ceiling) << ',' << fmt(p.eps) << ',' << fmt(p.bos_mean) << ','
      << (p.feasible ? 1 : 0) << ',' << (p.converged ? 1 : 0) << ',' << fmt(p.eps_double) << ','
      << (p.double_disagrees ? 1 : 0) << '\n';
  }
  return s.str();
}

std::string nuance_csv(const Theorem1Study& st, const RunInfo& info) {
  std::ostringstream s;
  s << csv_header(info, "BOS mass against content scale, NUMERIC(53)");
  s << "model,content_scale,bos_mean,bos_min,sampled_error_max\n";
  for (const NuancePoint& p : st.nuance) {
    s << '"' << p.model << '"' << ',' << fmt(p.scale) << ',' << fmt(p.bos_mean) << ','
      << fmt(p.bos_min) << ',' << fmt(p.error_max) << '\n';
  }
  return s.str();
}

namespace {

// A file the study writes: a fixed name, or the weight file of a path start
// (path_start<digits>) or of a frontier point (frontier_delta_<number>).
// A new output file must be listed here: replace_output_set refuses to
// install a file that is not part of the set (theorem1_study_test writes
// the whole set and would say so).
bool study_file(const std::string& name) {
  static const std::set<std::string> kFixed{
      "theorem1.json", "path.csv",   "frontier.csv", "nuance.csv", "path.gp",
      "frontier.gp",   "nuance.gp",  "path.png",     "path.pdf",   "frontier.png",
      "frontier.pdf",  "nuance.png", "nuance.pdf"};
  const std::string suffix = ".weights.json";
  const auto numbered = [&](const std::string& prefix, const char* chars) {
    if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      return false;
    }
    const std::string middle =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    return middle.find_first_not_of(chars) == std::string::npos;
  };
  return kFixed.count(name) > 0 || numbered("path_start", "0123456789") ||
         numbered("frontier_delta_", "0123456789.e+-");
}

}  // namespace

OutputSet theorem1_output_set(const std::string& dir) {
  return OutputSet{dir, [](const std::string& name) {
                     // and the temporaries of runs killed while writing:
                     // NAME.tmp.PID, and .STEM.tmp.EXT of the figures
                     const std::size_t tmp = name.find(".tmp.");
                     const bool ours =
                         tmp == std::string::npos
                             ? study_file(name)
                             : study_file(name.substr(0, tmp)) ||
                                   (name[0] == '.' &&
                                    study_file(name.substr(1, tmp - 1) + name.substr(tmp + 4)));
                     return ours ? OutputSet::Kind::kFile : OutputSet::Kind::kNotInSet;
                   }};
}

namespace {

// Writes the study's files into `staging`; `written` gets their paths in `dir`.
void write_study_files(const Theorem1Study& st, const RunInfo& info, const std::string& staging,
                       const std::string& dir, std::vector<std::string>& written,
                       std::vector<std::string>* skipped) {
  namespace fs = std::filesystem;
  const auto put = [&](const std::string& name, const std::string& text) {
    write_file_atomically((fs::path(staging) / name).string(), text);
    written.push_back((fs::path(dir) / name).string());
  };
  put("theorem1.json", to_json(st, info).dump(2) + "\n");
  put("path.csv", path_csv(st, info));
  put("frontier.csv", frontier_csv(st, info));
  put("nuance.csv", nuance_csv(st, info));
  const auto weights = [&](const std::string& name, const Model<double>& m,
                           const nlohmann::json& meta) {
    nlohmann::json md = meta;
    md["parametrization"] = search::kParametrization;
    md["n"] = st.options.task.n;
    md["L"] = st.options.task.L;
    md["trigger_range"] = to_string(st.options.task.range);
    md["run_info"] = to_json(info);
    put(name, weight_file_text(weight_file_from_model(m, md)));
  };
  for (const PathRun& r : st.runs) {
    weights("path_start" + std::to_string(r.start) + ".weights.json", r.result.model,
            {{"study", "theorem1 path"},
             {"worst_case_loss", r.result.worst.certified},
             {"worst_case_evidence", Evidence::search("lower bound").label()},
             {"worst_case_witness", witness_json(r.result.worst)}});
  }
  for (const FrontierPoint& p : st.frontier) {
    if (!p.feasible) continue;
    char name[64];
    std::snprintf(name, sizeof name, "frontier_delta_%g.weights.json", p.delta);
    weights(name, p.result.model,
            {{"study", "theorem1 frontier"},
             {"delta", p.delta},
             {"worst_case_loss", p.eps},
             {"worst_case_evidence", Evidence::search("lower bound").label()},
             {"worst_case_witness", witness_json(p.result.worst)},
             {"mean_bos", p.bos_mean}});
  }
  // gnuplot: one script per figure, rendered to PNG (pngcairo) and PDF (pdfcairo)
  const std::string common = "set datafile separator ','\nset key top right\nset grid\n";
  const std::string path_gp =
      common +
      "set logscale y\nset format y '10^{%T}'\nset xlabel 'round'\n"
      "set ylabel 'value'\nset title 'Theorem 1 descent path: worst case (SEARCH, lower bound) "
      "and 1 - mean BOS (NUMERIC(53))'\n"
      "plot for [s=0:" +
      std::to_string(std::max<int>(0, static_cast<int>(st.runs.size()) - 1)) +
      "] 'path.csv' using ($1==s ? $2 : 1/0):5 with linespoints title sprintf('worst case, start "
      "%d', s), "
      "for [s=0:" +
      std::to_string(std::max<int>(0, static_cast<int>(st.runs.size()) - 1)) +
      "] 'path.csv' using ($1==s ? $2 : 1/0):(1-$8) with lines dashtype 2 title sprintf('1 - mean "
      "BOS, start %d', s)\n";
  const std::string frontier_gp =
      common +
      "set logscale xy\nset xlabel 'delta (mean BOS <= 1 - delta)'\n"
      "set ylabel 'worst case of the frontier model (SEARCH, lower bound)'\n"
      "set title sprintf(\"Worst case of the frontier model at delta (SEARCH: lower bound on that "
      "model's E,\\nno bound on eps*(delta) until the model is certified); fit slope %.3f +- "
      "%.3f\", " +
      fmt(st.slope) + ", " + fmt(st.slope_stderr) +
      ")\nset key top left\n"
      "plot 'frontier.csv' using 1:($5==1 ? $3 : 1/0) with linespoints pt 7 title 'frontier model "
      "worst case (SEARCH, lower bound)'\n";
  const std::string nuance_gp =
      common +
      "set xlabel 'content scale t (content multiplied by t)'\nset ylabel 'BOS mass'\n"
      "set key bottom right\nset title 'BOS mass against content (NUMERIC(53))'\n"
      "plot 'nuance.csv' using ((strcol(1) eq 'path') ? $2 : 1/0):3 with linespoints title 'path "
      "model: mean', "
      "'nuance.csv' using ((strcol(1) eq 'frontier delta=0.05') ? $2 : 1/0):3 with linespoints "
      "title 'delta=0.05: mean', "
      "'nuance.csv' using ((strcol(1) eq 'frontier delta=0.5') ? $2 : 1/0):3 with linespoints "
      "title 'delta=0.5: mean', "
      "'nuance.csv' using ((strcol(1) eq 'frontier delta=0.5') ? $2 : 1/0):4 with lines dashtype 2 "
      "title 'delta=0.5: min'\n";
  for (const auto& [stem, body] : std::vector<std::pair<std::string, std::string>>{
           {"path", path_gp}, {"frontier", frontier_gp}, {"nuance", nuance_gp}}) {
    put(stem + ".gp", body);
    for (const auto& [term, ext] : std::vector<std::pair<std::string, std::string>>{
             {"pngcairo size 900,600", "png"}, {"pdfcairo size 6in,4in", "pdf"}}) {
      // gnuplot runs in the staging folder, without a shell; the command
      // holds only our own file names
      const std::string target = stem + "." + ext;
      RunOptions run;
      run.working_dir = staging;
      run.capture = RunOptions::Capture::kStderr;
      const ProgramResult r = run_program(
          {"gnuplot", "-e", "set terminal " + term + "; set output '" + target + "'", stem + ".gp"},
          run);
      std::error_code ec;
      if (r.ok() && fs::is_regular_file(fs::path(staging) / target, ec)) {
        written.push_back((fs::path(dir) / target).string());
      } else {
        fs::remove(fs::path(staging) / target, ec);  // a partial figure
        if (skipped) skipped->push_back(target + " (" + describe_failure(r) + ")");
      }
    }
  }
}

}  // namespace

std::vector<std::string> write_theorem1_outputs(const Theorem1Study& st, const RunInfo& info,
                                                const std::string& dir,
                                                std::vector<std::string>* skipped) {
  std::vector<std::string> written;
  replace_output_set(theorem1_output_set(dir), [&](const std::string& staging) {
    write_study_files(st, info, staging, dir, written, skipped);
  });
  return written;
}

}  // namespace sinkcert::theorems
