// SPDX-License-Identifier: MIT
//
// The adversary: inputs that make a given model look as bad as possible.
//
// Two searches over the task's inputs X(j, C) (trigger position j of the
// convention, content C in [-1, 1]^((L-1) x (n-3))):
//   maximize_error:    E_search = max_{j, C} max_{i,d} |f(X)_{i,d} - y_{i,d}|
//   minimize_bos_mass: B_search = min_{j, C} min_{i >= 1, i != j, l, h} a^{l,h}_{i0}
// E_search is a SEARCH(lower bound) on the worst-case loss E(theta) of docs/definitions.md,
// Definitions 3, B_search a SEARCH(upper bound) on the smallest BOS mass: the
// witness input attains the value, nothing is claimed about inputs not tried.
//
// Method (multi-start local ascent with derivatives):
//  1. Starts, per trigger position j: the vertices all +1 and all -1,
//     sign-structured vertices (one sign per content coordinate shared by all
//     positions; signs split at the trigger; alternating by position parity),
//     random vertices, the zero content and random interior points. Every
//     start is evaluated exactly; vertices are where the worst cases of
//     trained models live, so they are also candidates.
//  2. The best `ascents_per_trigger` starts of each j, plus the
//     `extra_ascents` best overall, are refined. The scalar being refined is
//     the single term that is worst at the start, phi = sigma (f_{i,d} - y_{i,d})
//     with sigma = sign of that term (resp. phi = a^{l,h}_{i0}), and the next
//     `terms_per_start - 1` largest terms: the term worst at a start need
//     not have the largest maximum over the box.
//  3. Refinement: Ceres GradientProblemSolver (L-BFGS, Wolfe line search) on
//     the box reparametrized as c = sin(u). Why sin and not tanh or a bounded
//     ceres::Problem: sin maps R onto the closed box, so faces and vertices
//     are reached at finite u (tanh only at infinity, and the worst cases sit
//     on vertices), a maximum on a face is a nondegenerate maximum in u
//     (d^2 c / du^2 = -c), and the objective is a general scalar, not a sum of
//     squares, so the bounded least-squares Problem does not fit. The price:
//     c = +-1 exactly is a stationary point in u, so starts are shrunk by
//     kVertexShrink before refinement (the exact vertex was already scored).
//  4. Every refined point is re-scored on its full l_inf error (any (i, d)),
//     and the best per trigger and overall are returned.
//  5. Certification (certify_witness), once per returned witness: the search
//     runs in double, and near double's noise floor a double value can lie
//     ABOVE the true e(X) (the sink family at beta = 40, n = L = 16: 3.3e-16
//     for a true 6.4e-17), i.e. be wrong in the stated direction. So each
//     witness input is re-evaluated in MPFI. The model's doubles and the
//     content are exact binary rationals, hence enclosed exactly, and
//       certified = lower end of the enclosure of e(X), rounded down
//                   (error: a true lower bound on e(X) <= E),
//       certified = min over the terms of the upper end of the enclosure of
//                   a^{l,h}_{i0}, rounded up (BOS mass: a true upper bound on
//                   the smallest BOS mass at X, hence on its infimum).
//     The MPFI pass is search/certified_forward.h's (src/forward.h's pass
//     with softmax rows enclosed in O(L) each). Start at
//     kCertifyStartBits; while the lower end of the error's
//     enclosure is <= 0 but the double value is > 0, raise by
//     kCertifyStepBits up to kCertifyMaxBits. Values printed or written as
//     SEARCH(lower bound) / SEARCH(upper bound) are these, never `value`.
//     The witnesses are the ones the double search chose; certification
//     only re-evaluates them.
// Derivatives: the reverse pass of the forward pass (src/forward_vjp.h),
// for every model kind and attention kind:
//   phi = sigma (f_{i,d} - y_{i,d}): cotangent sigma e_{i,d} on f, minus
//     dy_{i,d}/dX (y_i = x_i for the residual target, and 1/j on x_k[d],
//     k = 1..j, at the trigger row i = j);
//   phi = a^{l,h}_{i0}: cotangent 1 on that attention weight;
// only the rows the term reads are evaluated (forward_tape's only_row).
// For single-layer models phi itself is the value the reverse pass applies,
//   sum_h sum_{k<=i} a^h_ik (sigma M_h[d, :] . x_k) - sigma (1/j) sum_{k=1..j} x_k[d]
// (the last term at the trigger row i = j only), so that value and gradient
// are one computation.
// Deterministic: the starts come from std::mt19937_64(seed) with the task's
// documented double construction; Ceres runs single-threaded.
#pragma once

#include <cstdint>
#include <limits>
#include <mutex>
#include <random>
#include <vector>

#include "search/rank_group.h"
#include "src/evidence.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert::search {

struct AdversaryOptions {
  std::uint64_t seed = 0;
  int random_vertices_per_trigger = 12;
  int random_interior_per_trigger = 2;
  int ascents_per_trigger = 2;  // refined starts per trigger position
  int extra_ascents = 4;        // refined starts chosen over all triggers
  int terms_per_start = 3;      // largest terms |f - y| refined from each start
  int max_iterations = 60;      // L-BFGS iterations per refinement
  std::vector<int> triggers;    // empty: every position of the convention
  // Extra starts (e.g. the previous round's witnesses), refined as well.
  std::vector<std::pair<int, Matrix<double>>> warm_starts;
  // Ranks that share the refinements and certifications (search/rank_group.h:
  // start k refined, and witness k certified, by rank k mod ranks; merged in
  // order on every rank, so the result is the same for any count). Null:
  // this process alone. Every rank must call with the same arguments.
  const RankGroup* ranks = nullptr;
  // Step 5 (certification). Off: best and per_trigger keep certified = NaN,
  // for a caller that certifies the witnesses it keeps itself (the attack
  // certifies its own on the exact model, attack.h).
  bool certify = true;
};

// What a witness's value measures.
enum class WitnessQuantity { kError, kBosMass };

// One input and the value it attains.
struct Witness {
  int trigger = 0;         // j
  Matrix<double> content;  // (L-1) x (n-3), row k-1 = c_k
  double value = 0;        // error, or BOS mass, computed in double: NUMERIC(53)
  int position = 0;        // i where it is attained
  int coordinate = 0;      // d (error) or head (BOS mass)
  int layer = 0;           // layer (BOS mass)
  // Filled by certify_witness: the value at this input enclosed in MPFI,
  // lower end rounded down (error) or upper end rounded up (BOS mass); NaN
  // until certified (and for a BOS witness without non-trigger positions).
  double certified = std::numeric_limits<double>::quiet_NaN();
  int certified_bits = 0;         // MPFI precision of that enclosure
  bool double_disagrees = false;  // value and certified differ in the first digit
};

// MPFI precision schedule of certify_witness (see the header comment).
constexpr int kCertifyStartBits = 128;
constexpr int kCertifyStepBits = 64;
constexpr int kCertifyMaxBits = 1024;

// Boost 1.74 keeps the MPFR/MPFI default precision (PrecisionScope) in one
// process-wide variable, so code that sets it while other threads may run
// holds this lock for the scope's lifetime: certify_witness does, and so
// must any other PrecisionScope opened in a worker thread.
std::mutex& precision_mutex();

// Certifies `witness` in place (step 5 of the header): sets certified,
// certified_bits and double_disagrees; holds precision_mutex() meanwhile.
// T = double (the search's models) or Rational (the exact model a weight file
// denotes, whose entries are enclosed in MPFI).
template <class T>
void certify_witness(const Model<T>& model, const Task& task, Witness& witness,
                     WitnessQuantity quantity = WitnessQuantity::kError);

// Whether a and b differ in the first significant digit: |a - b| is at least
// half a unit of the first significant digit of the larger magnitude
// (3.3e-16 against 6.4e-17: yes; 0.99999 against 1.00001: no). NaN differs
// from everything.
bool differ_in_first_digit(double a, double b);

struct AdversaryResult {
  Witness best;                      // certified (certify_witness)
  std::vector<Witness> per_trigger;  // best witness of each trigger searched, certified
  Evidence evidence;                 // SEARCH(lower bound) / SEARCH(upper bound)
  long evaluations = 0;              // forward passes (values and gradients)
  int refinements = 0;
};

// Inputs maximizing the l_inf error (target by model kind); best and
// per_trigger are certified.
AdversaryResult maximize_error(const Model<double>& model, const Task& task,
                               const AdversaryOptions& options = {});

// Inputs minimizing the BOS mass at non-trigger positions (every layer/head);
// best and per_trigger are certified.
AdversaryResult minimize_bos_mass(const Model<double>& model, const Task& task,
                                  const AdversaryOptions& options = {});

// The l_inf error of one input and where it occurs (NUMERIC(53), not
// certified).
Witness score_error(const Model<double>& model, const Task& task, int trigger,
                    const Matrix<double>& content);

// A random vertex of the content box ((L - 1) x (n - 3), entries +-1), drawn
// from eng as the adversary draws its vertex starts: even v one sign per
// content coordinate shared by all positions, odd v independent signs; each
// sign is -1 when the task's documented double u in [0, 1) is below 1/2.
Matrix<double> random_sign_vertex(const Task& task, int v, std::mt19937_64& eng);

// The smallest BOS mass over non-trigger rows i >= 1, layers and heads of
// one input and where it occurs (position, coordinate = head, layer; value 2
// when there is no non-trigger row); NUMERIC(53), not certified.
Witness score_bos_mass(const Model<double>& model, const Task& task, int trigger,
                       const Matrix<double>& content);

// What a refined term measures: kError, phi = sigma (f_{i,d} - y_{i,d})
// (coordinate = d); kBosMass, phi = a^{layer,head}_{i0} (coordinate = head).
enum class TermKind { kError, kBosMass };

// The scalar refined by the adversary and its gradient with respect to the
// content, (L-1) x (n-3) (exposed for tests).
struct RefinedTerm {
  TermKind kind = TermKind::kError;
  int trigger = 0, position = 0, coordinate = 0, layer = 0;
  double sign = 1;
};
double term_value_and_gradient(const Model<double>& model, const Task& task,
                               const RefinedTerm& term, const Matrix<double>& content,
                               Matrix<double>* gradient);

}  // namespace sinkcert::search
