// SPDX-License-Identifier: MIT
#include "theorems/worst_case_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>
#include <sstream>
#include <stdexcept>

#include "search/adversary.h"
#include "src/forward.h"
#include "src/forward_vjp.h"
#include "src/interval.h"
#include "src/linf_error.h"
#include "src/table_writer.h"

namespace sinkcert::theorems {

namespace {

Matrix<Mpfi> box_input(const Task& task, const ContentBox& box) {
  std::vector<Mpfi> flat;
  for (std::size_t m = 0; m < box.lo.size(); ++m)
    flat.emplace_back(Mpfr(box.lo[m]), Mpfr(box.hi[m]));
  return make_input<Mpfi>(task, box.trigger, unflatten_content(task, flat));
}

Matrix<Mpfi> content_matrix(const Task& task, const std::vector<double>& content) {
  return matrix_cast<Mpfi>(unflatten_content(task, content));
}

// Attention enclosures wider than this come from the content, not from
// rounding (MPFI at >= 64 bits leaves widths near 2^-60 relative).
constexpr double kContentDependentWidth = 1e-15;

bool attention_depends_on_content(const std::vector<Matrix<Mpfi>>& attention) {
  for (const auto& a : attention) {
    for (int i = 0; i < a.rows(); ++i) {
      for (int k = 0; k <= i; ++k) {
        if (Mpfr(bmp::upper(a(i, k)) - bmp::lower(a(i, k))) > kContentDependentWidth) return true;
      }
    }
  }
  return false;
}

// Softmax from score differences, for content-dependent scores:
//   a_ik = 1 / (1 + sum_{m<=i, m!=k} exp(s_im - s_ik)),
//   s_im - s_ik = x_i^T A (x_m - x_k).
// Each difference is enclosed with x_m - x_k formed first (the flags of two
// tokens of one kind cancel exactly), so a term shared by every score of row
// i, such as the query's content times A's flag columns, cancels instead of
// entering each score's enclosure independently (the dependency problem of
// forward<Mpfi>'s per-score softmax range). The result is intersected with
// `a`, which holds the per-score enclosure: both contain the true range.
void tighten_softmax(const Matrix<Mpfi>& A, const Matrix<Mpfi>& X, Matrix<Mpfi>& a) {
  const int L = static_cast<int>(X.rows());
  // key_delta[m L + k] = A (x_m - x_k), shared by every query row i >= m, k
  std::vector<Vector<Mpfi>> key_delta(static_cast<std::size_t>(L) * L);
  for (int m = 0; m < L; ++m) {
    for (int k = 0; k < L; ++k) {
      if (m != k) key_delta[m * L + k] = A.lazyProduct((X.row(m) - X.row(k)).transpose());
    }
  }
  for (int i = 0; i < L; ++i) {
    const Vector<Mpfi> query = X.row(i).transpose();
    for (int k = 0; k <= i; ++k) {
      // enclosures of sum_m exp(lo d_m) and sum_m exp(hi d_m)
      Mpfi low_sum(0), high_sum(0);
      for (int m = 0; m <= i; ++m) {
        if (m == k) continue;
        // d_m = x_i^T A (x_m - x_k)
        const Mpfi e = exp_of(Mpfi(query.dot(key_delta[m * L + k])));
        low_sum += Mpfi(bmp::lower(e));
        high_sum += Mpfi(bmp::upper(e));
      }
      // a_ik in [1 / (1 + sum exp(hi d)), 1 / (1 + sum exp(lo d))]
      const Mpfi low = Mpfi(1) / (Mpfi(1) + Mpfi(bmp::upper(high_sum)));
      const Mpfi high = Mpfi(1) / (Mpfi(1) + Mpfi(bmp::lower(low_sum)));
      const Mpfi range(bmp::lower(low), bmp::upper(high));
      // both contain the true range, so they overlap; guard against rounding
      a(i, k) = intersection_of(a(i, k), range).value_or(a(i, k));
    }
  }
}

// Centered form of phi = (f - y)_{i,d} over the box:
//   phi(B) in phi(c) + sum_m dphi/dx_m(B) (B_m - c_m),
// with dphi/dX(B) the reverse pass (src/forward_vjp.h) over the box at row
// i with cotangent e_d on f(X)_i, on the (tightened) attention enclosures
// in `rows` and the key enclosures AX, minus [i = j, 1 <= k <= j] e_d / j
// (the target).
Mpfi centred_term(const std::vector<Head<Mpfi>>& heads, AttentionKind kind,
                  const std::vector<HeadRow<Mpfi>>& rows, const Matrix<Mpfi>& X,
                  const std::vector<Matrix<Mpfi>>& AX, const Task& task, const ContentBox& box,
                  const std::vector<double>& centre, const Mpfi& value_at_centre, int i, int d,
                  std::vector<double>* grad_magnitude = nullptr) {
  const int n = task.n, cd = task.content_dim(), j = box.trigger;
  Matrix<Mpfi> grad = Matrix<Mpfi>::Constant(i + 1, n, Mpfi(0));
  Vector<Mpfi> e_d = Vector<Mpfi>::Constant(n, Mpfi(0));
  e_d(d) = Mpfi(1);
  for (std::size_t h = 0; h < heads.size(); ++h) {
    head_row_vjp(kind, heads[h], X, rows[h], &e_d, nullptr, &grad, nullptr, nullptr, &AX[h]);
  }
  if (i == j && d >= kFirstContent && d < kFirstContent + cd) {
    const Mpfi inv_j = Mpfi(1) / Mpfi(j);
    for (int k = 1; k <= j; ++k) grad(k, d) -= inv_j;
  }
  Mpfi range = value_at_centre;
  for (int k = 1; k <= i; ++k) {
    for (int c = 0; c < cd; ++c) {
      const int m = content_variable(task, k, c);
      const Mpfi offset(Mpfr(box.lo[m] - centre[m]), Mpfr(box.hi[m] - centre[m]));
      range += grad(k, kFirstContent + c) * offset;
      if (grad_magnitude) {
        (*grad_magnitude)[m] = Mpfr(magnitude_of(grad(k, kFirstContent + c))).convert_to<double>();
      }
    }
  }
  return range;
}

template <class T>
void check_model(const Model<T>& model, const Task& task) {
  if (model.kind != ModelKind::kSingleLayer || model.num_layers() != 1) {
    throw std::invalid_argument("worst-case bound: only single-layer models are supported");
  }
  if (model.n != task.n) throw std::invalid_argument("worst-case bound: model n != task n");
  // the coefficient form G_ik = sum_h a_ik M_h has no gate
  if (model.attention == AttentionKind::kGated) {
    throw std::invalid_argument("worst-case bound: gated attention is not supported");
  }
  task.validate();
}

struct Node {
  ContentBox box;
  BoxBound bound;
  int bits = 0;   // precision the bound was computed at
  Mpfr rounding;  // width of the enclosure of e(X) at the box's vertex
  const Mpfr& upper_bound() const { return bound.upper; }
};

// The variable to bisect: at even depth the largest width_m * weight_m
// (Ratz-Csendes rule C), at odd depth the widest with weight_m > 0 (one that
// enters the worst term); the widest of all if every score is 0 (or NaN).
// Only variables whose midpoint is strictly inside count; -1 if none.
int choose_split(const Node& node) {
  const ContentBox& box = node.box;
  const auto splittable = [&box](std::size_t m) {
    const double mid = 0.5 * (box.lo[m] + box.hi[m]);
    return box.lo[m] < mid && mid < box.hi[m];
  };
  int split = -1;
  double best_score = -1.0;
  const bool widest_rule = box.depth % 2 == 1;
  for (std::size_t m = 0; m < box.lo.size(); ++m) {
    if (!splittable(m)) continue;
    const double w = box.hi[m] - box.lo[m];
    const double weight = node.bound.weight.empty() ? 0.0 : node.bound.weight[m];
    const double score = widest_rule ? (weight > 0 ? w : 0.0) : w * weight;
    if (score > best_score) {
      best_score = score;
      split = static_cast<int>(m);
    }
  }
  if (best_score > 0) return split;
  split = -1;
  for (std::size_t m = 0; m < box.lo.size(); ++m) {
    if (!splittable(m)) continue;
    const double w = box.hi[m] - box.lo[m];
    if (split < 0 || w > box.hi[split] - box.lo[split]) split = static_cast<int>(m);
  }
  return split;
}

// bits + log2(rounding / (kRoundingShare * relative_gap * lower)), rounded up
// to a multiple of 64; 0 when lower <= 0 or the rounding is not finite.
int suggest_bits(int bits, const Mpfr& rounding, const Mpfr& lower, double relative_gap) {
  if (!(lower > 0) || bmp::isinf(rounding) || !(rounding > 0)) return 0;
  const Mpfr target = lower * Mpfr(kRoundingShare * relative_gap);
  const double extra = Mpfr(bmp::log2(Mpfr(rounding / target))).convert_to<double>();
  const int needed = bits + std::max(64, static_cast<int>(std::ceil(extra)));
  return (needed + 63) / 64 * 64;
}

// The loop shared by bound_worst_case and check_upper_bound; `done(lower,
// upper)` says when to stop. T = double, Mpfr or Rational: the model's
// entries are enclosed in MPFI at the working precision (exactly when they
// fit, else outward), and the adversary searches its double rounding for
// lower-bound candidates.
template <class T>
WorstCaseBound branch_and_bound(const Model<T>& model_in, const Task& task,
                                const WorstCaseOptions& options,
                                const std::function<bool(const Mpfr&, const Mpfr&)>& done) {
  check_model(model_in, task);
  if (options.bits < 2 || options.step_bits < 1) {
    throw std::invalid_argument("worst-case bound: need bits >= 2 and step_bits >= 1");
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<PrecisionScope> scope;
  scope.emplace(options.bits);
  Model<Mpfi> model = model_in.template cast<Mpfi>();
  WorstCaseBound out;
  out.bits_requested = options.bits;
  out.bits = PrecisionScope::current_bits();
  out.lower = Mpfr(-1);
  BoxHeap<Node> heap;
  auto offer_witness = [&](int trigger, const std::vector<double>& content) {
    const Mpfi e = certified_error(model, task, trigger, content);
    const Mpfr low = bmp::lower(e);
    if (low > out.lower) {
      out.lower = low;
      out.witness_trigger = trigger;
      out.witness_content = content;
    }
    return e;
  };
  auto bound_node = [&](ContentBox box) {
    Node node{std::move(box), {}, out.bits, Mpfr(0)};
    node.bound = bound_box(model, task, node.box);
    ++out.boxes;
    // the enclosure at a point is rounding only
    node.rounding = width_of(offer_witness(node.box.trigger, node.bound.vertex));
    std::vector<double> centre(node.box.lo.size());
    for (std::size_t m = 0; m < centre.size(); ++m) {
      centre[m] = 0.5 * (node.box.lo[m] + node.box.hi[m]);
    }
    offer_witness(node.box.trigger, centre);
    return node;
  };
  // raise the precision by one step: later pops re-evaluate older boxes
  auto raise_to = [&](int bits) {
    scope.reset();
    scope.emplace(bits);
    out.bits = PrecisionScope::current_bits();
    model = model_in.template cast<Mpfi>();
    if (!out.witness_content.empty()) offer_witness(out.witness_trigger, out.witness_content);
  };
  std::vector<int> triggers =
      options.triggers.empty() ? task.trigger_positions() : options.triggers;
  if (triggers.empty()) throw std::invalid_argument("worst-case bound: no trigger positions");
  if (options.adversary_witnesses) {
    search::AdversaryOptions ao;
    ao.triggers = triggers;
    const Model<double> model_d = model_in.template cast<double>();
    for (const search::Witness& w : search::maximize_error(model_d, task, ao).per_trigger) {
      offer_witness(w.trigger, flatten_content(w.content));
    }
  }
  for (int j : triggers) heap.push(bound_node(full_content_box(task, j)));
  struct Ops {
    decltype(bound_node)& evaluate_box;
    decltype(raise_to)& raise;
    const std::function<bool(const Mpfr&, const Mpfr&)>& done_fn;
    const WorstCaseOptions& options;
    WorstCaseBound& out;
    Node evaluate(const Node&, ContentBox box) { return evaluate_box(std::move(box)); }
    int choose_split(const Node& node) { return theorems::choose_split(node); }
    bool done(const Mpfr& lower, const Mpfr& upper) { return done_fn(lower, upper); }
    void raise_precision(int new_bits) { raise(new_bits); }
    void on_precision_floor(const Node& node) {
      out.bits_suggested = suggest_bits(out.bits, node.rounding, out.lower, options.relative_gap);
    }
    std::string unsplittable_reason(const Node& node) {
      // rounding is not what limits its bound (more precision cannot help)
      return bmp::isinf(node.upper_bound())
                 ? "cannot split a box whose coordinates are adjacent doubles and "
                   "whose bound is not finite"
                 : "cannot split a box whose coordinates are adjacent doubles";
    }
    void progress(const Mpfr& lower, const Mpfr& upper) {
      if (options.progress) {
        options.progress(out.boxes, lower.convert_to<double>(), upper.convert_to<double>());
      }
    }
  } ops{bound_node, raise_to, done, options, out};
  const bool has_lower = true;  // out.lower starts below every error (-1)
  run_box_search(heap, options, ops, out.lower, has_lower, out.upper, out, t0);
  if (out.lower < 0) {  // no witness had a valid enclosure: only E >= 0
    out.lower = 0;
    out.witness_trigger = 0;
    out.witness_content.clear();
  }
  out.evidence = Evidence::certified(out.bits);
  out.seconds = seconds_since(t0);
  PrecisionScope wide(2 * out.bits);
  out.relative_gap =
      out.lower > 0 ? Mpfr((out.upper - out.lower) / out.lower).convert_to<double>() : INFINITY;
  return out;
}

}  // namespace

ContentBox full_content_box(const Task& task, int trigger) {
  const int vars = content_variables(task);
  return ContentBox{trigger, std::vector<double>(vars, -1.0), std::vector<double>(vars, 1.0)};
}

bool bisect(const ContentBox& box, int m, ContentBox& left, ContentBox& right) {
  const double mid = 0.5 * (box.lo[m] + box.hi[m]);
  if (!(box.lo[m] < mid && mid < box.hi[m])) return false;  // adjacent doubles
  left = box;
  right = box;
  ++left.depth;
  ++right.depth;
  left.hi[m] = mid;
  right.lo[m] = mid;
  return true;
}

BoxBound bound_box(const Model<Mpfi>& model, const Task& task, const ContentBox& box) {
  const int L = task.L, n = task.n, j = box.trigger, cd = task.content_dim();
  const Matrix<Mpfi> X = box_input(task, box);
  // the forward pass over the box, recorded for the reverse pass of the
  // centered form
  const ForwardTape<Mpfi> tape = forward_tape(model, X);
  const auto& heads = model.layers[0];
  std::vector<Matrix<Mpfi>> attention;  // attention[h](i, k) = a^h_ik, zero above the diagonal
  for (std::size_t h = 0; h < heads.size(); ++h) {
    attention.push_back(Matrix<Mpfi>::Constant(L, L, Mpfi(0)));
    for (int i = 0; i < L; ++i) {
      for (int k = 0; k <= i; ++k) attention[h](i, k) = tape.attention(0, h, i, k);
    }
  }
  const bool content_dependent = attention_depends_on_content(attention);
  if (model.attention == AttentionKind::kSoftmax && content_dependent) {
    for (std::size_t h = 0; h < heads.size(); ++h) tighten_softmax(heads[h].A, X, attention[h]);
  }
  BoxBound best;
  best.upper = Mpfr(-1);
  const Mpfi inv_j = Mpfi(1) / Mpfi(j);
  // Centered form, softmax only: needs the value at the box centre and
  // the gradient enclosure over the box (see the header).
  const bool centered = (model.attention == AttentionKind::kSoftmax ||
                         model.attention == AttentionKind::kSoftmaxOffByOne) &&
                        content_dependent;
  Matrix<Mpfi> centre_error;
  std::vector<double> centre(box.lo.size());
  for (std::size_t m = 0; m < centre.size(); ++m) centre[m] = 0.5 * (box.lo[m] + box.hi[m]);
  // (MPFI products are coefficient-based: Eigen's blocked kernels give NaN
  // for MPFI at some sizes, see forward.h)
  std::vector<Matrix<Mpfi>> AX;  // AX[h] row k = (A_h x_k)^T over the box
  if (centered) {
    const Matrix<Mpfi> Xc = make_input<Mpfi>(task, j, content_matrix(task, centre));
    centre_error = forward(model, Xc, false).output - make_target(Xc, j, TargetKind::kPlain);
    for (const auto& h : heads) AX.push_back(X.lazyProduct(h.A.transpose()));
  }
  // the taped rows of query row i with the (tightened) attention enclosures
  const auto centred_rows = [&](int i) {
    std::vector<HeadRow<Mpfi>> rows;
    for (std::size_t h = 0; h < heads.size(); ++h) {
      rows.push_back(tape.rows[0][h][i]);
      for (int k = 0; k <= i; ++k) rows.back().a[k] = attention[h](i, k);
    }
    return rows;
  };
  // G_ik = sum_h a^h_ik M_h - [i = j, 1 <= k <= j] I / j
  auto coefficient_matrix = [&](int i, int k) {
    Matrix<Mpfi> G = Matrix<Mpfi>::Constant(n, n, Mpfi(0));
    for (std::size_t h = 0; h < heads.size(); ++h) G += attention[h](i, k) * heads[h].M;
    if (i == j && k >= 1 && k <= j) {
      for (int d = 0; d < n; ++d) G(d, d) -= inv_j;
    }
    return G;
  };
  for (int i = 0; i < L; ++i) {
    Vector<Mpfi> e = Vector<Mpfi>::Constant(n, Mpfi(0));
    if (heads.size() == 1 && i != j) {
      // one head, no target term: f(X)_i = M (sum_k a_ik x_k) already uses
      // every content variable once, at O(i n + n^2) instead of O(i n^2)
      Vector<Mpfi> v = Vector<Mpfi>::Constant(n, Mpfi(0));
      for (int k = 0; k <= i; ++k) v += attention[0](i, k) * X.row(k).transpose();
      e = heads[0].M.lazyProduct(v);
    } else {
      // f(X)_i - y_i = sum_{k<=i} G_ik x_k
      for (int k = 0; k <= i; ++k) e += coefficient_matrix(i, k).lazyProduct(X.row(k).transpose());
    }
    std::vector<HeadRow<Mpfi>> rows;
    if (centered) {
      rows = centred_rows(i);
      for (int d = 0; d < n; ++d) {
        const Mpfi c = centred_term(heads, model.attention, rows, X, AX, task, box, centre,
                                    centre_error(i, d), i, d);
        e(d) = intersection_of(e(d), c).value_or(e(d));
      }
    }
    for (int d = 0; d < n; ++d) {
      const Mpfr mag = magnitude_of(e(d));  // +inf for a NaN enclosure: never pruned
      if (mag > best.upper) {
        best.upper = mag;
        best.position = i;
        best.coordinate = d;
        // sign of the term: maximize sigma (f - y)_{i,d}
        const bool positive = bmp::upper(e(d)) >= -bmp::lower(e(d));
        best.vertex.assign(box.lo.size(), 0.0);
        best.weight.assign(box.lo.size(), 0.0);
        for (int k = 1; k <= i; ++k) {
          const Matrix<Mpfi> G = coefficient_matrix(i, k);
          for (int c = 0; c < cd; ++c) {
            const int m = content_variable(task, k, c);
            const double g = bmp::median(G(d, kFirstContent + c)).convert_to<double>();
            best.weight[m] = std::abs(g);
            best.vertex[m] = ((g > 0) == positive) ? box.hi[m] : box.lo[m];
          }
        }
        if (centered) {
          // split weights: |dphi/dx_m| over the box (Ratz-Csendes rule C)
          centred_term(heads, model.attention, rows, X, AX, task, box, centre, centre_error(i, d),
                       i, d, &best.weight);
        }
        // variables after i do not enter row i: take their centre
        for (int k = i + 1; k < L; ++k) {
          for (int c = 0; c < cd; ++c) {
            const int m = content_variable(task, k, c);
            best.vertex[m] = 0.5 * (box.lo[m] + box.hi[m]);
          }
        }
      }
    }
  }
  return best;
}

Mpfi certified_error(const Model<Mpfi>& model, const Task& task, int trigger,
                     const std::vector<double>& content) {
  const Matrix<Mpfi> X = make_input<Mpfi>(task, trigger, content_matrix(task, content));
  const auto r = forward(model, X, false);
  const Matrix<Mpfi> Y = make_target(X, trigger, TargetKind::kPlain);
  return linf_error(r.output, Y).value;
}

Mpfr certified_error_lower(const Model<Mpfi>& model, const Task& task, int trigger,
                           const std::vector<double>& content) {
  return bmp::lower(certified_error(model, task, trigger, content));
}

template <class T>
WorstCaseBound bound_worst_case(const Model<T>& model, const Task& task,
                                const WorstCaseOptions& options) {
  const double gap = options.relative_gap;
  WorstCaseBound out =
      branch_and_bound(model, task, options, [gap](const Mpfr& lower, const Mpfr& upper) {
        // upper <= lower (1 + gap)
        return lower > 0 && upper <= lower * (1 + Mpfr(gap));
      });
  if (out.stop_reason == "decided") out.stop_reason = "requested gap reached";
  return out;
}

template WorstCaseBound bound_worst_case(const Model<double>&, const Task&,
                                         const WorstCaseOptions&);
template WorstCaseBound bound_worst_case(const Model<Mpfr>&, const Task&, const WorstCaseOptions&);
template WorstCaseBound bound_worst_case(const Model<Rational>&, const Task&,
                                         const WorstCaseOptions&);

template <class T>
UpperBoundCheck check_upper_bound(const Model<T>& model, const Task& task, double claimed,
                                  const WorstCaseOptions& options) {
  UpperBoundCheck out;
  out.claimed = claimed;
  const Mpfr c(claimed);
  out.bound = branch_and_bound(model, task, options, [&c](const Mpfr& lower, const Mpfr& upper) {
    return upper <= c || lower > c;
  });
  out.evidence = out.bound.evidence;
  if (out.bound.stop_reason == "decided") out.bound.stop_reason = "claim decided";
  if (out.bound.upper <= c) {
    out.verdict = Verdict::kVerified;
    out.margin = Mpfr(c - out.bound.upper).convert_to<double>();
  } else if (out.bound.lower > c) {
    out.verdict = Verdict::kNotVerified;
    out.margin = Mpfr(out.bound.lower - c).convert_to<double>();
  } else {
    out.verdict = Verdict::kUndecided;
  }
  return out;
}

template UpperBoundCheck check_upper_bound(const Model<double>&, const Task&, double,
                                           const WorstCaseOptions&);
template UpperBoundCheck check_upper_bound(const Model<Mpfr>&, const Task&, double,
                                           const WorstCaseOptions&);
template UpperBoundCheck check_upper_bound(const Model<Rational>&, const Task&, double,
                                           const WorstCaseOptions&);

namespace {

// The enclosure lines shared by both reports.
void bound_lines(std::ostringstream& s, const WorstCaseBound& b, const Task& task) {
  PrecisionScope scope(b.bits > 0 ? b.bits : 128);
  s << "worst-case loss E over the whole content box, n = " << task.n << ", L = " << task.L
    << ", triggers " << to_string(task.range) << "\n";
  s << "E >= " << format_down(b.lower, 6) << "  [CERTIFIED] ";
  if (b.witness_trigger == 0) {
    s << "(no witness had a finite enclosure: E >= 0 only)\n";
  } else {
    s << "witness: trigger j = " << b.witness_trigger << ", content";
    const auto old_precision = s.precision(17);  // the witness, reproducibly
    for (double c : b.witness_content) s << " " << c;
    s.precision(old_precision);
    s << "\n";
  }
  s << "E <= " << format_up(b.upper, 6) << "  [CERTIFIED] branch and bound, " << b.boxes
    << " boxes, " << b.seconds << " s, stopped: " << b.stop_reason << "\n";
  if (bmp::isinf(b.upper)) {
    s << "no finite upper bound: the interval evaluation of some box overflowed or gave NaN\n";
  }
  precision_lines(s, b);
  if (b.precision_floor) {
    s << "precision floor: the bound is limited by rounding at " << b.bits << " bits, not by the "
      << "box; ";
    if (b.bits_suggested > 0) {
      s << "about --bits " << b.bits_suggested << " would reach the requested gap (estimate)\n";
    } else {
      s << "more than --bits " << b.bits << " is needed\n";
    }
  }
  s << "relative gap (upper - lower) / lower = " << b.relative_gap << "\n";
}

}  // namespace

std::string summary_text(const WorstCaseBound& bound, const Task& task, double requested_gap) {
  std::ostringstream s;
  bound_lines(s, bound, task);
  gap_verdict_line(s, bound, requested_gap, bound.relative_gap);
  return s.str();
}

std::string summary_text(const UpperBoundCheck& check, const Task& task) {
  std::ostringstream s;
  bound_lines(s, check.bound, task);
  s << "claim: E <= " << check.claimed << "\n";
  claim_verdict_line(s, check.verdict, check.margin,
                     {"(claim - upper)", "(lower - claim, at the witness)",
                      "n/a (lower <= claim < upper when the budget ran out)"},
                     check.bound);
  return s.str();
}

}  // namespace sinkcert::theorems
