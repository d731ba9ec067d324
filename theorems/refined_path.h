// SPDX-License-Identifier: MIT
//
// P5, beyond double for a search model: the scale path with the active-set
// problem re-solved in MPFR at every step.
//
// Start: theta_0 = (A, M), a single-layer softmax model found by the double
// search (theorem1_study.h). Step k with scale s_k (s_0 = 1 < s_1 < ...):
//   A <- (s_k / s_{k-1}) A_{k-1}                (sharpen the sink)
//   theta_k = LM refinement of (A, M) on the fit set F, in `bits`-bit MPFR
//             (search/least_squares_refiner.h, `evaluations` residual
//             evaluations)
// and then, in MPFI at adaptive precision (certified_eval.h), the model
// theta_k itself (its MPFR entries, exactly) is certified at the check set W:
//   loss(W)    = max_{X in W} max_{i,d} |f(X)_{i,d} - y_{i,d}|
//   deficit(W) = max_{X in W} max_{i >= 1, i != j} (1 - a_i0)
// Theorem 1 predicts that any family whose worst-case loss tends to 0 has
// deficit -> 0; the table shows both falling together, far below double.
//
// Sets (seeded, reproducible): F = per trigger, content all +1, all -1 and
// `fit_vertices` random vertices, plus `fit_samples` uniform sequences;
// W = per trigger every vertex of the content box when there are at most
// 2^kMaxVertexBits of them (else all +1, all -1 and 64 random vertices), plus
// `check_samples` uniform sequences from a stream F does not use.
// What is certified: loss(W) is a certified value at W, hence a CERTIFIED
// lower bound on the worst-case loss E(theta_k) over the whole box. The upper
// bound comes from the branch and bound (theorems/worst_case_bound.h) run on
// theta_k itself at cert.bits + 64 bits, within `bound_boxes` boxes:
//   lower <= E(theta_k) <= upper     CERTIFIED, over the whole content box.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/certified_eval.h"
#include "src/model.h"
#include "src/task.h"
#include "src/weight_file.h"
#include "theorems/precision_tables.h"
#include "theorems/worst_case_bound.h"

namespace sinkcert::theorems {

// W holds every vertex when (L-1)(n-3) <= kMaxVertexBits.
constexpr int kMaxVertexBits = 10;

struct RefinedPathOptions {
  // s = 6 takes the loss near 1e-115, clear of the 512-bit floor (2^-512 ~
  // 7e-155), where the refinement's steps would be rounding noise.
  std::vector<double> scales{1, 2, 4, 6};
  int bits = 512;         // working precision of the refinement
  int evaluations = 12;   // LM residual evaluations per step
  int fit_vertices = 14;  // random vertices per trigger in F
  int fit_samples = 16;
  int check_samples = 64;
  std::uint64_t seed = 0;
  AdaptiveOptions certify{6, 64, 64, 4096};
  long bound_boxes = 2000;  // branch-and-bound budget per step (boxes); 0 = skip
  double bound_gap = 0.1;   // stop at upper <= lower (1 + gap)
};

struct RefinedPathRow {
  double scale = 1.0;
  int evaluations = 0;
  double max_abs_a = 0.0;   // max |A_pq| after the step
  Mpfr fit_max;             // NUMERIC(bits): max |r| over F after the step
  WitnessCertificate cert;  // CERTIFIED at W
  bool bounded = false;
  WorstCaseBound bound;  // CERTIFIED over the whole box
  double seconds = 0.0;
  // theta after the step: the certificates above are about exactly this
  // model, and refined_path_weight_file writes it exactly.
  Model<Mpfr> model;
};

struct RefinedPath {
  std::vector<RefinedPathRow> rows;
  int fit_size = 0, check_size = 0;  // sequences in F and W
  int bits = 0;                      // refinement precision used
  Model<Mpfr> last;                  // theta of the last step
};

// Throws std::invalid_argument unless the model is single-layer, single-head
// softmax of dimension task.n and the scales increase from a positive start.
RefinedPath refined_path(const Model<double>& model, const Task& task,
                         const RefinedPathOptions& options, const Progress& progress = {});

// The weight file of a row's model, every MPFR entry written as its exact
// decimal expansion (so `verify bound` on the file re-checks the row), with
// the row's certificates in the metadata.
WeightFile refined_path_weight_file(const RefinedPathRow& row, const RefinedPath& path,
                                    const Task& task, const std::string& start_model);
// "p5_refined_s2.weights.json" for the row with scale 2.
std::string refined_path_file_name(const RefinedPathRow& row);

// Whether W holds every vertex of the content box: (L-1)(n-3) <= kMaxVertexBits.
bool check_set_has_every_vertex(const Task& task);

}  // namespace sinkcert::theorems
