// SPDX-License-Identifier: MIT
#include "theorems/refined_path.h"

#include <chrono>
#include <sstream>
#include <stdexcept>

#include "search/least_squares_refiner.h"
#include "src/elapsed.h"
#include "src/table_writer.h"

namespace sinkcert::theorems {

namespace {

using Inputs = std::vector<std::pair<int, Matrix<double>>>;

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
  Inputs out = vertex_witnesses(task);
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
    out = vertex_witnesses(task);
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

}  // namespace

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
  PrecisionScope scope(options.bits);
  path.bits = PrecisionScope::current_bits();
  Model<Mpfr> current = model.cast<Mpfr>();
  double previous = 1.0;
  for (double s : options.scales) {
    const auto t0 = std::chrono::steady_clock::now();
    // A <- (s_k / s_{k-1}) A_{k-1}
    current.layers[0][0].A *= Mpfr(s) / Mpfr(previous);
    previous = s;
    const search::RefineResult<Mpfr> refined =
        search::refine_least_squares(current, task, fit, {options.evaluations});
    current = refined.model;
    RefinedPathRow row;
    row.scale = s;
    row.evaluations = refined.evaluations;
    row.max_abs_a = current.layers[0][0].A.cwiseAbs().maxCoeff().convert_to<double>();
    row.fit_max = refined.final_max;
    row.cert = certify_witnesses(current, task, check, options.certify);
    if (options.bound_boxes > 0) {
      WorstCaseOptions bo;
      bo.bits = row.cert.bits + 64;
      bo.max_boxes = options.bound_boxes;
      bo.max_seconds = kNoTimeLimit;
      bo.relative_gap = options.bound_gap;
      row.bound = bound_worst_case(current, task, bo);
      row.bounded = true;
    }
    row.seconds = seconds_since(t0);
    row.model = current;
    if (progress) {
      std::ostringstream msg;
      msg << "P5 scale " << s << ": fit max " << refined.final_max.convert_to<double>()
          << ", certified at " << row.cert.bits << " bits";
      if (row.bounded) {
        msg << ", E <= " << row.bound.upper.convert_to<double>() << " (gap "
            << row.bound.relative_gap << ", " << row.bound.boxes << " boxes)";
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
  return weight_file_from_model(row.model, meta);
}

}  // namespace sinkcert::theorems
