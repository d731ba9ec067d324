// SPDX-License-Identifier: MIT
#include "theorems/bounds/deep_bos_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "src/attention.h"
#include "src/forward_vjp.h"
#include "src/interval.h"
#include "src/table_writer.h"
#include "theorems/bounds/bos_box_search.h"
#include "theorems/bounds/deep_symbolic_pass.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::theorems::bounds {

namespace {

bool is_softmax_kind(AttentionKind kind) {
  return kind == AttentionKind::kSoftmax || kind == AttentionKind::kSoftmaxOffByOne ||
         kind == AttentionKind::kGated;
}

Mpfr infinity() { return std::numeric_limits<Mpfr>::infinity(); }

// The upper end of an enclosure, +inf when it is NaN.
Mpfr upper_or_inf(const Mpfi& x) {
  if (interval_is_nan(x)) return infinity();
  return bmp::upper(x);
}

// Layers 0..l of the model (the map X -> x^(l+1), whose tape holds x^(l)).
Model<Mpfi> prefix_of(const Model<Mpfi>& model, int l) {
  Model<Mpfi> out;
  out.kind = model.kind;
  out.attention = model.attention;
  out.n = model.n;
  out.layers.assign(model.layers.begin(), model.layers.begin() + l + 1);
  return out;
}

// q . y, coefficient-based (MPFI).
Mpfi dot(const Vector<Mpfi>& q, const Vector<Mpfi>& y) {
  Mpfi s(0);
  for (int e = 0; e < q.size(); ++e) s += q(e) * y(e);
  return s;
}

// Q of row i from layer l's input x (rows 0..i), head score matrix A:
//   q = A^T x_i, d_m = q . (x_m - x_0), T = sum_m exp(d_m) [+ exp(-q . x_0)]
//   a_i0 = 1 / (1 + T),  1 - a_i0 = 1 / (1 + 1 / T)         (softmax kinds)
//   a_i0 = phi(q . x_0) / divisor                          (elementwise kinds)
Mpfi bos_from_input(AttentionKind kind, const Matrix<Mpfi>& A, const Matrix<Mpfi>& x, int i,
                    bool deficit) {
  const int n = static_cast<int>(x.cols());
  Vector<Mpfi> q(n);
  for (int e = 0; e < n; ++e) {
    Mpfi s(0);
    for (int p = 0; p < n; ++p) s += A(p, e) * x(i, p);
    q(e) = s;
  }
  const Vector<Mpfi> x0 = x.row(0).transpose();
  if (is_softmax_kind(kind)) {
    Mpfi T(0);
    for (int m = 1; m <= i; ++m) {
      const Vector<Mpfi> delta = (x.row(m) - x.row(0)).transpose();
      // d_m = q . (x_m - x_0)
      T += exp_of(dot(q, delta));
    }
    if (kind == AttentionKind::kSoftmaxOffByOne) T += exp_of(Mpfi(-dot(q, x0)));
    return deficit ? Mpfi(Mpfi(1) / (Mpfi(1) + Mpfi(1) / T)) : Mpfi(Mpfi(1) / (Mpfi(1) + T));
  }
  std::vector<Mpfi> s(i + 1, Mpfi(0)), a(i + 1);
  s[0] = dot(q, x0);
  attention_row(kind, i, s.data(), a.data());  // a_0 reads s_0 alone
  return deficit ? Mpfi(Mpfi(1) - a[0]) : a[0];
}

// The first i + 1 rows of X(j, C), C given for positions 1..i (i * (n - 3)
// values, position-major as content_variable orders them).
template <class S>
Matrix<S> rows_input(int n, int i, int j, const std::vector<S>& content) {
  const int cd = n - 3;
  Matrix<S> X = Matrix<S>::Constant(i + 1, n, S(0));
  X(0, kBosFlag) = S(1);
  for (int k = 1; k <= i; ++k) {
    X(k, k == j ? kTriggerFlag : ordinary_flag(n)) = S(1);
    for (int c = 0; c < cd; ++c) X(k, kFirstContent + c) = content[(k - 1) * cd + c];
  }
  return X;
}

Matrix<Mpfi> point_rows(int n, int i, int j, const std::vector<double>& p) {
  std::vector<Mpfi> c;
  c.reserve(p.size());
  for (double v : p) c.emplace_back(Mpfr(v));
  return rows_input(n, i, j, c);
}

Mpfi point_q(const Model<Mpfi>& prefix, int layer, int head, const Matrix<Mpfi>& X, int i,
             bool deficit) {
  const ForwardTape<Mpfi> tape = forward_tape(prefix, Matrix<Mpfi>(X.topRows(i + 1)), i);
  return bos_from_input(prefix.attention, prefix.layers[layer][head].A, tape.inputs[layer], i,
                        deficit);
}

// The interval tape of `prefix` (layers 0..l) over the box input X (rows
// 0..i), each intermediate layer input x^(l') (0 < l' <= l) intersected with
// its centred form around the box's centre c (x^(l') at c: centre.inputs[l']):
//   x^(l')_{k,d}(B) in x^(l')_{k,d}(c) + sum_v dx^(l')_{k,d}/dx_v(B) (B_v - c_v),
// the derivative enclosed by the reverse pass (forward_vjp) through layers
// 0..l'-1 over the tape so far; later layers then read inputs that shrink
// quadratically with the box. Only row i of layer l is computed.
ForwardTape<Mpfi> centred_tape(const Model<Mpfi>& prefix, const Matrix<Mpfi>& X, int i,
                               const ContentBox& box, const std::vector<double>& c,
                               const ForwardTape<Mpfi>& centre) {
  const int n = static_cast<int>(X.cols()), cd = n - 3, layers = prefix.num_layers();
  ForwardTape<Mpfi> tape;
  Matrix<Mpfi> x = X;
  for (int l = 0; l < layers; ++l) {
    const bool last = l + 1 == layers;
    tape.inputs.push_back(x);
    tape.rows.emplace_back();
    Matrix<Mpfi> delta = Matrix<Mpfi>::Constant(i + 1, n, Mpfi(0));
    for (const Head<Mpfi>& head : prefix.layers[l]) {
      tape.rows.back().emplace_back(i + 1);
      for (int r = last ? i : 0; r <= i; ++r) {
        HeadRow<Mpfi> row = head_row_forward(prefix.attention, head, x, r);
        // o_r = M V_r (times the gate, gated attention)
        delta.row(r) += head_row_output(prefix.attention, head, row).transpose();
        tape.rows.back().back()[r] = std::move(row);
      }
    }
    // x^(l+1) = x^(l) + sum_h o^{l,h}
    x += delta;
    if (last) break;
    Model<Mpfi> below = prefix;
    below.layers.resize(l + 1);
    for (int k = 1; k <= i; ++k) {
      for (int d = 0; d < n; ++d) {
        if (width_of(x(k, d)) == 0) continue;  // a constant (a flag)
        Matrix<Mpfi> dY = Matrix<Mpfi>::Constant(i + 1, n, Mpfi(0));
        dY(k, d) = Mpfi(1);
        const Matrix<Mpfi> dX = forward_vjp(below, tape, dY, nullptr, false).dX;
        Mpfi r = centre.inputs[l + 1](k, d);
        for (int m = 1; m <= k; ++m) {
          for (int e = 0; e < cd; ++e) {
            const int v = (m - 1) * cd + e;
            // (B_v - c_v), enclosed
            const Mpfi lo = point_interval(Mpfr(box.lo[v])) - point_interval(Mpfr(c[v]));
            const Mpfi hi = point_interval(Mpfr(box.hi[v])) - point_interval(Mpfr(c[v]));
            r += dX(m, kFirstContent + e) * Mpfi(bmp::lower(lo), bmp::upper(hi));
          }
        }
        x(k, d) = intersection_of(x(k, d), r).value_or(x(k, d));
      }
    }
  }
  tape.output = x;
  return tape;
}

template <class T>
void check_deep_model(const Model<T>& model, const Task& task, int layer, int head) {
  if (model.kind != ModelKind::kResidual) {
    throw std::invalid_argument("deep BOS bound: only residual models are supported");
  }
  if (model.num_layers() < 1 || model.num_heads() < 1) {
    throw std::invalid_argument("deep BOS bound: the model has no heads");
  }
  if (model.n != task.n) throw std::invalid_argument("deep BOS bound: model n != task n");
  if (model.attention == AttentionKind::kSoftpick) {
    throw std::invalid_argument(
        "deep BOS bound: softpick attention is not supported (softmax, softmax-off-by-one, "
        "gated, relu, relu-count-all, sigmoid are)");
  }
  task.validate();
  if (task.trigger_positions().empty()) {
    throw std::invalid_argument("deep BOS bound: no trigger positions");
  }
  if (layer < 0 || layer >= model.num_layers()) {
    throw std::invalid_argument("deep BOS bound: no layer " + std::to_string(layer) +
                                " (the model has " + std::to_string(model.num_layers()) + ")");
  }
  if (head < 0 || head >= model.num_heads()) {
    throw std::invalid_argument("deep BOS bound: no head " + std::to_string(head) +
                                " (the model has " + std::to_string(model.num_heads()) +
                                " per layer)");
  }
}

// Whether layer l's input is intersected with its symbolic forms' range
// (softmax kinds, above layer 0, unless the options turn them off).
bool symbolic_layer_inputs(const Model<Mpfi>& prefix, int layer, const DeepBosOptions& options) {
  return layer > 0 && symbolic_pass_supported(prefix.attention) && options.symbolic_layer_inputs;
}

// One box's ends (header, steps 1 and 2; the public deep_bos_box_ends on
// the prefix of layers 0..layer). `whole_stream`, when given, is a symbolic
// stream over this box whose first (i + 1) n forms are rows 0..i (empty:
// none), computed by the caller once for every box it serves (read in
// place, never copied); otherwise, where the symbolic forms are used, it is
// computed here.
DeepBosBoxEnds box_ends(const Model<Mpfi>& prefix, int layer, int head, int i, const ContentBox& b,
                        bool deficit, const DeepBosOptions& options,
                        const std::vector<SymbolicForm>* whole_stream,
                        const std::function<bool(int, int)>& stop) {
  const int n = prefix.n, cd = n - 3, j = b.trigger, vars = i * cd;
  DeepBosBoxEnds out;
  // 1. plain: the interval forward pass over the box
  std::vector<Mpfi> cont;
  out.centre.assign(vars, 0.0);
  for (int v = 0; v < vars; ++v) {
    cont.emplace_back(Mpfr(b.lo[v]), Mpfr(b.hi[v]));
    out.centre[v] = 0.5 * (b.lo[v] + b.hi[v]);
  }
  const std::vector<double>& centre = out.centre;
  const Matrix<Mpfi> Xc = point_rows(n, i, j, centre);
  const ForwardTape<Mpfi> centre_tape = forward_tape(prefix, Xc, i);
  // the layers below l: centred forms of their outputs (not for gated
  // attention's gate, nor for testing the plain pass)
  // (not with the symbolic forms below, which are first order too and far
  // cheaper: the centred forms take one reverse pass per (row, coordinate))
  const bool symbolic_inputs = symbolic_layer_inputs(prefix, layer, options);
  const bool centred_inputs = layer > 0 && prefix.attention != AttentionKind::kGated &&
                              options.centred_layer_inputs && !symbolic_inputs;
  const Matrix<Mpfi> Xb = rows_input(n, i, j, cont);
  const ForwardTape<Mpfi> tape = centred_inputs
                                     ? centred_tape(prefix, Xb, i, b, centre, centre_tape)
                                     : forward_tape(prefix, Xb, i);
  // 1b. softmax kinds: layer l's input also intersected with the range of
  // its symbolic first-order form (deep_symbolic_pass.h: heads whose
  // outputs cancel are fused there, which no interval pass can follow)
  out.layer_input = tape.inputs[layer];
  if (symbolic_inputs) {
    std::vector<SymbolicForm> computed;
    if (!whole_stream) computed = deep_symbolic_stream(prefix, i + 1, j, b.lo, b.hi, layer, stop);
    const std::vector<SymbolicForm>& stream = whole_stream ? *whole_stream : computed;
    // rows 0..i (a whole-box stream holds every row)
    const std::size_t forms = std::min(stream.size(), static_cast<std::size_t>((i + 1) * n));
    for (std::size_t t = 0; t < forms; ++t) {
      const SymbolicRange r = symbolic_range(stream[t]);
      Mpfi& v = out.layer_input(static_cast<int>(t) / n, static_cast<int>(t) % n);
      if (const std::optional<Mpfi> both = intersection_of(v, Mpfi(Mpfr(r.lo), Mpfr(r.hi)))) {
        v = *both;
      }
    }
  }
  const Matrix<Mpfi>& A = prefix.layers[layer][head].A;
  out.plain = upper_or_inf(bos_from_input(prefix.attention, A, out.layer_input, i, deficit));
  // 2. centred form around the centre: Q(c) + sum_v g_v (B_v - c_v),
  // g = dQ/dX over the box from the reverse pass with cotangent -+1 on a_i0
  out.at_centre = bos_from_input(prefix.attention, A, centre_tape.inputs[layer], i, deficit);
  out.slope.assign(vars, 0.0);
  if (vars == 0) {
    out.centred = infinity();
    return out;
  }
  std::vector<std::vector<Matrix<Mpfi>>> d_att(layer + 1);
  for (int l = 0; l <= layer; ++l) {
    d_att[l].assign(prefix.num_heads(), Matrix<Mpfi>::Constant(i + 1, i + 1, Mpfi(0)));
  }
  d_att[layer][head](i, 0) = Mpfi(deficit ? -1 : 1);
  const Matrix<Mpfi> dY = Matrix<Mpfi>::Constant(i + 1, n, Mpfi(0));
  const Matrix<Mpfi> dX = forward_vjp(prefix, tape, dY, &d_att, false).dX;
  Mpfi centred = out.at_centre;
  out.vertex.assign(vars, 0.0);
  for (int k = 1; k <= i; ++k) {
    for (int c = 0; c < cd; ++c) {
      const int v = (k - 1) * cd + c;
      const Mpfi& g = dX(k, kFirstContent + c);
      // (B_v - c_v), enclosed
      const Mpfi lo_off = point_interval(Mpfr(b.lo[v])) - point_interval(Mpfr(centre[v]));
      const Mpfi hi_off = point_interval(Mpfr(b.hi[v])) - point_interval(Mpfr(centre[v]));
      centred += g * Mpfi(bmp::lower(lo_off), bmp::upper(hi_off));
      const double w = to_double(Mpfr(magnitude_of(g))) * (b.hi[v] - b.lo[v]);
      out.slope[v] = std::isfinite(w) ? w : 0.0;
      out.vertex[v] = bmp::median(g) >= 0 ? b.hi[v] : b.lo[v];
    }
  }
  out.centred = upper_or_inf(centred);
  return out;
}

// The branch and bound of the header for head (layer, head): the enclosure
// of max Q in the deficit fields of a BosBound (Q = 1 - a_i0, or a_i0 with
// max_mode).
template <class T>
BosBound deep_search(const Model<T>& model_in, const Task& task, const DeepBosOptions& options,
                     const std::function<bool(const Mpfr&, const Mpfr&)>& done, bool max_mode) {
  const int layer = options.layer, head = options.head;
  check_deep_model(model_in, task, layer, head);
  if (options.bits < 2 || options.step_bits < 1) {
    throw std::invalid_argument("deep BOS bound: need bits >= 2 and step_bits >= 1");
  }
  const bool deficit = !max_mode;
  const auto t0 = std::chrono::steady_clock::now();
  const Deadline deadline = options.run_deadline();
  ProgressLines progress(options.progress, options.progress_seconds);
  const int n = task.n, cd = task.content_dim();
  std::optional<PrecisionScope> scope;
  scope.emplace(options.bits);
  Model<Mpfi> prefix;
  const auto make_prefix = [&] {
    Model<Mpfi> m = model_in.template cast<Mpfi>();
    if (options.drop_layer_for_testing >= 0 && options.drop_layer_for_testing < m.num_layers()) {
      for (Head<Mpfi>& h : m.layers[options.drop_layer_for_testing]) {
        h.M = Matrix<Mpfi>::Constant(n, n, Mpfi(0));
      }
    }
    prefix = prefix_of(m, layer);
  };
  make_prefix();
  BosBound out;
  out.bits_requested = options.bits;
  out.bars = options.bars;
  out.bits = PrecisionScope::current_bits();
  out.deficit_lower = Mpfr(-2);
  out.witness_head = head;
  bool have_witness = false;
  // a witness: the point p (content of positions 1..i), row i, trigger j,
  // with its enclosure q of Q
  const auto take = [&](int, int i, int j, const std::vector<double>& p, const Mpfi& q) {
    if (interval_is_nan(q)) return;
    const Mpfr low = bmp::lower(q);
    if (!have_witness || low > out.deficit_lower) {
      have_witness = true;
      out.deficit_lower = low;
      out.witness_row = i;
      out.witness_trigger = j;
      out.witness_content.assign(static_cast<std::size_t>(content_variables(task)), 0.0);
      std::copy(p.begin(), p.end(), out.witness_content.begin());
      out.witness_deficit = q;
    }
  };
  // The symbolic stream of layer l's input over the whole box, per trigger j
  // and all L rows: a row's forms read only the rows up to it (causal
  // attention), so every first-pass box (i, j), the whole box of positions
  // 1..i, takes its rows 0..i from one pass. Boxes are bounded on several
  // threads at once: the map is read and written under its mutex, and each
  // trigger's stream computed once (std::call_once) by whichever box needs
  // it first; it is one function of the model and the trigger (a stream the
  // deadline cut short is empty: the boxes then go without it).
  struct TriggerStream {
    std::once_flag once;
    std::vector<SymbolicForm> forms;
  };
  std::map<int, std::unique_ptr<TriggerStream>> whole_box_streams;
  const std::function<bool(int, int)> stop = [&](int, int) { return deadline.expired(); };
  std::mutex streams_mutex;
  const auto bound_node = [&](int, int i, ContentBox box, const BosRecord& record) {
    BosNode node{head, i, std::move(box), Mpfr(0), out.bits, Mpfr(0), {}};
    const ContentBox& b = node.box;
    const int j = b.trigger;
    // the symbolic stream of the whole box of positions 1..i: rows 0..i of
    // trigger j's whole-box stream (computed once)
    const bool whole = std::all_of(b.lo.begin(), b.lo.end(), [](double v) { return v == -1; }) &&
                       std::all_of(b.hi.begin(), b.hi.end(), [](double v) { return v == 1; });
    const std::vector<SymbolicForm>* stream = nullptr;
    if (whole && symbolic_layer_inputs(prefix, layer, options)) {
      TriggerStream* entry = nullptr;
      {
        const std::lock_guard<std::mutex> lock(streams_mutex);
        std::unique_ptr<TriggerStream>& e = whole_box_streams[j];
        if (!e) e = std::make_unique<TriggerStream>();
        entry = e.get();
      }
      std::call_once(entry->once, [&] {
        const int all = content_variables(task);
        entry->forms = deep_symbolic_stream(prefix, task.L, j, std::vector<double>(all, -1.0),
                                            std::vector<double>(all, 1.0), layer, stop);
      });
      stream = &entry->forms;
    }
    const DeepBosBoxEnds ends = box_ends(prefix, layer, head, i, b, deficit, options, stream, stop);
    // the witnesses: the centre, then the vertex the gradient points to
    record(ends.centre, ends.at_centre);
    node.upper = ends.upper();
    node.rounding = interval_is_nan(ends.at_centre) ? infinity() : Mpfr(width_of(ends.at_centre));
    node.slope = ends.slope;
    if (!ends.vertex.empty()) {
      record(ends.vertex,
             point_q(prefix, layer, head, point_rows(n, i, j, ends.vertex), i, deficit));
    }
    return node;
  };
  const auto raise_to = [&](int bits) {
    scope.reset();
    scope.emplace(bits);
    out.bits = PrecisionScope::current_bits();
    make_prefix();
    if (have_witness) {
      const int i = out.witness_row;
      const std::vector<double> p(out.witness_content.begin(),
                                  out.witness_content.begin() + static_cast<long>(i) * cd);
      out.witness_deficit =
          point_q(prefix, layer, head, point_rows(n, i, out.witness_trigger, p), i, deficit);
      if (bmp::lower(out.witness_deficit) > out.deficit_lower) {
        out.deficit_lower = bmp::lower(out.witness_deficit);
      }
    }
  };
  BosBoxSearch search;
  append_bos_cases(task, head, search.cases);
  // the content of positions 1..i
  search.full_box = [cd](const BosCase& c) {
    return ContentBox{c.j, std::vector<double>(c.i * cd, -1.0), std::vector<double>(c.i * cd, 1.0),
                      0};
  };
  search.bound = bound_node;
  search.take = take;
  search.raise = raise_to;
  search.first_pass_line = [&task, layer](const BosCase& c) {
    return "first pass: layer " + std::to_string(layer) + ", head " + std::to_string(c.h) +
           ", row " + std::to_string(c.i) + " of " + std::to_string(task.L - 1);
  };
  search.name = "deep BOS bound";
  search.quantity = max_mode ? "max BOS" : "1 - min BOS";
  search.content_dim = cd;
  run_bos_box_search(search, options, done, out, have_witness, t0, deadline, progress);
  finish_bos_bound(out, have_witness, seconds_since(t0));
  // an end the search did not bring inside the range of a_i0 (a budget that
  // ran out before every case was bounded, no witness) is that range's end
  clamp_to_mass_range(out, max_mode, model_in.attention, done);
  return out;
}

// The deep branch and bound of one (layer, head) as a BosSearch.
template <class T>
BosSearch deep_bos_search(const Model<T>& model, const Task& task, const DeepBosOptions& options) {
  return [&model, &task, &options](const BosStopRule& stop, bool maximum) {
    return deep_search(model, task, options, stop, maximum);
  };
}

}  // namespace

Mpfi deep_point_bos_mass(const Model<Mpfi>& model, int layer, int head, const Matrix<Mpfi>& X,
                         int i) {
  check_deep_model(
      model, Task{model.n, static_cast<int>(std::max<long>(X.rows(), 2)), TriggerRange::kPaper},
      layer, head);
  return point_q(prefix_of(model, layer), layer, head, X, i, false);
}

Mpfi deep_point_bos_deficit(const Model<Mpfi>& model, int layer, int head, const Matrix<Mpfi>& X,
                            int i) {
  check_deep_model(
      model, Task{model.n, static_cast<int>(std::max<long>(X.rows(), 2)), TriggerRange::kPaper},
      layer, head);
  return point_q(prefix_of(model, layer), layer, head, X, i, true);
}

DeepBosBoxEnds deep_bos_box_ends(const Model<Mpfi>& model, int layer, int head, int i,
                                 const ContentBox& box, bool deficit,
                                 const DeepBosOptions& options) {
  check_deep_model(model, Task{model.n, std::max(i + 1, 2), TriggerRange::kPaper}, layer, head);
  const std::size_t vars = static_cast<std::size_t>(i) * static_cast<std::size_t>(model.n - 3);
  if (i < 1 || box.lo.size() != vars || box.hi.size() != vars) {
    throw std::invalid_argument("deep BOS box ends: need row i >= 1 and a box of i * (n - 3) = " +
                                std::to_string(vars) + " content coordinates");
  }
  for (std::size_t v = 0; v < vars; ++v) {
    if (!(box.lo[v] <= box.hi[v])) {
      throw std::invalid_argument("deep BOS box ends: coordinate " + std::to_string(v) +
                                  " has lo > hi (or NaN)");
    }
  }
  return box_ends(prefix_of(model, layer), layer, head, i, box, deficit, options, nullptr,
                  [](int, int) { return false; });
}

template <class T>
BosBound bound_deep_min_bos(const Model<T>& model, const Task& task,
                            const DeepBosOptions& options) {
  return min_bos_to_gap(deep_bos_search(model, task, options), options.relative_gap);
}

template <class T>
MaxBosBound bound_deep_max_bos(const Model<T>& model, const Task& task,
                               const DeepBosOptions& options) {
  return max_bos_to_gap(deep_bos_search(model, task, options), options.relative_gap);
}

template <class T>
BosClaimCheck check_deep_min_bos(const Model<T>& model, const Task& task, const Claim& claimed,
                                 const DeepBosOptions& options) {
  return min_bos_claim(deep_bos_search(model, task, options), claimed);
}

template <class T>
MaxBosClaimCheck check_deep_max_bos(const Model<T>& model, const Task& task, const Claim& claimed,
                                    const DeepBosOptions& options) {
  return max_bos_claim(deep_bos_search(model, task, options), claimed);
}

namespace {

// 1 - x rounded down / up.
Mpfr one_minus(const Mpfr& x, mpfr_rnd_t rnd) {
  Mpfr r;
  mpfr_ui_sub(r.backend().data(), 1, x.backend().data(), rnd);
  return r;
}

}  // namespace

std::string min_bos_text(const BosBound& b, int digits) {
  PrecisionScope scope(std::max(b.bits, 128) * 2);
  // min BOS = 1 - D: an infinite end of D (none, not clamped) is one of min BOS too
  // (a trivial end exactly: 1 - 1 = 0, 1 - 0 = 1)
  return "min BOS in [" +
         bos_end_text(one_minus(b.deficit_upper, MPFR_RNDD), b.trivial_upper, true, digits) + ", " +
         bos_end_text(one_minus(b.deficit_lower, MPFR_RNDU), b.trivial_lower, false, digits) + "]";
}

std::string max_bos_text(const MaxBosBound& b, int digits) {
  PrecisionScope scope(std::max(b.bits, 128) * 2);
  return "max BOS in [" + bos_end_text(b.mass_lower, b.trivial_lower, true, digits) + ", " +
         bos_end_text(b.mass_upper, b.trivial_upper, false, digits) + "]";
}

namespace {

// "model: residual, L layer(s) x H head(s), ATTENTION; ..." then the task.
template <class T>
void model_lines(std::ostringstream& s, const Model<T>& model, const Task& task) {
  s << "model: residual, " << model.num_layers() << " layer(s) x " << model.num_heads()
    << " head(s), " << to_string(model.attention)
    << " attention; BOS mass a^{l,h}_i0 over the whole content box (non-trigger rows i >= 1), "
       "n = "
    << task.n << ", L = " << task.L << ", triggers " << to_string(task.range) << "\n"
    << "method: interval forward pass through the layers below, intersected with the centred "
       "form of a_i0 (from score differences), branch and bound per head\n";
}

// The lines of one head's bound (either mode), with its witness.
template <typename Bound>
void head_lines(std::ostringstream& s, int layer, const Bound& b, const std::string& enclosure,
                const Mpfi& witness_value, const char* witness_name) {
  PrecisionScope scope(std::max(b.bits, 128) * 2);
  s << "layer " << layer << ", head " << b.witness_head << ": " << enclosure << "  ["
    << b.evidence.label() << "] (gap " << b.relative_gap << ", " << b.boxes << " boxes, "
    << b.seconds << " s, stopped: " << b.stop_reason << ", " << b.bits << " bits)"
    << trivial_ends_text(b) << "\n";
  if (b.witness_trigger != 0) {
    s << "  witness: row i = " << b.witness_row << ", trigger j = " << b.witness_trigger << ", "
      << witness_name << " in " << format_interval(witness_value, 17) << "  [CERTIFIED]\n";
  }
}

// One head's decision against the sink bar.
struct HeadDecision {
  Decision decision;
  int layer, head;
};

// The model's meaning line over the heads' decisions (Theorem 2 asks for a
// sink in some head of some layer, not in every head). Minimum: "sinks on
// every input in layer l, head h" when some head's certified min BOS
// reaches the bar; "no head sinks on every input" when every head has a
// witness below it. Maximum: "sinks at a witness in layer l, head h", or
// "no head sinks on any input" when every head's max BOS stays below it.
std::string heads_meaning(const std::vector<HeadDecision>& decisions, BosMode mode,
                          const VerdictBars& bars) {
  const std::string tail = " against " + bars.sink_bar_words() + ", CERTIFIED (per head above)";
  bool all_no = true;
  for (const HeadDecision& d : decisions) {
    if (d.decision == Decision::kYes) {
      return std::string(mode == BosMode::kMin ? "sinks on every input" : "sinks at a witness") +
             " in layer " + std::to_string(d.layer) + ", head " + std::to_string(d.head) + tail;
    }
    all_no = all_no && d.decision == Decision::kNo;
  }
  if (all_no) {
    return std::string(mode == BosMode::kMin ? "no head sinks on every input"
                                             : "no head sinks on any input") +
           tail;
  }
  return std::string(mode == BosMode::kMin ? "undecided whether some head sinks on every input"
                                           : "undecided whether some head sinks on some input") +
         tail;
}

struct HeadResult {
  int layer = 0, head = 0;
  std::optional<BosBound> min;
  std::optional<MaxBosBound> max;
};

}  // namespace

template <class T>
BosReport deep_bos_report(const Model<T>& model, const Task& task, BosMode mode,
                          const std::optional<Claim>& claimed, const DeepBosOptions& options) {
  BosReport r;
  DeepBosOptions shared = options;
  shared.deadline = options.run_deadline();
  std::ostringstream s;
  model_lines(s, model, task);
  if (claimed) {
    if (options.layer < 0 || options.head < 0) {
      throw std::invalid_argument(
          "deep BOS claim: a residual model's claim is about one head (give its layer and head)");
    }
    const auto lines = [&](std::ostringstream& o, const auto& bound, const Task&) {
      if constexpr (std::is_same_v<std::decay_t<decltype(bound)>, BosBound>) {
        head_lines(o, options.layer, bound, min_bos_text(bound, 12) + ", " + enclosure_text(bound),
                   Mpfi(Mpfi(1) - bound.witness_deficit), "a_i0");
      } else {
        head_lines(o, options.layer, bound, max_bos_text(bound, 12), bound.witness_mass, "a_i0");
      }
    };
    if (mode == BosMode::kMin) {
      const BosClaimCheck c = check_deep_min_bos(model, task, *claimed, shared);
      r.verdict = c.verdict;
      r.text =
          s.str() + claim_summary(c, task, lines, "min BOS >=",
                                  {"(certified min BOS - claim)", "(claim - a_i0 at the witness)",
                                   "n/a (the claim lies inside the enclosure when the budget "
                                   "ran out)"});
      r.json = to_json(c, task);
      r.witness = witness_input(c.bound, task);
    } else {
      const MaxBosClaimCheck c = check_deep_max_bos(model, task, *claimed, shared);
      r.verdict = c.verdict;
      r.text =
          s.str() + claim_summary(c, task, lines, "max BOS <=",
                                  {"(claim - certified max BOS)", "(a_i0 at the witness - claim)",
                                   "n/a (the claim lies inside the enclosure when the budget "
                                   "ran out)"});
      r.json = to_json(c, task);
      r.witness = witness_input(c.bound, task);
    }
    r.json["layer"] = options.layer;
    r.json["head"] = options.head;
    return r;
  }
  // every selected head, the time left shared equally among those still to run
  std::vector<std::pair<int, int>> heads;
  for (int l = 0; l < model.num_layers(); ++l) {
    for (int h = 0; h < model.num_heads(); ++h) {
      if ((options.layer < 0 || options.layer == l) && (options.head < 0 || options.head == h)) {
        heads.emplace_back(l, h);
      }
    }
  }
  if (heads.empty()) {
    // throws: no such layer or head
    check_deep_model(model, task, std::max(0, options.layer), std::max(0, options.head));
    throw std::invalid_argument("deep BOS bound: no head selected");
  }
  bool all_enclosed = true;
  double worst_gap = 0.0;
  int bits = options.bits;
  nlohmann::json per_head = nlohmann::json::array();
  std::vector<HeadDecision> decisions;
  std::optional<Matrix<double>> witness, open_witness;
  for (std::size_t k = 0; k < heads.size(); ++k) {
    DeepBosOptions one = shared;
    one.layer = heads[k].first;
    one.head = heads[k].second;
    one.deadline = shared.deadline.or_after(shared.deadline.remaining() /
                                            static_cast<double>(heads.size() - k));
    nlohmann::json entry{{"layer", one.layer}, {"head", one.head}};
    const auto record = [&](const BoxSearchOutcome& o, double gap,
                            const std::optional<Matrix<double>>& w) {
      const bool enclosed = o.verdict == Verdict::kEnclosed;
      all_enclosed = all_enclosed && enclosed;
      worst_gap = std::max(worst_gap, gap);
      bits = std::max(bits, o.bits);
      witness = w;
      if (!enclosed && !open_witness) open_witness = w;
    };
    if (mode == BosMode::kMin) {
      const BosBound b = bound_deep_min_bos(model, task, one);
      head_lines(s, one.layer, b, min_bos_text(b, 12) + ", " + enclosure_text(b),
                 Mpfi(Mpfi(1) - b.witness_deficit), "a_i0");
      const BarVerdict v = task_verdict(b);
      s << "  " << v.text << "\n";
      decisions.push_back({v.decision, one.layer, one.head});
      entry["min"] = to_json(b, task, options.relative_gap);
      record(b, b.relative_gap, witness_input(b, task));
    } else {
      const MaxBosBound b = bound_deep_max_bos(model, task, one);
      head_lines(s, one.layer, b, max_bos_text(b, 12), b.witness_mass, "a_i0");
      const BarVerdict v = task_verdict(b);
      s << "  " << v.text << "\n";
      decisions.push_back({v.decision, one.layer, one.head});
      entry["max"] = to_json(b, task, options.relative_gap);
      record(b, b.relative_gap, witness_input(b, task));
    }
    per_head.push_back(entry);
  }
  r.verdict = all_enclosed ? Verdict::kEnclosed : Verdict::kNotEnclosed;
  s << "verdict: " << to_string(r.verdict) << " (" << heads.size() << " head(s), "
    << to_string(mode) << " BOS, each to relative gap " << options.relative_gap
    << ")  margin (requested gap " << options.relative_gap << " - largest achieved) = ";
  if (all_enclosed) {
    s << options.relative_gap - worst_gap;
  } else {
    s << "n/a";
  }
  s << "  precision: " << bits << " bits  evidence: " << Evidence::certified(bits).label() << "\n";
  const std::string meaning = heads_meaning(decisions, mode, shared.bars);
  s << "meaning: " << meaning << "\n";
  r.text = s.str();
  r.json = {
      {"quantity", to_string(mode) + " BOS mass per (layer, head) over the whole content box"},
      {"verdict", to_string(r.verdict)},
      {"evidence", Evidence::certified(bits).label()},
      {"requested_gap", options.relative_gap},
      {"heads", per_head},
      {"meaning", meaning},
      {"sink_bar", shared.bars.sink_bar_text},
      {"task", {{"n", task.n}, {"L", task.L}, {"trigger_range", to_string(task.range)}}}};
  r.witness = open_witness ? open_witness : witness;
  return r;
}

#define SINKCERT_DEEP_BOS(T)                                                                    \
  template BosBound bound_deep_min_bos(const Model<T>&, const Task&, const DeepBosOptions&);    \
  template MaxBosBound bound_deep_max_bos(const Model<T>&, const Task&, const DeepBosOptions&); \
  template BosClaimCheck check_deep_min_bos(const Model<T>&, const Task&, const Claim&,         \
                                            const DeepBosOptions&);                             \
  template MaxBosClaimCheck check_deep_max_bos(const Model<T>&, const Task&, const Claim&,      \
                                               const DeepBosOptions&);                          \
  template BosReport deep_bos_report(const Model<T>&, const Task&, BosMode,                     \
                                     const std::optional<Claim>&, const DeepBosOptions&);
SINKCERT_DEEP_BOS(double)
SINKCERT_DEEP_BOS(Mpfr)
SINKCERT_DEEP_BOS(Rational)
#undef SINKCERT_DEEP_BOS

}  // namespace sinkcert::theorems::bounds
