// SPDX-License-Identifier: MIT
#include "src/bos_statistics.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "src/evaluation.h"
#include "src/forward.h"
#include "src/linf_error.h"

namespace sinkcert {

ProbeSet make_probe_set(const Task& task, int count, std::uint64_t seed,
                        std::optional<int> fixed_trigger) {
  task.validate();
  if (count < 1) {
    throw std::invalid_argument("probe set size " + std::to_string(count) + ": expected >= 1");
  }
  if (fixed_trigger && (*fixed_trigger < 1 || *fixed_trigger >= task.L)) {
    throw std::invalid_argument("fixed trigger " + std::to_string(*fixed_trigger) +
                                ": expected a position in 1.." + std::to_string(task.L - 1));
  }
  ProbeSet probes{task, {}, seed, fixed_trigger};
  TaskSampler sampler(task, seed);
  probes.samples.reserve(count);
  for (int s = 0; s < count; ++s) {
    probes.samples.push_back(fixed_trigger ? sampler.next_with_trigger(*fixed_trigger)
                                           : sampler.next());
  }
  return probes;
}

double quantile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) throw std::invalid_argument("quantile of no values");
  // h = (N-1) p;  Q = v_floor(h) + (h - floor(h)) (v_floor(h)+1 - v_floor(h))
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const std::size_t lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  if (sorted[lo] == sorted[lo + 1]) return sorted[lo];  // also inf: no inf - inf
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

BosSummary summarize(std::vector<double> values) {
  BosSummary s;
  if (values.empty()) return s;
  s.count = static_cast<long>(values.size());
  // A NaN value makes min, mean and every quantile NaN (as numpy's min,
  // mean and quantile do); it is never sorted away or skipped.
  if (std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); })) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    s.min = s.mean = nan;
    s.quantiles.fill(nan);
    return s;
  }
  std::sort(values.begin(), values.end());
  s.min = values.front();
  // mean = (1/N) sum v
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  for (std::size_t q = 0; q < kQuantileLevels.size(); ++q) {
    s.quantiles[q] = quantile_sorted(values, kQuantileLevels[q]);
  }
  return s;
}

BosStatistics bos_statistics(const Model<double>& m, const ProbeSet& probes) {
  const int L = probes.task.L;
  if (probes.task.n != m.n) {
    throw std::invalid_argument("probe set has n = " + std::to_string(probes.task.n) +
                                ", model has n = " + std::to_string(m.n));
  }
  BosStatistics st;
  st.task = probes.task;
  st.samples = static_cast<int>(probes.samples.size());
  st.seed = probes.seed;
  st.fixed_trigger = probes.fixed_trigger;
  st.kind = m.kind;
  st.attention = m.attention;
  // values[l][h][i]: the BOS masses a_i0 seen at position i.
  std::vector<std::vector<std::vector<std::vector<double>>>> values(
      m.num_layers(), std::vector<std::vector<std::vector<double>>>(
                          m.num_heads(), std::vector<std::vector<double>>(L)));
  double error_sum = 0;
  st.error_max = -1;
  for (std::size_t s = 0; s < probes.samples.size(); ++s) {
    const Sample& sample = probes.samples[s];
    const ForwardResult<double> r = forward(m, sample.X);
    for (int l = 0; l < m.num_layers(); ++l) {
      for (int h = 0; h < m.num_heads(); ++h) {
        for (int i = 1; i < L; ++i) {
          if (i != sample.trigger) values[l][h][i].push_back(r.attention[l][h](i, 0));
        }
      }
    }
    const Matrix<double> y = make_target(sample.X, sample.trigger, target_kind_of(m.kind));
    const LinfError<double> e = linf_error(r.output, y);
    // sum and max propagate NaN: the first NaN probe is the max and its
    // location, and the mean is NaN
    error_sum += e.value;
    const bool max_is_nan = std::isnan(st.error_max);
    if (!max_is_nan && (std::isnan(e.value) || e.value > st.error_max)) {
      st.error_max = e.value;
      st.error_max_sample = static_cast<int>(s);
      st.error_max_trigger = sample.trigger;
      st.error_max_position = e.position;
      st.error_max_coordinate = e.coordinate;
    }
  }
  st.error_mean =
      probes.samples.empty() ? 0 : error_sum / static_cast<double>(probes.samples.size());
  if (probes.samples.empty()) st.error_max = 0;
  for (int l = 0; l < m.num_layers(); ++l) {
    st.heads.emplace_back();
    for (int h = 0; h < m.num_heads(); ++h) {
      HeadBosStatistics hs;
      hs.layer = l;
      hs.head = h;
      std::vector<double> all;
      for (int i = 0; i < L; ++i) {
        all.insert(all.end(), values[l][h][i].begin(), values[l][h][i].end());
        hs.per_position.push_back(summarize(std::move(values[l][h][i])));
      }
      hs.overall = summarize(std::move(all));
      st.heads.back().push_back(std::move(hs));
    }
  }
  return st;
}

nlohmann::json to_json(const BosSummary& s) {
  // Keys are the levels of kQuantileLevels as written there.
  static const char* const kNames[] = {"0", "0.01", "0.1", "0.5", "0.9", "0.99", "1"};
  static_assert(std::size(kNames) == kQuantileLevels.size());
  nlohmann::json q = nlohmann::json::object();
  // json_number: a NaN is the string "NaN", never null
  for (std::size_t k = 0; k < kQuantileLevels.size(); ++k) {
    q[kNames[k]] = json_number(s.quantiles[k], 17);
  }
  return {{"count", s.count},
          {"min", json_number(s.min, 17)},
          {"mean", json_number(s.mean, 17)},
          {"quantiles", q}};
}

nlohmann::json to_json(const BosStatistics& s) {
  nlohmann::json heads = nlohmann::json::array();
  for (const auto& layer : s.heads) {
    for (const auto& h : layer) {
      nlohmann::json per = nlohmann::json::array();
      for (std::size_t i = 1; i < h.per_position.size(); ++i) {
        nlohmann::json p = to_json(h.per_position[i]);
        p["position"] = i;
        per.push_back(p);
      }
      heads.push_back({{"layer", h.layer},
                       {"head", h.head},
                       {"overall", to_json(h.overall)},
                       {"per_position", per}});
    }
  }
  return {
      {"evidence", s.evidence.label()},
      {"task", {{"n", s.task.n}, {"L", s.task.L}, {"trigger_range", to_string(s.task.range)}}},
      {"probe_set",
       {{"samples", s.samples},
        {"seed", s.seed},
        {"fixed_trigger", s.fixed_trigger ? nlohmann::json(*s.fixed_trigger) : nlohmann::json()}}},
      {"model", {{"kind", to_string(s.kind)}, {"attention", to_string(s.attention)}}},
      {"bos_mass",
       {{"statistic", "a_i0 at non-trigger positions i >= 1"},
        {"quantile_method", "linear (numpy default, type 7)"},
        {"heads", heads}}},
      {"sampled_error",
       {{"statistic", "max_{i,d} |f(X)_{i,d} - y_{i,d}| over the probe set"},
        {"bound", "sampled: the max is a lower bound on the worst-case error, not an upper bound"},
        {"max", json_number(s.error_max, 17)},
        {"mean", json_number(s.error_mean, 17)},
        {"argmax",
         {{"sample", s.error_max_sample},
          {"trigger", s.error_max_trigger},
          {"position", s.error_max_position},
          {"coordinate", s.error_max_coordinate}}}}},
  };
}

}  // namespace sinkcert
