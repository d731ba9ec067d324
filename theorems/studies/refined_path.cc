// SPDX-License-Identifier: MIT
#include "theorems/studies/refined_path.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <sstream>
#include <stdexcept>

#include "search/least_squares_refiner.h"
#include "src/elapsed.h"
#include "src/run_info.h"
#include "src/table_writer.h"
#include "src/task.h"

namespace sinkcert::theorems::studies {

namespace {

using Inputs = std::vector<std::pair<int, Matrix<double>>>;

// log2(10): bits per decimal digit.
constexpr double kBitsPerDigit = 3.3219280948873623;
// Bits beyond the loss's exponent and its digits that the MPFI enclosures of
// a forward pass at n = L = 16 lose to rounding (softmax sums of 16 terms,
// two matrix products): at s = 10 a loss ~ 2^-358 with 6 digits (20 bits)
// certified at 448 bits, 70 beyond. The start is the grid point at or below.
constexpr int kGuardBits = 64;

Matrix<double> content_of(const Task& task, const Matrix<double>& X) {
  return X.block(1, kFirstContent, task.L - 1, task.content_dim());
}

// Content with every coordinate +-1, the sign of a fresh content draw.
Matrix<double> random_vertex(const Task& task, TaskSampler& sampler) {
  Matrix<double> C(task.L - 1, task.content_dim());
  for (Eigen::Index t = 0; t < C.size(); ++t) C(t) = sampler.next_content() < 0 ? -1.0 : 1.0;
  return C;
}

// Per trigger: all +1, all -1, `vertices` random vertices; then `samples`
// uniform sequences with triggers drawn from the convention.
Inputs fit_set(const Task& task, const RefinedPathOptions& o) {
  Inputs out = bounds::vertex_witnesses(task);
  TaskSampler sampler(task, o.seed);
  for (int j : task.trigger_positions()) {
    for (int v = 0; v < o.fit_vertices; ++v) out.emplace_back(j, random_vertex(task, sampler));
  }
  for (int t = 0; t < o.fit_samples; ++t) {
    const Sample s = sampler.next();
    out.emplace_back(s.trigger, content_of(task, s.X));
  }
  return out;
}

// Per trigger every vertex (or all +-1 and 64 random ones); then
// `check_samples` uniform sequences from the stream seeded seed + 1.
Inputs check_set(const Task& task, const RefinedPathOptions& o) {
  Inputs out;
  const int vars = (task.L - 1) * task.content_dim();
  TaskSampler sampler(task, o.seed + 1);
  if (check_set_has_every_vertex(task)) {
    for (int j : task.trigger_positions()) {
      for (long v = 0; v < (1L << vars); ++v) {
        Matrix<double> C(task.L - 1, task.content_dim());
        // variable m = (k - 1)(n - 3) + c is +1 where bit m of v is set
        for (int m = 0; m < vars; ++m) {
          C(m / task.content_dim(), m % task.content_dim()) = (v >> m & 1) ? 1.0 : -1.0;
        }
        out.emplace_back(j, C);
      }
    }
  } else {
    out = bounds::vertex_witnesses(task);
    for (int j : task.trigger_positions()) {
      for (int v = 0; v < 64; ++v) out.emplace_back(j, random_vertex(task, sampler));
    }
  }
  for (int t = 0; t < o.check_samples; ++t) {
    const Sample s = sampler.next();
    out.emplace_back(s.trigger, content_of(task, s.X));
  }
  return out;
}

// Process CPU seconds (user + sys, every thread).
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

Model<Mpfr> project_exact_structure(const Model<Mpfr>& model) {
  Model<Mpfr> out = model;
  Head<Mpfr>& h = out.layers[0][0];
  const int n = static_cast<int>(h.A.rows());
  const int ordinary = ordinary_flag(n);
  const Mpfr half = Mpfr(1) / Mpfr(2);
  // rows q = 1 (trigger query) and q = c (content query)
  for (int q = kTriggerFlag; q < ordinary; ++q) {
    // A[q][c'] = 0: no key content in the trigger row
    for (int c = kFirstContent; c < ordinary; ++c) h.A(q, c) = Mpfr(0);
    // A[q][1] = A[q][n-1] = their mean: the trigger key scores as an ordinary one
    const Mpfr mean = (h.A(q, kTriggerFlag) + h.A(q, ordinary)) * half;
    h.A(q, kTriggerFlag) = mean;
    h.A(q, ordinary) = mean;
  }
  // M = I - e_0 e_0^T
  h.M.setZero();
  for (int d = 1; d < n; ++d) h.M(d, d) = Mpfr(1);
  return out;
}

bool check_set_has_every_vertex(const Task& task) {
  return (task.L - 1) * task.content_dim() <= kMaxVertexBits;
}

RefinedPath refined_path(const Model<double>& model, const Task& task,
                         const RefinedPathOptions& options, const Progress& progress) {
  if (options.scales.empty() || options.scales.front() <= 0) {
    throw std::invalid_argument("refined path: scales must start positive");
  }
  for (std::size_t k = 1; k < options.scales.size(); ++k) {
    if (options.scales[k] <= options.scales[k - 1]) {
      throw std::invalid_argument("refined path: scales must increase");
    }
  }
  const Inputs fit = fit_set(task, options);
  const Inputs check = check_set(task, options);
  RefinedPath path;
  path.fit_size = static_cast<int>(fit.size());
  path.check_size = static_cast<int>(check.size());
  path.method = options.method;
  PrecisionScope scope(options.bits);
  path.bits = PrecisionScope::current_bits();
  const bool exact = options.method == RefineMethod::kExactStructure;
  // theta_0 (projected onto P once for kExactStructure); A_k = s_k A_0
  const Model<Mpfr> start =
      exact ? project_exact_structure(model.cast<Mpfr>()) : model.cast<Mpfr>();
  Model<Mpfr> current = start;
  double previous = 1.0;
  for (double s : options.scales) {
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds();
    RefinedPathRow row;
    row.scale = s;
    Mpfr fit_max;
    if (exact) {
      // A_k = s_k A_0 (exact: s_k and A_0's entries are doubles)
      current = start;
      current.layers[0][0].A *= Mpfr(s);
      fit_max = search::refine_residuals(current, task, fit).cwiseAbs().maxCoeff();
    } else {
      // A <- (s_k / s_{k-1}) A_{k-1}
      current.layers[0][0].A *= Mpfr(s) / Mpfr(previous);
      const search::RefineResult<Mpfr> refined =
          search::refine_least_squares(current, task, fit, {options.evaluations});
      current = refined.model;
      row.evaluations = refined.evaluations;
      fit_max = refined.final_max;
    }
    previous = s;
    row.refine_seconds = seconds_since(t0);
    row.max_abs_a = current.layers[0][0].A.cwiseAbs().maxCoeff().convert_to<double>();
    row.fit_max = fit_max;
    auto t1 = std::chrono::steady_clock::now();
    // W is certified from the precision at which F's loss, max |r| ~ 2^-b,
    // keeps kGuardBits beyond its demanded digits (on the step grid): the
    // attempts below would fail on rounding alone, and at n = L = 16 each
    // attempt at W costs as much as the rest of the step.
    AdaptiveOptions certify = options.certify;
    if (fit_max > 0) {
      const long b = -static_cast<long>(std::floor(Mpfr(bmp::log2(fit_max)).convert_to<double>())) +
                     static_cast<long>(kBitsPerDigit * certify.digits) + kGuardBits;
      const long steps = (b - certify.start_bits) / certify.step_bits;
      if (steps > 0) {
        certify.start_bits = static_cast<int>(
            std::min<long>(certify.start_bits + steps * certify.step_bits, certify.max_bits));
      }
    }
    row.cert = bounds::certify_witnesses(current, task, check, certify);
    row.certify_seconds = seconds_since(t1);
    if (options.bound_boxes > 0) {
      t1 = std::chrono::steady_clock::now();
      bounds::WorstCaseOptions bo;
      bo.bits = row.cert.bits + 64;
      bo.max_bits = std::max(bo.max_bits, bo.bits + 512);
      bo.max_boxes = options.bound_boxes;
      bo.max_seconds = bounds::kNoTimeLimit;
      bo.relative_gap = options.bound_gap;
      bo.adversary_witnesses = options.bound_adversary;
      row.bound = bounds::bound_worst_case(current, task, bo);
      row.bounded = true;
      row.bound_seconds = seconds_since(t1);
    }
    if (options.bos_boxes > 0) {
      t1 = std::chrono::steady_clock::now();
      bounds::BosBoundOptions bo;
      bo.max_boxes = options.bos_boxes;
      bo.max_seconds = bounds::kNoTimeLimit;
      bo.relative_gap = options.bos_gap;
      bo.max_bits = std::max(bo.max_bits, row.cert.bits + 512);
      row.bos = bounds::bound_min_bos(current, task, bo);
      row.bos_bounded = true;
      row.bos_seconds = seconds_since(t1);
    }
    row.seconds = seconds_since(t0);
    row.cpu_seconds = cpu_seconds() - cpu0;
    row.model = current;
    if (progress) {
      std::ostringstream msg;
      msg << "P5 scale " << s << ": fit max " << fit_max.convert_to<double>() << ", certified at "
          << row.cert.bits << " bits";
      if (row.bounded) {
        msg << ", E <= " << row.bound.upper.convert_to<double>() << " (gap "
            << row.bound.relative_gap << ", " << row.bound.boxes << " boxes, " << row.bound_seconds
            << " s)";
      }
      if (row.bos_bounded) {
        msg << ", 1 - min BOS <= " << row.bos.deficit_upper.convert_to<double>() << " (gap "
            << row.bos.relative_gap << ", " << row.bos_seconds << " s)";
      }
      msg << ", " << row.seconds << " s";
      progress(msg.str());
    }
    path.rows.push_back(std::move(row));
  }
  path.last = std::move(current);
  return path;
}

std::string refined_path_file_name(const RefinedPathRow& row) {
  std::ostringstream name;
  name << "p5_refined_s" << row.scale << ".weights.json";
  return name.str();
}

WeightFile refined_path_weight_file(const RefinedPathRow& row, const RefinedPath& path,
                                    const Task& task, const std::string& start_model) {
  PrecisionScope scope(path.bits);
  const auto text = [](const Mpfi& x) { return format_interval(x, 6); };
  nlohmann::json meta = {{"study", "P5 refined scale path"},
                         {"start_model", start_model},
                         {"scale", row.scale},
                         {"refinement_bits", path.bits},
                         {"n", task.n},
                         {"L", task.L},
                         {"trigger_range", to_string(task.range)},
                         {"loss_at_check_set", text(row.cert.loss)},
                         {"bos_deficit_at_check_set", text(row.cert.deficit)},
                         {"certified_bits", row.cert.bits},
                         {"evidence", "CERTIFIED (MPFI), about exactly the entries of this file"}};
  if (row.bounded) {
    meta["worst_case_upper"] = format_up(row.bound.upper, 6);
    meta["worst_case_lower"] = format_down(row.bound.lower, 6);
  }
  if (row.bos_bounded) {
    meta["bos_deficit_upper"] = format_up(row.bos.deficit_upper, 6);
    meta["bos_deficit_lower"] = format_down(row.bos.deficit_lower, 6);
  }
  meta["refinement"] = row.evaluations > 0 || path.method == RefineMethod::kLevenbergMarquardt
                           ? "Levenberg-Marquardt"
                           : "projection onto the exact-trigger-row structure, then A -> s A";
  return weight_file_from_model(row.model, meta);
}

}  // namespace sinkcert::theorems::studies
