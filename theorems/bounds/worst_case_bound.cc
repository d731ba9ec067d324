// SPDX-License-Identifier: MIT
#include "theorems/bounds/worst_case_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>
#include <sstream>
#include <stdexcept>

#include "search/certified_forward.h"
#include "search/rank_group.h"
#include "src/exact_parts.h"
#include "src/forward.h"
#include "src/forward_vjp.h"
#include "src/interval.h"
#include "src/json_reader.h"
#include "src/linf_error.h"
#include "src/parallel_tasks.h"
#include "src/table_writer.h"
#include "theorems/bounds/deep_worst_case_bound.h"
#include "theorems/bounds/relu_vertex_bound.h"
#include "theorems/bounds/softmax_vertex_bound.h"
#include "theorems/bounds/worst_case_search.h"

namespace sinkcert::theorems::bounds {

namespace {

template <class I>
Matrix<I> box_input(const Task& task, const ContentBox& box) {
  std::vector<I> flat;
  for (std::size_t m = 0; m < box.lo.size(); ++m)
    flat.emplace_back(Endpoint<I>(box.lo[m]), Endpoint<I>(box.hi[m]));
  return make_input<I>(task, box.trigger, unflatten_content(task, flat));
}

template <class I>
Matrix<I> content_matrix(const Task& task, const std::vector<double>& content) {
  return matrix_cast<I>(unflatten_content(task, content));
}

// Attention enclosures wider than this come from the content, not from
// rounding: MPFI at >= 64 bits leaves widths near 2^-60 relative; double
// intervals leave a few ulps per operation, about 2^-40 over a row of
// L = 64 weights of a sum of L exponentials (longer rows leave more; the
// test only picks which of two valid enclosures to form, so a row taken
// for content-dependent by its rounding costs time, not soundness).
template <class I>
constexpr double kContentDependentWidth = std::is_same_v<I, DoubleInterval> ? 1e-10 : 1e-15;

template <class I>
bool attention_depends_on_content(const std::vector<Matrix<I>>& attention) {
  for (const auto& a : attention) {
    for (int i = 0; i < a.rows(); ++i) {
      for (int k = 0; k <= i; ++k) {
        if (width_of(a(i, k)) > kContentDependentWidth<I>) return true;
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
// The key differences split by columns: P, the columns that are points in
// every row (the flags), differ exactly, and the others hold a distinct
// variable per row, so the enclosure of their part is the same (up to
// rounding) with each row's product formed once:
//   A (x_m - x_k) = A_P (x_m - x_k)_P + A_Q x_m,Q - A_Q x_k,Q,
// O(L n^2 + L^2 |P| n) instead of O(L^2 n^2).
template <class I>
void tighten_softmax(const Matrix<I>& A, const Matrix<I>& X, Matrix<I>& a) {
  const int L = static_cast<int>(X.rows()), n = static_cast<int>(X.cols());
  std::vector<int> point_columns, free_columns;
  for (int l = 0; l < n; ++l) {
    bool point = true;
    for (int m = 0; m < L && point; ++m) point = lower_of(X(m, l)) == upper_of(X(m, l));
    (point ? point_columns : free_columns).push_back(l);
  }
  // free_part[m] = A_Q x_m,Q
  std::vector<Vector<I>> free_part(L, Vector<I>::Constant(n, I(0)));
  for (int m = 0; m < L; ++m) {
    for (const int l : free_columns) free_part[m] += A.col(l) * X(m, l);
  }
  // key_delta[m L + k] = A (x_m - x_k), shared by every query row i >= m, k
  std::vector<Vector<I>> key_delta(static_cast<std::size_t>(L) * L);
  for (int m = 0; m < L; ++m) {
    for (int k = 0; k < L; ++k) {
      if (m == k) continue;
      Vector<I> delta = free_part[m] - free_part[k];
      for (const int l : point_columns) {
        // (x_m - x_k)_l, a difference of points
        const I diff = X(m, l) - X(k, l);
        if (!(lower_of(diff) == 0 && upper_of(diff) == 0)) delta += A.col(l) * diff;
      }
      key_delta[m * L + k] = std::move(delta);
    }
  }
  for (int i = 0; i < L; ++i) {
    const Vector<I> query = X.row(i).transpose();
    for (int k = 0; k <= i; ++k) {
      // enclosures of sum_m exp(lo d_m) and sum_m exp(hi d_m)
      I low_sum(0), high_sum(0);
      for (int m = 0; m <= i; ++m) {
        if (m == k) continue;
        // d_m = x_i^T A (x_m - x_k)
        const I e = exp_of(I(query.dot(key_delta[m * L + k])));
        low_sum += point_of(lower_of(e));
        high_sum += point_of(upper_of(e));
      }
      // a_ik in [1 / (1 + sum exp(hi d)), 1 / (1 + sum exp(lo d))]
      const I low = I(1) / (I(1) + point_of(upper_of(high_sum)));
      const I high = I(1) / (I(1) + point_of(lower_of(low_sum)));
      const I range(lower_of(low), upper_of(high));
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
template <class I>
I centred_term(const std::vector<Head<I>>& heads, AttentionKind kind,
               const std::vector<HeadRow<I>>& rows, const Matrix<I>& X,
               const std::vector<Matrix<I>>& AX, const Task& task, const ContentBox& box,
               const std::vector<double>& centre, const I& value_at_centre, int i, int d,
               std::vector<double>* grad_magnitude = nullptr) {
  const int n = task.n, cd = task.content_dim(), j = box.trigger;
  Matrix<I> grad = Matrix<I>::Constant(i + 1, n, I(0));
  Vector<I> e_d = Vector<I>::Constant(n, I(0));
  e_d(d) = I(1);
  for (std::size_t h = 0; h < heads.size(); ++h) {
    head_row_vjp(kind, heads[h], X, rows[h], &e_d, nullptr, &grad, nullptr, nullptr, &AX[h]);
  }
  if (i == j && d >= kFirstContent && d < kFirstContent + cd) {
    const I inv_j = I(1) / I(j);
    for (int k = 1; k <= j; ++k) grad(k, d) -= inv_j;
  }
  I range = value_at_centre;
  for (int k = 1; k <= i; ++k) {
    for (int c = 0; c < cd; ++c) {
      const int m = content_variable(task, k, c);
      const I offset(Endpoint<I>(box.lo[m] - centre[m]), Endpoint<I>(box.hi[m] - centre[m]));
      range += grad(k, kFirstContent + c) * offset;
      if (grad_magnitude) {
        (*grad_magnitude)[m] = to_double(magnitude_of(grad(k, kFirstContent + c)));
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
  task.validate();
}

using Node = BoxNode<BoxBound>;

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

// The softmax vertex bound over `triggers` split by ranks: rank r runs
// run(its triggers, k = r, r + size, ... of the list); part k holds trigger
// k's cap (if certified) and, in the part k = r, rank r's totals. Every
// rank gets the bound of the whole list: its caps in the list's order (each
// trigger's cap depends on the model, the lower end and the deadline only,
// softmax_vertex_bound.h), applies and reason as rank 0 found them (they
// depend on the model alone), slices and evaluations summed, seconds the
// longest rank's, deadline_passed if any rank's passed.
SoftmaxVertexBound shared_vertex_bound(
    const std::vector<int>& triggers, const search::RankGroup& ranks,
    const std::function<SoftmaxVertexBound(const std::vector<int>&)>& run) {
  const int count = static_cast<int>(triggers.size());
  std::vector<int> mine;
  for (int k = 0; k < count; ++k) {
    if (ranks.owns(k)) mine.push_back(triggers[k]);
  }
  SoftmaxVertexBound own;
  if (!mine.empty()) own = run(mine);
  std::vector<std::vector<double>> parts(triggers.size());
  for (int k = 0; k < count; ++k) {
    if (!ranks.owns(k)) continue;
    PartWriter w(parts[k]);
    const auto cap = std::find_if(own.caps.begin(), own.caps.end(),
                                  [&](const TriggerCap& c) { return c.trigger == triggers[k]; });
    w.put_int(cap != own.caps.end() ? 1 : 0);
    if (cap != own.caps.end()) w.put(cap->upper);
    if (k == ranks.rank()) {
      w.put_int(own.applies ? 1 : 0);
      w.put(own.reason);
      w.put_int(own.slices);
      w.put_int(own.evaluations);
      w.put(own.seconds);
      w.put_int(own.deadline_passed ? 1 : 0);
    }
  }
  ranks.share(parts);
  SoftmaxVertexBound all;
  for (int k = 0; k < count; ++k) {
    PartReader r(parts[k]);
    if (r.get_int() == 1) all.caps.push_back({triggers[k], r.get_mpfr()});
    if (k < ranks.size()) {
      const bool applies = r.get_int() == 1;
      const std::string reason = r.get_string();
      if (k == 0) {
        all.applies = applies;
        all.reason = reason;
      }
      all.slices += r.get_int();
      all.evaluations += r.get_int();
      all.seconds = std::max(all.seconds, r.get_double());
      const bool passed = r.get_int() == 1;  // read whatever the ranks before said
      all.deadline_passed = all.deadline_passed || passed;
    }
    if (!r.at_end()) throw std::logic_error("softmax vertex bound: a part longer than written");
  }
  return all;
}

// Share of the time left that the softmax vertex bound may take: its caps
// only help the boxes, and the first pass over every trigger's box needs
// the rest (without it the enclosure of the triggers left is infinite). At
// n = L = 16 the first pass takes about 20 s and the vertex bound minutes
// (448 units of seconds each), so most of the budget is the vertex
// bound's.
constexpr double kVertexBudgetShare = 0.8;

}  // namespace

// min(kVertexBudgetShare r, r - kFirstPassMargin b t), at least 0: the
// first pass's b boxes left, t seconds each, keep twice their measured
// time (header)
double vertex_bound_seconds(double remaining, int boxes_left, double seconds_per_box) {
  const double reserve = kFirstPassMargin * boxes_left * seconds_per_box;
  return std::max(0.0, std::min(kVertexBudgetShare * remaining, remaining - reserve));
}

namespace {

// The single-layer box kind of the driver (worst_case_search.h): the
// coefficient form of the header; each box offers the vertex of its worst
// term (whose enclosure's width, rounding only, is the node's rounding) and
// its centre.
struct SingleLayerEvaluator {
  const Task& task;
  // per trigger, a certified upper bound on its whole worst case (the ReLU
  // or softmax vertex bound), or empty: each box's upper is capped by its
  // trigger's
  std::vector<TriggerCap> caps;
  // computes the caps once a certified lower bound is known (the softmax
  // vertex bound aims at it, until the deadline), or empty
  std::function<std::vector<TriggerCap>(const Mpfr&, const Deadline&)> caps_from_lower;
  // the same caps with the triggers split by ranks (each rank computes its
  // own, then every rank holds all of them), or empty: caps_from_lower on
  // every rank
  std::function<std::vector<TriggerCap>(const Mpfr&, const Deadline&, const search::RankGroup&)>
      shared_caps_from_lower;
  // Under several ranks the first pass is split by trigger
  // (worst_case_search.h): a first-pass box's bound depends on its box and
  // its trigger's cap alone, never on the witnesses found before it.
  static constexpr bool kSharesFirstPass = true;
  // the gap asked: a box is bounded in double intervals first when their
  // rounding is a small share of it (bound_box_double_first)
  double relative_gap = 0.01;
  // the first pass's boxes (one per trigger) this process has not bounded
  // yet, and the trigger of its first box
  int first_pass_left = 0;
  int first_trigger = 1;
  // share_caps's timed box (the whole box of first_trigger, before its
  // cap), which first_bound takes instead of bounding that box again
  std::optional<BoxBound> timed_first = std::nullopt;
  bool caps_pending() const { return static_cast<bool>(caps_from_lower); }
  // What evaluate() does first, at the first box entered with lower > 0;
  // the first pass's pace is measured on its first box (kept for the
  // pass, timed_first), each rank bounding its share of the boxes left.
  void share_caps(const Model<Mpfi>& model, const Mpfr& lower, const Deadline& deadline,
                  const search::RankGroup& ranks) {
    double per_box = 0.0;
    if (first_pass_left > 0) {
      timed_first.emplace();
      per_box = timed_bound(model, full_content_box(task, first_trigger), *timed_first);
    }
    const int mine = (first_pass_left + ranks.size() - 1) / ranks.size();
    compute_caps(lower, deadline, mine, per_box, &ranks);
  }
  void write_bound(const BoxBound& b, PartWriter& w) const { write_box_bound(b, w); }
  BoxBound read_bound(PartReader& r) const { return read_box_bound(r); }
  Mpfi point_error(const Model<Mpfi>& model, int trigger,
                   const std::vector<double>& content) const {
    return certified_error(model, task, trigger, content);
  }
  void evaluate(const Model<Mpfi>& model, Node& node, const Mpfr& lower, const TakeWitness& take,
                const Deadline& deadline, ProgressLines&) {
    if (node.box.depth == 0 && first_pass_left > 0) --first_pass_left;
    if (caps_from_lower && lower > 0 && !deadline.expired()) {
      // this box first, timed: the pace of the first pass, whose boxes left
      // keep their time (vertex_bound_seconds); the rest of the budget is
      // the boxes'
      const double per_box = timed_bound(model, node.box, node.bound);
      compute_caps(lower, deadline, first_pass_left, per_box, nullptr);
      cap_and_offer(model, node, take);
      return;
    }
    bound(model, node, lower, take, deadline);
  }
  // The box's bound (before its cap) into `out`; returns the seconds it took.
  double timed_bound(const Model<Mpfi>& model, const ContentBox& box, BoxBound& out) const {
    const auto t0 = std::chrono::steady_clock::now();
    out = bound_box_double_first(model, task, box, relative_gap);
    return seconds_since(t0);
  }
  // The caps at `lower`, the vertex bound leaving `boxes` first-pass boxes
  // of `per_box` seconds their time (vertex_bound_seconds); split by
  // trigger under `ranks` when given.
  void compute_caps(const Mpfr& lower, const Deadline& deadline, int boxes, double per_box,
                    const search::RankGroup* ranks) {
    const Deadline vertex_deadline =
        deadline.or_after(vertex_bound_seconds(deadline.remaining(), boxes, per_box));
    caps = ranks != nullptr && shared_caps_from_lower
               ? shared_caps_from_lower(lower, vertex_deadline, *ranks)
               : caps_from_lower(lower, vertex_deadline);
    caps_from_lower = nullptr;
  }
  // The first pass's box once the caps are known: the box phase's bound
  // (share_caps's timed box for the first trigger's).
  void first_bound(const Model<Mpfi>& model, Node& node, const Mpfr& lower, const TakeWitness& take,
                   const Deadline& deadline) const {
    if (timed_first && node.box.depth == 0 && node.box.trigger == first_trigger) {
      node.bound = *timed_first;
      cap_and_offer(model, node, take);
      return;
    }
    bound(model, node, lower, take, deadline);
  }
  // The box's bound with the caps as they are (reads only: the box phase
  // calls it on several threads at once); a box takes milliseconds, so
  // neither the lower end nor the deadline enters it.
  void bound(const Model<Mpfi>& model, Node& node, const Mpfr&, const TakeWitness& take,
             const Deadline&) const {
    node.bound = bound_box_double_first(model, task, node.box, relative_gap);
    cap_and_offer(model, node, take);
  }
  // The trigger's cap on the box's bound, and the box's witnesses.
  void cap_and_offer(const Model<Mpfi>& model, Node& node, const TakeWitness& take) const {
    const int j = node.box.trigger;
    // a box's worst case is at most its trigger's
    for (const TriggerCap& cap : caps) {
      if (cap.trigger == j && !(node.bound.upper <= cap.upper)) node.bound.upper = cap.upper;
    }
    const Mpfi at_vertex = point_error(model, j, node.bound.vertex);
    take(j, node.bound.vertex, at_vertex);
    node.rounding = width_of(at_vertex);
    std::vector<double> centre(node.box.lo.size());
    for (std::size_t m = 0; m < centre.size(); ++m) {
      centre[m] = 0.5 * (node.box.lo[m] + node.box.hi[m]);
    }
    take(j, centre, point_error(model, j, centre));
  }
  void counted(const BoxBound&) {}
  int split(const Node& node) { return choose_split(node); }
};

// The search with `done` as its stopping rule; gated attention with the deep
// bound's box forms (see the header).
template <class T>
WorstCaseBound branch_and_bound(const Model<T>& model, const Task& task,
                                const WorstCaseOptions& options,
                                const std::function<bool(const Mpfr&, const Mpfr&)>& done) {
  check_model(model, task);
  if (model.attention == AttentionKind::kGated) {
    return centred_form_search(model, task, options, done);
  }
  // one deadline for the vertex bounds and the search
  WorstCaseOptions budgeted = options;
  budgeted.deadline = options.run_deadline();
  SingleLayerEvaluator evaluator{task, {}, {}, {}};
  evaluator.relative_gap = options.relative_gap;
  std::string note;
  const std::vector<int> triggers =
      options.triggers.empty() ? task.trigger_positions() : options.triggers;
  evaluator.first_pass_left = static_cast<int>(triggers.size());
  if (!triggers.empty()) evaluator.first_trigger = triggers.front();
  std::string budget_note;
  if (model.attention == AttentionKind::kRelu) {
    const ReluVertexBound vertex =
        relu_vertex_bound(model, task, triggers, budgeted.deadline, options.progress);
    if (vertex.deadline_passed) budget_note = "the ReLU vertex bound cut short by the deadline";
    if (vertex.applies) {
      evaluator.caps = vertex.caps;
      std::ostringstream s;
      s << "every box's upper bound capped by its trigger's ReLU vertex bound (scores of fixed "
           "sign over the box; key zonotopes, query vertices and curvature, "
        << vertex.cells << " query cells split, stopped at " << vertex.stop << ", "
        << vertex.seconds << " s)";
      note = s.str();
    } else {
      note = "ReLU vertex bound not used: " + vertex.reason;
    }
  }
  if (model.attention == AttentionKind::kSoftmax) {
    // the vertex bound on the triggers `which`
    const auto vertex_run = [&](const Mpfr& lower, const Deadline& deadline,
                                const std::vector<int>& which) {
      SoftmaxVertexOptions so;
      so.lower = lower.convert_to<double>();
      so.relative_gap = options.relative_gap;
      so.deadline = deadline;
      so.progress = options.progress;
      so.progress_seconds = options.progress_seconds;
      so.threads = options.thread_count();
      return softmax_vertex_bound(model, task, which, so);
    };
    // the notes of a run over every trigger, and its caps
    const auto vertex_caps = [&](const SoftmaxVertexBound& vertex) {
      if (vertex.deadline_passed) {
        budget_note =
            "the softmax vertex bound cut short by the deadline (candidates left "
            "untried count as failed)";
      }
      std::ostringstream s;
      if (!vertex.applies) {
        s << "softmax vertex bound not used: " << vertex.reason;
      } else {
        s << "softmax vertex bound: " << vertex.caps.size() << " of " << triggers.size()
          << " triggers capped (exchangeable keys, slices of the target mean, vertices and "
             "curvature; "
          << vertex.slices << " slices, " << vertex.seconds << " s)";
      }
      note = s.str();
      return vertex.applies ? vertex.caps : std::vector<TriggerCap>{};
    };
    // (the two lambdas above are copied in: they end with this block)
    evaluator.caps_from_lower = [vertex_run, vertex_caps, &triggers](const Mpfr& lower,
                                                                     const Deadline& deadline) {
      return vertex_caps(vertex_run(lower, deadline, triggers));
    };
    evaluator.shared_caps_from_lower = [vertex_run, vertex_caps, &triggers](
                                           const Mpfr& lower, const Deadline& deadline,
                                           const search::RankGroup& ranks) {
      return vertex_caps(shared_vertex_bound(triggers, ranks, [&](const std::vector<int>& which) {
        return vertex_run(lower, deadline, which);
      }));
    };
  }
  WorstCaseBound out =
      run_worst_case_search<BoxBound>(model, task, budgeted, done, evaluator, "worst-case bound");
  out.note = note;
  // how the boxes were bounded (the same words on every rank)
  out.note += std::string(note.empty() ? "" : "; ") +
              "boxes bounded in outward-rounded double intervals first, in MPFI at the "
              "precision below where double's rounding is not small against the gap";
  if (!budget_note.empty()) add_budget_note(out, budget_note);
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

namespace {

template <class I>
BoxBound bound_box_in(const Model<I>& model, const Task& task, const ContentBox& box,
                      bool tighten_every_term) {
  const int L = task.L, n = task.n, j = box.trigger, cd = task.content_dim();
  const Matrix<I> X = box_input<I>(task, box);
  // the forward pass over the box, recorded for the reverse pass of the
  // centered form
  const ForwardTape<I> tape = forward_tape(model, X);
  const auto& heads = model.layers[0];
  std::vector<Matrix<I>> attention;  // attention[h](i, k) = a^h_ik, zero above the diagonal
  for (std::size_t h = 0; h < heads.size(); ++h) {
    attention.push_back(Matrix<I>::Constant(L, L, I(0)));
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
  const I inv_j = I(1) / I(j);
  // Centered form, softmax only: needs the value at the box centre and
  // the gradient enclosure over the box (see the header).
  const bool centered = (model.attention == AttentionKind::kSoftmax ||
                         model.attention == AttentionKind::kSoftmaxOffByOne) &&
                        content_dependent;
  Matrix<I> centre_error;
  std::vector<double> centre(box.lo.size());
  for (std::size_t m = 0; m < centre.size(); ++m) centre[m] = 0.5 * (box.lo[m] + box.hi[m]);
  // (MPFI products are coefficient-based: Eigen's blocked kernels give NaN
  // for MPFI at some sizes, see forward.h)
  std::vector<Matrix<I>> AX;  // AX[h] row k = (A_h x_k)^T over the box
  if (centered) {
    const Matrix<I> Xc = make_input<I>(task, j, content_matrix<I>(task, centre));
    centre_error =
        search::certified_forward(model, Xc, false).output - make_target(Xc, j, TargetKind::kPlain);
    for (const auto& h : heads) AX.push_back(X.lazyProduct(h.A.transpose()));
  }
  // the taped rows of query row i with the (tightened) attention enclosures
  const auto centred_rows = [&](int i) {
    std::vector<HeadRow<I>> rows;
    for (std::size_t h = 0; h < heads.size(); ++h) {
      rows.push_back(tape.rows[0][h][i]);
      for (int k = 0; k <= i; ++k) rows.back().a[k] = attention[h](i, k);
    }
    return rows;
  };
  // G_ik = sum_h a^h_ik M_h - [i = j, 1 <= k <= j] I / j
  auto coefficient_matrix = [&](int i, int k) {
    Matrix<I> G = Matrix<I>::Constant(n, n, I(0));
    for (std::size_t h = 0; h < heads.size(); ++h) G += attention[h](i, k) * heads[h].M;
    if (i == j && k >= 1 && k <= j) {
      for (int d = 0; d < n; ++d) G(d, d) -= inv_j;
    }
    return G;
  };
  // Plain enclosures of every term (i, d), then their centred forms where
  // they can matter: upper(B) = max over terms of |plain meet centred|, and
  // a term's tightened magnitude is at most its plain one, so a term whose
  // plain magnitude is below a value some term attains (the tightened value
  // of the largest plain term) is neither the maximum nor the first term
  // attaining it. The result, and the term chosen, are those of tightening
  // every term.
  std::vector<Vector<I>> plain(L);
  std::vector<std::vector<Endpoint<I>>> plain_magnitude(L);
  for (int i = 0; i < L; ++i) {
    Vector<I> e = Vector<I>::Constant(n, I(0));
    if (heads.size() == 1 && i != j) {
      // one head, no target term: f(X)_i = M (sum_k a_ik x_k) already uses
      // every content variable once, at O(i n + n^2) instead of O(i n^2)
      Vector<I> v = Vector<I>::Constant(n, I(0));
      for (int k = 0; k <= i; ++k) v += attention[0](i, k) * X.row(k).transpose();
      e = heads[0].M.lazyProduct(v);
    } else {
      // f(X)_i - y_i = sum_{k<=i} G_ik x_k
      for (int k = 0; k <= i; ++k) e += coefficient_matrix(i, k).lazyProduct(X.row(k).transpose());
    }
    plain[i] = std::move(e);
    for (int d = 0; d < n; ++d) plain_magnitude[i].push_back(magnitude_of(plain[i](d)));
  }
  // the term (i, d) tightened by its centred form
  std::vector<HeadRow<I>> rows;
  int rows_of = -1;
  const auto tightened = [&](int i, int d) {
    if (!centered) return plain[i](d);
    if (rows_of != i) {
      rows = centred_rows(i);
      rows_of = i;
    }
    const I c = centred_term(heads, model.attention, rows, X, AX, task, box, centre,
                             centre_error(i, d), i, d);
    return intersection_of(plain[i](d), c).value_or(plain[i](d));
  };
  Endpoint<I> threshold(-1);
  if (centered && !tighten_every_term) {
    int top_i = 0, top_d = 0;
    for (int i = 0; i < L; ++i) {
      for (int d = 0; d < n; ++d) {
        if (plain_magnitude[i][d] > plain_magnitude[top_i][top_d]) {
          top_i = i;
          top_d = d;
        }
      }
    }
    threshold = magnitude_of(tightened(top_i, top_d));
  }
  I best_term;
  for (int i = 0; i < L; ++i) {
    for (int d = 0; d < n; ++d) {
      if (plain_magnitude[i][d] < threshold) continue;
      const I e = tightened(i, d);
      const Endpoint<I> mag = magnitude_of(e);  // +inf for a NaN enclosure: never pruned
      if (mag > best.upper) {
        best.upper = mag;
        best.position = i;
        best.coordinate = d;
        best_term = e;
      }
    }
  }
  // the chosen term's vertex and split weights
  const int i = best.position, d = best.coordinate;
  // sign of the term: maximize sigma (f - y)_{i,d}
  const bool positive = upper_of(best_term) >= -lower_of(best_term);
  best.vertex.assign(box.lo.size(), 0.0);
  best.weight.assign(box.lo.size(), 0.0);
  for (int k = 1; k <= i; ++k) {
    const Matrix<I> G = coefficient_matrix(i, k);
    for (int c = 0; c < cd; ++c) {
      const int m = content_variable(task, k, c);
      const double g = to_double(G(d, kFirstContent + c));
      best.weight[m] = std::abs(g);
      best.vertex[m] = ((g > 0) == positive) ? box.hi[m] : box.lo[m];
    }
  }
  if (centered) {
    // split weights: |dphi/dx_m| over the box (Ratz-Csendes rule C)
    if (rows_of != i) rows = centred_rows(i);
    centred_term(heads, model.attention, rows, X, AX, task, box, centre, centre_error(i, d), i, d,
                 &best.weight);
  }
  // variables after i do not enter row i: take their centre
  for (int k = i + 1; k < L; ++k) {
    for (int c = 0; c < cd; ++c) {
      const int m = content_variable(task, k, c);
      best.vertex[m] = 0.5 * (box.lo[m] + box.hi[m]);
    }
  }
  return best;
}

}  // namespace

BoxBound bound_box(const Model<Mpfi>& model, const Task& task, const ContentBox& box,
                   bool tighten_every_term) {
  return bound_box_in(model, task, box, tighten_every_term);
}

BoxBound bound_box_double_first(const Model<Mpfi>& model, const Task& task, const ContentBox& box,
                                double relative_gap, bool* used_double) {
  if (used_double) *used_double = false;
  if (relative_gap >= kMinDoubleGap) {
    const Model<DoubleInterval> fast = model.template cast<DoubleInterval>();
    BoxBound b = bound_box_in(fast, task, box, false);
    // the rounding of double at one point of the box: the error's enclosure
    // at the box's centre, whose width is rounding alone
    std::vector<double> centre(box.lo.size());
    for (std::size_t m = 0; m < centre.size(); ++m) centre[m] = 0.5 * (box.lo[m] + box.hi[m]);
    const Matrix<DoubleInterval> Xc =
        make_input<DoubleInterval>(task, box.trigger, content_matrix<DoubleInterval>(task, centre));
    const DoubleInterval at_centre = linf_error(search::certified_forward(fast, Xc, false).output,
                                                make_target(Xc, box.trigger, TargetKind::kPlain))
                                         .value;
    const double upper = b.upper.convert_to<double>();
    // accepted when finite and its rounding is below kDoubleRoundingShare of
    // the gap asked at this bound, and below kDoubleRoundingCeiling of it
    const double share =
        std::min(kDoubleRoundingShare * std::min(relative_gap, 1.0), kDoubleRoundingCeiling);
    if (std::isfinite(upper) && upper > 0 && width_of(at_centre) <= share * upper) {
      if (used_double) *used_double = true;
      return b;
    }
  }
  return bound_box_in(model, task, box, false);
}

void write_box_bound(const BoxBound& b, PartWriter& w) {
  w.put(b.upper);
  w.put_int(b.position);
  w.put_int(b.coordinate);
  w.put(b.vertex);
  w.put(b.weight);
}

BoxBound read_box_bound(PartReader& r) {
  BoxBound b;
  b.upper = r.get_mpfr();
  b.position = static_cast<int>(r.get_int());
  b.coordinate = static_cast<int>(r.get_int());
  b.vertex = r.get_doubles();
  b.weight = r.get_doubles();
  return b;
}

Mpfi certified_error(const Model<Mpfi>& model, const Task& task, int trigger,
                     const std::vector<double>& content) {
  const Matrix<Mpfi> X = make_input<Mpfi>(task, trigger, content_matrix<Mpfi>(task, content));
  // a point input: O(L) exponentials a softmax row (certified_forward.h)
  const auto r = search::certified_forward(model, X, false);
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
  return bound_to_gap(options.relative_gap, [&](const auto& done) {
    return branch_and_bound(model, task, options, done);
  });
}

template WorstCaseBound bound_worst_case(const Model<double>&, const Task&,
                                         const WorstCaseOptions&);
template WorstCaseBound bound_worst_case(const Model<Mpfr>&, const Task&, const WorstCaseOptions&);
template WorstCaseBound bound_worst_case(const Model<Rational>&, const Task&,
                                         const WorstCaseOptions&);

template <class T>
UpperBoundCheck check_upper_bound(const Model<T>& model, const Task& task, const Claim& claimed,
                                  const WorstCaseOptions& options) {
  return check_claim(
      claimed, [&](const auto& done) { return branch_and_bound(model, task, options, done); });
}

template UpperBoundCheck check_upper_bound(const Model<double>&, const Task&, const Claim&,
                                           const WorstCaseOptions&);
template UpperBoundCheck check_upper_bound(const Model<Mpfr>&, const Task&, const Claim&,
                                           const WorstCaseOptions&);
template UpperBoundCheck check_upper_bound(const Model<Rational>&, const Task&, const Claim&,
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
  if (bmp::isinf(b.upper) && b.triggers_unbounded > 0) {
    s << "no finite upper bound: " << b.triggers_unbounded
      << " trigger(s) not reached before the deadline (--seconds)\n";
  } else if (bmp::isinf(b.upper)) {
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
  if (!b.note.empty()) s << b.note << "\n";
  if (std::isfinite(b.attack_lower)) {
    s << "attack (round 0, seed 0";
    if (b.attack_triggers < static_cast<int>(b.per_trigger.size())) {
      s << ", on " << b.attack_triggers << " of " << b.per_trigger.size() << " triggers";
    }
    s << "; its witnesses offered before branching): E >= " << format_down(Mpfr(b.attack_lower), 6)
      << "  [SEARCH(lower bound), certified at its witness]\n";
  }
  if (!b.budget_note.empty()) s << "budget: " << b.budget_note << "\n";
  s << "relative gap (upper - lower) / lower = " << b.relative_gap << "\n";
  // where the gap is: each trigger's own worst case, enclosed
  for (const TriggerBound& t : b.per_trigger) {
    s << "  trigger j = " << t.trigger << ": " << format_down(t.lower, 6)
      << " <= E_j <= " << format_up(t.upper, 6) << "  [CERTIFIED] " << t.boxes << " boxes\n";
  }
}

}  // namespace

std::string enclosure_text(const WorstCaseBound& b) {
  PrecisionScope scope(b.bits > 0 ? b.bits : 128);
  return "E in [" + format_down(b.lower, 6) + ", " + format_up(b.upper, 6) + "]";
}

std::string task_meaning(const WorstCaseBound& b) {
  PrecisionScope scope(b.bits > 0 ? b.bits : 128);
  // E >= 0 always; before any witness the lower end is a placeholder below 0
  const Mpfr lower = b.lower > 0 ? b.lower : Mpfr(0);
  std::string text = solves_verdict(lower, b.upper, "CERTIFIED", b.bars).text;
  if (bmp::isinf(b.upper)) text += " (no finite upper bound)";
  return text;
}

std::string summary_text(const WorstCaseBound& bound, const Task& task, double requested_gap) {
  return gap_summary(bound, task, bound_lines, requested_gap);
}

namespace {

nlohmann::json bound_json(const WorstCaseBound& b, const Task& task) {
  PrecisionScope scope(b.bits > 0 ? b.bits : 128);
  nlohmann::json j = outcome_json(b);
  j["quantity"] = "worst-case loss E over the whole content box";
  j["task"] = {{"n", task.n}, {"L", task.L}, {"trigger_range", to_string(task.range)}};
  put_certified_end(j, "lo", b.lower);
  put_certified_end(j, "hi", b.upper);
  j["relative_gap"] = std::isfinite(b.relative_gap) ? nlohmann::json(b.relative_gap) : nullptr;
  if (b.witness_trigger == 0) {
    j["witness"] = nullptr;
  } else {
    j["witness"] = {{"trigger", b.witness_trigger}, {"content", b.witness_content}};
  }
  nlohmann::json per = nlohmann::json::array();
  for (const TriggerBound& t : b.per_trigger) {
    nlohmann::json p = {{"trigger", t.trigger}, {"boxes", t.boxes}};
    put_certified_end(p, "lo", t.lower);
    put_certified_end(p, "hi", t.upper);
    per.push_back(p);
  }
  j["per_trigger"] = per;
  if (!b.note.empty()) j["note"] = b.note;
  // the attack's certified value (null: it did not run) and what the budget left out
  j["attack_lo"] = std::isfinite(b.attack_lower) ? nlohmann::json(b.attack_lower) : nullptr;
  j["attack_triggers"] = b.attack_triggers;
  if (!b.budget_note.empty()) j["budget_note"] = b.budget_note;
  j["meaning"] = task_meaning(b);
  j["tolerance"] = b.bars.tolerance_text;
  return j;
}

}  // namespace

nlohmann::json to_json(const WorstCaseBound& bound, const Task& task, double requested_gap) {
  nlohmann::json j = bound_json(bound, task);
  j["verdict"] =
      to_string(bound.verdict == Verdict::kEnclosed ? Verdict::kEnclosed : Verdict::kNotEnclosed);
  j["requested_gap"] = requested_gap;
  return j;
}

nlohmann::json to_json(const UpperBoundCheck& check, const Task& task) {
  nlohmann::json j = bound_json(check.bound, task);
  j["verdict"] = to_string(check.verdict);
  j["claim"] = "E <= " + check.claimed.text;
  j["claimed"] = check.claimed.approx();
  j["margin"] =
      check.verdict == Verdict::kUndecided ? nlohmann::json(nullptr) : nlohmann::json(check.margin);
  return j;
}

std::optional<Matrix<double>> witness_input(const WorstCaseBound& bound, const Task& task) {
  if (bound.witness_trigger == 0) return std::nullopt;
  return make_input(task, bound.witness_trigger, unflatten_content(task, bound.witness_content));
}

std::string summary_text(const UpperBoundCheck& check, const Task& task) {
  return claim_summary(check, task, bound_lines, "E <=",
                       {"(claim - upper)", "(lower - claim, at the witness)",
                        "n/a (lower <= claim < upper when the budget ran out)"});
}

}  // namespace sinkcert::theorems::bounds
