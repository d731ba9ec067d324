// SPDX-License-Identifier: MIT
//
// The driver shared by the single-layer (worst_case_bound.h) and the deep
// (deep_worst_case_bound.h) certified worst-case loss: both enclose
//
//   E(theta) = max_j sup_C e(X(j, C))
//
// by the branch and bound of box_search.h, and differ only in how one box is
// bounded, how a box is split and how e(X) is enclosed at a point. The
// driver owns everything else:
//  - the witnesses: every point offered is evaluated in MPFI, and the lower
//    end of its enclosure of e(X), if above the best so far, becomes
//      lower = max over witnesses of lower(enclosure of e(X))   CERTIFIED;
//    before branching the attack (search/attack.h, seed 0, round 0 only:
//    reproducible) offers its per-trigger witnesses, each enclosure
//    intersected with the attack's own certificate of the same e(X)
//    (with_attack_certificate), so that
//      lower >= the attack's certified value            (attack_lower)
//    on single-layer and deep models alike;
//  - the precision raises (the model is enclosed again at the new precision
//    and the best witness re-evaluated);
//  - the per-trigger summary at the end:
//      lower_j = best witness of trigger j,
//      upper_j = max(lower_j, max over the boxes of trigger j, live or
//                pruned, of upper(B)),
//    so E = max_j of the trigger's worst case lies in [max lower_j, max upper_j]
//    and each trigger's own worst case lies in [lower_j, upper_j]. The
//    pruned boxes count: a box is pruned when upper(B) <= lower, the best
//    witness of any trigger, so it cannot hold E, but it may hold its own
//    trigger's worst case; a trigger whose boxes were all pruned has no live
//    box, and its best witness alone would be a lower bound, not an upper
//    one;
//  - the stopping rules: a relative gap, upper <= lower (1 + gap), or a
//    claim, decided once upper <= claim or lower > claim.
// The budget: one Deadline (deadline.h) from options.max_seconds at the
// start, handed to the attack (on as many triggers as fit its work limit and
// its share of the budget, evenly spaced, see attack_triggers; a budget note
// says when that is not all of them, or none), to every box's evaluation
// (which may cut its own refinements short) and to the loop. Before it, every
// trigger gets the values' hull bound (value_hull_bound.h: a few forward
// passes; +inf for relu and sigmoid attention), which caps each of its boxes.
// The first pass bounds each trigger's whole box; a trigger reached after the
// deadline keeps its hull bound alone (true, if loose; +inf where there is
// none), so a run stopped there reports a valid enclosure, finite for the
// normalizations the hull covers. Progress lines (options.progress) come from
// the first pass (triggers done, an estimate of the time left at the pace so
// far), from inside long evaluations, and from the loop (the enclosure so
// far).
// Several ranks (options.ranks, search/rank_group.h; an Evaluator that
// declares kSharesFirstPass): the first pass is split by trigger. A
// first-pass box's bound depends on its box and on its trigger's cap alone,
// never on the witnesses found before it (they only raise `lower`); the
// caps are computed once, at the first box entered with lower > 0. So with
// lower > 0 after the attack (or no caps to compute), every rank computes
// the caps at that same lower (split by trigger, share_caps), then rank
// r bounds the triggers k = r, r + K, ... (k-th of the list), recording the
// witnesses each box offers with their MPFI enclosures; share() gives every
// rank every part (src/exact_parts.h: exactly, MPFR values with their
// precision), and every rank takes the witnesses and pushes the nodes in
// trigger order, as one process does. The heap, the witnesses and every
// counter are then one process's; the loop after it is split by batch
// (box_search.h: each box of a batch bounded by Evaluator::bound, which
// reads the caps and the lower end as the batch found it, never the
// witnesses found beside it, by its owner rank, then applied in batch
// order on every rank): the enclosure is the same bits for any K. Both
// evaluators split: the single-layer one (caps from the vertex bounds)
// and the deep one (no caps; a box the deadline cuts short is its owner's
// bound, shared like any other). Rank 0 decides whether
// the attack runs (it depends on the time left) for every rank. With caps pending and no positive
// lower (no attack witness) the first pass runs whole on every rank. A rank past the deadline
// leaves its boxes unbounded
// (+inf) as one process would; only then can ranks differ (each holds a
// valid enclosure; rank 0's is printed).
// When the precision floor stops the run, the suggested starting precision is
//   bits + log2(rounding / (kRoundingShare * relative_gap * lower)),
// rounded up to a multiple of 64 (at least one step of 64 above bits).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "search/attack.h"
#include "search/rank_group.h"
#include "src/exact_parts.h"
#include "src/interval.h"
#include "src/parallel_tasks.h"
#include "theorems/bounds/box_search.h"
#include "theorems/bounds/deadline.h"
#include "theorems/bounds/progress_lines.h"
#include "theorems/bounds/value_hull_bound.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::theorems::bounds {

// A box of the heap with its bound (BoxBound or DeepBoxBound).
template <class Bound>
struct BoxNode {
  ContentBox box;
  Bound bound;
  int bits = 0;   // precision the bound was computed at
  Mpfr rounding;  // width of the enclosure of e(X) at a point of the box (rounding only)
  const Mpfr& upper_bound() const { return bound.upper; }
  void cap_upper(const Mpfr& parent) {
    if (parent < bound.upper) bound.upper = parent;
  }
};

// bits + log2(rounding / (kRoundingShare * relative_gap * lower)), rounded up
// to a multiple of 64; 0 when lower <= 0 or the rounding is not finite.
inline int suggest_bits(int bits, const Mpfr& rounding, const Mpfr& lower, double relative_gap) {
  if (!(lower > 0) || bmp::isinf(rounding) || !(rounding > 0)) return 0;
  const Mpfr target = lower * Mpfr(kRoundingShare * relative_gap);
  const double extra = Mpfr(bmp::log2(Mpfr(rounding / target))).convert_to<double>();
  const int needed = bits + std::max(64, static_cast<int>(std::ceil(extra)));
  return (needed + 63) / 64 * 64;
}

// Offers a witness (trigger, content) with the enclosure e of e(X) there.
using TakeWitness = std::function<void(int, const std::vector<double>&, const Mpfi&)>;

// A witness a box offered, as recorded by its rank for the others.
struct WitnessOffer {
  int trigger = 0;
  std::vector<double> content;
  Mpfi e;
};

// A bounded box as a part of a share (src/exact_parts.h, exactly):
//   1, the evaluator's bound (write_bound), rounding, bits,
//   the offers' count, then each offer's trigger, content and enclosure;
// a box not bounded (past the deadline in the first pass) is the part 0.
template <class Bound, class Evaluator>
void write_box_part(const Evaluator& evaluator, const BoxNode<Bound>& node,
                    const std::vector<WitnessOffer>& offers, PartWriter& w) {
  w.put_int(1);
  evaluator.write_bound(node.bound, w);
  w.put(node.rounding);
  w.put_int(node.bits);
  w.put_int(static_cast<long>(offers.size()));
  for (const WitnessOffer& o : offers) {
    w.put_int(o.trigger);
    w.put(o.content);
    w.put(o.e);
  }
}

// Reads a part written by write_box_part: false for a box not bounded;
// else the node (its box given) and the offers. Throws when the part ends
// early, holds a value no writer writes, or is longer than written.
template <class Bound, class Evaluator>
bool read_box_part(const Evaluator& evaluator, PartReader& r, BoxNode<Bound>& node,
                   std::vector<WitnessOffer>& offers) {
  const long bounded = r.get_int();
  if (bounded == 0) {
    if (!r.at_end()) throw std::runtime_error("a box part longer than written");
    return false;
  }
  if (bounded != 1) throw std::runtime_error("a box part that does not start with 0 or 1");
  node.bound = evaluator.read_bound(r);
  node.rounding = r.get_mpfr();
  node.bits = static_cast<int>(r.get_int());
  const long count = r.get_int();
  if (count < 0) throw std::runtime_error("a box part with a negative count of witnesses");
  offers.clear();
  for (long o = 0; o < count; ++o) {
    WitnessOffer offer;
    offer.trigger = static_cast<int>(r.get_int());
    offer.content = r.get_doubles();
    offer.e = r.get_mpfi();
    offers.push_back(std::move(offer));
  }
  if (!r.at_end()) throw std::runtime_error("a box part longer than written");
  return true;
}

// Whether an Evaluator splits the first pass by ranks: it declares
// kSharesFirstPass = true and provides
//   bool caps_pending() const      its per-trigger caps not yet computed;
//   void share_caps(const Model<Mpfi>&, const Mpfr& lower, const Deadline&,
//                   const search::RankGroup&)
//       computes them as its first evaluate() would at this lower, each
//       rank its own triggers' share, and gives every rank all of them;
//   int first_pass_left             the first pass's boxes this process has
//       not bounded; the driver sets 0 when the first pass ends;
//   void write_bound(const Bound&, PartWriter&) const;
//   Bound read_bound(PartReader&) const   exactly (src/exact_parts.h);
//   void first_bound(const Model<Mpfi>&, BoxNode<Bound>&, const Mpfr& lower,
//                    const TakeWitness&, const Deadline&) const
//       what evaluate() does once the caps are known, without progress
//       lines; safe on several threads at once;
//   void bound(const Model<Mpfi>&, BoxNode<Bound>&, const Mpfr& lower,
//              const TakeWitness&, const Deadline&) const
//       the box phase's bound of a box: it reads the caps (known, or pending
//       with lower <= 0) and the lower end fixed before the batch, never the
//       witnesses found beside it; safe on several threads at once;
//   void counted(const Bound&)     every bounded box, on every rank in part
//       order (the evaluator's own tallies, e.g. boxes cut by the deadline).
// Such an evaluator splits the box phase too (box_search.h, splits_boxes).
template <class E, class = void>
struct SharesFirstPass : std::false_type {};
template <class E>
struct SharesFirstPass<E, std::void_t<decltype(E::kSharesFirstPass)>>
    : std::bool_constant<E::kSharesFirstPass> {};

// Share of the remaining budget the attack may take: half. Its witnesses
// only raise the lower end, but the boxes' own witnesses do not replace
// them on deep models (the Theorem 2 path model of seed 0 at n = L = 16:
// 4.65e-11 from the boxes' points, 2.98e-9 from the attack's), and an
// enclosure whose lower end is far below the truth reads as a gap the
// bound did not close.
constexpr double kAttackBudgetShare = 0.5;
// Share for a model of several layers: three quarters. Its boxes' own
// witnesses fall further short (results/benchmarks/deep_heldout.txt,
// softmax_4x4_s9 at n = L = 16: 3.21e-2 from the boxes' points within
// 60 s, 6.94e-2 from the attack), its upper end at n = 16 stays far from
// the lower one either way, and its expected round (below, twice the idle
// figure) overstates the measured one: that model's round, estimated at
// 32 s, took 18.8 s, which the half share of a minute (30 s) turned away.
constexpr double kDeepAttackBudgetShare = 0.75;
// The expected seconds of round 0 of the attack on this model, by the cost
// model of its kind (search/attack.h, attack_round_fits):
//   unscreened (deep, softpick, gated): kAttackSecondsPerWork x attack_work,
//     attack_work = layers heads L^4 n^2;
//   screened (single-layer softmax, softmax-off-by-one, relu,
//     relu-count-all, sigmoid; search/vertex_move_screen.h):
//     screened_attack_seconds_per_work(n) x screened_attack_work,
//     screened_attack_work = heads L^3 n^2.
// Seconds per unit of search::attack_work, a guess on the safe side:
// measured (Release, shared 2-core machine) about 1 s per 2^24 on an idle
// machine (attack.h; the 2 x 2 path model above: 4.2 s at work 2^26) and
// 1.8 s per 2^24 with the other core busy; twice the idle figure.
constexpr double kAttackSecondsPerWork = 2.0 / 16777216.0;
// Seconds per unit of search::screened_attack_work, on the safe side:
// `sinkcert attack` (round 0, seed 0; Release, the 2-core machine shared,
// load average about 2.5) measured in wall seconds
//   n = L = 16, softmax seed 0 of results/benchmarks/pytorch_models/
//     (2^20):  0.47 s (4.5e-7 per unit: the fixed costs of a small round);
//   n = L = 32, softmax seed 0 trained by scripts/train_pytorch_models.py
//     (2^25):  6.1 s (1.8e-7);
//   n = 16, L = 64, the n = 16 softmax model at L = 64 (2^26): 15.7 s
//     (2.3e-7; the relu model of seed 0 there: 12.1 s, 1.8e-7);
// long sequences cost the most per unit (attack.h: n = 16, L = 256, 2.5e-7
// of CPU; 1534 s of wall time for the recipe's model there, 3.6e-7 a unit,
// results/benchmarks/scaling.txt), still below this. Twice the largest of
// the rounds that take seconds, 2 x 2.3e-7, rounded up: the other core may
// be busy, and an attack that overruns its share takes the boxes' time.
constexpr double kScreenedAttackSecondsPerWork = 4.7e-7;
// Above n = 16 a unit costs less (the round's fixed costs spread over more
// work): measured 1.8e-7 at n = L = 32 (above), and at n = L = 64 on the
// recipe's models of results/benchmarks/scaling_models/ (work 2^30):
// softmax 132.5 s (1.2e-7), ReLU 76.4 s (7.1e-8). The expected seconds per
// unit are therefore kScreenedAttackSecondsPerWork sqrt(16 / n) for
// n > 16: 3.3e-7 at n = 32 and 2.35e-7 at n = 64, still about twice the
// measured figures.
inline double screened_attack_seconds_per_work(int n) {
  return n > 16 ? kScreenedAttackSecondsPerWork * std::sqrt(16.0 / n)
                : kScreenedAttackSecondsPerWork;
}
inline double attack_seconds(const Task& task, ModelKind kind, AttentionKind attention, int layers,
                             int heads) {
  return search::VertexMoveScreen::applies(kind, attention, layers)
             ? screened_attack_seconds_per_work(task.n) * search::screened_attack_work(task, heads)
             : kAttackSecondsPerWork * search::attack_work(task, layers, heads);
}

// The share of the time left that round 0 of the attack may take:
// kDeepAttackBudgetShare for several layers, else kAttackBudgetShare.
inline double attack_budget_share(int layers) {
  return layers > 1 ? kDeepAttackBudgetShare : kAttackBudgetShare;
}

// The triggers round 0 of the attack searches. Its cost is a sum of one
// part per trigger searched (search/attack.h: each step runs trigger by
// trigger), so a trigger costs 1 / P of the whole round's expected seconds
// and work, P = task.trigger_positions().size(). As many of `triggers` (J
// of them) as fit both the attack's work limit and `seconds` (verify bound:
// its share of the time left, attack_budget_share(layers) remaining;
// check: its own share),
//   k = floor(min(J, seconds / (expected / P), limit / (work / P))),
// all of them when k >= J (for the whole list: exactly when the whole round
// is within the attack's work limit, search/attack.h attack_round_fits, and
// its expected seconds within `seconds`),
// else k spread evenly over the list (in order; the last always, then every
// (J - 1) / (k - 1)-th back from it); none when k = 0. A round over some
// triggers is the same search as the whole one on those, its witnesses
// certified alike: the lower end it gives is as true, only possibly lower
// (on the recipe's n = 16, L = 128 softmax model the worst rows sit after
// the trigger at every j, and the whole round's 0.965 is every trigger's).
inline std::vector<int> attack_triggers(const Task& task, ModelKind kind, AttentionKind attention,
                                        int layers, int heads, const std::vector<int>& triggers,
                                        double seconds) {
  const double J = static_cast<double>(triggers.size());
  const double P = static_cast<double>(task.trigger_positions().size());
  if (triggers.empty() || P == 0) return {};
  const double limit = search::VertexMoveScreen::applies(kind, attention, layers)
                           ? kMaxScreenedAttackWork
                           : kMaxAttackWork;
  const double by_time = seconds / (attack_seconds(task, kind, attention, layers, heads) / P);
  const double by_work =
      limit / (search::attack_round_work(task, kind, attention, layers, heads) / P);
  const double fit = std::min({J, by_time, by_work});
  if (fit >= J) return triggers;
  const int k = fit >= 0 ? static_cast<int>(std::floor(fit)) : 0;  // NaN: none
  if (k <= 0) return {};
  const int size = static_cast<int>(triggers.size());
  std::vector<int> chosen(k);
  // k = 1: the last; else positions J - 1 - round(m (J - 1) / (k - 1)),
  // m = k - 1, ..., 0, ascending and distinct since (J - 1) / (k - 1) >= 1
  for (int m = 0; m < k; ++m) {
    const int from_end =
        k == 1
            ? 0
            : static_cast<int>(std::lround(static_cast<double>(k - 1 - m) * (size - 1) / (k - 1)));
    chosen[m] = triggers[size - 1 - from_end];
  }
  return chosen;
}

// Why the attack was skipped, for the budget note: beyond its work limit,
// or (within it) its expected seconds above its share of the budget.
inline std::string attack_skipped_note(const Task& task, ModelKind kind, AttentionKind attention,
                                       int layers, int heads) {
  if (!search::attack_round_fits(task, kind, attention, layers, heads)) {
    return std::string(
               "the attack's witnesses skipped (its round 0 is beyond the attack's work "
               "limit, ") +
           search::attack_limit_text(kind, attention, layers) + ")";
  }
  return "the attack's witnesses skipped (its round 0 would not fit the budget: about " +
         progress_number(attack_seconds(task, kind, attention, layers, heads)) + " s expected, " +
         progress_number(100 * attack_budget_share(layers)) + " % of the time left allowed)";
}

// What a round over some of the triggers (attack_triggers) says of itself,
// in verify bound's budget note and check's attack line: how many, and why
// not all (`allowed`: the time it had, in words).
inline std::string attack_subset_note(const Task& task, ModelKind kind, AttentionKind attention,
                                      int layers, int heads, std::size_t searched, std::size_t all,
                                      const std::string& allowed) {
  const std::string why =
      search::attack_round_fits(task, kind, attention, layers, heads)
          ? "about " + progress_number(attack_seconds(task, kind, attention, layers, heads)) +
                " s expected, more than " + allowed
          : std::string("beyond the attack's work limit, ") +
                search::attack_limit_text(kind, attention, layers);
  return "round 0 on " + std::to_string(searched) + " of " + std::to_string(all) +
         " triggers, evenly spaced (the whole round: " + why + ")";
}

// The enclosure e of e(X) at an attack's witness, intersected with the
// attack's own certificate of the same value (search/attack.h: the lower end
// of e(X)'s enclosure on the exact model, rounded down to a double, at 128
// bits or more): both hold e(X), so
//   e' = [max(lower(e), certified), upper(e)]
// does too, and the bound's lower end is then at least the attack's
// certified value even where the attack needed more bits than the run's.
// A NaN e becomes [certified, +inf]; a certificate NaN (none) or above
// upper(e) (two enclosures that cannot both hold: a defect) is not used.
inline Mpfi with_attack_certificate(const Mpfi& e, double certified) {
  if (!std::isfinite(certified)) return e;
  const Mpfr c(certified);  // exact: a double
  if (interval_is_nan(e)) return Mpfi(c, Mpfr(std::numeric_limits<double>::infinity()));
  if (!(c > bmp::lower(e)) || c > bmp::upper(e)) return e;
  return Mpfi(c, bmp::upper(e));
}

// Appends one clause to out.budget_note ("; " between clauses).
inline void add_budget_note(WorstCaseBound& out, const std::string& clause) {
  out.budget_note += (out.budget_note.empty() ? "" : "; ") + clause;
}

// Runs the branch and bound. Evaluator (one box kind) provides:
//   Mpfi point_error(const Model<Mpfi>&, int trigger, const std::vector<double>& content)
//       the enclosure of e(X) at a point;
//   void evaluate(const Model<Mpfi>&, BoxNode<Bound>& node, const Mpfr& lower,
//                 const TakeWitness& take, const Deadline&, ProgressLines&)
//       sets node.bound and node.rounding, offering the points it evaluated;
//       past the deadline it may skip refinements (never validity); setting
//       node.bits = 0 asks for the box to be bounded again when it reaches
//       the top (as after a precision raise), which a cheap first pass uses;
//   int split(const BoxNode<Bound>&)   the variable to bisect, -1 if none.
// `name` prefixes the error messages.
template <class Bound, class T, class Evaluator>
WorstCaseBound run_worst_case_search(const Model<T>& model_in, const Task& task,
                                     const WorstCaseOptions& options,
                                     const std::function<bool(const Mpfr&, const Mpfr&)>& done,
                                     Evaluator& evaluator, const std::string& name) {
  using Node = BoxNode<Bound>;
  if (options.bits < 2 || options.step_bits < 1) {
    throw std::invalid_argument(name + ": need bits >= 2 and step_bits >= 1");
  }
  const std::vector<int> triggers =
      options.triggers.empty() ? task.trigger_positions() : options.triggers;
  if (triggers.empty()) throw std::invalid_argument(name + ": no trigger positions");
  const auto t0 = std::chrono::steady_clock::now();
  const Deadline deadline = options.run_deadline();
  ProgressLines progress(options.progress, options.progress_seconds);
  std::optional<PrecisionScope> scope;
  scope.emplace(options.bits);
  Model<Mpfi> model = model_in.template cast<Mpfi>();
  WorstCaseBound out;
  out.bits_requested = options.bits;
  out.bars = options.bars;
  out.bits = PrecisionScope::current_bits();
  out.lower = Mpfr(-1);  // below every error: nothing is pruned before a witness
  std::vector<TriggerBound> per_trigger;
  for (int j : triggers) per_trigger.push_back({j, Mpfr(-1), Mpfr(-1), 0});
  const auto slot = [&](int j) -> TriggerBound& {
    for (TriggerBound& t : per_trigger) {
      if (t.trigger == j) return t;
    }
    throw std::logic_error(name + ": a witness of an unknown trigger");
  };
  const TakeWitness take = [&](int trigger, const std::vector<double>& content, const Mpfi& e) {
    if (interval_is_nan(e)) return;
    const Mpfr low = bmp::lower(e);
    TriggerBound& t = slot(trigger);
    if (low > t.lower) t.lower = low;
    if (low > out.lower) {
      out.lower = low;
      out.witness_trigger = trigger;
      out.witness_content = content;
    }
  };
  const auto offer = [&](int trigger, const std::vector<double>& content) {
    take(trigger, content, evaluator.point_error(model, trigger, content));
  };
  // a bounded box counted (under ranks every rank counts every box, in
  // the parts' order)
  const auto count_box = [&](const Node& node) {
    ++out.boxes;
    ++slot(node.box.trigger).boxes;
    if constexpr (SharesFirstPass<Evaluator>::value) evaluator.counted(node.bound);
  };
  const auto bound_node = [&](ContentBox box) {
    Node node{std::move(box), {}, out.bits, Mpfr(0)};
    evaluator.evaluate(model, node, out.lower, take, deadline, progress);
    count_box(node);
    return node;
  };
  const auto raise_to = [&](int bits) {
    scope.reset();
    scope.emplace(bits);
    out.bits = PrecisionScope::current_bits();
    model = model_in.template cast<Mpfi>();
    if (!out.witness_content.empty()) offer(out.witness_trigger, out.witness_content);
  };
  const search::RankGroup* ranks =
      options.ranks != nullptr && options.ranks->size() > 1 ? options.ranks : nullptr;
  // the ranks, or this process alone: the first pass's parts and the box
  // phase's batches
  const search::RankGroup& group = search::ranks_or_local(options.ranks);
  std::vector<int> attacked;
  const double attack_allowed = attack_budget_share(model_in.num_layers()) * deadline.remaining();
  if (options.adversary_witnesses) {
    attacked = attack_triggers(task, model_in.kind, model_in.attention, model_in.num_layers(),
                               model_in.num_heads(), triggers, attack_allowed);
  }
  if (ranks != nullptr) {
    // rank 0's decision on every rank (the time left differs a little from
    // rank to rank): then every rank holds the same witnesses after it
    std::vector<std::vector<double>> decision(1);
    if (ranks->owns(0)) {
      for (const int j : attacked) decision[0].push_back(static_cast<double>(j));
    }
    ranks->share(decision);
    attacked.clear();
    for (const double j : decision[0]) attacked.push_back(static_cast<int>(j));
  }
  const bool attack = !attacked.empty();
  if (attack && attacked.size() < triggers.size()) {
    add_budget_note(out, "the attack's " +
                             attack_subset_note(
                                 task, model_in.kind, model_in.attention, model_in.num_layers(),
                                 model_in.num_heads(), attacked.size(), triggers.size(),
                                 progress_number(100 * attack_budget_share(model_in.num_layers())) +
                                     " % of the time left"));
  }
  if (attack) {
    search::AttackOptions ao;  // seed 0, round 0 only: reproducible
    ao.triggers = attacked;
    const search::AttackResult r = search::attack(model_in.template cast<double>(),
                                                  model_in.template cast<Rational>(), task, ao);
    for (const search::Witness& w : r.per_trigger) {
      const std::vector<double> content = flatten_content(w.content);
      take(w.trigger, content,
           with_attack_certificate(evaluator.point_error(model, w.trigger, content), w.certified));
    }
    out.attack_lower = r.best.certified;
    out.attack_triggers = static_cast<int>(attacked.size());
  } else if (options.adversary_witnesses) {
    add_budget_note(out, attack_skipped_note(task, model_in.kind, model_in.attention,
                                             model_in.num_layers(), model_in.num_heads()));
  }
  // Every trigger's boxes are capped by the values' hull
  // (value_hull_bound.h; +inf where it does not apply), a few forward
  // passes each.
  const std::vector<Mpfr> hull_caps = value_hull_bounds(model, task, triggers);
  // The first pass: each trigger's whole box; past the deadline a box is
  // not evaluated and its bound is its trigger's hull cap alone (bits 0:
  // bounded again should it reach the top with time left).
  BoxHeap<Node> heap;
  double first_start = seconds_since(t0);
  int unbounded = 0, unbounded_infinite = 0;
  const auto push_unbounded = [&](ContentBox box, std::size_t t) {
    const Mpfr infinity(std::numeric_limits<double>::infinity());
    Node node{std::move(box), {}, 0, infinity};
    node.bound.upper = hull_caps[t];
    if (bmp::isinf(node.bound.upper)) ++unbounded_infinite;
    heap.push(std::move(node));
    ++unbounded;
  };
  // done of count boxes bounded (by this rank, under several)
  const auto first_pass_progress = [&](std::size_t done, std::size_t count) {
    progress.maybe_send([&] {
      const double spent = seconds_since(t0) - first_start;
      const double left = spent / done * (count - done);  // at the pace so far
      return "first pass: " + std::to_string(done) + " of " + std::to_string(count) +
             " triggers' boxes bounded" + (count < triggers.size() ? " (by this rank)" : "") +
             ", E >= " + progress_number(out.lower.convert_to<double>()) + " [CERTIFIED], about " +
             progress_number(left) + " s more (estimate)";
    });
  };
  const auto first_pass_box = [&](std::size_t t) {
    ContentBox box = full_content_box(task, triggers[t]);
    if (deadline.expired()) {
      push_unbounded(std::move(box), t);
      return;
    }
    Node node = bound_node(std::move(box));
    node.cap_upper(hull_caps[t]);
    heap.push(std::move(node));
    first_pass_progress(t + 1, triggers.size());
  };
  bool shared_first_pass = false;
  if constexpr (SharesFirstPass<Evaluator>::value) {
    // Split by ranks once the caps are known or computable: the first box
    // entered with lower > 0 computes them (a box's bound depends on its
    // box and on its trigger's cap, nothing else), so with lower > 0 now
    // they are computed here, split by trigger, at the same lower. With
    // caps pending and no positive lower yet (no attack witness), every
    // rank runs the first pass whole, as one process (the boxes' own
    // witnesses would decide when the caps come). Both conditions are the
    // same on every rank (the same witnesses so far), so every rank makes
    // the same collective calls.
    // One process with several threads takes the same path, its one rank
    // owning every part: the boxes are bounded on the threads, each into
    // its own part, and taken in trigger order.
    const int threads = options.thread_count();
    if ((ranks != nullptr || threads > 1) && (!evaluator.caps_pending() || out.lower > 0)) {
      if (evaluator.caps_pending()) evaluator.share_caps(model, out.lower, deadline, group);
      first_start = seconds_since(t0);  // the estimates: the boxes' pace, not the caps'
      // Part k (trigger k of the list): its node as its owner
      // bounded it and the witnesses it offered, in order; then every rank
      // takes them in trigger order, as one process would have.
      std::vector<std::vector<double>> parts(triggers.size());
      std::vector<std::size_t> mine;
      for (std::size_t t = 0; t < triggers.size(); ++t) {
        if (group.owns(static_cast<int>(t))) mine.push_back(t);
      }
      std::size_t mine_done = 0;
      std::mutex progress_mutex;  // ProgressLines is not thread-safe
      run_tasks(static_cast<int>(mine.size()), threads, [&](int k) {
        const std::size_t t = mine[static_cast<std::size_t>(k)];
        PartWriter w(parts[t]);
        if (deadline.expired()) {
          w.put_int(0);  // not bounded
          return;
        }
        std::vector<WitnessOffer> offers;
        const TakeWitness record = [&](int trigger, const std::vector<double>& content,
                                       const Mpfi& e) {
          offers.push_back({trigger, content, e});
        };
        Node node{full_content_box(task, triggers[t]), {}, out.bits, Mpfr(0)};
        evaluator.first_bound(model, node, out.lower, record, deadline);
        write_box_part(evaluator, node, offers, w);
        const std::lock_guard<std::mutex> lock(progress_mutex);
        first_pass_progress(++mine_done, mine.size());
      });
      if (group.size() > 1) group.share(parts);
      for (std::size_t t = 0; t < triggers.size(); ++t) {
        PartReader r(parts[t]);
        ContentBox box = full_content_box(task, triggers[t]);
        Node node{std::move(box), {}, 0, Mpfr(0)};
        std::vector<WitnessOffer> offers;
        try {
          if (!read_box_part(evaluator, r, node, offers)) {
            push_unbounded(std::move(node.box), t);
            continue;
          }
        } catch (const std::exception& e) {
          throw std::runtime_error(name + ": first pass, part " + std::to_string(t) + ": " +
                                   e.what());
        }
        for (const WitnessOffer& o : offers) take(o.trigger, o.content, o.e);
        count_box(node);
        node.cap_upper(hull_caps[t]);
        heap.push(std::move(node));
      }
      shared_first_pass = true;
    }
  }
  for (std::size_t t = 0; t < triggers.size() && !shared_first_pass; ++t) first_pass_box(t);
  // no first-pass box is left to keep time for (under ranks each rank
  // bounded only its share)
  if constexpr (SharesFirstPass<Evaluator>::value) evaluator.first_pass_left = 0;
  out.triggers_unbounded = unbounded_infinite;
  if (unbounded > unbounded_infinite) {
    add_budget_note(out, std::to_string(unbounded - unbounded_infinite) + " of " +
                             std::to_string(triggers.size()) +
                             " triggers bounded by the values' hull alone (the deadline passed "
                             "in the first pass)");
  }
  if (unbounded_infinite > 0) {
    add_budget_note(out, std::to_string(unbounded_infinite) + " of " +
                             std::to_string(triggers.size()) +
                             " triggers not bounded at all (the deadline passed in the first "
                             "pass): upper = +inf");
  }
  // a box's bound, live at the end or pruned on the way, bounds its trigger
  const auto raise_trigger_upper = [&](const Node& node) {
    TriggerBound& t = slot(node.box.trigger);
    if (node.upper_bound() > t.upper) t.upper = node.upper_bound();
  };
  // The box phase's parts (box_search.h): the box bounded with the caps
  // fixed before the batch, its witnesses recorded; then every rank takes
  // them in part order.
  const auto write_part = [&](const ContentBox& box, PartWriter& w) {
    if constexpr (SharesFirstPass<Evaluator>::value) {
      std::vector<WitnessOffer> offers;
      const TakeWitness record = [&](int trigger, const std::vector<double>& content,
                                     const Mpfi& e) {
        offers.push_back({trigger, content, e});
      };
      Node node{box, {}, out.bits, Mpfr(0)};
      // out.lower: as the batch found it (witnesses are taken only when
      // the parts are read)
      evaluator.bound(model, node, out.lower, record, deadline);
      write_box_part(evaluator, node, offers, w);
    }
  };
  const auto read_part = [&](ContentBox box, PartReader& r) {
    Node node{std::move(box), {}, 0, Mpfr(0)};
    std::vector<WitnessOffer> offers;
    if constexpr (SharesFirstPass<Evaluator>::value) {
      if (!read_box_part(evaluator, r, node, offers)) {
        throw std::runtime_error("a box of the box phase not bounded");
      }
    }
    for (const WitnessOffer& o : offers) take(o.trigger, o.content, o.e);
    count_box(node);
    return node;
  };
  struct Ops {
    decltype(bound_node)& evaluate_box;
    decltype(raise_to)& raise;
    const std::function<bool(const Mpfr&, const Mpfr&)>& done_fn;
    const WorstCaseOptions& options;
    Evaluator& evaluator;
    WorstCaseBound& out;
    decltype(raise_trigger_upper)& raise_upper;
    decltype(write_part)& bound_box_part;
    decltype(read_part)& take_box_part;
    const search::RankGroup& group;
    // the box phase split by ranks: for the evaluators that split the first pass
    using splits_boxes = SharesFirstPass<Evaluator>;
    // caps still pending (no positive lower until now): computed before the
    // batch, as the first box entered with lower > 0 would (split by ranks)
    void prepare_batch(const Mpfr& lower) {
      if constexpr (splits_boxes::value) {
        if (evaluator.caps_pending() && lower > 0)
          evaluator.share_caps(model, lower, deadline, group);
      }
    }
    void bound_part(const Node&, const ContentBox& box, PartWriter& w) const {
      bound_box_part(box, w);
    }
    Node take_part(const Node&, ContentBox box, PartReader& r) {
      return take_box_part(std::move(box), r);
    }
    Node evaluate(const Node&, ContentBox box) { return evaluate_box(std::move(box)); }
    int choose_split(const Node& node) { return evaluator.split(node); }
    bool done(const Mpfr& lower, const Mpfr& upper) { return done_fn(lower, upper); }
    void raise_precision(int new_bits) { raise(new_bits); }
    void on_precision_floor(const Node& node) {
      out.bits_suggested = suggest_bits(out.bits, node.rounding, out.lower, options.relative_gap);
    }
    void on_pruned(const Node& node) { raise_upper(node); }
    std::string unsplittable_reason(const Node& node) {
      // rounding is not what limits its bound (more precision cannot help)
      return bmp::isinf(node.upper_bound())
                 ? "cannot split a box whose coordinates are adjacent doubles and "
                   "whose bound is not finite"
                 : "cannot split a box whose coordinates are adjacent doubles";
    }
    const Deadline& deadline;
    const Model<Mpfi>& model;  // at the working precision (raises reassign it)
    std::string progress(const Mpfr& lower, const Mpfr& upper) {
      return enclosure_progress("E", out.boxes, lower, upper, deadline);
    }
  } ops{bound_node,          raise_to,   done,      options, evaluator, out,
        raise_trigger_upper, write_part, read_part, group,   deadline,  model};
  const bool has_lower = true;  // out.lower starts below every error (-1)
  run_box_search(heap, options, ops, out.lower, has_lower, out.upper, out, t0, deadline, progress);
  // upper_j = max(lower_j, max over the live and the pruned boxes of trigger j)
  for (; !heap.empty(); heap.pop()) raise_trigger_upper(heap.top());
  for (TriggerBound& t : per_trigger) {
    if (t.lower < 0) t.lower = 0;  // no witness with a valid enclosure: e >= 0 only
    if (t.upper < t.lower) t.upper = t.lower;
  }
  out.per_trigger = std::move(per_trigger);
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

// run(done) runs the search with a stopping rule. To a relative gap:
// done = lower > 0 and upper <= lower (1 + gap).
template <class Run>
WorstCaseBound bound_to_gap(double gap, const Run& run) {
  WorstCaseBound out = run([gap](const Mpfr& lower, const Mpfr& upper) {
    // upper <= lower (1 + gap)
    return lower > 0 && upper <= lower * (1 + Mpfr(gap));
  });
  if (out.stop_reason == "decided") out.stop_reason = "requested gap reached";
  return out;
}

// A claim E <= claimed: done = upper <= claimed or lower > claimed.
// Both compared exactly with the claim as written (claim.h).
template <class Run>
UpperBoundCheck check_claim(const Claim& claimed, const Run& run) {
  UpperBoundCheck out;
  out.claimed = claimed;
  const Rational& c = claimed.value;
  out.bound =
      run([&c](const Mpfr& lower, const Mpfr& upper) { return claim_decided(lower, upper, c); });
  out.evidence = out.bound.evidence;
  if (out.bound.stop_reason == "decided") out.bound.stop_reason = "claim decided";
  // the lower end is a witness's certified value (or 0, which no claim is below)
  const ClaimDecision d = decide_at_most(out.bound.lower, out.bound.upper, true, c);
  out.verdict = d.verdict;
  out.margin = d.margin;
  return out;
}

}  // namespace sinkcert::theorems::bounds
