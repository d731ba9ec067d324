// SPDX-License-Identifier: MIT
#include "search/paper_recipe.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "src/forward_vjp.h"

namespace sinkcert::search {

namespace {

// Samples per chunk of a batch: the unit of the fixed summation order (and
// of the work given to a thread).
constexpr int kRecipeChunk = 16;

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Sum of r^2, max |r| and the entry count of a chunk, and its unscaled
// gradient d(sum r^2 / 2)/d(A, M).
struct ChunkResult {
  HeadGradients grad;
  double sum = 0, worst = 0;
  long count = 0;
};

// Everything one chunk writes, kept from step to step (no allocation once
// the sizes are set).
struct Workspace {
  ChunkResult result;
  std::vector<RowMatrix> x;                     // [l]: stacked layer inputs
  std::vector<std::vector<RowMatrix>> Q, P, V;  // [l][h]
  RowMatrix delta, dx, dx_in, u, w, z;
  RowMatrix mask, lower;  // the causal masks of a chunk (batched_chunk)
  bool mask_relu = false;
  Vector<double> row_scale;
};

// Sets every head's (dA, dM) to zero n x n (allocating only the first time).
void zero_gradients(const Model<double>& model, HeadGradients* g) {
  g->resize(model.num_layers());
  for (int l = 0; l < model.num_layers(); ++l) {
    (*g)[l].resize(model.layers[l].size());
    for (Head<double>& h : (*g)[l]) {
      h.A.setZero(model.n, model.n);
      h.M.setZero(model.n, model.n);
    }
  }
}

// r = f(X) - y of one sample added to the chunk's loss statistics.
template <class Derived>
void add_residual(const Eigen::MatrixBase<Derived>& r, ChunkResult* out) {
  out->sum += r.squaredNorm();
  out->worst = std::max(out->worst, r.cwiseAbs().maxCoeff());
  out->count += r.size();
}

// The generic chunk: forward_tape and forward_vjp per sample.
void generic_chunk(const Model<double>& model, const std::vector<Sample>& samples, int begin,
                   int end, Workspace* ws) {
  ChunkResult* out = &ws->result;
  const TargetKind target = target_kind_of(model.kind);
  for (int s = begin; s < end; ++s) {
    // r = f(X) - y
    const ForwardTape<double> tape = forward_tape(model, samples[s].X);
    const Matrix<double> r = tape.output - make_target(samples[s].X, samples[s].trigger, target);
    add_residual(r, out);
    // d(sum r^2 / 2)/d(A, M): the reverse pass with cotangent r
    const ForwardGradient<double> g = forward_vjp(model, tape, r, nullptr, /*weights=*/true);
    for (int l = 0; l < model.num_layers(); ++l) {
      for (std::size_t h = 0; h < model.layers[l].size(); ++h) {
        out->grad[l][h].A += g.dheads[l][h].A;
        out->grad[l][h].M += g.dheads[l][h].M;
      }
    }
  }
}

// The batched chunk (header formulas), softmax or ReLU.
void batched_chunk(const Model<double>& model, const std::vector<Sample>& samples, int begin,
                   int end, Workspace* ws) {
  ChunkResult* out = &ws->result;
  const int n = model.n, C = end - begin, L = static_cast<int>(samples[begin].X.rows());
  const int R = C * L, layers = model.num_layers();
  const bool relu = model.attention == AttentionKind::kRelu;
  const bool residual = model.kind == ModelKind::kResidual;
  // x[l]: the stacked inputs of layer l (sample c in rows c L .. c L + L - 1)
  std::vector<RowMatrix>& x = ws->x;
  x.resize(layers + 1);
  for (RowMatrix& m : x) m.resize(R, n);
  for (int c = 0; c < C; ++c) {
    const Matrix<double>& X = samples[begin + c].X;
    if (X.rows() != L || X.cols() != n) {
      throw std::invalid_argument("mse_and_gradient_batched: samples of different shapes");
    }
    x[0].middleRows(c * L, L) = X;
  }
  // mask(c L + i, k): softmax 0 for k <= i, -inf beyond; ReLU 1 / max(i, 1)
  // for k <= i, 0 beyond
  // and lower(c L + i, k) = [k <= i]
  RowMatrix &mask = ws->mask, &lower = ws->lower;
  if (mask.rows() != R || mask.cols() != L || ws->mask_relu != relu) {
    mask.resize(R, L);
    lower.resize(R, L);
    ws->mask_relu = relu;
    for (int r = 0; r < R; ++r) {
      const int i = r % L;
      for (int k = 0; k < L; ++k) {
        lower(r, k) = k <= i ? 1.0 : 0.0;
        mask(r, k) = k <= i ? (relu ? 1.0 / std::max(i, 1) : 0.0)
                            : (relu ? 0.0 : -std::numeric_limits<double>::infinity());
      }
    }
  }
  Vector<double>& row_scale = ws->row_scale;
  // tape: Q = X A, P (attention, L x L per sample), V = P X per layer and head
  ws->Q.resize(layers);
  ws->P.resize(layers);
  ws->V.resize(layers);
  RowMatrix& delta = ws->delta;
  for (int l = 0; l < layers; ++l) {
    const int heads = static_cast<int>(model.layers[l].size());
    ws->Q[l].resize(heads);
    ws->P[l].resize(heads);
    ws->V[l].resize(heads);
    delta.setZero(R, n);
    for (int h = 0; h < heads; ++h) {
      const Head<double>& head = model.layers[l][h];
      RowMatrix &q = ws->Q[l][h], &p = ws->P[l][h], &v = ws->V[l][h];
      q.resize(R, n);
      p.resize(R, L);
      v.resize(R, n);
      q.noalias() = x[l] * head.A;
      // S = Q X^T per sample
      for (int c = 0; c < C; ++c) {
        p.middleRows(c * L, L).noalias() =
            q.middleRows(c * L, L) * x[l].middleRows(c * L, L).transpose();
      }
      // each row i becomes a_i. (zero beyond k = i), the whole chunk at once
      if (relu) {
        // a_k = max(s_k, 0) / max(i, 1)
        p.array() = p.array().max(0.0) * mask.array();
      } else {
        // a_k = exp(s_k - m) / sum_t exp(s_t - m),  m = max_{t <= i} s_t
        // (the entries beyond k = i are set to 0 before the exponential and
        // after it: no overflow, and no subnormal results that are slow)
        row_scale = (p + mask).rowwise().maxCoeff();
        p.array().colwise() -= row_scale.array();
        p.array() = (p.array() * lower.array()).exp() * lower.array();
        row_scale = p.rowwise().sum();
        p.array().colwise() /= row_scale.array();
      }
      // V = P X per sample
      for (int c = 0; c < C; ++c) {
        v.middleRows(c * L, L).noalias() = p.middleRows(c * L, L) * x[l].middleRows(c * L, L);
      }
      // O = V M^T
      delta.noalias() += v * head.M.transpose();
    }
    if (residual) {
      x[l + 1] = x[l] + delta;
    } else {
      x[l + 1] = delta;
    }
  }
  // dX = r = f(X) - y at the output
  RowMatrix& dx = ws->dx;
  dx.resize(R, n);
  // y = X (residual) or 0 (plain), plus (1/j) sum_{k=1..j} x_k at the trigger j
  if (residual) {
    dx = x[layers] - x[0];
  } else {
    dx = x[layers];
  }
  for (int c = 0; c < C; ++c) {
    const int j = samples[begin + c].trigger;
    auto rc = dx.middleRows(c * L, L);
    rc.row(j) -= x[0].middleRows(c * L + 1, j).colwise().sum() * (1.0 / j);
    add_residual(rc, out);
  }
  RowMatrix &dx_in = ws->dx_in, &u = ws->u, &w = ws->w, &z = ws->z;
  u.resize(R, n);
  w.resize(R, n);
  z.resize(R, L);
  for (int l = layers - 1; l >= 0; --l) {
    // dX of layer 0 (the input) is not wanted
    const bool want_dx = l > 0;
    if (want_dx && residual) {
      dx_in = dx;
    } else if (want_dx) {
      dx_in.setZero(R, n);
    }
    for (std::size_t h = 0; h < model.layers[l].size(); ++h) {
      const Head<double>& head = model.layers[l][h];
      const RowMatrix &q = ws->Q[l][h], &p = ws->P[l][h];
      // dM += dO^T V,  U = dO M
      out->grad[l][h].M.noalias() += dx.transpose() * ws->V[l][h];
      u.noalias() = dx * head.M;
      // dX += P^T U,  Z = U X^T per sample
      for (int c = 0; c < C; ++c) {
        const auto uc = u.middleRows(c * L, L);
        if (want_dx)
          dx_in.middleRows(c * L, L).noalias() += p.middleRows(c * L, L).transpose() * uc;
        z.middleRows(c * L, L).noalias() = uc * x[l].middleRows(c * L, L).transpose();
      }
      // Z becomes dS, the whole chunk at once (zero beyond k = i, where a_ik = 0)
      if (relu) {
        // dS_k = Z_k [a_k > 0] / max(i, 1)
        z.array() = (p.array() > 0).select(z.array() * mask.array(), 0.0);
      } else {
        // dS_k = a_k (Z_k - sum_m a_m Z_m)
        z.array() *= p.array();
        row_scale = z.rowwise().sum();
        z.array() -= p.array().colwise() * row_scale.array();
      }
      // W = dS X,  dX += dS^T Q per sample
      for (int c = 0; c < C; ++c) {
        const auto zc = z.middleRows(c * L, L);
        w.middleRows(c * L, L).noalias() = zc * x[l].middleRows(c * L, L);
        if (want_dx)
          dx_in.middleRows(c * L, L).noalias() += zc.transpose() * q.middleRows(c * L, L);
      }
      // dA += X^T W,  dX += W A^T
      out->grad[l][h].A.noalias() += x[l].transpose() * w;
      if (want_dx) dx_in.noalias() += w * head.A.transpose();
    }
    if (want_dx) std::swap(dx, dx_in);
  }
}

using ChunkFunction = void (*)(const Model<double>&, const std::vector<Sample>&, int, int,
                               Workspace*);

// threads - 1 worker threads, kept for the whole training run; run(tasks, f)
// calls f(0..tasks-1) on them and on the calling thread, and returns when
// all are done.
class ChunkPool {
 public:
  explicit ChunkPool(int threads) {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { loop(); });
  }
  ~ChunkPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;

  void run(int tasks, const std::function<void(int)>& f) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &f;
      tasks_ = tasks;
      next_ = 0;
      busy_ = static_cast<int>(workers_.size());
      ++generation_;
    }
    wake_.notify_all();
    drain();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
  }

 private:
  void drain() {
    for (int t = next_++; t < tasks_; t = next_++) (*job_)(t);
  }
  void loop() {
    long seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      drain();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --busy_;
      }
      done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int tasks_ = 0, busy_ = 0;
  std::atomic<int> next_{0};
  long generation_ = 0;
  bool stop_ = false;
};

// The MSE and its gradient over a batch, chunk by chunk: the thread pool
// and the chunks' workspaces live as long as the object.
class BatchGradient {
 public:
  explicit BatchGradient(int threads) : pool_(threads) {}

  // Runs `chunk` over the chunks of `samples` and sums the chunks in their
  // order; returns the MSE and puts dl/d(A, M) in grad. `beside`, if given,
  // runs once as one more task of the pool, concurrently with the chunks
  // (the training loop draws the next batch there: the same draws in the
  // same order, so the result does not depend on it).
  double run(ChunkFunction chunk, const Model<double>& model, const std::vector<Sample>& samples,
             HeadGradients* grad, double* max_abs, const std::function<void()>& beside = {}) {
    if (samples.empty()) throw std::invalid_argument("mse_and_gradient: no samples");
    const int count = static_cast<int>(samples.size());
    const int chunks = (count + kRecipeChunk - 1) / kRecipeChunk;
    if (static_cast<int>(spaces_.size()) < chunks) spaces_.resize(chunks);
    std::vector<std::exception_ptr> errors(chunks + 1);
    // task 0 is `beside` (taken first, so that it overlaps the chunks)
    const int offset = beside ? 1 : 0;
    pool_.run(chunks + offset, [&](int task) {
      if (task < offset) {
        try {
          beside();
        } catch (...) {
          errors[chunks] = std::current_exception();
        }
        return;
      }
      const int c = task - offset;
      try {
        ChunkResult& r = spaces_[c].result;
        zero_gradients(model, &r.grad);
        r.sum = r.worst = 0;
        r.count = 0;
        chunk(model, samples, c * kRecipeChunk, std::min(count, (c + 1) * kRecipeChunk),
              &spaces_[c]);
      } catch (...) {
        errors[c] = std::current_exception();
      }
    });
    for (const std::exception_ptr& e : errors) {
      if (e) std::rethrow_exception(e);
    }
    zero_gradients(model, grad);
    double sum = 0, worst = 0;
    long entries = 0;
    for (int c = 0; c < chunks; ++c) {
      const ChunkResult& r = spaces_[c].result;
      for (std::size_t l = 0; l < grad->size(); ++l) {
        for (std::size_t h = 0; h < (*grad)[l].size(); ++h) {
          (*grad)[l][h].A += r.grad[l][h].A;
          (*grad)[l][h].M += r.grad[l][h].M;
        }
      }
      sum += r.sum;
      worst = std::max(worst, r.worst);
      entries += r.count;
    }
    // l = sum r^2 / entries: dl = (2 / entries) sum r dr
    for (auto& layer : *grad) {
      for (Head<double>& g : layer) {
        g.A *= 2.0 / entries;
        g.M *= 2.0 / entries;
      }
    }
    if (max_abs) *max_abs = worst;
    return sum / entries;
  }

 private:
  ChunkPool pool_;
  std::vector<Workspace> spaces_;
};

// One Adam state per factor (PyTorch's form, header).
struct AdamMoments {
  Matrix<double> m, v;
};

void adam_step(Matrix<double>& w, const Matrix<double>& g, AdamMoments& s,
               const PaperRecipeOptions& o, long t) {
  if (s.m.size() == 0) {
    s.m = Matrix<double>::Zero(w.rows(), w.cols());
    s.v = s.m;
  }
  // m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
  s.m = o.beta1 * s.m + (1 - o.beta1) * g;
  s.v = o.beta2 * s.v + (1 - o.beta2) * g.cwiseProduct(g);
  // w -= lr mhat / (sqrt(vhat) + eps)
  const double c1 = 1 - std::pow(o.beta1, static_cast<double>(t));
  const double c2 = 1 - std::pow(o.beta2, static_cast<double>(t));
  w.array() -= o.lr * (s.m.array() / c1) / ((s.v.array() / c2).sqrt() + o.adam_eps);
}

bool batched_kind(AttentionKind kind) {
  return kind == AttentionKind::kSoftmax || kind == AttentionKind::kRelu;
}

}  // namespace

RecipeFactors init_factors(ModelKind kind, AttentionKind attention, int n, int layers, int heads,
                           double init_std, std::uint64_t seed) {
  RecipeFactors f;
  f.kind = kind;
  f.attention = attention;
  f.n = n;
  std::mt19937_64 eng(seed);
  std::normal_distribution<double> normal(0.0, init_std);
  for (int l = 0; l < layers; ++l) {
    f.layers.emplace_back();
    for (int h = 0; h < heads; ++h) {
      HeadFactors hf{Matrix<double>(n, n), Matrix<double>(n, n), Matrix<double>(n, n),
                     Matrix<double>(n, n)};
      for (Matrix<double>* W : {&hf.WQ, &hf.WK, &hf.WV, &hf.WO}) {
        for (int r = 0; r < n; ++r) {
          for (int c = 0; c < n; ++c) (*W)(r, c) = normal(eng);
        }
      }
      f.layers.back().push_back(std::move(hf));
    }
  }
  return f;
}

Model<double> model_of(const RecipeFactors& f) {
  Model<double> m;
  m.kind = f.kind;
  m.attention = f.attention;
  m.n = f.n;
  for (const auto& layer : f.layers) {
    m.layers.emplace_back();
    // A = W_Q^T W_K, M = W_O W_V
    for (const HeadFactors& h : layer) {
      m.layers.back().push_back(Head<double>{h.WQ.transpose() * h.WK, h.WO * h.WV});
    }
  }
  return m;
}

PaperRecipeOptions paper_recipe_options(int layers, int heads) {
  PaperRecipeOptions o;
  o.layers = layers;
  o.heads = heads;
  o.kind = layers == 1 ? ModelKind::kSingleLayer : ModelKind::kResidual;
  o.lr = layers == 1 ? 1e-3 : 1e-4;
  return o;
}

double mse_and_gradient(const Model<double>& model, const std::vector<Sample>& samples,
                        HeadGradients* grad, double* max_abs) {
  BatchGradient batch(1);
  return batch.run(generic_chunk, model, samples, grad, max_abs);
}

double mse_and_gradient_batched(const Model<double>& model, const std::vector<Sample>& samples,
                                HeadGradients* grad, double* max_abs, int threads) {
  if (!batched_kind(model.attention)) {
    throw std::invalid_argument("mse_and_gradient_batched: softmax or relu attention only, got " +
                                to_string(model.attention));
  }
  BatchGradient batch(threads);
  return batch.run(batched_chunk, model, samples, grad, max_abs);
}

double mse_and_gradient(const Model<double>& model, const std::vector<Sample>& samples,
                        Matrix<double>* grad_A, Matrix<double>* grad_M, double* max_abs) {
  if (model.num_layers() != 1 || model.num_heads() != 1) {
    throw std::invalid_argument("mse_and_gradient: this form takes one layer and one head");
  }
  HeadGradients g;
  const double mse = mse_and_gradient(model, samples, &g, max_abs);
  *grad_A = std::move(g[0][0].A);
  *grad_M = std::move(g[0][0].M);
  return mse;
}

namespace {

double factor_mse_and_gradient(BatchGradient& batch, const RecipeFactors& f,
                               const std::vector<Sample>& samples, RecipeFactors* grad,
                               double* max_abs, bool generic_gradient,
                               const std::function<void()>& beside = {}) {
  const Model<double> model = model_of(f);
  HeadGradients g;
  const double mse =
      batch.run(generic_gradient || !batched_kind(f.attention) ? generic_chunk : batched_chunk,
                model, samples, &g, max_abs, beside);
  grad->kind = f.kind;
  grad->attention = f.attention;
  grad->n = f.n;
  grad->layers.resize(f.layers.size());
  for (std::size_t l = 0; l < f.layers.size(); ++l) {
    grad->layers[l].resize(f.layers[l].size());
    for (std::size_t h = 0; h < f.layers[l].size(); ++h) {
      const HeadFactors& w = f.layers[l][h];
      HeadFactors& d = grad->layers[l][h];
      const Matrix<double>& dA = g[l][h].A;
      const Matrix<double>& dM = g[l][h].M;
      // dW_Q = W_K dA^T, dW_K = W_Q dA, dW_O = dM W_V^T, dW_V = W_O^T dM
      d.WQ.noalias() = w.WK * dA.transpose();
      d.WK.noalias() = w.WQ * dA;
      d.WO.noalias() = dM * w.WV.transpose();
      d.WV.noalias() = w.WO.transpose() * dM;
    }
  }
  return mse;
}

}  // namespace

double factor_mse_and_gradient(const RecipeFactors& f, const std::vector<Sample>& samples,
                               RecipeFactors* grad, double* max_abs, bool generic_gradient,
                               int threads) {
  BatchGradient batch(threads);
  return factor_mse_and_gradient(batch, f, samples, grad, max_abs, generic_gradient);
}

PaperRecipeResult train_paper_recipe(const Task& task, const PaperRecipeOptions& o) {
  if (o.layers < 1 || o.heads < 1 || o.batch < 1 || o.threads < 1 || o.max_steps < 1) {
    throw std::invalid_argument(
        "train_paper_recipe: layers, heads, batch, threads and max_steps must be >= 1");
  }
  if (!(o.lr > 0) || !std::isfinite(o.lr) || !(o.init_std > 0) || !std::isfinite(o.init_std)) {
    throw std::invalid_argument("train_paper_recipe: lr and init_std must be finite and > 0");
  }
  if (o.attention == AttentionKind::kGated) {
    throw std::invalid_argument(
        "train_paper_recipe: gated attention (a gate matrix) is not covered");
  }
  task.validate();
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto elapsed = [&]() { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  RecipeFactors f =
      init_factors(o.kind, o.attention, task.n, o.layers, o.heads, o.init_std, o.seed);
  std::vector<std::vector<std::array<AdamMoments, 4>>> moments(o.layers);
  for (auto& layer : moments) layer.resize(o.heads);
  TaskSampler sampler(task, o.seed);
  PaperRecipeResult res;
  // batch t is drawn while the gradient of batch t - 1 is computed (one more
  // task of the pool): the draws are those of drawing each batch in turn
  std::vector<Sample> batch(o.batch), next(o.batch);
  const std::function<void()> draw_next = [&] {
    for (Sample& s : next) s = sampler.next();
  };
  draw_next();
  RecipeFactors g;
  double next_progress = o.progress_seconds;
  BatchGradient gradient(o.threads);
  for (long t = 1;; ++t) {
    std::swap(batch, next);
    double linf = 0;
    res.final_batch_mse =
        factor_mse_and_gradient(gradient, f, batch, &g, &linf, o.generic_gradient, draw_next);
    res.final_batch_linf = linf;
    res.steps = t;
    // a NaN or an infinity anywhere in the batch's residuals makes the sum
    // non-finite (max |r| may not show a NaN)
    if (!std::isfinite(res.final_batch_mse)) {
      res.final_batch_linf = std::numeric_limits<double>::quiet_NaN();
      res.stop_reason = "non-finite loss";
      break;
    }
    if (linf < o.stop_linf) {
      res.reached = true;
      res.stop_reason = "criterion";
      break;
    }
    if (t >= o.max_steps) {
      res.stop_reason = "step cap";
      break;
    }
    const double now = elapsed();
    if (now > o.time_limit_seconds) {
      res.stop_reason = "time limit";
      break;
    }
    if (o.progress && now >= next_progress) {
      o.progress(PaperRecipeProgress{t, now, linf, res.final_batch_mse});
      next_progress = now + o.progress_seconds;
    }
    for (int l = 0; l < o.layers; ++l) {
      for (int h = 0; h < o.heads; ++h) {
        HeadFactors& w = f.layers[l][h];
        const HeadFactors& d = g.layers[l][h];
        auto& s = moments[l][h];
        adam_step(w.WQ, d.WQ, s[0], o, t);
        adam_step(w.WK, d.WK, s[1], o, t);
        adam_step(w.WV, d.WV, s[2], o, t);
        adam_step(w.WO, d.WO, s[3], o, t);
      }
    }
  }
  // the model the final batch was evaluated on
  res.model = model_of(f);
  res.factors = std::move(f);
  res.seconds = elapsed();
  return res;
}

Model<double> train_recipe_model(const Task& task, int layers, int heads, AttentionKind attention,
                                 std::uint64_t seed, long max_steps) {
  PaperRecipeOptions o = paper_recipe_options(layers, heads);
  o.attention = attention;
  o.seed = seed;
  o.max_steps = max_steps;
  o.time_limit_seconds = 1e300;
  return train_paper_recipe(task, o).model;
}

}  // namespace sinkcert::search
