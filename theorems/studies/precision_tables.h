// SPDX-License-Identifier: MIT
//
// The appendix tables on precision.
//
// P1, the softmax sink family at n = L = 16 (constructions.h):
//   score beta (x_i[n-1] - x_i[1]) x_k[0],  M = I except M e_0 = 0.
// Claim: its worst-case loss and its largest BOS deficit are both
//   E(beta) = max_{i >= 1 non-trigger} (1 - a_i0) = (L-1) / (e^beta + L-1),
// attained in row L-1 with any trigger j < L-1 and content all +1 (or -1).
// Why the worst case is at that vertex: the scores read flags only, so the
// attention a_ik does not depend on the content; then each output term
//   (f - y)_{i,d} = sum_k (a_ik M - [i = j, 1 <= k <= j] I / j)_{d,.} x_k
// is affine in the content, each content variable entering with one
// coefficient, and |affine| is maximized over a box at a vertex. Every
// coefficient of a content variable in row i has one sign (all a_ik > 0 off
// the trigger row; a_jk - 1/j < 0 for all k <= j in it), so the maximizing
// vertex is content all +1 or all -1. The witness set W = {(j, +-1) : j}
// therefore attains E.
// Certification: E is enclosed as [max_W lower(e), max_j upper(box_j)], the
// first from MPFI at the witnesses, the second by bound_box over the
// whole content box of each trigger, which is exact up to rounding here
// because no content variable repeats (worst_case_bound.h); the BOS deficit
// 1 - a_i0 is enclosed from the attention over the whole box. Both at the
// adaptive precision of certified_eval.h (start 64 bits, +64 while fewer than
// kP1Digits digits are certified).
// Each floating type T in {float, double, Float128, 256-bit MPFR} evaluates
// max_W e(X) and max_W max_i (T(1) - a_i0) in T, and its number of correct
// digits is measured against the enclosure (correct_digits). In double,
// 1 - a_i0 is 0 once (L-1) e^-beta < 2^-53, i.e. beta >= 37.
//
// P4, "beyond double": the scale path A -> s A of a single-layer softmax model
// (M kept), at each s the certified max over W of e(X) (witness-set loss)
// and of 1 - a_i0 (i >= 1 non-trigger), and the bits needed. For the sink
// family, s A is the family at s beta: base beta 10, s up to 32.
//
// P3, the ReLU certificate (theorems/exact/relu_exact_checker.h) across (n, L).
// P2, the Theorem 1 search models: the weight files the appendix names.
// These are the checkers: each returns typed rows; theorems/reports/precision_report.h
// turns them into tables and figures.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "search/adversary.h"
#include "src/certified_eval.h"
#include "src/evidence.h"
#include "src/model.h"
#include "src/task.h"
#include "theorems/bounds/witness_certificate.h"
#include "theorems/bounds/worst_case_bound.h"

namespace sinkcert::theorems::studies {

// Digits demanded of every P1 enclosure: more than a 256-bit number has
// (77), so the correct digits of every column can be measured.
constexpr int kP1Digits = 80;

struct NumericValue {
  std::string precision;  // "float (24)", ...
  int bits = 0;
  Mpfr value;  // as computed in that precision, converted exactly
  int correct_digits = 0;
};

struct PrecisionRow {
  double beta = 0.0;
  Mpfi loss;                                // CERTIFIED enclosure of E(beta) over the whole box
  Mpfi deficit;                             // CERTIFIED enclosure of max over box, j, i of 1 - a_i0
  int loss_bits = 0, deficit_bits = 0;      // precision that was needed
  int loss_digits = 0, deficit_digits = 0;  // digits certified
  std::vector<NumericValue> loss_numeric, deficit_numeric;
  double seconds = 0.0;
};

using Progress = std::function<void(const std::string&)>;

// P1 rows for the sink family on `task` at each beta.
std::vector<PrecisionRow> sink_family_precision_rows(const Task& task,
                                                     const std::vector<double>& betas,
                                                     int digits = kP1Digits,
                                                     const Progress& progress = {});

struct ScaleRow {
  double scale = 1.0;
  bounds::WitnessCertificate cert;
};
// The scale path A -> s A (single-layer softmax models), certified about the
// model given (a Rational model: the exact model of a weight file).
std::vector<ScaleRow> scale_path(const Model<double>& model, const Task& task,
                                 const std::vector<double>& scales, const AdaptiveOptions& options,
                                 const Progress& progress = {});
std::vector<ScaleRow> scale_path(const Model<Rational>& model, const Task& task,
                                 const std::vector<double>& scales, const AdaptiveOptions& options,
                                 const Progress& progress = {});

struct ReluRow {
  int n = 0, L = 0;
  Verdict verdict = Verdict::kUndecided;
  Evidence evidence;
  Rational margin;  // the exact max |error| over the box
  double seconds = 0.0;
};
std::vector<ReluRow> relu_certificate_rows(const std::vector<std::pair<int, int>>& sizes,
                                           const Progress& progress = {});

// B1, the branch and bound's reach: (model, n, L) -> [lower, upper], gap,
// boxes, seconds. Default: the sink family (beta 10) at (5,4), (8,8),
// (16,16) and a content-dependent random softmax model at (5,4).
struct BoundRow {
  std::string model;
  int n = 0, L = 0;
  bounds::WorstCaseBound bound;
};
// Sizes: quick = (5,4) only, with a 0.5 s budget for the random model; full
// adds (32,32) and a second random model with larger budgets.
enum class RunSize { kQuick, kDefault, kFull };
std::vector<BoundRow> worst_case_bound_rows(RunSize size, const Progress& progress = {});

// P2: the single-layer softmax search models in `files` (display name and
// path; a missing or unreadable file, or a file of another model, is an
// InputError naming it). Task length from metadata "L" or metadata.task.L
// (else 16).
// Search loss, re-evaluated (a number in the metadata may have been computed
// in double, where it can lie above the true value): the adversary (seed 0)
// on the model, and the witness recorded in metadata "worst_case_witness"
// ({trigger, content}) if present, whichever certifies more; the value is
// SEARCH(lower bound), certified at its witness (search/adversary.h).
// Certified: loss and 1 - min BOS at the vertex witness set; the branch and
// bound when n = 5 and L = 4 (budget `bound_boxes` boxes); the scale path A -> s A.
struct SearchModelFile {
  std::string name;  // as shown in the table, e.g. "edges/n5_L4_paper/path_start0.weights.json"
  std::string path;
};
struct SearchModelRow {
  std::string file;
  int n = 0, L = 0;
  search::Witness search;  // the witness of the search loss, certified
  bounds::WitnessCertificate witness;
  bool bounded = false;
  bounds::WorstCaseBound bound;
  std::vector<ScaleRow> path;
};
std::vector<SearchModelRow> search_model_rows(const std::vector<SearchModelFile>& files,
                                              long bound_boxes, const Progress& progress = {});

}  // namespace sinkcert::theorems::studies
