// SPDX-License-Identifier: MIT
//
// The branch and bound shared by the single-layer (bos_bound.h) and the
// residual (deep_bos_bound.h) BOS bounds. Both enclose
//
//   Q = max over cases (h, i, j) and content C of q_hij(C),
//   q = 1 - a_i0 (the deficit, minimum mode) or a_i0 (maximum mode),
//
// by box_search.h over boxes (h, i, B) (B: the content the row reads,
// ContentBox.trigger = j), and differ only in how one box is bounded: its
// upper end of q, the rounding width of q at one of its points, its split
// scores, and the points it offers as witnesses with their MPFI
// enclosures of q. Everything else is here:
//  - the first pass: each case's whole content box, on the threads of
//    options.threads, taken in the order of the cases; past the deadline a
//    case's box is not evaluated and bounds nothing (+inf);
//  - the witnesses: every point a box offers is handed to `take` with its
//    enclosure, in the order offered (the lower end of the best is the
//    enclosure's lower end);
//  - the split: at even depth the coordinate of the largest split score,
//    at odd depth (or when no score is positive) the widest;
//  - several ranks (options.ranks, search/rank_group.h): case k is the
//    first pass's part k, owned by rank k mod K, which bounds its box and
//    records its witnesses; share() gives every rank every part (exactly,
//    src/exact_parts.h), and every rank takes them in case order; the box
//    phase is split by batch (box_search.h). A box's bound depends on its
//    box, head and row alone (and on the deadline, which may cut a residual
//    box's refinements short: the owner's bound is then every rank's),
//    never on the witnesses found before it, so every rank holds one
//    process's heap, witnesses, counters and enclosure, bit for bit.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "src/exact_parts.h"
#include "src/scalar_traits.h"
#include "theorems/bounds/bos_bound.h"
#include "theorems/bounds/deadline.h"
#include "theorems/bounds/progress_lines.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::theorems::bounds {

// A first-pass case: head h, row i, trigger j.
struct BosCase {
  int h = 0, i = 0, j = 0;
};

// Appends head h's cases: for each row i = 1..L-1, every trigger j < i and
// the first j > i (every trigger after row i gives it the same value,
// causal attention).
void append_bos_cases(const Task& task, int h, std::vector<BosCase>& cases);

// One box: head, row i, and the content box it reads (ContentBox.trigger = j).
struct BosNode {
  int head = 0, row = 0;
  ContentBox box;
  Mpfr upper;                 // >= q over the box; +inf for NaN
  int bits = 0;               // precision the bound was computed at
  Mpfr rounding;              // width of q's enclosure at a point of the box
  std::vector<double> slope;  // split scores, one per coordinate of the box
  const Mpfr& upper_bound() const { return upper; }
  void cap_upper(const Mpfr& parent) {
    if (parent < upper) upper = parent;
  }
};

// A witness a box offered: its content (as the bound reads it; its head,
// row and trigger are the box's) and the enclosure of q there.
using BosOffer = std::pair<std::vector<double>, Mpfi>;
using BosRecord = std::function<void(const std::vector<double>& content, const Mpfi& q)>;

// Even depth: the largest split score; odd depth (or no positive score):
// the widest coordinate; -1 when none can be split (adjacent doubles).
int choose_bos_split(const BosNode& node);

// A bounded box as a part of a share (src/exact_parts.h, exactly):
//   1, upper, rounding, bits, slope, the offers' count, then each offer's
//   content and enclosure;
// a box not bounded (past the deadline in the first pass) is the part 0.
void write_bos_part(const BosNode& node, const std::vector<BosOffer>& offers, PartWriter& w);
// Reads it into `node` (whose head, row and box are given) and `offers`:
// false for a box not bounded. Throws std::runtime_error when the part ends
// early, starts with neither 0 nor 1, or is longer than written.
bool read_bos_part(PartReader& r, BosNode& node, std::vector<BosOffer>& offers);

// What a BOS bound brings to the search.
struct BosBoxSearch {
  std::vector<BosCase> cases;  // the first pass's, in order (at least one)
  // the case's whole content box
  std::function<ContentBox(const BosCase&)> full_box;
  // The box's bound (node.bits the working precision), each witness handed
  // to record with its enclosure; it must not read the witnesses found so
  // far, and is called on several threads at once.
  std::function<BosNode(int h, int i, ContentBox box, const BosRecord& record)> bound;
  // a witness (h, i, j, content, enclosure), in the order offered
  std::function<void(int h, int i, int j, const std::vector<double>& content, const Mpfi& q)> take;
  // the working precision raised to `bits`: the model enclosed again and
  // the best witness re-evaluated
  std::function<void(int bits)> raise;
  // the first pass's progress line after case c (one process)
  std::function<std::string(const BosCase& c)> first_pass_line;
  std::string name;      // for errors: "BOS bound", "deep BOS bound"
  std::string quantity;  // for progress lines: "1 - min BOS", "max BOS"
  int content_dim = 0;   // n - 3 (0: nothing to split)
};

// The first pass and the loop (box_search.h) until done(lower, upper), the
// budget or the precision cap: out.deficit_lower (with have_witness, both
// kept up to date by search.take) and out.deficit_upper, out.boxes and the
// outcome's fields. Throws std::invalid_argument when there is no case
// ("NAME: no non-trigger row i >= 1"), std::runtime_error for a part that
// does not read back whole under several ranks.
void run_bos_box_search(const BosBoxSearch& search, const BosBoundOptions& options,
                        const std::function<bool(const Mpfr&, const Mpfr&)>& done, BosBound& out,
                        const bool& have_witness, std::chrono::steady_clock::time_point t0,
                        const Deadline& deadline, ProgressLines& progress);

}  // namespace sinkcert::theorems::bounds
