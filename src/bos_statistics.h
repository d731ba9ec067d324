// SPDX-License-Identifier: MIT
//
// BOS-mass statistics and sampled error over a probe set (docs/definitions.md, Definitions 3).
//
// Probe set: `count` sequences from TaskSampler(task, seed), the trigger
// drawn from the convention's range, or fixed at one position (the paper's
// figure: 0-indexed 7). Default seed kDefaultProbeSeed, count 1000.
// For every layer l, head h and non-trigger position i >= 1 of every probe,
// the BOS mass is b = a^{l,h}_{i0} (layer l's attention, computed on x^(l)).
// Reported per (l, h): per position i and over all non-trigger positions,
//   count, min, mean = (1/count) sum b, quantiles at kQuantileLevels.
// Quantiles are numpy's default ("linear", Hyndman-Fan type 7): for sorted
// values v_0 <= ... <= v_{N-1} and level p, with h = (N-1) p,
//   Q(p) = v_floor(h) + (h - floor(h)) (v_floor(h)+1 - v_floor(h)).
// Sampled error: e(X) = max_{i,d} |f(X)_{i,d} - y_{i,d}| (target by model
// kind), its max (with where) and mean over the probes. All NUMERIC(53).
// NaN is never dropped: a NaN BOS mass makes min, mean and every quantile
// of its summaries NaN, a NaN error makes the mean NaN and the max NaN at
// the first such probe; JSON writes them as "NaN" (or "Infinity").
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "src/evidence.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert {

constexpr std::uint64_t kDefaultProbeSeed = 20260311;  // documented probe seed
constexpr int kDefaultProbeCount = 1000;
constexpr int kPaperFigureTrigger = 7;  // 0-indexed trigger of the paper's figure
constexpr std::array<double, 7> kQuantileLevels = {0, 0.01, 0.1, 0.5, 0.9, 0.99, 1};

struct ProbeSet {
  Task task;
  std::vector<Sample> samples;
  std::uint64_t seed = kDefaultProbeSeed;
  std::optional<int> fixed_trigger;
};

// Throws std::invalid_argument if count < 1, the convention has no trigger
// position, or the fixed trigger is outside 1..L-1.
ProbeSet make_probe_set(const Task& task, int count = kDefaultProbeCount,
                        std::uint64_t seed = kDefaultProbeSeed,
                        std::optional<int> fixed_trigger = std::nullopt);

// Type-7 quantile of ascending `sorted` (non-empty) at level p in [0, 1].
double quantile_sorted(const std::vector<double>& sorted, double p);

struct BosSummary {
  long count = 0;  // number of (probe, position) values; 0: no statistics
  double min = 0, mean = 0;
  std::array<double, kQuantileLevels.size()> quantiles{};  // at kQuantileLevels
};
// Summary of arbitrary values (count 0 if empty).
BosSummary summarize(std::vector<double> values);

struct HeadBosStatistics {
  int layer = 0, head = 0;
  std::vector<BosSummary> per_position;  // index i = 0..L-1; i = 0 always count 0
  BosSummary overall;                    // every non-trigger position i >= 1
};

struct BosStatistics {
  Task task;
  int samples = 0;
  std::uint64_t seed = 0;
  std::optional<int> fixed_trigger;
  ModelKind kind = ModelKind::kSingleLayer;
  AttentionKind attention = AttentionKind::kSoftmax;
  Evidence evidence = Evidence::numeric(53);
  std::vector<std::vector<HeadBosStatistics>> heads;  // [layer][head]
  // Sampled l_inf error over the probe set.
  double error_max = 0, error_mean = 0;
  int error_max_sample = 0;      // index into the probe set
  int error_max_trigger = 0;     // that probe's trigger position
  int error_max_position = 0;    // i
  int error_max_coordinate = 0;  // d
};

BosStatistics bos_statistics(const Model<double>& m, const ProbeSet& probes);

nlohmann::json to_json(const BosSummary& s);
nlohmann::json to_json(const BosStatistics& s);

}  // namespace sinkcert
