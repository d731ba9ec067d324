// SPDX-License-Identifier: MIT
//
// The best-first interval branch and bound shared by the certified worst-case
// loss (worst_case_bound.h) and the certified minimum BOS mass
// (bos_bound.h). Both maximize a quantity Q over boxes of content:
//
//   lower <= Q <= upper,  lower = best certified value at a witness point,
//                         upper = max over live boxes B of upper(B)
//
// Loop: a max-heap of boxes by upper(B) (ties: the deeper box first, so that
// a box that cannot be split is reached instead of the heap cycling through
// its siblings); pop the top, stop once `done(lower, upper)`, else bisect one
// coordinate and push the children whose bound exceeds lower (the others
// cannot hold the maximum; each is handed to the owner's on_pruned, whose
// per-part ends, e.g. one trigger's upper end, must still count it: the box
// cannot hold Q, but it may hold the maximum of its own part). Every live
// box stays below the top, so the enclosure is valid whenever the loop
// stops: a budget (boxes, seconds) that runs out leaves a wider, still
// certified, enclosure.
// Seconds: the budget max_seconds becomes one Deadline (deadline.h) at the
// start of a run, the earlier of it and the options' outer deadline; the
// loop checks it before every box, and the owner hands it to whatever may
// run long inside one box (a box whose evaluation the deadline cut short
// keeps a wider but valid bound; one never evaluated counts as +inf).
// A box's bound is never above its parent's: the supremum over a sub-box is
// at most the parent's, so each child (and a box bounded again after a
// precision raise) keeps the smaller of its own bound and the parent's, and
// the largest bound in the heap never grows (a refinement the deadline cut
// short can be far looser than its parent's).
// Progress: every kProgressSeconds the loop sends the owner's line (the
// enclosure so far) to options.progress, if set.
// Precision: when the rounding width at a point of the box is at least
// kRoundingShare of the gap upper - lower, no bisection can close the gap;
// the precision is raised by step_bits up to the cap, and boxes bounded
// before a raise are bounded again when they reach the top. At the cap the
// search stops with a precision floor. A box whose coordinates are adjacent
// doubles cannot be split and stops the search with the reason its owner
// gives.
// Batches, split by ranks (an owner whose Ops declare splits_boxes): the
// loop pops the B = options.batch best boxes at once (fewer if the heap
// holds fewer, if the stopping rule or the box budget would have stopped
// before one, or at a box that needs the precision raised or cannot be
// split, which is handled alone as above). Their evaluations (two children
// of a split box, or one box bounded again after a raise) are the batch's
// parts k = 0..J-1, J <= 2B; the count depends on the heap alone, never on
// the ranks. Part k is bounded by its owner rank (search/rank_group.h,
// owner(k) = k mod size), on the rank's threads; each bound is written
// exactly (src/exact_parts.h: MPFR values as their binary mantissa and
// exponent), share() gives every rank every part, and every rank applies
// them in the order k = 0..J-1: it takes the part's witnesses, caps the
// bound by the parent's, and pushes the box or hands it to on_pruned. A
// box's bound depends on its box alone (and on what prepare_batch fixed
// before the batch), never on the witnesses of the boxes bounded beside
// it, so the heap, the witnesses, the counters and the enclosure are the
// same bits for any number of ranks and threads; only the order of the
// boxes differs from B = 1, which is the one-box loop above. The seconds
// are checked between batches, and every rank stops when the deadline has
// passed on any of them (any_rank), so every rank stops after the same
// batch.
#pragma once

#include <algorithm>
#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>
#include <queue>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "search/rank_group.h"
#include "src/elapsed.h"
#include "src/evidence.h"
#include "src/exact_parts.h"
#include "src/parallel_tasks.h"
#include "src/scalar_traits.h"
#include "src/verdict_bars.h"
#include "theorems/bounds/deadline.h"
#include "theorems/bounds/progress_lines.h"

namespace sinkcert::theorems::bounds {

// Share of the gap upper - lower that rounding must reach before the
// precision, not the box, counts as the limit.
constexpr double kRoundingShare = 0.5;

// What every run of the loop reports, beside its own enclosure.
struct BoxSearchOutcome {
  // kEnclosed: the stopping rule held (the requested gap reached, or a
  // claim decided); kNotEnclosed: a budget, the precision cap or a box that
  // cannot be split stopped the loop first (the enclosure is still
  // certified). A claim's own verdict (VERIFIED, ...) is its check's.
  Verdict verdict = Verdict::kNotEnclosed;
  Evidence evidence = Evidence::certified(0);  // at the precision used at the end
  long boxes = 0;                              // evaluated boxes (re-evaluations count)
  double seconds = 0.0;
  bool budget_exhausted = false;  // stopped by the box or seconds budget
  // Stopped because rounding, not the box, limits the bound at the cap.
  bool precision_floor = false;
  // Stopped at a box that cannot be split (coordinates at adjacent doubles,
  // or no coordinate at all).
  bool box_unsplittable = false;
  std::string stop_reason;  // why the search stopped, for the report
  int bits_requested = 0;   // the starting precision asked for
  int bits = 0;             // precision used at the end (after any raises)
  // The bars of the "meaning:" line (task_meaning): the options' bars.
  VerdictBars bars;
};

// A budget in boxes alone keeps a run reproducible (the same boxes, whatever
// the load); seconds are a guard against a run that would not end.
constexpr double kNoTimeLimit = std::numeric_limits<double>::infinity();

// Boxes popped at once by the batched loop (BoxSearchOptions::batch): as
// many as keep two ranks, or two threads, busy with one batch (its J <= 2B
// parts: 8, 4 each), and few enough that the order of the boxes stays near
// the one-box loop's (the boxes of a batch are the B best; a batch cannot
// use what its first boxes found; docs/methods.md, "verify bound under
// MPI", compares it with the one-box loop at n = 16).
constexpr int kBoxBatch = 4;

// A batch's boxes run on threads only while a box takes at least this
// long: starting and joining a thread costs tens of microseconds, which
// boxes of a tiny model (n = 5: microseconds each) would not repay; a box
// at n = 16 takes milliseconds to seconds. Which thread bounds a box never
// changes its bits, so this affects the wall time alone.
constexpr double kThreadedBoxSeconds = 1e-3;

// The options both bounds take.
struct BoxSearchOptions {
  double relative_gap = 0.01;  // the gap at which a bound counts as reached
  long max_boxes = 200000;     // evaluated boxes (re-evaluations count), budget
  double max_seconds = 120.0;  // budget, from the start of the run
  // An outer deadline as well (a caller sharing one budget among several
  // runs); the run stops at the earlier of the two.
  Deadline deadline;
  // Progress lines (progress_lines.h) every progress_seconds; none when empty.
  ProgressSink progress;
  double progress_seconds = kProgressSeconds;
  int bits = 128;       // MPFI precision to start with
  int step_bits = 64;   // raise by this much while rounding limits the bound
  int max_bits = 1024;  // cap of the raises (the cap is max(bits, max_bits))
  // What "solves the task" and "sinks" mean in the report's plain words
  // (src/verdict_bars.h); copied into the outcome.
  VerdictBars bars;
  // The ranks of a run under mpirun (search/rank_group.h), or null: one
  // process. A search that splits its first pass by ranks gives every rank
  // the same result as one process, bit for bit (worst_case_search.h,
  // bos_bound.h); the others run on every rank alike.
  const search::RankGroup* ranks = nullptr;
  // Boxes popped at once by a loop split by ranks (splits_boxes above); a
  // fixed number, never the ranks', so that the boxes, and the enclosure,
  // do not depend on them.
  int batch = kBoxBatch;
  // Threads of a rank (0: the hardware's): the parts of a batch it owns,
  // and the softmax vertex bound's; the results are the same on any count.
  int threads = 0;
  int thread_count() const { return threads > 0 ? threads : default_thread_count(); }
  // Threads only while a box of the last batch took this long (tests: 0).
  double threaded_box_seconds = kThreadedBoxSeconds;
  // Lowers max_boxes so that every evaluated box, of box_bytes, fits
  // `memory_bytes` (each may stay in the heap).
  void fit_memory(double box_bytes, double memory_bytes) {
    max_boxes = std::min<long>(max_boxes, static_cast<long>(memory_bytes / box_bytes));
  }
  // The run's deadline, taken at its start: max_seconds from now, or the
  // outer deadline if that comes first.
  Deadline run_deadline() const { return deadline.or_after(max_seconds); }
};

// Node: .upper_bound() (an Mpfr, +inf for NaN), .bits (precision it was
// bounded at), .rounding (width of a point enclosure in the box), .box
// (a ContentBox: .depth and bisect()).
template <class Node>
struct ByUpperBound {
  bool operator()(const Node& a, const Node& b) const {
    if (a.upper_bound() < b.upper_bound()) return true;
    if (b.upper_bound() < a.upper_bound()) return false;
    return a.box.depth < b.box.depth;
  }
};
template <class Node>
using BoxHeap = std::priority_queue<Node, std::vector<Node>, ByUpperBound<Node>>;

// Runs the loop on a non-empty heap, within the box budget of `limits` and until `deadline`.
// `lower` is raised by the owner's evaluations (witnesses); `has_lower` says whether it is a
// certified value yet (before that nothing is pruned and nothing is decided). `upper` is
// written. Node provides upper_bound() and cap_upper(bound) (the smaller of
// its bound and the given one). Ops provides:
//   Node evaluate(const Node& like, ContentBox box)  a box of like's kind
//   int choose_split(const Node&)                    -1: none
//   bool done(const Mpfr& lower, const Mpfr& upper)
//   void raise_precision(int bits)                   bits: the new working precision
//   void on_precision_floor(const Node&)
//   void on_pruned(const Node&)                      a child dropped: bound <= lower
//   std::string unsplittable_reason(const Node&)
//   std::string progress(const Mpfr& lower, const Mpfr& upper)   the text of a progress line
// Whether an owner's Ops split the loop into batches by ranks: it declares
// the type splits_boxes = std::true_type and provides, beside the above,
//   void prepare_batch(const Mpfr& lower)   before each batch's evaluations,
//       on every rank alike (collective calls allowed: e.g. caps not yet
//       computed at the first batch with lower > 0);
//   void bound_part(const Node& like, const ContentBox& box, PartWriter&) const
//       bounds a box of like's kind and writes the node and the witnesses
//       it offers, exactly; called on several threads at once, it writes
//       nothing else;
//   Node take_part(const Node& like, ContentBox box, PartReader&)
//       reads them back, takes the witnesses in order and counts the box
//       (out.boxes); throws on a malformed part.
template <class Ops, class = void>
struct SplitsBoxes : std::false_type {};
template <class Ops>
struct SplitsBoxes<Ops, std::void_t<typename Ops::splits_boxes>> : Ops::splits_boxes {};

// Whether `flag` holds on any rank of the group: each rank r writes its
// flag as part r (r < size), share() gives every rank all of them. A part
// that arrives malformed throws, naming `what`.
bool any_rank(const search::RankGroup& group, bool flag, const std::string& what);

template <class Node, class Ops>
void run_batched_box_search(BoxHeap<Node>& heap, const BoxSearchOptions& limits, Ops& ops,
                            const Mpfr& lower, const bool& has_lower, Mpfr& upper,
                            BoxSearchOutcome& out, std::chrono::steady_clock::time_point t0,
                            const Deadline& deadline, ProgressLines& progress);

// The checks at the top of both loops, on the heap's best box: upper =
// max(its bound, lower); stop when that decides the claim or the box or
// time budget is spent (expired() is called only when boxes remain: under
// several ranks it is collective, and the box count is the same on every
// rank). Otherwise send a progress line and return false.
template <class Node, class Ops, class Expired>
bool stop_at_top(const BoxHeap<Node>& heap, const BoxSearchOptions& limits, Ops& ops,
                 const Mpfr& lower, bool has_lower, Mpfr& upper, BoxSearchOutcome& out,
                 std::chrono::steady_clock::time_point t0, ProgressLines& progress,
                 const Expired& expired) {
  const Node& top = heap.top();
  upper = top.upper_bound() > lower ? top.upper_bound() : lower;
  if (has_lower && ops.done(lower, upper)) {
    out.verdict = Verdict::kEnclosed;
    out.stop_reason = "decided";
    return true;
  }
  out.seconds = seconds_since(t0);
  const bool out_of_boxes = out.boxes >= limits.max_boxes;
  if (out_of_boxes || expired()) {
    out.budget_exhausted = true;
    out.stop_reason = out_of_boxes ? "budget exhausted (boxes)" : "budget exhausted (seconds)";
    return true;
  }
  progress.maybe_send([&] { return ops.progress(lower, upper); });
  return false;
}

// What a loop does with a box taken from the top, here = max(the top's
// bound, lower): kBoundAgain (bounded before a precision raise: bound it
// again), a coordinate to split (>= 0), or kAlone (rounding is the limit,
// or the box cannot be split: raise_or_stop below).
constexpr int kBoundAgain = -2, kAlone = -1;
template <class Node, class Ops>
int classify_box(const Node& node, const Mpfr& here, const Mpfr& lower, bool has_lower,
                 const BoxSearchOutcome& out, Ops& ops, bool& rounding_limited) {
  rounding_limited = false;
  if (node.bits < out.bits) return kBoundAgain;
  const bool finite = !bmp::isinf(node.upper_bound());
  // rounding at a point of the box is a large share of the gap: no
  // bisection can close it at this precision
  const Mpfr gap = here - lower;
  rounding_limited = has_lower && finite && !bmp::isinf(node.rounding) &&
                     node.rounding >= gap * Mpfr(kRoundingShare);
  const int split = rounding_limited ? -1 : ops.choose_split(node);
  return split >= 0 ? split : kAlone;
}

// A box that is not split (popped from the heap, given back to it): when
// rounding is the limit and the precision may still rise, raise it and
// return true (search on); otherwise record why the search stops (the
// precision floor, or the box cannot be split) and return false.
template <class Node, class Ops>
bool raise_or_stop(BoxHeap<Node>& heap, Node node, bool rounding_limited,
                   const BoxSearchOptions& limits, int cap, int& bits, Ops& ops,
                   BoxSearchOutcome& out) {
  if (rounding_limited && bits + limits.step_bits <= cap) {
    bits += limits.step_bits;
    ops.raise_precision(bits);
    heap.push(std::move(node));
    return true;
  }
  if (rounding_limited) {
    out.precision_floor = true;
    ops.on_precision_floor(node);
    out.stop_reason = "precision floor: at " + std::to_string(out.bits) +
                      " bits (the cap) rounding is at least half the gap";
  } else {
    out.box_unsplittable = true;
    out.stop_reason = ops.unsplittable_reason(node);
  }
  heap.push(std::move(node));
  return false;
}

template <class Node, class Ops>
void run_box_search(BoxHeap<Node>& heap, const BoxSearchOptions& limits, Ops& ops,
                    const Mpfr& lower, const bool& has_lower, Mpfr& upper, BoxSearchOutcome& out,
                    std::chrono::steady_clock::time_point t0, const Deadline& deadline,
                    ProgressLines& progress) {
  if constexpr (SplitsBoxes<Ops>::value) {
    run_batched_box_search(heap, limits, ops, lower, has_lower, upper, out, t0, deadline, progress);
    return;
  }
  int bits = limits.bits;
  const int cap = std::max(limits.bits, limits.max_bits);
  while (true) {
    if (stop_at_top(heap, limits, ops, lower, has_lower, upper, out, t0, progress,
                    [&] { return deadline.expired(); }))
      return;
    Node node = heap.top();
    heap.pop();
    bool rounding_limited = false;
    const int split = classify_box(node, upper, lower, has_lower, out, ops, rounding_limited);
    if (split == kBoundAgain) {
      Node again = ops.evaluate(node, node.box);
      again.cap_upper(node.upper_bound());
      heap.push(std::move(again));
      continue;
    }
    if (split >= 0) {
      decltype(node.box) left, right;
      bisect(node.box, split, left, right);
      for (auto* child : {&left, &right}) {
        Node c = ops.evaluate(node, std::move(*child));
        // upper(child) <= min(upper(child), upper(parent))
        c.cap_upper(node.upper_bound());
        if (!has_lower || c.upper_bound() > lower) {
          heap.push(std::move(c));
        } else {
          ops.on_pruned(c);
        }
      }
      if (heap.empty()) {  // every box fell below the witness: Q = lower
        upper = lower;
        out.verdict = ops.done(lower, upper) ? Verdict::kEnclosed : Verdict::kNotEnclosed;
        out.stop_reason = "every box fell below the witness";
        return;
      }
      continue;
    }
    if (raise_or_stop(heap, std::move(node), rounding_limited, limits, cap, bits, ops, out))
      continue;
    return;
  }
}

template <class Node, class Ops>
void run_batched_box_search(BoxHeap<Node>& heap, const BoxSearchOptions& limits, Ops& ops,
                            const Mpfr& lower, const bool& has_lower, Mpfr& upper,
                            BoxSearchOutcome& out, std::chrono::steady_clock::time_point t0,
                            const Deadline& deadline, ProgressLines& progress) {
  const search::RankGroup& group = search::ranks_or_local(limits.ranks);
  const int batch = std::max(1, limits.batch);
  const int threads = limits.thread_count();
  int bits = limits.bits;
  const int cap = std::max(limits.bits, limits.max_bits);
  // seconds per box of the last batch (the first batch runs on threads)
  double box_seconds = limits.threaded_box_seconds;
  // one evaluation of the batch: the box, and the popped node it comes from
  struct Job {
    std::size_t item;
    decltype(heap.top().box) box;
  };
  while (true) {
    // the same on every rank: the deadline passed on any of them
    if (stop_at_top(heap, limits, ops, lower, has_lower, upper, out, t0, progress,
                    [&] { return any_rank(group, deadline.expired(), "box search"); }))
      return;
    // The batch: the best boxes, while the one-box loop would still go on.
    std::vector<Node> items;
    std::vector<bool> split_item;  // the item's children (else: the item bounded again)
    std::vector<Job> jobs;
    while (static_cast<int>(items.size()) < batch && !heap.empty()) {
      const Node& next = heap.top();
      const Mpfr here = next.upper_bound() > lower ? next.upper_bound() : lower;
      if (!items.empty() && ((has_lower && ops.done(lower, here)) ||
                             out.boxes + static_cast<long>(jobs.size()) >= limits.max_boxes)) {
        break;
      }
      bool rounding_limited = false;
      const int split = classify_box(next, here, lower, has_lower, out, ops, rounding_limited);
      if (split == kAlone) {
        if (!items.empty()) break;  // alone, as the next batch's first box
        Node node = next;
        heap.pop();
        if (raise_or_stop(heap, std::move(node), rounding_limited, limits, cap, bits, ops, out))
          break;
        return;
      }
      items.push_back(next);
      heap.pop();
      const Node& item = items.back();
      split_item.push_back(split >= 0);
      if (split >= 0) {
        decltype(item.box) left, right;
        bisect(item.box, split, left, right);
        jobs.push_back({items.size() - 1, std::move(left)});
        jobs.push_back({items.size() - 1, std::move(right)});
      } else {
        jobs.push_back({items.size() - 1, item.box});
      }
    }
    if (items.empty()) continue;  // the precision was raised
    // part k: job k, bounded by its owner
    ops.prepare_batch(lower);
    std::vector<std::vector<double>> parts(jobs.size());
    std::vector<std::size_t> mine;
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      if (group.owns(static_cast<int>(k))) mine.push_back(k);
    }
    // threads only for boxes that take long enough to pay for starting them
    const int use = box_seconds >= limits.threaded_box_seconds ? threads : 1;
    const auto b0 = std::chrono::steady_clock::now();
    run_tasks(static_cast<int>(mine.size()), use, [&](int t) {
      const Job& job = jobs[mine[static_cast<std::size_t>(t)]];
      PartWriter w(parts[mine[static_cast<std::size_t>(t)]]);
      ops.bound_part(items[job.item], job.box, w);
    });
    if (!mine.empty()) {  // wall seconds per box of this batch, on `use` threads
      box_seconds = seconds_since(b0) * use / static_cast<double>(mine.size());
    }
    if (group.size() > 1) group.share(parts);
    // every rank alike, in part order
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      const Job& job = jobs[k];
      const Node& parent = items[job.item];
      PartReader r(parts[k]);
      Node c = [&] {
        try {
          Node read = ops.take_part(parent, job.box, r);
          if (!r.at_end()) throw std::runtime_error("a part longer than written");
          return read;
        } catch (const std::exception& e) {
          throw std::runtime_error("box search: part " + std::to_string(k) + " of a batch of " +
                                   std::to_string(jobs.size()) + ": " + e.what());
        }
      }();
      // upper(child) <= min(upper(child), upper(parent))
      c.cap_upper(parent.upper_bound());
      if (!split_item[job.item] || !has_lower || c.upper_bound() > lower) {
        heap.push(std::move(c));
      } else {
        ops.on_pruned(c);
      }
    }
    if (heap.empty()) {  // every box fell below the witness: Q = lower
      upper = lower;
      out.verdict = ops.done(lower, upper) ? Verdict::kEnclosed : Verdict::kNotEnclosed;
      out.stop_reason = "every box fell below the witness";
      return;
    }
  }
}

// A progress line's text for a maximized quantity `name` (CERTIFIED):
//   "B boxes, NAME in [lower, upper] [CERTIFIED], relative gap G, S s of the budget left"
// (lower and upper to three digits, in their directions only roughly: a
// progress line is not a result; the gap is omitted while lower <= 0).
std::string enclosure_progress(const std::string& name, long boxes, const Mpfr& lower,
                               const Mpfr& upper, const Deadline& deadline);

// What stopped a run, in a table cell's words: "gap reached", "precision
// floor at B bits", "no finite bound" (upper_finite false), "budget
// exhausted", else the stop reason.
std::string stop_status(const BoxSearchOutcome& b, bool upper_finite);

// The report's precision line(s): raised, or allocated differently from the
// request (Boost allocates MPFR precision in decimal digits: a request of p
// bits gets bits_for_digits10(digits10_for_bits(p)) >= p).
void precision_lines(std::ostringstream& s, const BoxSearchOutcome& b);

// The JSON form of one certified end, under `name` and `name`_exact: the
// nearest double (a number, for plots and scripts; it may fall on the wrong
// side of the true value) and the exact decimal of the MPFR bound (a string:
// the certified value). An infinite end: the double's JSON null
// (nlohmann) and "inf" / "-inf".
void put_certified_end(nlohmann::json& j, const std::string& name, const Mpfr& x);

// The outcome's own fields as JSON: evidence, boxes, seconds, stop_reason,
// bits, bits_requested, budget_exhausted, precision_floor,
// box_unsplittable (the verdict is the caller's: an enclosure's or a
// claim's).
nlohmann::json outcome_json(const BoxSearchOutcome& b);

// "verdict: ENCLOSED [lo, hi]  margin (requested gap G - achieved) = M
// precision: P bits  evidence: E" for a run asked for a relative gap (NOT
// ENCLOSED [lo, hi] when it stopped before the gap; the enclosure is still
// certified). `enclosure` is the "[lo, hi]" text.
void gap_verdict_line(std::ostringstream& s, const BoxSearchOutcome& b, double requested_gap,
                      double achieved_gap, const std::string& enclosure);

// "verdict: V  margin <the verdict's text> = M  precision: ... evidence: ..."
// for a claim (precision and evidence from the run b); the undecided text
// is printed in place of the margin.
struct ClaimMarginTexts {
  const char* verified;
  const char* not_verified;
  const char* undecided;
};
void claim_verdict_line(std::ostringstream& s, Verdict verdict, double margin,
                        const ClaimMarginTexts& texts, const BoxSearchOutcome& b);

// A box search's report: `lines(s, bound, task)` writes the enclosure, then
// the verdict line of a gap target (gap_summary) or of a claim, after the
// line "claim: <relation> C" with C as written (claim_summary); last the line
// "meaning: <task_meaning(bound)>", what the enclosure says about the task in
// plain words, against the run's bars (src/verdict_bars.h). `enclosure(bound)` is the
// "[lo, hi]" text of the verdict line.
template <typename Bound, typename TaskT, typename Lines>
std::string gap_summary(const Bound& bound, const TaskT& task, Lines lines, double requested_gap) {
  std::ostringstream s;
  lines(s, bound, task);
  gap_verdict_line(s, bound, requested_gap, bound.relative_gap, enclosure_text(bound));
  s << "meaning: " << task_meaning(bound) << "\n";
  return s.str();
}

template <typename Check, typename TaskT, typename Lines>
std::string claim_summary(const Check& check, const TaskT& task, Lines lines, const char* relation,
                          const ClaimMarginTexts& texts) {
  std::ostringstream s;
  lines(s, check.bound, task);
  s << "claim: " << relation << " " << check.claimed.text << "\n";
  claim_verdict_line(s, check.verdict, check.margin, texts, check.bound);
  s << "meaning: " << task_meaning(check.bound) << "\n";
  return s.str();
}

}  // namespace sinkcert::theorems::bounds
