// SPDX-License-Identifier: MIT
#include "theorems/studies/precision_tables.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <random>
#include <sstream>

#include "search/adversary.h"
#include "src/constructions.h"
#include "src/elapsed.h"
#include "src/forward.h"
#include "src/input_error.h"
#include "src/linf_error.h"
#include "src/weight_file.h"
#include "theorems/bounds/witness_certificate.h"
#include "theorems/bounds/worst_case_bound.h"
#include "theorems/exact/relu_exact_checker.h"

namespace sinkcert::theorems::studies {

namespace {

// A value of T as an Mpfr, exactly (the current precision must be at least
// T's; Float128 goes through three doubles, which hold its 113 bits).
template <class T>
Mpfr exact_mpfr(const T& x) {
  if constexpr (std::is_same_v<T, Float128>) {
    const double hi = static_cast<double>(x);
    const Float128 r1 = x - Float128(hi);
    const double mid = static_cast<double>(r1);
    const double lo = static_cast<double>(r1 - Float128(mid));
    return Mpfr(hi) + Mpfr(mid) + Mpfr(lo);
  } else if constexpr (std::is_same_v<T, Mpfr>) {
    return x;
  } else {
    return Mpfr(static_cast<double>(x));
  }
}

template <class T>
void numeric_columns(const Task& task, double beta, const std::string& name, int bits,
                     PrecisionRow& row) {
  const auto witnesses = bounds::vertex_witnesses(task);
  const auto [loss, deficit] =
      bounds::witness_values(sink_family<T>(task.n, T(beta)), task, witnesses);
  PrecisionScope wide(std::max(bits, 128) + 64);
  row.loss_numeric.push_back({name, bits, exact_mpfr(loss), 0});
  row.deficit_numeric.push_back({name, bits, exact_mpfr(deficit), 0});
}

// The metadata's "worst_case_witness" {trigger, content rows} when it is a
// valid task input for `task` (else none: the file predates it or is foreign).
std::optional<std::pair<int, Matrix<double>>> recorded_witness(const nlohmann::json& meta,
                                                               const Task& task) {
  if (!meta.is_object() || !meta.contains("worst_case_witness")) return std::nullopt;
  const nlohmann::json& w = meta["worst_case_witness"];
  if (!w.is_object() || !w.contains("trigger") || !w["trigger"].is_number_integer() ||
      !w.contains("content") || !w["content"].is_array()) {
    return std::nullopt;
  }
  const int j = w["trigger"].get<int>();
  const auto triggers = task.trigger_positions();
  if (std::find(triggers.begin(), triggers.end(), j) == triggers.end()) return std::nullopt;
  const nlohmann::json& rows = w["content"];
  Matrix<double> C(task.L - 1, task.content_dim());
  if (static_cast<int>(rows.size()) != C.rows()) return std::nullopt;
  for (int r = 0; r < C.rows(); ++r) {
    if (!rows[r].is_array() || static_cast<int>(rows[r].size()) != C.cols()) return std::nullopt;
    for (int c = 0; c < C.cols(); ++c) {
      if (!rows[r][c].is_number()) return std::nullopt;
      const double v = rows[r][c].get<double>();
      if (!(v >= -1 && v <= 1)) return std::nullopt;
      C(r, c) = v;
    }
  }
  return std::make_pair(j, C);
}

}  // namespace

std::vector<PrecisionRow> sink_family_precision_rows(const Task& task,
                                                     const std::vector<double>& betas, int digits,
                                                     const Progress& progress) {
  std::vector<PrecisionRow> rows;
  const auto witnesses = bounds::vertex_witnesses(task);
  for (double beta : betas) {
    const auto t0 = std::chrono::steady_clock::now();
    PrecisionRow row;
    row.beta = beta;
    AdaptiveOptions options;
    options.digits = digits;
    // E in [max_W lower e(X), max_j upper(box_j)]
    const AdaptiveResult loss = certify_adaptively(
        [&] {
          const Model<Mpfi> m = sink_family<Mpfi>(task.n, Mpfi(beta));
          Mpfr lower(-1), upper(-1);
          for (const auto& [j, C] : witnesses) {
            std::vector<double> content(C.data(), C.data() + C.size());
            const Mpfr low = bounds::certified_error_lower(m, task, j, content);
            if (low > lower) lower = low;
          }
          for (int j : task.trigger_positions()) {
            const Mpfr up = bounds::bound_box(m, task, bounds::full_content_box(task, j)).upper;
            if (up > upper) upper = up;
          }
          return std::vector<Mpfi>{Mpfi(lower, upper)};
        },
        options);
    row.loss = loss.values[0];
    row.loss_bits = loss.bits;
    row.loss_digits = loss.digits;
    // 1 - a_i0 over the whole box: the attention of forward<Mpfi> on it
    const AdaptiveResult deficit = certify_adaptively(
        [&] {
          const Model<Mpfi> m = sink_family<Mpfi>(task.n, Mpfi(beta));
          Mpfi worst(0);
          bool first = true;
          for (int j : task.trigger_positions()) {
            Matrix<Mpfi> C =
                Matrix<Mpfi>::Constant(task.L - 1, task.content_dim(), Mpfi(Mpfr(-1), Mpfr(1)));
            const auto r = forward(m, make_input<Mpfi>(task, j, C));
            for (int i = 1; i < task.L; ++i) {
              if (i == j) continue;
              const Mpfi d = Mpfi(1) - r.attention[0][0](i, 0);
              worst = first ? d : max_of(worst, d);
              first = false;
            }
          }
          return std::vector<Mpfi>{worst};
        },
        options);
    row.deficit = deficit.values[0];
    row.deficit_bits = deficit.bits;
    row.deficit_digits = deficit.digits;
    numeric_columns<float>(task, beta, "float (24)", 24, row);
    numeric_columns<double>(task, beta, "double (53)", 53, row);
    numeric_columns<Float128>(task, beta, "Float128 (113)", 113, row);
    {
      PrecisionScope scope(256);
      numeric_columns<Mpfr>(task, beta, "MPFR (257)", PrecisionScope::current_bits(), row);
    }
    for (auto& v : row.loss_numeric) v.correct_digits = correct_digits(v.value, row.loss);
    for (auto& v : row.deficit_numeric) v.correct_digits = correct_digits(v.value, row.deficit);
    row.seconds = seconds_since(t0);
    if (progress) {
      std::ostringstream msg;
      msg << "P1 beta = " << beta << ": loss " << row.loss_bits << " bits, 1 - BOS "
          << row.deficit_bits << " bits, " << row.seconds << " s";
      progress(msg.str());
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

template <class T>
std::vector<ScaleRow> scale_path_of(const Model<T>& model, const Task& task,
                                    const std::vector<double>& scales,
                                    const AdaptiveOptions& options, const Progress& progress) {
  if (model.kind != ModelKind::kSingleLayer) {
    throw std::invalid_argument("scale path: single-layer models only");
  }
  const auto witnesses = bounds::vertex_witnesses(task);
  std::vector<ScaleRow> rows;
  for (double s : scales) {
    Model<T> scaled = model;
    // A -> s A (M kept); exact for a Rational model and for s a power of two
    for (auto& head : scaled.layers[0]) head.A *= scalar_cast<T>(Rational(s));
    ScaleRow row{s, bounds::certify_witnesses(scaled, task, witnesses, options)};
    if (progress) {
      std::ostringstream msg;
      msg << "P4 scale " << s << ": " << row.cert.bits << " bits";
      progress(msg.str());
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ScaleRow> scale_path(const Model<double>& model, const Task& task,
                                 const std::vector<double>& scales, const AdaptiveOptions& options,
                                 const Progress& progress) {
  return scale_path_of(model, task, scales, options, progress);
}

std::vector<ScaleRow> scale_path(const Model<Rational>& model, const Task& task,
                                 const std::vector<double>& scales, const AdaptiveOptions& options,
                                 const Progress& progress) {
  return scale_path_of(model, task, scales, options, progress);
}

std::vector<ReluRow> relu_certificate_rows(const std::vector<std::pair<int, int>>& sizes,
                                           const Progress& progress) {
  std::vector<ReluRow> rows;
  for (const auto& [n, L] : sizes) {
    const Task task{n, L, TriggerRange::kPaper};
    const exact::ReluCertificate cert =
        exact::check_relu_exact(relu_construction<Rational>(n), task);
    rows.push_back({n, L, cert.verdict, cert.evidence, cert.margin, cert.seconds});
    if (progress) {
      std::ostringstream msg;
      msg << "P3 n = " << n << ", L = " << L << ": " << to_string(rows.back().verdict) << " in "
          << cert.seconds << " s";
      progress(msg.str());
    }
  }
  return rows;
}

std::vector<BoundRow> worst_case_bound_rows(RunSize size, const Progress& progress) {
  const bool full = size == RunSize::kFull;
  std::vector<BoundRow> rows;
  std::vector<std::pair<int, int>> sizes{{5, 4}};
  if (size != RunSize::kQuick) sizes.insert(sizes.end(), {{8, 8}, {16, 16}});
  if (full) sizes.push_back({32, 32});
  for (const auto& [n, L] : sizes) {
    const Task task{n, L, TriggerRange::kPaper};
    bounds::WorstCaseOptions options;
    options.relative_gap = 0.01;
    rows.push_back({"sink family, beta = 10", n, L,
                    bounds::bound_worst_case(sink_family<double>(n, 10.0), task, options)});
    if (progress)
      progress("B1 sink family n = " + std::to_string(n) + ", L = " + std::to_string(L));
  }
  // content-dependent scores: A, M with i.i.d. N(0, 0.2^2) entries, seed 21
  // (the model of tests/theorems/bounds/worst_case_bound_test.cc)
  for (double std_dev : full ? std::vector<double>{0.2, 0.5} : std::vector<double>{0.2}) {
    const Task task{5, 4, TriggerRange::kPaper};
    std::mt19937_64 eng(21);
    std::normal_distribution<double> normal(0.0, std_dev);
    Matrix<double> A(5, 5), M(5, 5);
    for (int r = 0; r < 5; ++r) {
      for (int c = 0; c < 5; ++c) {
        A(r, c) = normal(eng);
        M(r, c) = normal(eng);
      }
    }
    bounds::WorstCaseOptions options;
    options.relative_gap = 0.10;
    // boxes, not seconds: the same bound on any machine (about 400 boxes/s)
    options.max_boxes = full ? 48000 : size == RunSize::kQuick ? 200 : 8000;
    options.max_seconds = bounds::kNoTimeLimit;
    std::ostringstream name;
    name << "random softmax, std " << std_dev << ", seed 21";
    rows.push_back({name.str(), 5, 4,
                    bounds::bound_worst_case(
                        single_head_model<double>(AttentionKind::kSoftmax, A, M), task, options)});
    if (progress) progress("B1 " + name.str());
  }
  return rows;
}

std::vector<SearchModelRow> search_model_rows(const std::vector<SearchModelFile>& files,
                                              long bound_boxes, const Progress& progress) {
  std::vector<SearchModelRow> rows;
  for (const SearchModelFile& file : files) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file.path, ec)) {
      throw InputError(file.path, "file", "a search model's weight file (it is missing)");
    }
    const WeightFile w = read_weight_file(file.path);
    if (w.kind != ModelKind::kSingleLayer || w.attention != AttentionKind::kSoftmax) {
      throw InputError(file.path, "kind", "a single-layer softmax model");
    }
    SearchModelRow row;
    row.file = file.name;
    row.n = w.n;
    row.L = 16;
    const nlohmann::json& meta = w.metadata;
    if (meta.is_object()) {
      if (meta.contains("L") && meta["L"].is_number_integer()) row.L = meta["L"].get<int>();
      if (meta.contains("task") && meta["task"].is_object() && meta["task"].contains("L") &&
          meta["task"]["L"].is_number_integer()) {
        row.L = meta["task"]["L"].get<int>();
      }
    }
    if (row.L < 2) throw InputError(file.path, "metadata.L", "a sequence length L >= 2");
    const Task task{row.n, row.L, TriggerRange::kPaper};
    // The file's exact model (every CERTIFIED number is about it) and its
    // rounding to double, in which the adversary searches.
    const Model<Rational> exact = to_model<Rational>(w);
    const Model<double> model = exact.cast<double>();
    // search loss, re-evaluated: the adversary's witnesses and the one the
    // file records, each certified in MPFI on the exact model (a number
    // recorded in the metadata may have been computed in double and is not
    // used)
    row.search = search::maximize_error(model, task).best;
    search::certify_witness(exact, task, row.search);
    if (const auto recorded = recorded_witness(meta, task)) {
      search::Witness w2 = search::score_error(model, task, recorded->first, recorded->second);
      search::certify_witness(exact, task, w2);
      if (w2.certified > row.search.certified) row.search = w2;
    }
    AdaptiveOptions options;
    options.digits = 6;
    row.witness = bounds::certify_witnesses(exact, task, bounds::vertex_witnesses(task), options);
    if (row.n == 5 && row.L == 4) {
      bounds::WorstCaseOptions bo;
      bo.relative_gap = 0.10;
      bo.max_boxes = bound_boxes;
      bo.max_seconds = bounds::kNoTimeLimit;
      row.bound = bounds::bound_worst_case(exact, task, bo);
      row.bounded = true;
    }
    row.path = scale_path(exact, task, {1, 2, 4, 8, 16}, options);
    if (progress) progress("P2 " + row.file);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace sinkcert::theorems::studies
