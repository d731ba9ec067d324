// SPDX-License-Identifier: MIT
//
// The attack: the strongest search sinkcert has for bad inputs of one model.
//
// Quantity (attack_quantity):
//   error:    E_found = max over the inputs tried of e(X) = max_{i,d} |f(X)_{i,d} - y_{i,d}|,
//             a SEARCH(lower bound) on the worst-case loss E(theta);
//   BOS mass: B_found = min over the inputs tried of min_{i >= 1, i != j, l, h} a^{l,h}_{i0},
//             a SEARCH(upper bound) on the smallest non-trigger BOS mass.
//
// Schedule, per round r = 0, 1, ... (round 0 always; further rounds only
// while a time budget remains, see AttackOptions::seconds):
//   1. the gradient adversary (adversary.h, maximize_error or
//      minimize_bos_mass) with seed s_r = seed + r; from round 1 on it also
//      refines the best witness of every trigger found so far;
//   2. the vertex search (vertex_search.h, seed s_r) from the adversary's
//      per-trigger witnesses rounded to the vertex and from random vertices;
//   3. per trigger position, the better of the witnesses so far (double
//      values; ties keep the earlier one);
//   4. (with the vertex search) sharing across triggers (vertex_search.h,
//      share_across_triggers): each trigger restarts the vertex search from
//      the best witnesses of its neighbours and of the best triggers overall,
//      replacing its own where that is strictly better.
// Then certification (adversary.h, certify_witness), once per trigger: the
// chosen witness is re-evaluated in MPFI on the EXACT model the user's file
// denotes (Model<Rational>), and
//   error:    certified = lower end of the enclosure of e(X), rounded down,
//   BOS mass: certified = min of the upper ends of the enclosures of a_i0, rounded up.
// The reported best is the trigger whose certified value is largest (error)
// or smallest (BOS mass): every certified value is a true bound at its
// witness, so the best of them is one too.
//
// Reproducibility: without a time budget the result depends only on the
// model, the task and the seed (round 0 alone; no clock is read for the
// result). With seconds = T > 0, rounds 1, 2, ... run while less than T
// seconds have elapsed when a round would start, so how many rounds run,
// and hence the result, depends on the machine's speed; round 0 is the same
// as without a budget, and where a later round's witness certifies below
// round 0's, round 0's is kept: a budget never gives a worse result than
// none.
//
// Cost of round 0: for single-layer models of the row-wise attention kinds
// the vertex search decides most moves from the vertex move screen's
// estimates (vertex_move_screen.h) and runs a forward pass only for close
// calls and every kMaxAppliedMoves accepted moves: on softmax seed 0 of
// results/benchmarks/pytorch_models/ (n = L = 16) 8151 forward passes
// instead of 186825, with the same witnesses, values and certified result
// (the screen never changes a decision: tests/search/vertex_move_screen_test.cc).
// The gradient adversary no longer certifies its own witnesses inside the
// attack (AdversaryOptions::certify): the attack certifies the ones it keeps.
// Round 0 then costs about heads L^3 n^2 (below), spent on the adversary's
// refinements, the screened moves and the final MPFI certification in
// about equal parts at n = L = 32 and 64. Without the screen (deep models,
// softpick, gated) one forward pass per vertex move tried is most of the
// round. The round finds at least the plain PGD baseline's value on the
// twelve n = L = 16 models (results/benchmarks/pytorch_models.txt), and on
// the softmax models trained by the same recipe at n = L = 32 and 64
// (docs/benchmarks.md).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "search/adversary.h"
#include "search/vertex_move_screen.h"
#include "search/vertex_search.h"
#include "src/evidence.h"
#include "src/limits.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert::search {

struct AttackOptions {
  std::uint64_t seed = 0;
  WitnessQuantity quantity = WitnessQuantity::kError;
  std::vector<int> triggers;  // empty: every position of the convention
  double seconds = 0;         // 0: round 0 only (reproducible); > 0: the time budget
  bool vertex_search = true;  // steps 2 and 4 (off: the gradient adversary alone)
  // Step 1 and 2's settings; their seed and triggers are set by attack().
  AdversaryOptions adversary;
  VertexSearchOptions vertex;
};

// Which step found a per-trigger witness.
enum class FoundBy { kGradient, kVertex, kShared };
std::string to_string(FoundBy by);

struct AttackResult {
  WitnessQuantity quantity = WitnessQuantity::kError;
  Evidence evidence;                 // SEARCH(lower bound) / SEARCH(upper bound)
  Witness best;                      // certified on the exact model
  std::vector<Witness> per_trigger;  // one per trigger searched, ascending j, certified
  std::vector<FoundBy> found_by;     // per trigger
  long evaluations = 0;              // forward passes in double
  long screened_moves = 0;           // vertex moves decided without one (vertex_move_screen.h)
  int rounds = 0;
  double seconds = 0;  // wall time (not part of the result's reproducibility)
};

// Progress lines, one a step at most every kAttackProgressSeconds and only
// once a run has taken more than kAttackProgressAfterSeconds, e.g.
//   "round 12, vertex search done: best e(X) 4.36e-03 so far [NUMERIC(53),
//    certified at the end], 81234 forward passes, 6.2 s, 3.8 s left"
// (a round of a small model takes milliseconds: one line per step would be
// thousands a second).
using AttackProgress = std::function<void(const std::string&)>;
constexpr double kAttackProgressAfterSeconds = 2.0;
constexpr double kAttackProgressSeconds = 1.0;

// Size limit of one round (the CLI refuses larger tasks before searching).
// Without the vertex move screen (deep models, softpick and gated
// attention) every vertex move tried is a forward pass: L triggers x L n
// moves x layers heads L n (L + n), so a round grows about as
//   attack_work = layers heads L^4 n^2,
// measured (Release, one thread, shared 2-core machine) at n = L = 16,
// work 2^24: about 1.5 s of CPU time (softmax seed 0 of
// results/benchmarks/pytorch_models/, before the screen); kMaxAttackWork =
// 2^28 (src/limits.h) allows n = 16, L = 32 or n = 64, L = 16 (about 20 s).
// check and verify bound plan their budgets with attack_round_fits and the
// estimate of the kind that applies (theorems/bounds/worst_case_search.h,
// attack_seconds).
// With the screen (single-layer models of the other kinds,
// vertex_move_screen.h) a move costs O(heads L) for its change bounds plus
// O(n) per row that can still matter, and a forward pass is left only for
// close calls and every kMaxAppliedMoves accepted moves; the round then
// grows about as
//   screened_attack_work = heads L^3 n^2,
// measured (CPU seconds, the softmax model of seed 0 trained by
// scripts/train_pytorch_models.py at each size; the round's gradient
// adversary, vertex search, shared starts and certification):
//   n = L = 16 (2^20)  0.35 s      n = L = 32 (2^25)  4.9 s
//   n = L = 64 (2^30)  119 s       (docs/methods.md, "The attack's cost"),
// about 1.2e-7 s per unit at the larger sizes;
// and n = 16, L = 256 (2^32) 1083 s: long sequences cost more per unit
// (each move's change bounds are O(L), the adversary's passes O(L^2 n)).
// kMaxScreenedAttackWork = 2^32 (src/limits.h) allows n = L = 64 and
// n = 16, L = 256 (about 20 minutes of CPU at the limit).
inline double attack_work(const Task& task, int layers, int heads) {
  const double L = task.L, n = task.n;
  return double(layers) * heads * L * L * L * L * n * n;
}
inline double screened_attack_work(const Task& task, int heads) {
  const double L = task.L, n = task.n;
  return double(heads) * L * L * L * n * n;
}
// The work of one round on this model by the estimate of its kind (above),
// and whether it fits that kind's limit.
inline double attack_round_work(const Task& task, ModelKind kind, AttentionKind attention,
                                int layers, int heads) {
  return VertexMoveScreen::applies(kind, attention, layers) ? screened_attack_work(task, heads)
                                                            : attack_work(task, layers, heads);
}
inline bool attack_round_fits(const Task& task, ModelKind kind, AttentionKind attention, int layers,
                              int heads) {
  const double limit =
      VertexMoveScreen::applies(kind, attention, layers) ? kMaxScreenedAttackWork : kMaxAttackWork;
  return attack_round_work(task, kind, attention, layers, heads) <= limit;
}
// The largest L <= kMaxL at which one round fits (task.n and task.range
// kept), for refusals that say what would fit; kMinL - 1 when none does.
inline int attack_max_L(const Task& task, ModelKind kind, AttentionKind attention, int layers,
                        int heads) {
  int max_L = kMinL - 1;
  while (max_L < kMaxL &&
         attack_round_fits(Task{task.n, max_L + 1, task.range}, kind, attention, layers, heads)) {
    ++max_L;
  }
  return max_L;
}
// The limit's formula for messages: "heads L^3 n^2 <= 2^32" or
// "layers heads L^4 n^2 <= 2^28".
inline const char* attack_limit_text(ModelKind kind, AttentionKind attention, int layers) {
  return VertexMoveScreen::applies(kind, attention, layers)
             ? "heads L^3 n^2 <= 2^32 with the vertex move screen"
             : "layers heads L^4 n^2 <= 2^28";
}

// Runs the schedule of the header on `model` (the double model searched) and
// certifies on `exact` (the model the weight file denotes exactly; both must
// have the dimensions of task.n). Throws std::invalid_argument on a
// dimension mismatch or a trigger outside 1..L-1.
AttackResult attack(const Model<double>& model, const Model<Rational>& exact, const Task& task,
                    const AttackOptions& options, const AttackProgress& progress = {});

// The witness's input X(j, C), L x n: what the witness file holds.
Matrix<double> witness_tokens(const Task& task, const Witness& w);

// Certified value for printing, rounded in its bound's direction to
// `digits` significant digits (down for an error, up for a BOS mass), so
// the printed number is still a bound; "nan" when uncertified.
std::string format_certified(const AttackResult& r, double value, int digits);

// Human-readable report (several lines) and its JSON form.
std::string summary_text(const AttackResult& r);
nlohmann::json to_json(const AttackResult& r);

}  // namespace sinkcert::search
