// SPDX-License-Identifier: MIT
#include "search/adversary.h"

#include <ceres/ceres.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "search/certified_forward.h"
#include "src/forward.h"
#include "src/forward_vjp.h"
#include "src/linf_error.h"
#include "src/scalar_traits.h"

namespace sinkcert::search {

namespace {

// Vertex starts are pulled this far into the box before the sin-reparametrized
// refinement: at c = +-1 exactly the u-gradient vanishes; at 0.98 it is
// cos(asin(0.98)) = 0.2 of the c-gradient, enough for L-BFGS to move.
constexpr double kVertexShrink = 0.98;
// The task's documented double in [0, 1): (w >> 11) * 2^-53.
double unit_double(std::mt19937_64& eng) { return static_cast<double>(eng() >> 11) * 0x1.0p-53; }

std::vector<int> triggers_of(const Task& task, const AdversaryOptions& o) {
  std::vector<int> t = o.triggers.empty() ? task.trigger_positions() : o.triggers;
  if (t.empty()) throw std::invalid_argument("the trigger-range convention has no position");
  for (int j : t) {
    if (j < 1 || j >= task.L) throw std::invalid_argument("trigger outside 1..L-1");
  }
  return t;
}

// Starts for trigger j: structured and random vertices, zero, random interior.
std::vector<Matrix<double>> make_starts(const Task& task, int j, const AdversaryOptions& o,
                                        std::mt19937_64& eng) {
  const int rows = task.L - 1, cols = task.content_dim();
  std::vector<Matrix<double>> starts;
  starts.push_back(Matrix<double>::Constant(rows, cols, 1.0));
  starts.push_back(Matrix<double>::Constant(rows, cols, -1.0));
  for (int sgn : {1, -1}) {
    Matrix<double> split(rows, cols), alternate(rows, cols);
    for (int k = 1; k <= rows; ++k) {
      split.row(k - 1).setConstant(k <= j ? sgn : -sgn);
      alternate.row(k - 1).setConstant(k % 2 == 0 ? sgn : -sgn);
    }
    starts.push_back(split);
    starts.push_back(alternate);
  }
  for (int v = 0; v < o.random_vertices_per_trigger; ++v) {
    starts.push_back(random_sign_vertex(task, v, eng));
  }
  starts.push_back(Matrix<double>::Zero(rows, cols));
  for (int v = 0; v < o.random_interior_per_trigger; ++v) {
    Matrix<double> C(rows, cols);
    for (int k = 0; k < rows; ++k)
      for (int c = 0; c < cols; ++c) C(k, c) = 2.0 * unit_double(eng) - 1.0;
    starts.push_back(C);
  }
  return starts;
}

// Smallest BOS mass over non-trigger rows, layers and heads of one input.
Witness score_bos(const Model<double>& model, const Task& task, int j, const Matrix<double>& C) {
  const auto r = forward(model, make_input<double>(task, j, C), true);
  Witness w{j, C, 2.0, 0, 0, 0};
  for (int l = 0; l < model.num_layers(); ++l) {
    for (int h = 0; h < model.num_heads(); ++h) {
      for (int i = 1; i < task.L; ++i) {
        if (i == j) continue;
        const double b = r.attention[l][h](i, 0);
        if (b < w.value) {
          w.value = b;
          w.position = i;
          w.coordinate = h;
          w.layer = l;
        }
      }
    }
  }
  return w;
}

// L-BFGS objective in u, c = sin(u): cost = -phi (error) or +phi (BOS mass).
class SinBoxObjective : public ceres::FirstOrderFunction {
 public:
  SinBoxObjective(const Model<double>& model, const Task& task, RefinedTerm term, long* evaluations)
      : model_(model), task_(task), term_(term), evaluations_(evaluations) {}
  int NumParameters() const override { return (task_.L - 1) * task_.content_dim(); }
  bool Evaluate(const double* u, double* cost, double* gradient) const override {
    const int rows = task_.L - 1, cols = task_.content_dim();
    Matrix<double> C(rows, cols);
    for (int k = 0; k < rows; ++k)
      for (int c = 0; c < cols; ++c) C(k, c) = std::sin(u[k * cols + c]);
    Matrix<double> G;
    const double phi = term_value_and_gradient(model_, task_, term_, C, gradient ? &G : nullptr);
    ++*evaluations_;
    const double direction = term_.kind == TermKind::kError ? -1.0 : 1.0;
    *cost = direction * phi;
    if (gradient) {
      // dcost/du = direction * dphi/dc * cos(u)
      for (int k = 0; k < rows; ++k)
        for (int c = 0; c < cols; ++c)
          gradient[k * cols + c] = direction * G(k, c) * std::cos(u[k * cols + c]);
    }
    return std::isfinite(*cost);
  }

 private:
  const Model<double>& model_;
  const Task& task_;
  RefinedTerm term_;
  long* evaluations_;
};

Matrix<double> refine(const Model<double>& model, const Task& task, const RefinedTerm& term,
                      const Matrix<double>& start, int max_iterations, long* evaluations) {
  const int rows = task.L - 1, cols = task.content_dim();
  std::vector<double> u(rows * cols);
  for (int k = 0; k < rows; ++k) {
    for (int c = 0; c < cols; ++c) {
      const double c0 = std::clamp(start(k, c), -kVertexShrink, kVertexShrink);
      u[k * cols + c] = std::asin(c0);
    }
  }
  ceres::GradientProblem problem(new SinBoxObjective(model, task, term, evaluations));
  ceres::GradientProblemSolver::Options opt;
  opt.max_num_iterations = max_iterations;
  opt.logging_type = ceres::SILENT;
  opt.function_tolerance = 1e-14;
  opt.gradient_tolerance = 1e-14;
  opt.parameter_tolerance = 1e-14;
  ceres::GradientProblemSolver::Summary summary;
  ceres::Solve(opt, problem, u.data(), &summary);
  Matrix<double> C(rows, cols);
  for (int k = 0; k < rows; ++k)
    for (int c = 0; c < cols; ++c) C(k, c) = std::sin(u[k * cols + c]);
  return C;
}

// The terms refined from witness w, ranked by how far their linearization
// at w can go over the box (single-layer models, where gradients are cheap):
//   key = phi + sum_p max(g_p (1 - c_p), g_p (-1 - c_p)),  g = dphi/dc,
// for phi = sigma (f_{i,d} - y_{i,d}) with both signs sigma (resp. -a_{i0});
// residual models rank by the value alone. The term worst at a start need
// not be the one with the largest maximum over the box.
std::vector<RefinedTerm> terms_for(const Model<double>& model, const Task& task, const Witness& w,
                                   bool bos, int count) {
  const Matrix<double> X = make_input<double>(task, w.trigger, w.content);
  const auto r = forward(model, X, bos);
  const bool linearize = model.kind == ModelKind::kSingleLayer;
  struct Cand {
    double key;
    RefinedTerm term;
  };
  std::vector<Cand> cands;
  // the gradient of the last error term with sigma = +1: the term with
  // sigma = -1 has exactly its negation (the reverse pass is linear in the
  // cotangent sigma, and round-to-nearest is odd: fl(-x) = -fl(x)), so the
  // two signs share one pass and rank exactly as with a pass each
  Matrix<double> last_g;
  RefinedTerm last_term;
  bool have_last = false;
  const auto add = [&](const RefinedTerm& t, double value) {
    const bool bos_term = t.kind == TermKind::kBosMass;
    double key = bos_term ? -value : value;
    if (linearize) {
      Matrix<double> g;
      if (!bos_term && have_last && last_term.position == t.position &&
          last_term.coordinate == t.coordinate && last_term.sign == -t.sign) {
        g = -last_g;
      } else {
        term_value_and_gradient(model, task, t, w.content, &g);
        last_g = g;
        last_term = t;
        have_last = true;
      }
      if (bos_term) g = -g;
      for (int k = 0; k < g.rows(); ++k)
        for (int c = 0; c < g.cols(); ++c) {
          const double cc = w.content(k, c);
          key += std::max(g(k, c) * (1 - cc), g(k, c) * (-1 - cc));
        }
    }
    cands.push_back({key, t});
  };
  if (bos) {
    for (int l = 0; l < model.num_layers(); ++l)
      for (int h = 0; h < model.num_heads(); ++h)
        for (int i = 1; i < task.L; ++i) {
          if (i == w.trigger) continue;
          add(RefinedTerm{TermKind::kBosMass, w.trigger, i, h, l, 1.0}, r.attention[l][h](i, 0));
        }
  } else {
    const Matrix<double> Y = make_target(X, w.trigger, target_kind_of(model.kind));
    for (int i = 0; i < task.L; ++i)
      for (int d = 0; d < task.n; ++d) {
        const double diff = r.output(i, d) - Y(i, d);
        if (linearize) {
          // both signs: the linearization may overtake the current sign
          add(RefinedTerm{TermKind::kError, w.trigger, i, d, 0, 1.0}, diff);
          add(RefinedTerm{TermKind::kError, w.trigger, i, d, 0, -1.0}, -diff);
        } else {
          add(RefinedTerm{TermKind::kError, w.trigger, i, d, 0, diff >= 0 ? 1.0 : -1.0},
              std::abs(diff));
        }
      }
  }
  const int keep = std::min<int>(std::max(count, 1), static_cast<int>(cands.size()));
  std::partial_sort(cands.begin(), cands.begin() + keep, cands.end(),
                    [](const Cand& a, const Cand& b) { return a.key > b.key; });
  std::vector<RefinedTerm> terms;
  for (int t = 0; t < keep; ++t) terms.push_back(cands[t].term);
  return terms;
}

AdversaryResult run(const Model<double>& model, const Task& task, const AdversaryOptions& o,
                    bool bos) {
  task.validate();
  if (model.n != task.n) throw std::invalid_argument("model and task dimensions differ");
  const auto score = [&](int j, const Matrix<double>& C) {
    return bos ? score_bos(model, task, j, C) : score_error(model, task, j, C);
  };
  // better(a, b): a is a stronger witness than b
  const auto better = [bos](const Witness& a, const Witness& b) {
    return bos ? a.value < b.value : a.value > b.value;
  };
  AdversaryResult result;
  result.evidence = Evidence::search(bos ? Bound::kUpper : Bound::kLower);
  std::mt19937_64 eng(o.seed);
  const std::vector<int> triggers = triggers_of(task, o);
  std::vector<Witness> to_refine, pool;
  for (int j : triggers) {
    std::vector<Witness> scored;
    for (const Matrix<double>& C : make_starts(task, j, o, eng)) {
      scored.push_back(score(j, C));
      ++result.evaluations;
    }
    std::stable_sort(scored.begin(), scored.end(), better);
    const int keep = std::min<int>(o.ascents_per_trigger, static_cast<int>(scored.size()));
    to_refine.insert(to_refine.end(), scored.begin(), scored.begin() + keep);
    pool.insert(pool.end(), scored.begin() + keep, scored.end());
    result.per_trigger.push_back(scored.front());
  }
  std::stable_sort(pool.begin(), pool.end(), better);
  const int extra = std::min<int>(o.extra_ascents, static_cast<int>(pool.size()));
  to_refine.insert(to_refine.end(), pool.begin(), pool.begin() + extra);
  for (const auto& [j, C] : o.warm_starts) {
    if (std::find(triggers.begin(), triggers.end(), j) == triggers.end()) continue;
    to_refine.push_back(score(j, C));
    ++result.evaluations;
  }
  // start k refined by rank k mod ranks: its candidates (one per term), the
  // evaluations and refinements it cost, packed as
  // [evaluations, refinements, then per candidate trigger, position,
  // coordinate, layer, value, content (row-major)]
  const RankGroup& group = ranks_or_local(o.ranks);
  const int rows = task.L - 1, cols = task.content_dim();
  std::vector<std::vector<double>> parts(to_refine.size());
  for (std::size_t k = 0; k < to_refine.size(); ++k) {
    if (!group.owns(static_cast<int>(k))) continue;
    const Witness& start = to_refine[k];
    long evaluations = 0;
    int refinements = 0;
    std::vector<double>& v = parts[k];
    v.assign(2, 0.0);
    for (const RefinedTerm& term : terms_for(model, task, start, bos, o.terms_per_start)) {
      const Matrix<double> C =
          refine(model, task, term, start.content, o.max_iterations, &evaluations);
      ++refinements;
      const Witness w = score(start.trigger, C);
      ++evaluations;
      const Witness& cand = better(w, start) ? w : start;
      v.insert(v.end(),
               {static_cast<double>(cand.trigger), static_cast<double>(cand.position),
                static_cast<double>(cand.coordinate), static_cast<double>(cand.layer), cand.value});
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) v.push_back(cand.content(r, c));
    }
    v[0] = static_cast<double>(evaluations);
    v[1] = refinements;
  }
  group.share(parts);
  // merged in start order on every rank
  for (const std::vector<double>& v : parts) {
    result.evaluations += static_cast<long>(v[0]);
    result.refinements += static_cast<int>(v[1]);
    for (std::size_t at = 2; at < v.size(); at += 5 + static_cast<std::size_t>(rows) * cols) {
      Witness cand;
      cand.trigger = static_cast<int>(v[at]);
      cand.position = static_cast<int>(v[at + 1]);
      cand.coordinate = static_cast<int>(v[at + 2]);
      cand.layer = static_cast<int>(v[at + 3]);
      cand.value = v[at + 4];
      cand.content.resize(rows, cols);
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) cand.content(r, c) = v[at + 5 + r * cols + c];
      const auto slot =
          std::find(triggers.begin(), triggers.end(), cand.trigger) - triggers.begin();
      if (better(cand, result.per_trigger[slot])) result.per_trigger[slot] = cand;
    }
  }
  // 5. certify the witnesses the search chose (in double): witness k by
  // rank k mod ranks, packed as [certified, bits, double_disagrees]
  const WitnessQuantity quantity = bos ? WitnessQuantity::kBosMass : WitnessQuantity::kError;
  std::vector<std::vector<double>> certified(result.per_trigger.size());
  for (std::size_t k = 0; k < result.per_trigger.size(); ++k) {
    if (!group.owns(static_cast<int>(k))) continue;
    Witness& w = result.per_trigger[k];
    if (!o.certify) {
      certified[k] = {w.certified, 0.0, 0.0};
      continue;
    }
    certify_witness(model, task, w, quantity);
    certified[k] = {w.certified, static_cast<double>(w.certified_bits),
                    w.double_disagrees ? 1.0 : 0.0};
  }
  group.share(certified);
  for (std::size_t k = 0; k < result.per_trigger.size(); ++k) {
    Witness& w = result.per_trigger[k];
    w.certified = certified[k][0];
    w.certified_bits = static_cast<int>(certified[k][1]);
    w.double_disagrees = certified[k][2] != 0;
  }
  result.best = result.per_trigger.front();
  for (const Witness& w : result.per_trigger) {
    if (better(w, result.best)) result.best = w;
  }
  return result;
}

// Rounds an MPFR value to a double in the given direction (MPFR_RNDD: the
// largest double <= x; MPFR_RNDU: the smallest double >= x).
double round_to_double(const Mpfr& x, mpfr_rnd_t direction) {
  return mpfr_get_d(x.backend().data(), direction);
}

}  // namespace

Matrix<double> random_sign_vertex(const Task& task, int v, std::mt19937_64& eng) {
  const int rows = task.L - 1, cols = task.content_dim();
  Matrix<double> C(rows, cols);
  if (v % 2 == 0) {
    // one sign per content coordinate, shared by all positions
    for (int c = 0; c < cols; ++c) C.col(c).setConstant(unit_double(eng) < 0.5 ? -1.0 : 1.0);
  } else {
    for (int k = 0; k < rows; ++k)
      for (int c = 0; c < cols; ++c) C(k, c) = unit_double(eng) < 0.5 ? -1.0 : 1.0;
  }
  return C;
}

Witness score_error(const Model<double>& model, const Task& task, int j, const Matrix<double>& C) {
  const Matrix<double> X = make_input<double>(task, j, C);
  const auto r = forward(model, X, false);
  const auto e = linf_error<double>(r.output, make_target(X, j, target_kind_of(model.kind)));
  return Witness{j, C, e.value, e.position, e.coordinate, 0};
}

Witness score_bos_mass(const Model<double>& model, const Task& task, int j,
                       const Matrix<double>& C) {
  return score_bos(model, task, j, C);
}

bool differ_in_first_digit(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return true;
  if (a == b) return false;
  const double big = std::max(std::abs(a), std::abs(b));
  if (std::isinf(big)) return true;
  // half a unit of the first significant digit of the larger magnitude
  const double unit = std::pow(10.0, std::floor(std::log10(big)));
  return std::abs(a - b) >= 0.5 * unit;
}

std::mutex& precision_mutex() {
  static std::mutex m;
  return m;
}

template <class T>
void certify_witness(const Model<T>& model, const Task& task, Witness& w,
                     WitnessQuantity quantity) {
  const std::lock_guard<std::mutex> lock(precision_mutex());
  const bool bos = quantity == WitnessQuantity::kBosMass;
  for (int bits = kCertifyStartBits;; bits += kCertifyStepBits) {
    PrecisionScope scope(bits);
    // the model's doubles and the content are binary rationals, converted
    // exactly; a Rational model's entries are enclosed
    const Model<Mpfi> m = model.template cast<Mpfi>();
    const Matrix<Mpfi> X = make_input<Mpfi>(task, w.trigger, matrix_cast<Mpfi>(w.content));
    // src/forward.h's pass with the softmax rows enclosed in O(L) each
    const auto r = certified_forward(m, X, bos);
    w.certified_bits = PrecisionScope::current_bits();
    if (bos) {
      // min over the terms of upper(a_i0): an upper bound on min a_i0 at X
      bool any = false;
      Mpfr upper;
      for (const auto& layer : r.attention) {
        for (const Matrix<Mpfi>& a : layer) {
          for (int i = 1; i < task.L; ++i) {
            if (i == w.trigger) continue;
            Mpfr u = bmp::upper(a(i, 0));
            if (bmp::isnan(u)) u = std::numeric_limits<Mpfr>::infinity();
            if (!any || u < upper) upper = u;
            any = true;
          }
        }
      }
      w.certified =
          any ? round_to_double(upper, MPFR_RNDU) : std::numeric_limits<double>::quiet_NaN();
      w.double_disagrees = any && differ_in_first_digit(w.value, w.certified);
      return;
    }
    // lower(e(X)); a NaN end certifies nothing beyond E >= 0
    const Matrix<Mpfi> Y = make_target(X, w.trigger, target_kind_of(model.kind));
    Mpfr lower = bmp::lower(linf_error(r.output, Y).value);
    if (bmp::isnan(lower) || lower < 0) lower = 0;
    w.certified = round_to_double(lower, MPFR_RNDD);
    w.double_disagrees = differ_in_first_digit(w.value, w.certified);
    if (lower > 0 || !(w.value > 0) || bits + kCertifyStepBits > kCertifyMaxBits) return;
  }
}

template void certify_witness(const Model<double>&, const Task&, Witness&, WitnessQuantity);
template void certify_witness(const Model<Rational>&, const Task&, Witness&, WitnessQuantity);

double term_value_and_gradient(const Model<double>& model, const Task& task,
                               const RefinedTerm& term, const Matrix<double>& C,
                               Matrix<double>* gradient) {
  const Matrix<double> X = make_input<double>(task, term.trigger, C);
  const bool bos = term.kind == TermKind::kBosMass;
  const int i = term.position, d = term.coordinate;
  // only row i of the output (error) or of layer `layer` (BOS mass) is read
  const ForwardTape<double> tape = forward_tape(model, X, i);
  const TargetKind target = target_kind_of(model.kind);
  // deeper models: phi read off the taped forward pass; single layer: phi as
  // the reverse pass applies its cotangents (ForwardGradient::applied), below
  const bool single_layer = model.kind == ModelKind::kSingleLayer;
  const auto taped_phi = [&] {
    return bos ? tape.attention(term.layer, d, i, 0)
               : term.sign * (tape.output(i, d) - make_target(X, term.trigger, target)(i, d));
  };
  if (!single_layer && !gradient) return taped_phi();
  // dphi/df: sigma e_{i,d} (error); dphi/da: e_{i,0} on one layer and head (BOS mass)
  Matrix<double> dY = Matrix<double>::Zero(task.L, task.n);
  std::vector<std::vector<Matrix<double>>> d_attention;
  if (bos) {
    for (int l = 0; l < model.num_layers(); ++l) {
      d_attention.emplace_back(model.num_heads(), Matrix<double>::Zero(task.L, task.L));
    }
    d_attention[term.layer][d](i, 0) = 1.0;
  } else {
    dY(i, d) = term.sign;
  }
  const ForwardGradient<double> pass =
      forward_vjp(model, tape, dY, bos ? &d_attention : nullptr, /*weights=*/false);
  Matrix<double> dX = pass.dX;
  // single layer: phi = sum_h sum_k a_ik (sigma M_h[d, :] . x_k) [- sigma y_{i,d}] or a_i0
  double phi = single_layer ? pass.applied[0] : taped_phi();
  if (!bos) {
    // minus dy_{i,d}/dX: y_i = x_i (residual target), and at the trigger
    // y_{j,d} += (1/j) sum_{k=1..j} x_k[d]
    if (target == TargetKind::kResidual) dX(i, d) -= term.sign;
    if (i == term.trigger) {
      double y = 0;
      for (int k = 1; k <= i; ++k) {
        y += X(k, d) / i;
        dX(k, d) -= term.sign / i;
      }
      if (single_layer) phi -= term.sign * y;
    }
  }
  if (gradient) *gradient = content_of(task, dX);
  return phi;
}

AdversaryResult maximize_error(const Model<double>& model, const Task& task,
                               const AdversaryOptions& options) {
  return run(model, task, options, false);
}

AdversaryResult minimize_bos_mass(const Model<double>& model, const Task& task,
                                  const AdversaryOptions& options) {
  return run(model, task, options, true);
}

}  // namespace sinkcert::search
