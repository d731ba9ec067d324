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
// Cost of round 0: one forward pass per vertex move tried, most of the
// round. On the twelve n = L = 16 models trained by the paper's recipe
// (results/benchmarks/pytorch_models/) it takes about 2.2 times the forward
// passes of the round before sharing, rank-one starts and convergence were
// added (softmax seed 0: 186825 against 82415), and finds at least the
// plain PGD baseline's value on every one (results/benchmarks/pytorch_models.txt).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "search/adversary.h"
#include "search/vertex_search.h"
#include "src/evidence.h"
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

// Size limit of one round (the CLI refuses larger tasks before searching):
// the vertex search's passes cost L triggers x L n moves x one forward pass
// (layers heads L n (L + n)), so a round grows about as
//   work = layers heads L^4 n^2,
// measured (Release, one thread, shared 2-core machine) at n = L = 16,
// work 2^24: about 1 s before the shared starts, now about 1.5 s of CPU
// time (softmax seed 0 of results/benchmarks/pytorch_models/).
// kMaxAttackWork = 2^28 allows n = 16, L = 32 or n = 64, L = 16 (about 20 s
// before the shared starts, which about double it).
inline double attack_work(const Task& task, int layers, int heads) {
  const double L = task.L, n = task.n;
  return double(layers) * heads * L * L * L * L * n * n;
}
constexpr double kMaxAttackWork = 268435456.0;  // 2^28

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
