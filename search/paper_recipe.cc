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

#include "search/recipe_kernel.h"
#include "src/forward_vjp.h"

namespace sinkcert::search {

namespace {

// Samples per chunk of a batch: the unit of the fixed summation order (and
// of the work given to a thread).
constexpr int kRecipeChunk = 16;

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

// A chunk's residual statistics and unscaled gradient d(sum r^2 / 2)/d(A, M).
struct ChunkResult {
  HeadGradients grad;
  KernelStatistics stats;
};

// Adds samples [begin, end) of `samples` to *out.
using ChunkFunction =
    std::function<void(const Model<double>&, const std::vector<Sample>&, int, int, ChunkResult*)>;

// The generic chunk: forward_tape and forward_vjp per sample.
void generic_chunk(const Model<double>& model, const std::vector<Sample>& samples, int begin,
                   int end, ChunkResult* out) {
  const TargetKind target = target_kind_of(model.kind);
  for (int s = begin; s < end; ++s) {
    // r = f(X) - y
    const ForwardTape<double> tape = forward_tape(model, samples[s].X);
    const Matrix<double> r = tape.output - make_target(samples[s].X, samples[s].trigger, target);
    add_residual(r, &out->stats);
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

// The batched kernel of `isa` (search/recipe_kernel.h), on the model and the
// samples seen through its plain views.
ChunkFunction batched_chunk(RecipeIsa isa) {
  const KernelFunction kernel = recipe_kernel(isa);
  return [kernel](const Model<double>& model, const std::vector<Sample>& samples, int begin,
                  int end, ChunkResult* out) {
    KernelModel view;
    view.n = model.n;
    view.relu = model.attention == AttentionKind::kRelu;
    view.residual = model.kind == ModelKind::kResidual;
    for (int l = 0; l < model.num_layers(); ++l) {
      view.layers.emplace_back();
      for (std::size_t h = 0; h < model.layers[l].size(); ++h) {
        const Head<double>& head = model.layers[l][h];
        Head<double>& grad = out->grad[l][h];
        view.layers.back().push_back({head.A.data(), head.M.data(), grad.A.data(), grad.M.data()});
      }
    }
    std::vector<KernelSample> chunk;
    for (int s = begin; s < end; ++s) {
      const Matrix<double>& X = samples[s].X;
      chunk.push_back(
          {samples[s].trigger, X.data(), static_cast<int>(X.rows()), static_cast<int>(X.cols())});
    }
    kernel(view, chunk.data(), end - begin, &out->stats);
  };
}

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
  double run(const ChunkFunction& chunk, const Model<double>& model,
             const std::vector<Sample>& samples, HeadGradients* grad, double* max_abs,
             const std::function<void()>& beside = {}) {
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
        ChunkResult& r = spaces_[c];
        zero_gradients(model, &r.grad);
        r.stats = KernelStatistics{};
        chunk(model, samples, c * kRecipeChunk, std::min(count, (c + 1) * kRecipeChunk), &r);
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
      const ChunkResult& r = spaces_[c];
      for (std::size_t l = 0; l < grad->size(); ++l) {
        for (std::size_t h = 0; h < (*grad)[l].size(); ++h) {
          (*grad)[l][h].A += r.grad[l][h].A;
          (*grad)[l][h].M += r.grad[l][h].M;
        }
      }
      sum += r.stats.sum;
      worst = std::max(worst, r.stats.worst);
      entries += r.stats.count;
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
  std::vector<ChunkResult> spaces_;
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
                                HeadGradients* grad, double* max_abs, int threads, RecipeIsa isa) {
  if (!batched_kind(model.attention)) {
    throw std::invalid_argument("mse_and_gradient_batched: softmax or relu attention only, got " +
                                to_string(model.attention));
  }
  BatchGradient batch(threads);
  return batch.run(batched_chunk(isa), model, samples, grad, max_abs);
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
                               double* max_abs, const ChunkFunction& chunk,
                               const std::function<void()>& beside = {}) {
  const Model<double> model = model_of(f);
  HeadGradients g;
  const double mse = batch.run(chunk, model, samples, &g, max_abs, beside);
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

// The chunk function of a recipe run (its gradient path, resolved once).
ChunkFunction recipe_chunk(AttentionKind attention, bool generic_gradient, RecipeIsa isa) {
  return generic_gradient || !batched_kind(attention) ? generic_chunk : batched_chunk(isa);
}

}  // namespace

double factor_mse_and_gradient(const RecipeFactors& f, const std::vector<Sample>& samples,
                               RecipeFactors* grad, double* max_abs, bool generic_gradient,
                               int threads, RecipeIsa isa) {
  BatchGradient batch(threads);
  return factor_mse_and_gradient(batch, f, samples, grad, max_abs,
                                 recipe_chunk(f.attention, generic_gradient, isa));
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
  // the kernel's compilation, resolved once (the variable is read once)
  const bool generic = o.generic_gradient || !batched_kind(o.attention);
  const RecipeIsa isa = generic ? o.isa : resolve_recipe_isa(o.isa);
  res.kernel = generic ? "generic" : to_string(isa);
  const ChunkFunction chunk = recipe_chunk(o.attention, o.generic_gradient, isa);
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
    res.final_batch_mse = factor_mse_and_gradient(gradient, f, batch, &g, &linf, chunk, draw_next);
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
