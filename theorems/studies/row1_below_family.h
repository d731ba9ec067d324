// SPDX-License-Identifier: MIT
//
// Below the explicit family: a Ceres minimax search, with the row-1 floor,
// for single-layer single-head softmax models (paper convention) whose mean
// row-1 BOS deficit is at least delta and whose worst-case loss E is below
// U(delta) = (L-2) delta / (1 + (2L-5) delta) (docs/methods.md, "The row-1
// frontier"; theorems/studies/row1_frontier.h).
//
// Search (SEARCH). Starts: the explicit family's model at delta + margin
// (row1_upper_model, whose deficit is content-independent and >= delta +
// margin) and `perturbed_starts` seeded perturbations of it (N(0, sigma)
// added to A_ab, a, b >= 2, the ordinary and content block of the scores,
// and to M_ab, a >= 1, u = M e_0 included). Each start runs the Lawson minimax (search/minimax.h)
// with the floor D_Q(A) >= delta + margin (search/row1_deficit.h); the best feasible model by the
// adversary's certified witness value is kept.
//
// Certification of the kept model, as its weight file denotes it exactly:
//  - its row-1 mean deficit D enclosed (CERTIFIED, both ends) by a midpoint
//    rule on N^k cells of [-1, 1]^k with a second-order remainder: on a cell
//    B of half-width r and centre m, the linear term of alpha's Taylor
//    expansion integrates to 0, so
//      mean_B alpha in alpha(m) +- (1/2) (sum_a H_aa r^2 / 3 + sum_{a!=b} H_ab r^2 / 4),
//      H_ab >= sup_B |d^2 alpha / dc_a dc_b|,
//      d^2 alpha / dc_a dc_b = sigma'' q_a q_b + sigma' q_ab,
//      sigma' = sigma (1 - sigma), sigma'' = sigma' (1 - 2 sigma),
//      q_a = (A + A^T)_{i.} x - A_{i0} (i = 2 + a), q_ab = A_ij + A_ji,
//    (mean_B |c_a - m_a| |c_b - m_b| = r^2/4, mean_B (c_a - m_a)^2 = r^2/3),
//    every sup enclosed in MPFI over the cell, alpha(m) in MPFI at m;
//  - E enclosed by bound_worst_case (the `verify bound` machinery), upper
//    end CERTIFIED for this model.
// If lower(D) >= delta and upper(E) < U(delta), then
//   eps*_1(delta) <= upper(E) < U(delta)      CERTIFIED (this model)
// (a better certified upper bound than the explicit family's infimum).
// Otherwise the search found nothing below U: a SEARCH result, never a
// bound the other way.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/evidence.h"
#include "src/interval.h"
#include "src/weight_file.h"
#include "theorems/bounds/worst_case_bound.h"
#include "theorems/studies/row1_frontier.h"

namespace sinkcert::theorems::studies {

// The search's floor is delta + this margin: the quadrature D_Q (16-point
// Gauss-Legendre, error far below 1e-9 here) and the certified enclosure
// (cells of half-width 1/kRow1DeficitCells: remainder ~0.6 H / N^2 < 1e-6
// for |H| < 0.1) must both clear delta; 1e-5 costs E at most
// 1e-5 max dU/ddelta = 1e-5 (L-2) (|dU/ddelta| <= L-2) in the comparison.
constexpr double kRow1FloorMargin = 1e-5;
// Cells per content axis of the certified deficit enclosure.
constexpr int kRow1DeficitCells = 256;
// MPFI precision of that enclosure (rounding ~1e-30 per cell, far below
// the remainder).
constexpr int kRow1DeficitBits = 128;
// The minimax's LM diagonal floor (search/minimax.h, lm_min_diagonal): the
// family's saturated entries (beta = 40) then move by at most ~radius
// times their gradient, like every other entry.
constexpr double kRow1LmMinDiagonal = 1.0;
// The floor's first penalty weight: the family's start meets the floor
// with no room, and a violation of 1e-3 then costs a residual of 10, far
// above the loss residuals (~0.25), so the first steps keep the floor.
constexpr double kRow1InitialPenalty = 1e4;
// Standard deviation of the seeded perturbations of the start: small
// enough that a perturbed start's E stays within ~10% of U (M's entries
// move E one for one), large enough to leave the family's stationary point.
constexpr double kRow1StartPerturbation = 0.003;

// Row 1's mean deficit of an exact model, enclosed (k = n - 3 <= 3 content
// coordinates, cells^k cells; see the top of the file).
struct Row1DeficitEnclosure {
  Mpfi mean;
  int cells = 0;
  int bits = 0;
};
// Throws std::invalid_argument unless A is n x n, 3 <= n <= 6, cells >= 1.
Row1DeficitEnclosure row1_deficit_enclosure(const Matrix<Rational>& A,
                                            int cells = kRow1DeficitCells,
                                            int bits = kRow1DeficitBits);

// "D >= delta": VERIFIED when lower(D) >= delta, NOT VERIFIED when
// upper(D) < delta, UNDECIDED otherwise.
Verdict verify_row1_deficit(const Row1DeficitEnclosure& D, const Rational& delta);

struct Row1BelowOptions {
  int n = 5, L = 4;
  std::vector<std::string> deltas = {"0.5", "0.2", "0.1"};
  std::uint64_t seed = 1;
  int perturbed_starts = 3;
  double perturbation = kRow1StartPerturbation;  // sigma of the perturbed starts
  double margin = kRow1FloorMargin;
  int rounds = 300;  // minimax rounds per start
  // LM iterations per round (the minimax's step 2): one, since Ceres' LM
  // raises its radius after each accepted iteration by more than a
  // rejected round divides it (kRadiusShrink = 8), and several iterations
  // on the active set overshoot the worst case round after round.
  int lm_iterations = 1;
  int initial_per_trigger = 8;  // initial active inputs per trigger position
  double start_seconds = 60;    // minimax time limit per start
  // The minimax's stopping gap (adversary vs active set, relative). The
  // gains sought are ~1e-4 of E, below the default 0.02, so the default
  // here stops only at the round or time limit.
  double adversary_tolerance = 0;
  // The Lawson trust control's factor (search/minimax.h): 1 accepts only
  // rounds whose worst case is no larger than the best so far.
  double reject_factor = 1.0;
  double bound_gap = 1e-5;    // bound_worst_case's relative gap target
  double bound_seconds = 60;  // its time budget
  long bound_boxes = 2000000;
  int cells = kRow1DeficitCells;
};

// One start of one delta: its SEARCH value (lower bound on that model's E).
struct Row1BelowStart {
  std::string name;  // "family" or "perturbed <s>"
  bool feasible = false;
  double worst = 0;      // SEARCH(lower bound): certified witness value
  double deficit_q = 0;  // D_Q, NUMERIC(53)
  int rounds = 0;
  double seconds = 0;
  std::string stop_reason;
};

struct Row1BelowRow {
  int n = 0, L = 0;
  Rational delta;
  Rational U;   // EXACT
  Row1Lower g;  // CERTIFIED lower curve at delta
  std::vector<Row1BelowStart> starts;
  int best = -1;    // index of the kept start (-1: none feasible)
  WeightFile file;  // the kept model (exact doubles) with metadata
  std::string file_name;
  double deficit_q = 0;                           // NUMERIC(53)
  Row1DeficitEnclosure D;                         // CERTIFIED
  Verdict deficit_verdict = Verdict::kUndecided;  // D >= delta
  bounds::WorstCaseBound E;                       // CERTIFIED enclosure of E
  bool below_U = false;                           // lower(D) >= delta and upper(E) < U, CERTIFIED
  Mpfr U_minus_E;                                 // lower end of U - upper(E) (rounded down)
};

// Runs the search and the certification for every delta. `say` receives
// progress lines (may be empty).
std::vector<Row1BelowRow> row1_below_family(const Row1BelowOptions& o,
                                            const std::function<void(const std::string&)>& say);

// The row as JSON: every start (SEARCH, NUMERIC(53)), and for a kept model
// its file, D's and E's enclosures (CERTIFIED, lower ends rounded down and
// upper ends up; E's upper end also exactly) and "below_U".
nlohmann::json to_json(const Row1BelowRow& row);

}  // namespace sinkcert::theorems::studies
