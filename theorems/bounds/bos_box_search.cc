// SPDX-License-Identifier: MIT
#include "theorems/bounds/bos_box_search.h"

#include <mutex>
#include <stdexcept>
#include <type_traits>

#include "search/rank_group.h"
#include "src/parallel_tasks.h"

namespace sinkcert::theorems::bounds {

void append_bos_cases(const Task& task, int h, std::vector<BosCase>& cases) {
  const std::vector<int> triggers = task.trigger_positions();
  for (int i = 1; i < task.L; ++i) {
    std::vector<int> js;
    for (int j : triggers) {
      if (j < i || (j > i && (js.empty() || js.back() < i))) js.push_back(j);
    }
    for (int j : js) cases.push_back({h, i, j});
  }
}

int choose_bos_split(const BosNode& node) {
  const ContentBox& box = node.box;
  int split = -1;
  double best = -1.0;
  const bool widest = box.depth % 2 == 1;
  for (std::size_t l = 0; l < box.lo.size(); ++l) {
    const double mid = 0.5 * (box.lo[l] + box.hi[l]);
    if (!(box.lo[l] < mid && mid < box.hi[l])) continue;
    const double score = widest ? box.hi[l] - box.lo[l] : node.slope[l];
    if (score > best) {
      best = score;
      split = static_cast<int>(l);
    }
  }
  if (best > 0 || split < 0) return split;
  for (std::size_t l = 0; l < box.lo.size(); ++l) {
    const double mid = 0.5 * (box.lo[l] + box.hi[l]);
    if (!(box.lo[l] < mid && mid < box.hi[l])) continue;
    if (box.hi[l] - box.lo[l] > box.hi[split] - box.lo[split]) split = static_cast<int>(l);
  }
  return split;
}

void write_bos_part(const BosNode& node, const std::vector<BosOffer>& offers, PartWriter& w) {
  w.put_int(1);
  w.put(node.upper);
  w.put(node.rounding);
  w.put_int(node.bits);
  w.put(node.slope);
  w.put_int(static_cast<long>(offers.size()));
  for (const BosOffer& o : offers) {
    w.put(o.first);
    w.put(o.second);
  }
}

bool read_bos_part(PartReader& r, BosNode& node, std::vector<BosOffer>& offers) {
  const long bounded = r.get_int();
  if (bounded != 0 && bounded != 1) {
    throw std::runtime_error("a box part that does not start with 0 or 1");
  }
  if (bounded == 0) {
    if (!r.at_end()) throw std::runtime_error("a box part longer than written");
    return false;
  }
  node.upper = r.get_mpfr();
  node.rounding = r.get_mpfr();
  node.bits = static_cast<int>(r.get_int());
  node.slope = r.get_doubles();
  offers.clear();
  for (long o = r.get_int(); o > 0; --o) {
    std::vector<double> content = r.get_doubles();
    offers.emplace_back(std::move(content), r.get_mpfi());
  }
  if (!r.at_end()) throw std::runtime_error("a box part longer than written");
  return true;
}

void run_bos_box_search(const BosBoxSearch& search, const BosBoundOptions& options,
                        const std::function<bool(const Mpfr&, const Mpfr&)>& done, BosBound& out,
                        const bool& have_witness, std::chrono::steady_clock::time_point t0,
                        const Deadline& deadline, ProgressLines& progress) {
  if (search.cases.empty()) {
    throw std::invalid_argument(search.name + ": no non-trigger row i >= 1");
  }
  BoxHeap<BosNode> heap;
  const auto full_box = [&](const BosCase& c) { return search.full_box(c); };
  const auto push_unbounded = [&](const BosCase& c) {  // not evaluated: bounds nothing
    const Mpfr infinity = std::numeric_limits<Mpfr>::infinity();
    heap.push(BosNode{c.h, c.i, full_box(c), infinity, out.bits, infinity, {}});
  };
  // the box (h, i, box) bounded, its witnesses recorded, written to w
  const auto write_part = [&](int h, int i, ContentBox box, PartWriter& w) {
    std::vector<BosOffer> offers;
    const BosRecord record = [&](const std::vector<double>& content, const Mpfi& q) {
      offers.emplace_back(content, q);
    };
    write_bos_part(search.bound(h, i, std::move(box), record), offers, w);
  };
  // reads it back: false for a box not bounded; else the node and its
  // witnesses taken in order, the box counted
  const auto read_part = [&](int h, int i, ContentBox box, PartReader& r, BosNode& node) {
    node = BosNode{h, i, std::move(box), Mpfr(0), 0, Mpfr(0), {}};
    std::vector<BosOffer> offers;
    if (!read_bos_part(r, node, offers)) return false;
    ++out.boxes;
    for (const BosOffer& o : offers) search.take(h, i, node.box.trigger, o.first, o.second);
    return true;
  };
  const int count = static_cast<int>(search.cases.size());
  const search::RankGroup& group = search::ranks_or_local(options.ranks);
  // The first pass: case k is part k (one process owns every part); its
  // owner bounds its box, on the rank's threads (each case writes its own
  // part), then every rank takes the parts in case order.
  std::vector<std::vector<double>> parts(search.cases.size());
  std::vector<int> mine;
  for (int k = 0; k < count; ++k) {
    if (group.owns(k)) mine.push_back(k);
  }
  std::mutex progress_mutex;  // ProgressLines is not thread-safe
  int done_here = 0;
  const int threads = options.thread_count();
  run_tasks(static_cast<int>(mine.size()), threads, [&](int t) {
    const BosCase& c = search.cases[static_cast<std::size_t>(mine[static_cast<std::size_t>(t)])];
    PartWriter w(parts[static_cast<std::size_t>(mine[static_cast<std::size_t>(t)])]);
    if (deadline.expired()) {
      w.put_int(0);
      return;
    }
    write_part(c.h, c.i, full_box(c), w);
    const std::lock_guard<std::mutex> lock(progress_mutex);
    ++done_here;
    progress.maybe_send([&] {
      return group.size() > 1 ? "first pass: " + std::to_string(done_here) +
                                    " of this rank's cases (head, row, trigger) bounded, " +
                                    std::to_string(count) + " in all"
                              : search.first_pass_line(c);
    });
  });
  if (group.size() > 1) group.share(parts);
  for (int k = 0; k < count; ++k) {
    const BosCase& c = search.cases[k];
    PartReader r(parts[k]);
    BosNode node;
    bool bounded = false;
    try {
      bounded = read_part(c.h, c.i, full_box(c), r, node);
    } catch (const std::exception& e) {
      throw std::runtime_error(search.name + ": first pass, part " + std::to_string(k) + ": " +
                               e.what());
    }
    if (!bounded) {
      push_unbounded(c);
      continue;
    }
    heap.push(std::move(node));
  }
  struct Ops {
    const BosBoxSearch& search;
    const std::function<bool(const Mpfr&, const Mpfr&)>& done_fn;
    decltype(write_part)& bound_box_part;
    decltype(read_part)& take_box_part;
    // the box phase split by ranks (box_search.h): a box's bound depends on
    // its box (and head, row) alone
    using splits_boxes [[maybe_unused]] = std::true_type;
    void prepare_batch(const Mpfr&) {}
    void bound_part(const BosNode& like, const ContentBox& box, PartWriter& w) const {
      bound_box_part(like.head, like.row, box, w);
    }
    BosNode take_part(const BosNode& like, ContentBox box, PartReader& r) {
      BosNode node;
      if (!take_box_part(like.head, like.row, std::move(box), r, node)) {
        throw std::runtime_error("a box of the box phase not bounded");
      }
      return node;
    }
    // (never called: the loop of an owner that splits boxes takes parts)
    BosNode evaluate(const BosNode&, ContentBox) {
      throw std::logic_error("BOS box search: a box evaluated outside a batch");
    }
    int choose_split(const BosNode& node) { return choose_bos_split(node); }
    bool done(const Mpfr& lower, const Mpfr& upper) { return done_fn(lower, upper); }
    void raise_precision(int new_bits) { search.raise(new_bits); }
    void on_precision_floor(const BosNode&) {}
    // the bound has no per-part ends: a pruned box leaves the enclosure as is
    void on_pruned(const BosNode&) {}
    std::string unsplittable_reason(const BosNode&) {
      // no box (q has no coordinate, n = 3) or adjacent doubles
      return search.content_dim == 0 ? "no content coordinate to split (n = 3)"
                                     : "cannot split a box whose coordinates are adjacent doubles";
    }
    const long& boxes;
    const Deadline& deadline;
    std::string progress(const Mpfr& lower, const Mpfr& upper) {
      return enclosure_progress(search.quantity, boxes, lower, upper, deadline);
    }
  } ops{search, done, write_part, read_part, out.boxes, deadline};
  run_box_search(heap, options, ops, out.deficit_lower, have_witness, out.deficit_upper, out, t0,
                 deadline, progress);
}

}  // namespace sinkcert::theorems::bounds
