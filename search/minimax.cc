// SPDX-License-Identifier: MIT
#include "search/minimax.h"

#include <ceres/ceres.h>
#include <ceres/dynamic_autodiff_cost_function.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>

#include "search/compressed_rows_cost.h"
#include "search/linf_surrogate.h"
#include "search/minimax_checkpoint.h"
#include "search/normal_equations_cost.h"
#include "search/row1_deficit.h"
#include "src/forward.h"
#include "src/forward_vjp.h"
#include "src/parameter_layout.h"

namespace sinkcert::search {

namespace {

// A witness joins the active set if its error is at least this fraction of
// the round's worst case: weaker witnesses only enlarge the Jacobian.
constexpr double kAdmitFraction = 0.25;
// A round whose worst case exceeds this multiple of the best so far is
// rejected: the step fitted the active set at the expense of the worst case.
// Least squares (the path) tolerates a temporary rise, since its rounds
// reshape the model on the way to a sink; the Lawson minimax (the frontier)
// starts near its answer and only accepts steps that keep the worst case
// within kLawsonRejectFactor of the best.
constexpr double kRejectFactor = 3.0;
constexpr double kLawsonRejectFactor = 1.1;
// Trust-region radius divisor after a rejected round.
constexpr double kRadiusShrink = 8.0;
// Lawson rounds have converged when the weighted objective's relative change
// over a round is below this (and the adversary gap is within tolerance).
constexpr double kLawsonObjectiveTolerance = 1e-3;
// Growth of the constraint penalty while violated, and its cap (its first
// weight is MinimaxOptions::initial_penalty).
constexpr double kPenaltyGrowth = 10.0;
constexpr double kMaxPenalty = 1e8;
// LM starts with this radius (Ceres' default 1e4 lets the first step run far
// from the active set).
constexpr double kInitialRadius = 1e-2;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Residuals of row i of one input: r_d = sqrt(w_d) (f(X)_{i,d} - y_{i,d}),
// parameters A and M (row-major n x n, src/parameter_layout.h), and the gate
// G for gated attention. Jacobian row d: the reverse pass (src/forward_vjp.h)
// with cotangent sqrt(w_d) e_d on o_i, all d at once
// (head_row_output_jacobian, W.row(d) = w_d). Gated, o_d = g_d p_d with
// g = sigma(G x_i), p = M V_i:
//   dr_d/dA = sqrt(w_d) g_d x_i w_d^T,  dr_d/dM = sqrt(w_d) g_d e_d V_i^T,
//   dr_d/dG = sqrt(w_d) p_d g_d (1 - g_d) e_d x_i^T
// (g_d = 1 and no G block ungated). The minimax solves the ungated rows
// through one compressed block (search/normal_equations_cost.h); this
// per-row form is the reference its Jacobian is tested and timed by, and the
// gated kind's rows (compressed by search/compressed_rows_cost.h).
class RowCost : public ceres::CostFunction {
 public:
  RowCost(const Matrix<double>* X, const Matrix<double>* Y, int i, const double* weights,
          AttentionKind kind)
      : X_(X), Y_(Y), i_(i), w_(weights), kind_(kind), n_(static_cast<int>(X->cols())) {
    set_num_residuals(n_);
    const int blocks = kind == AttentionKind::kGated ? 3 : 2;
    for (int b = 0; b < blocks; ++b) mutable_parameter_block_sizes()->push_back(n_ * n_);
  }

  bool Evaluate(double const* const* p, double* r, double** J) const override {
    const int n = n_, i = i_;
    const bool gated = kind_ == AttentionKind::kGated;
    const auto A = row_major_view(p[0], n);
    const auto M = row_major_view(p[1], n);
    const RowResidual f =
        row_residual(kind_, A, M, ResidualRow{X_, Y_, i, w_}, gated ? p[2] : nullptr);
    for (int d = 0; d < n; ++d) r[d] = f.r(d);
    if (!J || (!J[0] && !J[1] && !(gated && J[2]))) return true;
    // the ungated Jacobian of p = M V_i (gated attention has softmax weights;
    // the gate's factor g_d is applied below)
    const Matrix<double> W = J[0]
                                 ? head_row_output_jacobian(gated ? AttentionKind::kSoftmax : kind_,
                                                            M, *X_, f.row, &f.out)
                                 : Matrix<double>();
    if (J[1]) std::fill(J[1], J[1] + n * n * n, 0.0);
    if (gated && J[2]) std::fill(J[2], J[2] + n * n * n, 0.0);
    for (int d = 0; d < n; ++d) {
      const double sw = std::sqrt(w_[d]), g = gated ? f.gate(d) : 1.0;
      if (J[0]) pack_outer_row_major((sw * g) * X_->row(i), W.row(d), J[0] + d * n * n);
      // row d of dr_d/dM (row-major: offset d n in the block)
      if (J[1]) pack_row_major((sw * g) * f.mixed.transpose(), J[1] + d * n * n + d * n);
      // row d of dr_d/dG
      if (gated && J[2]) {
        pack_row_major((sw * f.out(d) * g * (1 - g)) * X_->row(i), J[2] + d * n * n + d * n);
      }
    }
    return true;
  }

 private:
  const Matrix<double>* X_;
  const Matrix<double>* Y_;
  int i_;
  const double* w_;
  AttentionKind kind_;
  int n_;
};

// Residuals of row i of one input for a model with several heads or layers
// (docs/definitions.md, Definitions 2; target by model kind): r_d = sqrt(w_d) (f(X)_{i,d}
// - y_{i,d}), parameters the 2 H blocks of src/parameter_layout.h
// (head_blocks: A then M of every head, layer by layer). Jacobian row d: the
// general reverse pass (forward_vjp) with cotangent sqrt(w_d) e_{i,d} on
// f(X), all d in one batched pass (forward_vjp_batch), on a tape of the
// rows 0..i that row i reads (forward_tape's only_row); it yields dr_d/dA
// and dr_d/dM of every head at once.
class DeepRowCost : public ceres::CostFunction {
 public:
  DeepRowCost(const Matrix<double>* X, const Matrix<double>* Y, int i, const double* weights,
              const Model<double>* shape)
      : X_(X), Y_(Y), i_(i), w_(weights), shape_(shape), n_(static_cast<int>(X->cols())) {
    set_num_residuals(n_);
    for (int b = 0; b < 2 * head_count(*shape); ++b) {
      mutable_parameter_block_sizes()->push_back(n_ * n_);
    }
  }

  bool Evaluate(double const* const* p, double* r, double** J) const override {
    const int n = n_, i = i_, L = static_cast<int>(X_->rows());
    Model<double> m = *shape_;
    unpack_head_blocks(p, m);
    const ForwardTape<double> tape = forward_tape(m, *X_, i);
    for (int d = 0; d < n; ++d) r[d] = std::sqrt(w_[d]) * (tape.output(i, d) - (*Y_)(i, d));
    if (!J) return true;
    const int blocks = 2 * head_count(m);
    bool any = false;
    for (int b = 0; b < blocks; ++b) any = any || J[b];
    if (!any) return true;
    // cotangents sqrt(w_d) e_{i,d} on f(X), d = 0..n-1, in one batched pass
    std::vector<Matrix<double>> dY(n, Matrix<double>::Zero(L, n));
    for (int d = 0; d < n; ++d) dY[d](i, d) = std::sqrt(w_[d]);
    const std::vector<ForwardGradient<double>> grads = forward_vjp_batch(m, tape, dY);
    for (int d = 0; d < n; ++d) {
      int t = 0;
      for (const auto& layer : grads[d].dheads) {
        for (const Head<double>& dh : layer) {
          if (J[2 * t]) pack_row_major(dh.A, J[2 * t] + d * n * n);
          if (J[2 * t + 1]) pack_row_major(dh.M, J[2 * t + 1] + d * n * n);
          ++t;
        }
      }
    }
    return true;
  }

 private:
  const Matrix<double>* X_;
  const Matrix<double>* Y_;
  int i_;
  const double* w_;
  const Model<double>* shape_;  // kind, attention and shape (its weights are not read)
  int n_;
};

// The same residuals as a templated functor, for the Jet timing.
struct RowFunctor {
  const Matrix<double>* X;
  const Matrix<double>* Y;
  int i;
  AttentionKind kind;
  template <class T>
  bool operator()(T const* const* p, T* r) const {
    const int n = static_cast<int>(X->cols());
    const Head<T> head{unpack_row_major(p[0], n), unpack_row_major(p[1], n)};
    const Matrix<T> XT = X->unaryExpr([](double x) { return T(x); });
    const HeadRow<T> row = head_row_forward(kind, head, XT, i);
    const Vector<T> out = matrix_product(head.M, row.mixed);
    for (int d = 0; d < n; ++d) r[d] = out(d) - T((*Y)(i, d));
    return true;
  }
};

// rho * max(0, mean BOS over the probe set - ceiling); parameter A.
// dphi/dA by the reverse pass with cotangent 1 on each a_i0 (in closed form
// for the softmax kinds: bos_mass_row_vjp).
class BosCeilingCost : public ceres::CostFunction {
 public:
  BosCeilingCost(const ProbeSet* probes, double ceiling, double rho, int n, AttentionKind kind)
      : probes_(probes), ceiling_(ceiling), rho_(rho), n_(n), kind_(kind) {
    set_num_residuals(1);
    mutable_parameter_block_sizes()->push_back(n * n);
  }
  bool Evaluate(double const* const* p, double* r, double** J) const override {
    const int n = n_, L = probes_->task.L;
    // only A enters the attention weights
    const auto A = row_major_view(p[0], n);
    const bool jacobian = J && J[0];
    const bool closed_form =
        kind_ == AttentionKind::kSoftmax || kind_ == AttentionKind::kSoftmaxOffByOne;
    // the general pass reads A as a Head (the closed form reads the rows only)
    const Head<double> head = closed_form ? Head<double>{} : Head<double>{A, Matrix<double>()};
    Matrix<double> grad = Matrix<double>::Zero(n, n);
    double sum = 0;
    long count = 0;
    std::vector<double> z;
    for (const Sample& smp : probes_->samples) {
      for (int i = 1; i < L; ++i) {
        if (i == smp.trigger) continue;
        const HeadRow<double> row = head_row_forward(kind_, A, smp.X, i);
        sum += row.a[0];
        ++count;
        if (!jacobian) continue;
        if (closed_form) {
          bos_mass_row_vjp(kind_, smp.X, row, grad);
        } else {
          // dphi/da_i0 = 1 (z_k = 0 beyond)
          z.assign(i + 1, 0.0);
          z[0] = 1.0;
          head_row_vjp(kind_, head, smp.X, row, nullptr, z.data(), nullptr, &grad, nullptr);
        }
      }
    }
    const double mean = sum / count;
    const bool active = mean > ceiling_;
    r[0] = active ? rho_ * (mean - ceiling_) : 0.0;
    if (jacobian) {
      pack_row_major(grad, J[0]);
      for (int t = 0; t < n * n; ++t) J[0][t] = active ? rho_ * J[0][t] / count : 0.0;
    }
    return true;
  }

 private:
  const ProbeSet* probes_;
  double ceiling_, rho_;
  int n_;
  AttentionKind kind_;
};

// Several heads or layers: rho * max(0, b^{l,h}_i - ceiling) for every
// capped head (l, h) and position i >= 1, b^{l,h}_i = (1 / N_i) sum over the
// probes with trigger != i of a^{l,h}_{i0}; parameters the 2 H blocks of
// head_blocks. Jacobian row of a violated residual: (rho / N_i) sum over
// those probes of forward_vjp with cotangent 1 on a^{l,h}_{i0} (dY = 0); it
// reaches (A, M) of every head of the layers up to l.
class DeepBosCeilingCost : public ceres::CostFunction {
 public:
  DeepBosCeilingCost(const ProbeSet* probes, double ceiling, double rho, const Model<double>* shape,
                     std::optional<std::pair<int, int>> head)
      : probes_(probes), ceiling_(ceiling), rho_(rho), shape_(shape), n_(shape->n) {
    const int L = probes->task.L;
    for (int l = 0; l < shape->num_layers(); ++l) {
      for (int h = 0; h < shape->num_heads(); ++h) {
        if (head && *head != std::pair{l, h}) continue;
        for (int i = 1; i < L; ++i) {
          long count = 0;
          for (const Sample& smp : probes->samples) count += smp.trigger != i;
          if (count > 0) caps_.push_back(Cap{l, h, i, count});
        }
      }
    }
    set_num_residuals(static_cast<int>(caps_.size()));
    for (int b = 0; b < 2 * head_count(*shape); ++b)
      mutable_parameter_block_sizes()->push_back(n_ * n_);
  }

  bool Evaluate(double const* const* p, double* r, double** J) const override {
    const int n = n_, L = probes_->task.L, caps = static_cast<int>(caps_.size());
    const int blocks = 2 * head_count(*shape_);
    Model<double> m = *shape_;
    unpack_head_blocks(p, m);
    std::vector<ForwardTape<double>> tapes;
    std::vector<double> sum(caps, 0.0);
    for (const Sample& smp : probes_->samples) {
      tapes.push_back(forward_tape(m, smp.X));
      for (int c = 0; c < caps; ++c) {
        const Cap& cap = caps_[c];
        if (smp.trigger != cap.i) sum[c] += tapes.back().attention(cap.l, cap.h, cap.i, 0);
      }
    }
    std::vector<bool> active(caps);
    bool any_active = false;
    for (int c = 0; c < caps; ++c) {
      // b = sum / N_i; r = rho max(0, b - ceiling)
      const double b = sum[c] / caps_[c].count;
      active[c] = b > ceiling_;
      any_active = any_active || active[c];
      r[c] = active[c] ? rho_ * (b - ceiling_) : 0.0;
    }
    if (!J) return true;
    for (int b = 0; b < blocks; ++b) {
      if (J[b]) std::fill(J[b], J[b] + static_cast<std::size_t>(caps) * n * n, 0.0);
    }
    if (!any_active) return true;
    const Matrix<double> zero_dY = Matrix<double>::Zero(L, n);
    std::vector<std::vector<Matrix<double>>> d_attention(
        m.num_layers(), std::vector<Matrix<double>>(m.num_heads(), Matrix<double>::Zero(L, L)));
    std::vector<double> packed(static_cast<std::size_t>(n) * n);
    for (std::size_t s = 0; s < tapes.size(); ++s) {
      for (int c = 0; c < caps; ++c) {
        const Cap& cap = caps_[c];
        if (!active[c] || probes_->samples[s].trigger == cap.i) continue;
        // cotangent 1 on a^{l,h}_{i0}
        d_attention[cap.l][cap.h](cap.i, 0) = 1.0;
        const ForwardGradient<double> g = forward_vjp(m, tapes[s], zero_dY, &d_attention);
        d_attention[cap.l][cap.h](cap.i, 0) = 0.0;
        // row c of every block += (rho / N_i) d a^{l,h}_{i0} / d block
        const double scale = rho_ / caps_[c].count;
        int t = 0;
        for (const auto& layer : g.dheads) {
          for (const Head<double>& dh : layer) {
            for (int half = 0; half < 2; ++half) {
              double* row = J[2 * t + half];
              if (!row) continue;
              pack_row_major(half == 0 ? dh.A : dh.M, packed.data());
              row += static_cast<std::size_t>(c) * n * n;
              for (int e = 0; e < n * n; ++e) row[e] += scale * packed[e];
            }
            ++t;
          }
        }
      }
    }
    return true;
  }

 private:
  struct Cap {
    int l, h, i;
    long count;  // N_i, probes whose trigger is not i
  };
  const ProbeSet* probes_;
  double ceiling_, rho_;
  const Model<double>* shape_;  // kind, attention and shape (its weights are not read)
  int n_;
  std::vector<Cap> caps_;
};

struct ActiveInput {
  int trigger = 0;
  bool initial = false;
  Matrix<double> content;
  Matrix<double> X, Y;
  std::vector<double> w;  // L * n, row-major (i, d)
};

ActiveInput make_active(const Task& task, int j, const Matrix<double>& C, bool initial,
                        TargetKind target) {
  ActiveInput a;
  a.trigger = j;
  a.initial = initial;
  a.content = C;
  a.X = make_input<double>(task, j, C);
  a.Y = make_target(a.X, j, target);
  a.w.assign(task.L * task.n, kNewWeight);
  return a;
}

// The model of the parameter blocks: single-head as single_head_model,
// otherwise `shape` with its heads replaced.
Model<double> to_model(const Model<double>& shape, bool single,
                       const std::vector<std::vector<double>>& P) {
  if (single) {
    Model<double> m =
        single_head_model<double>(shape.attention, unpack_row_major(P[0].data(), shape.n),
                                  unpack_row_major(P[1].data(), shape.n));
    if (shape.attention == AttentionKind::kGated) {
      m.layers[0][0].G = unpack_row_major(P[2].data(), shape.n);
    }
    return m;
  }
  Model<double> m = shape;
  std::vector<const double*> ptrs;
  for (const auto& b : P) ptrs.push_back(b.data());
  unpack_head_blocks(ptrs.data(), m);
  return m;
}

// The Ceres parameter blocks of a model: head_blocks (A then M of every
// head), and for single-layer gated attention A, M, then the gate G.
std::vector<std::vector<double>> parameter_blocks(const Model<double>& m) {
  if (m.attention != AttentionKind::kGated) return head_blocks(m);
  const Head<double>& h = m.layers.at(0).at(0);
  if (m.layers.size() != 1 || m.layers[0].size() != 1 || h.G.rows() != m.n || h.G.cols() != m.n) {
    throw std::invalid_argument(
        "gated attention: expected a single-layer single-head model with an n x n gate");
  }
  std::vector<std::vector<double>> P;
  for (const Matrix<double>* B : {&h.A, &h.M, &h.G}) {
    P.emplace_back(static_cast<std::size_t>(m.n) * m.n);
    pack_row_major(*B, P.back().data());
  }
  return P;
}

// Whether the model is the single-layer single-head case (the rank-one
// A-block path, RowCost).
bool single_head(const Model<double>& m) {
  return m.kind == ModelKind::kSingleLayer && m.num_layers() == 1 && m.num_heads() == 1;
}

double max_abs_score_entry(const Model<double>& m) {
  double out = 0;
  for (const auto& layer : m.layers)
    for (const Head<double>& h : layer) out = std::max(out, h.A.cwiseAbs().maxCoeff());
  return out;
}

// Unweighted residuals of every active input, row-major (i, d) per input.
std::vector<std::vector<double>> active_residuals(const Model<double>& m,
                                                  const std::vector<ActiveInput>& set) {
  std::vector<std::vector<double>> out;
  for (const ActiveInput& a : set) {
    const Matrix<double> F = forward(m, a.X, false).output;
    std::vector<double> r(F.size());
    for (int i = 0; i < F.rows(); ++i)
      for (int d = 0; d < F.cols(); ++d) r[i * F.cols() + d] = F(i, d) - a.Y(i, d);
    out.push_back(std::move(r));
  }
  return out;
}

double max_abs(const std::vector<std::vector<double>>& rs) {
  double m = 0;
  for (const auto& r : rs)
    for (double v : r) m = std::max(m, std::abs(v));
  return m;
}

}  // namespace

std::string to_string(Surrogate s) { return s == Surrogate::kLawson ? "lawson" : "least-squares"; }

double single_head_minimax_bytes(const Task& task, int max_per_trigger) {
  const double n = task.n, L = task.L, P = 2 * n * n;
  // 8 (6.5 P^2 + 2 P + chunk n^3 + 3 mpt (L - 1) L n) (header)
  return 8 * (6.5 * P * P + 2 * P + kNormalEquationsChunk * n * n * n +
              3.0 * max_per_trigger * (L - 1) * L * n);
}

double deep_minimax_bytes(const Task& task, int layers_heads) {
  const double P = 2.0 * task.n * task.n * layers_heads;
  // 8 (9 P^2 + 4 (256 + L n) P) (header)
  return 8.0 * (9 * P * P + 4 * (256.0 + task.L * task.n) * P);
}

double mean_probe_bos(const Model<double>& model, const ProbeSet& probes, int layer, int head) {
  double sum = 0;
  long count = 0;
  for (const Sample& s : probes.samples) {
    const auto r = forward(model, s.X, true);
    for (int i = 1; i < probes.task.L; ++i) {
      if (i == s.trigger) continue;
      sum += r.attention[layer][head](i, 0);
      ++count;
    }
  }
  return count ? sum / count : 0.0;
}

double max_head_mean_probe_bos(const Model<double>& model, const ProbeSet& probes) {
  std::vector<std::vector<double>> sum(model.num_layers(), std::vector<double>(model.num_heads()));
  long count = 0;
  for (const Sample& s : probes.samples) {
    const auto r = forward(model, s.X, true);
    for (int i = 1; i < probes.task.L; ++i) {
      if (i == s.trigger) continue;
      for (int l = 0; l < model.num_layers(); ++l)
        for (int h = 0; h < model.num_heads(); ++h) sum[l][h] += r.attention[l][h](i, 0);
      ++count;
    }
  }
  double best = 0;
  for (const auto& layer : sum)
    for (double v : layer) best = std::max(best, count ? v / count : 0.0);
  return best;
}

double max_position_mean_probe_bos(const Model<double>& model, const ProbeSet& probes,
                                   std::optional<std::pair<int, int>> head) {
  double best = 0;
  for (const auto& layer : bos_statistics(model, probes).heads) {
    for (const HeadBosStatistics& hs : layer) {
      if (head && *head != std::pair{hs.layer, hs.head}) continue;
      for (const BosSummary& b : hs.per_position) {
        if (b.count > 0) best = std::max(best, b.mean);
      }
    }
  }
  return best;
}

namespace {

// The sizes and options that change a run's iterates, as one text: a
// checkpoint continues only the run that wrote it. (Budgets, threads and
// ranks change no iterate and are left out.)
std::string checkpoint_identity(const Model<double>& init, const Task& task,
                                const MinimaxOptions& o, const std::vector<int>& triggers) {
  std::ostringstream s;
  s.precision(17);
  s << "n=" << task.n << " L=" << task.L << " layers=" << init.num_layers()
    << " heads=" << init.num_heads() << " attention=" << to_string(init.attention)
    << " kind=" << to_string(init.kind) << " seed=" << o.seed
    << " surrogate=" << to_string(o.surrogate) << " lm_iterations=" << o.lm_iterations
    << " initial_per_trigger=" << o.initial_per_trigger << " max_per_trigger=" << o.max_per_trigger
    << " fit_m_first=" << o.fit_m_first << " adversary_seed=" << o.adversary.seed
    << " solver=" << (o.deep_solver == DeepLinearSolver::kDenseNormal ? "dense" : "cg")
    << " compressed=" << o.compressed_rows
    << " dense_kernels=" << to_string(resolve_dense_isa(o.dense_isa)) << " ceiling=";
  if (o.bos_ceiling) {
    s << *o.bos_ceiling;
  } else {
    s << "none";
  }
  if (o.row1_deficit_floor) s << " row1_floor=" << *o.row1_deficit_floor;
  if (o.lm_min_diagonal != 1e-6) s << " lm_min_diagonal=" << o.lm_min_diagonal;
  if (o.initial_penalty != 10.0) s << " initial_penalty=" << o.initial_penalty;
  if (o.lawson_reject_factor) s << " lawson_reject_factor=" << *o.lawson_reject_factor;
  if (o.bos_ceiling_head)
    s << " ceiling_head=" << o.bos_ceiling_head->first << "," << o.bos_ceiling_head->second;
  s << " frozen_m=" << o.frozen_m.size() << " triggers=";
  for (int j : triggers) s << j << ",";
  return s.str();
}

}  // namespace

MinimaxResult minimax(const Model<double>& init, const Task& task, const MinimaxOptions& o,
                      const MinimaxProgress& progress) {
  task.validate();
  const bool single = single_head(init);
  if (init.num_layers() < 1 || init.num_heads() < 1) {
    throw std::invalid_argument("the minimax needs a model with at least one layer and head");
  }
  for (const auto& layer : init.layers) {
    if (static_cast<int>(layer.size()) != init.num_heads()) {
      throw std::invalid_argument("the minimax needs the same number of heads in every layer");
    }
  }
  if (!single && !o.frozen_m.empty()) {
    throw std::invalid_argument("frozen M entries cover single-layer single-head models only");
  }
  if (o.bos_ceiling_head) {
    const auto [l, h] = *o.bos_ceiling_head;
    if (l < 0 || l >= init.num_layers() || h < 0 || h >= init.num_heads() ||
        (single && (l != 0 || h != 0))) {
      throw std::invalid_argument("bos_ceiling_head: expected a (layer, head) of the model");
    }
    if (!o.bos_ceiling) throw std::invalid_argument("bos_ceiling_head needs a bos_ceiling");
  }
  if (init.n != task.n) throw std::invalid_argument("model and task dimensions differ");
  const bool gated = init.attention == AttentionKind::kGated;
  if (gated && !single) {
    // the deep parameter blocks are A and M of every head (src/parameter_layout.h)
    throw std::invalid_argument(
        "the minimax covers gated attention in single-layer single-head models only (the "
        "parameter layout of several heads has no gate block)");
  }
  if (o.bos_ceiling && !o.probes) throw std::invalid_argument("a BOS ceiling needs a probe set");
  if (o.row1_deficit_floor && (!single || init.attention != AttentionKind::kSoftmax)) {
    throw std::invalid_argument("a row-1 floor needs a single-layer single-head softmax model");
  }
  // the floor's fixed rule (its size is checked here: k <= kRow1QuadratureMaxDim)
  const std::optional<Row1Quadrature> row1_rule =
      o.row1_deficit_floor ? std::optional<Row1Quadrature>(row1_quadrature(task.content_dim()))
                           : std::nullopt;
  const auto row1_of = [&](const Model<double>& m) {
    return row1_mean_deficit(m.layers[0][0].A, *row1_rule);
  };
  // the constraints together: the ceiling (if any) and the floor (if any)
  const auto meets_floor = [&](const Model<double>& m) {
    return !o.row1_deficit_floor || row1_of(m) >= *o.row1_deficit_floor;
  };
  const auto t0 = std::chrono::steady_clock::now();
  const int n = task.n;
  const AttentionKind kind = init.attention;
  const TargetKind target = target_kind_of(init.kind);
  // P[2 t] = A, P[2 t + 1] = M of head t (src/parameter_layout.h,
  // head_blocks); single-layer gated: A, M, then the gate G
  std::vector<std::vector<double>> P = parameter_blocks(init);
  std::vector<double*> blocks;
  const auto block_pointers = [&] {
    blocks.clear();
    for (auto& b : P) blocks.push_back(b.data());
  };

  // 1. initial active set
  std::mt19937_64 eng(o.seed);
  std::vector<ActiveInput> set;
  const std::vector<int> triggers =
      o.adversary.triggers.empty() ? task.trigger_positions() : o.adversary.triggers;
  if (triggers.empty()) throw std::invalid_argument("the trigger-range convention has no position");
  for (int j : triggers) {
    for (int s = 0; s < o.initial_per_trigger; ++s) {
      Matrix<double> C(task.L - 1, task.content_dim());
      for (int k = 0; k < C.rows(); ++k)
        for (int c = 0; c < C.cols(); ++c) {
          C(k, c) = s == 0 ? 1.0 : s == 1 ? -1.0 : ((eng() >> 63) ? 1.0 : -1.0);
        }
      set.push_back(make_active(task, j, C, true, target));
    }
  }

  MinimaxResult result;
  AdversaryOptions adv = o.adversary;
  if (!adv.ranks) adv.ranks = o.ranks;
  // the ceiling's statistic (single: the pooled mean; otherwise per position)
  const auto ceiling_statistic = [&](const Model<double>& m) {
    return single ? mean_probe_bos(m, *o.probes)
                  : max_position_mean_probe_bos(m, *o.probes, o.bos_ceiling_head);
  };
  const std::string identity = checkpoint_identity(init, task, o, triggers);
  const std::string init_hash = parameter_hash(P);
  const std::optional<MinimaxCheckpoint> resumed =
      o.resume && !o.checkpoint.empty() && std::ifstream(o.checkpoint).good()
          ? std::optional<MinimaxCheckpoint>(read_checkpoint(o.checkpoint))
          : std::nullopt;
  Model<double> current = to_model(init, single, P);
  AdversaryResult worst;
  // best_worst: the best worst case so far (trust control); best_feasible:
  // the best among models meeting the BOS ceiling (the result)
  double best_worst = 0, best_feasible = 0;
  double radius = kInitialRadius, rho = o.initial_penalty, prev_objective = -1;
  double elapsed_before = 0;  // seconds of the run before it was resumed
  int first_round = 1;
  if (resumed) {
    // the state after round resumed->round, as the uninterrupted run held it
    const MinimaxCheckpoint& c = *resumed;
    if (c.identity != identity) {
      throw std::invalid_argument("checkpoint " + o.checkpoint +
                                  ": field identity: expected this run's \"" + identity +
                                  "\", got \"" + c.identity + "\"");
    }
    if (c.init_hash != init_hash) {
      throw std::invalid_argument("checkpoint " + o.checkpoint + ": field init_hash: expected " +
                                  init_hash + " (this run's init), got " + c.init_hash);
    }
    if (c.theta.size() != P.size() || c.best_theta.size() != P.size()) {
      throw std::invalid_argument("checkpoint " + o.checkpoint + ": field theta: expected " +
                                  std::to_string(P.size()) + " parameter blocks");
    }
    for (std::size_t b = 0; b < P.size(); ++b) {
      if (c.theta[b].size() != P[b].size() || c.best_theta[b].size() != P[b].size()) {
        throw std::invalid_argument("checkpoint " + o.checkpoint + ": field theta[" +
                                    std::to_string(b) + "]: expected " +
                                    std::to_string(P[b].size()) + " entries");
      }
    }
    P = c.theta;
    set.clear();
    for (const MinimaxCheckpoint::Input& a : c.active) {
      set.push_back(make_active(task, a.trigger, a.content, a.initial, target));
      if (a.w.size() != set.back().w.size()) {
        throw std::invalid_argument("checkpoint " + o.checkpoint +
                                    ": field active[].w: expected L n = " +
                                    std::to_string(set.back().w.size()) + " weights");
      }
      set.back().w = a.w;
    }
    current = to_model(init, single, P);
    result.model = to_model(init, single, c.best_theta);
    result.worst = c.best_witness;
    worst.per_trigger = c.warm;
    result.history = c.history;
    result.jacobian_evaluations = c.jacobian_evaluations;
    best_worst = c.best_worst;
    best_feasible = c.best_feasible;
    radius = c.radius;
    rho = c.rho;
    prev_objective = c.prev_objective;
    elapsed_before = c.elapsed;
    first_round = c.round + 1;
  } else {
    worst = maximize_error(current, task, adv);
    result.model = current;
    result.worst = worst.best;
    best_worst = worst.best.value;
    const bool init_feasible =
        (!o.bos_ceiling || ceiling_statistic(current) <= *o.bos_ceiling) && meets_floor(current);
    best_feasible = init_feasible ? best_worst : std::numeric_limits<double>::infinity();
  }
  std::vector<std::vector<double>> saved = P;
  result.stop_reason = "max rounds";

  for (int round = first_round; round <= o.max_rounds; ++round) {
    MinimaxRecord rec;
    rec.round = round;
    rec.event = "lm";
    // 2. inner solve
    ceres::Problem::Options popt;
    ceres::Problem problem(popt);
    block_pointers();
    if (single && !gated && o.compressed_rows && !set.empty()) {
      // every row of every input in one compressed block (its cost is that
      // of the rows' least squares, its steps the same)
      std::vector<ResidualRow> rows;
      for (ActiveInput& a : set)
        for (int i = 0; i < task.L; ++i) rows.push_back({&a.X, &a.Y, i, a.w.data() + i * n});
      problem.AddResidualBlock(new NormalEquationsCost(std::move(rows), kind, n), nullptr,
                               P[0].data(), P[1].data());
    }
    // deep models (dense normal solver) and gated attention: the rows' own
    // blocks in one generic compressed block (search/compressed_rows_cost.h)
    const bool compress_generic =
        o.compressed_rows && !set.empty() &&
        (single ? gated : o.deep_solver == DeepLinearSolver::kDenseNormal);
    std::vector<std::unique_ptr<ceres::CostFunction>> generic_rows;
    const auto add_row = [&](ceres::CostFunction* row) {
      if (compress_generic) {
        generic_rows.emplace_back(row);
      } else {
        problem.AddResidualBlock(row, nullptr, blocks);
      }
    };
    for (ActiveInput& a : set) {
      for (int i = 0; i < task.L; ++i) {
        if (!single) {
          add_row(new DeepRowCost(&a.X, &a.Y, i, a.w.data() + i * n, &init));
        } else if (gated || !o.compressed_rows) {
          add_row(new RowCost(&a.X, &a.Y, i, a.w.data() + i * n, kind));
        }
      }
    }
    if (compress_generic) {
      problem.AddResidualBlock(
          new CompressedRowsCost(std::move(generic_rows), o.deep_threads, o.ranks, o.dense_isa),
          nullptr, blocks);
    }
    if (o.bos_ceiling && single) {
      problem.AddResidualBlock(new BosCeilingCost(o.probes, *o.bos_ceiling, rho, n, kind), nullptr,
                               P[0].data());
    } else if (o.bos_ceiling) {
      auto cost = std::make_unique<DeepBosCeilingCost>(o.probes, *o.bos_ceiling, rho, &init,
                                                       o.bos_ceiling_head);
      // no position with a non-trigger probe: nothing to cap
      if (cost->num_residuals() > 0) problem.AddResidualBlock(cost.release(), nullptr, blocks);
    }
    if (o.row1_deficit_floor) {
      problem.AddResidualBlock(new Row1DeficitFloorCost(&*row1_rule, *o.row1_deficit_floor, rho, n),
                               nullptr, P[0].data());
    }
    // round 1 fits M alone: at the paper's init (|M| ~ 0.02) the A-columns of
    // the Jacobian are tiny and a joint first step would throw A into the
    // saturated region where softmax has no gradient
    const bool m_only = round == 1 && o.fit_m_first;
    if (m_only) rec.event = "M-only";
    // an empty active set (no initial inputs asked for): the round only
    // runs the adversary, whose witnesses fill the set
    const bool solve = problem.NumResidualBlocks() > 0;
    if (m_only && solve) {
      for (std::size_t b = 0; b < P.size(); b += 2) problem.SetParameterBlockConstant(P[b].data());
    }
    if (!o.frozen_m.empty() && solve) {
      problem.SetManifold(P[1].data(), new ceres::SubsetManifold(n * n, o.frozen_m));
    }
    ceres::Solver::Options sopt;
    sopt.linear_solver_type = ceres::DENSE_NORMAL_CHOLESKY;
    sopt.num_threads = 1;
    if (!single) {
      if (o.deep_solver == DeepLinearSolver::kConjugateGradients) {
        sopt.linear_solver_type = ceres::CGNR;
        sopt.preconditioner_type = ceres::IDENTITY;
      }
      sopt.num_threads = o.deep_threads;
    }
    sopt.max_num_iterations = o.lm_iterations;
    sopt.min_lm_diagonal = o.lm_min_diagonal;
    sopt.initial_trust_region_radius = radius;
    sopt.logging_type = ceres::SILENT;
    sopt.function_tolerance = 1e-16;
    sopt.gradient_tolerance = 1e-30;
    sopt.parameter_tolerance = 1e-16;
    ceres::Solver::Summary summary;
    if (solve) ceres::Solve(sopt, &problem, &summary);
    result.jacobian_evaluations += summary.num_jacobian_evaluations;
    if (!summary.iterations.empty() && !m_only) {
      radius = std::max(1e-8, summary.iterations.back().trust_region_radius);
    }
    const double objective = solve ? summary.final_cost : 0.0;

    // 4. adversary
    current = to_model(init, single, P);
    adv.warm_starts.clear();
    adv.warm_starts.emplace_back(result.worst.trigger, result.worst.content);
    for (const Witness& w : worst.per_trigger) adv.warm_starts.emplace_back(w.trigger, w.content);
    adv.seed = o.adversary.seed + static_cast<std::uint64_t>(round);
    worst = maximize_error(current, task, adv);
    const auto residuals = active_residuals(current, set);
    rec.worst_case = worst.best.certified;
    rec.worst_case_double = worst.best.value;
    rec.double_disagrees = worst.best.double_disagrees;
    rec.active_max = max_abs(residuals);
    rec.max_abs_A = max_abs_score_entry(current);
    if (o.probes) {
      rec.mean_bos =
          single ? mean_probe_bos(current, *o.probes) : max_head_mean_probe_bos(current, *o.probes);
    }
    if (o.bos_ceiling && !single) rec.ceiling_bos = ceiling_statistic(current);
    if (o.row1_deficit_floor) rec.row1_deficit = row1_of(current);
    const bool feasible =
        (!o.bos_ceiling || (single ? rec.mean_bos : rec.ceiling_bos) <= *o.bos_ceiling) &&
        (!o.row1_deficit_floor || rec.row1_deficit >= *o.row1_deficit_floor);

    // 5. trust control against the worst case
    const double reject_factor = o.surrogate == Surrogate::kLawson
                                     ? o.lawson_reject_factor.value_or(kLawsonRejectFactor)
                                     : kRejectFactor;
    if (!std::isfinite(worst.best.value) || worst.best.value > reject_factor * best_worst) {
      rec.accepted = false;
      rec.event = "reject";
      radius /= kRadiusShrink;
    }
    if (rec.accepted) {
      best_worst = std::min(best_worst, worst.best.value);
      if (feasible && worst.best.value < best_feasible) {
        best_feasible = worst.best.value;
        result.model = current;
        result.worst = worst.best;
      }
      saved = P;
    } else {
      P = saved;
    }
    if ((o.bos_ceiling || o.row1_deficit_floor) && !feasible) {
      rho = std::min(kMaxPenalty, rho * kPenaltyGrowth);
    }

    // 3. surrogate weights; 4. admit witnesses
    if (o.surrogate == Surrogate::kLawson && rec.accepted) {
      for (std::size_t s = 0; s < set.size(); ++s) lawson_update(set[s].w, residuals[s]);
    }
    for (const Witness& w : worst.per_trigger) {
      if (w.value < kAdmitFraction * worst.best.value || w.value <= rec.active_max) continue;
      int count = 0;
      for (const ActiveInput& a : set) count += a.trigger == w.trigger;
      if (count >= o.max_per_trigger) {
        const auto old = std::find_if(set.begin(), set.end(), [&](const ActiveInput& a) {
          return a.trigger == w.trigger && !a.initial;
        });
        if (old != set.end()) set.erase(old);
      }
      set.push_back(make_active(task, w.trigger, w.content, false, target));
    }
    rec.active_size = static_cast<int>(set.size());
    rec.elapsed = elapsed_before + seconds_since(t0);
    result.history.push_back(rec);
    if (progress) progress(rec, current);

    // 6. stopping
    if (best_feasible <= o.target_loss) {
      result.stop_reason = "target loss reached";
      result.converged = true;
      break;
    }
    const bool gap_closed = worst.best.value <= (1 + o.adversary_tolerance) * rec.active_max;
    const bool settled = prev_objective > 0 && std::abs(objective - prev_objective) <=
                                                   kLawsonObjectiveTolerance * prev_objective;
    if (o.surrogate == Surrogate::kLawson && rec.accepted && gap_closed && settled && feasible) {
      result.stop_reason = "adversary within tolerance";
      result.converged = true;
      break;
    }
    prev_objective = objective;
    // the state the next round reads, for a run continued from here
    if (!o.checkpoint.empty() && ranks_or_local(o.ranks).rank() == 0) {
      MinimaxCheckpoint c;
      c.identity = identity;
      c.init_hash = init_hash;
      c.round = round;
      c.elapsed = rec.elapsed;
      c.theta = P;
      for (const ActiveInput& a : set) c.active.push_back({a.trigger, a.initial, a.content, a.w});
      c.radius = radius;
      c.rho = rho;
      c.prev_objective = prev_objective;
      c.best_worst = best_worst;
      c.best_feasible = best_feasible;
      c.best_theta = parameter_blocks(result.model);
      c.best_witness = result.worst;
      c.warm = worst.per_trigger;
      c.history = result.history;
      c.jacobian_evaluations = result.jacobian_evaluations;
      write_checkpoint(o.checkpoint, c);
    }
    // the one decision that reads a clock: rank 0's, so that every rank
    // stops at the same round
    std::vector<std::vector<double>> over = {{rec.elapsed > o.time_limit_seconds ? 1.0 : 0.0}};
    ranks_or_local(o.ranks).share(over);
    if (over[0][0] != 0) {
      result.stop_reason = "time limit";
      break;
    }
  }
  result.feasible = std::isfinite(best_feasible);
  result.seconds = elapsed_before + seconds_since(t0);
  return result;
}

RowJacobian row_residual_jacobian(const Model<double>& model, const Task& task, int trigger,
                                  const Matrix<double>& content, int i) {
  const int n = task.n;
  const Matrix<double> X = make_input<double>(task, trigger, content);
  const Matrix<double> Y = make_target(X, trigger, target_kind_of(model.kind));
  std::vector<std::vector<double>> P = parameter_blocks(model);
  std::vector<const double*> params;
  for (const auto& b : P) params.push_back(b.data());
  const std::vector<double> w(n, 1.0);
  std::vector<std::vector<double>> jac(P.size(), std::vector<double>(n * n * n));
  std::vector<double*> jac_ptrs;
  for (auto& b : jac) jac_ptrs.push_back(b.data());
  RowJacobian out;
  out.residuals.resize(n);
  std::unique_ptr<ceres::CostFunction> cost;
  if (single_head(model)) {
    cost = std::make_unique<RowCost>(&X, &Y, i, w.data(), model.attention);
  } else {
    cost = std::make_unique<DeepRowCost>(&X, &Y, i, w.data(), &model);
  }
  cost->Evaluate(params.data(), out.residuals.data(), jac_ptrs.data());
  // block b holds dr_d/dP_b in row d (n^2 entries each): column b n^2 + e
  out.jacobian.resize(n, static_cast<Eigen::Index>(P.size()) * n * n);
  for (std::size_t b = 0; b < P.size(); ++b)
    for (int d = 0; d < n; ++d)
      for (int e = 0; e < n * n; ++e) out.jacobian(d, b * n * n + e) = jac[b][d * n * n + e];
  return out;
}

JacobianTiming time_row_jacobian(const Model<double>& model, const Task& task, int repeats) {
  const int n = task.n, i = task.L - 1;
  TaskSampler sampler(task, 1);
  const Sample smp = sampler.next();
  const Matrix<double> Y = make_target(smp.X, smp.trigger, TargetKind::kPlain);
  std::vector<double> A(n * n), M(n * n), w(n, 1.0);
  pack_row_major(model.layers[0][0].A, A.data());
  pack_row_major(model.layers[0][0].M, M.data());
  const double* params[2] = {A.data(), M.data()};
  std::vector<double> r1(n), r2(n), ja(n * n * n), jm(n * n * n), ka(n * n * n), km(n * n * n);
  double* ja_ptrs[2] = {ja.data(), jm.data()};
  double* ka_ptrs[2] = {ka.data(), km.data()};
  RowCost analytic(&smp.X, &Y, i, w.data(), model.attention);
  auto* functor = new RowFunctor{&smp.X, &Y, i, model.attention};
  ceres::DynamicAutoDiffCostFunction<RowFunctor, 16> jet(functor);
  jet.AddParameterBlock(n * n);
  jet.AddParameterBlock(n * n);
  jet.SetNumResiduals(n);
  JacobianTiming t;
  auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < repeats; ++k) analytic.Evaluate(params, r1.data(), ja_ptrs);
  t.analytic_seconds = seconds_since(t0) / repeats;
  t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < repeats; ++k) jet.Evaluate(params, r2.data(), ka_ptrs);
  t.jet_seconds = seconds_since(t0) / repeats;
  for (std::size_t k = 0; k < ja.size(); ++k) {
    t.max_difference =
        std::max({t.max_difference, std::abs(ja[k] - ka[k]), std::abs(jm[k] - km[k])});
  }
  return t;
}

}  // namespace sinkcert::search
