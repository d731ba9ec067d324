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
// or (RefineMethod::kExactStructure) theta_0 is projected once onto the
// affine set P of models whose trigger row averages exactly for every
// content, and each step only scales A. With x = (BOS flag 0, trigger flag 1,
// content c = 2..n-2, ordinary flag n-1), the trigger row's scores
//   s_jk = x_j^T A x_k,  k >= 1,
// are one value for all non-BOS keys k and every content iff
//   A[1][c'] = 0, A[c][c'] = 0          (no key content in the trigger row)
//   A[1][1] = A[1][n-1], A[c][1] = A[c][n-1]   (trigger key = ordinary key)
// for all content c, c'; and the mean (1/j) sum_{k=1..j} x_k is reproduced
// with nothing from BOS iff M = I - e_0 e_0^T. P sets these entries to those
// values (a pair of unequal entries to its mean) and keeps the others. On P
//   f(X)_j - y_j = -a_j0 y_j,   f(X)_i = sum_{k>=1} a_ik x_k (i != j),
// so e(X) <= max(a_j0, max_{i != j} (1 - a_i0)): the loss is the sink's
// leakage alone, and it falls like exp(-s margin) as A -> s A. This is the
// structure the LM refinement converges to; projecting costs nothing, where
// LM's dense Jacobian (|F| L n rows x n^2 + n^2 columns) takes minutes per
// step at n = L = 16. The projection moves theta_0 by the double search's
// residual noise (~1e-13 at n = L = 16); every certificate below is about
// the projected, scaled model itself.
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
// bound comes from the branch and bound (theorems/bounds/worst_case_bound.h) run on
// theta_k itself at cert.bits + 64 bits, within `bound_boxes` boxes:
//   lower <= E(theta_k) <= upper     CERTIFIED, over the whole content box.
// With bos_boxes > 0 the BOS branch and bound (theorems/bounds/bos_bound.h) also
// encloses 1 - min BOS over the whole box (CERTIFIED), beside E.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/certified_eval.h"
#include "src/model.h"
#include "src/table_writer.h"
#include "src/task.h"
#include "src/weight_file.h"
#include "theorems/bounds/bos_bound.h"
#include "theorems/bounds/worst_case_bound.h"
#include "theorems/studies/precision_tables.h"

namespace sinkcert::theorems::studies {

// W holds every vertex when (L-1)(n-3) <= kMaxVertexBits.
constexpr int kMaxVertexBits = 10;

enum class RefineMethod { kLevenbergMarquardt, kExactStructure };

struct RefinedPathOptions {
  RefineMethod method = RefineMethod::kLevenbergMarquardt;
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
  long bound_boxes = 2000;      // branch-and-bound budget per step (boxes); 0 = skip
  double bound_gap = 0.1;       // stop at upper <= lower (1 + gap)
  bool bound_adversary = true;  // offer the attack's witnesses to the bound
  long bos_boxes = 0;           // BOS branch-and-bound budget per step; 0 = skip
  double bos_gap = 0.01;
};

struct RefinedPathRow {
  double scale = 1.0;
  int evaluations = 0;
  double max_abs_a = 0.0;           // max |A_pq| after the step
  Mpfr fit_max;                     // NUMERIC(bits): max |r| over F after the step
  bounds::WitnessCertificate cert;  // CERTIFIED at W
  bool bounded = false;
  bounds::WorstCaseBound bound;  // CERTIFIED over the whole box
  bool bos_bounded = false;
  bounds::BosBound bos;  // CERTIFIED over the whole box
  double seconds = 0.0;
  double refine_seconds = 0.0, certify_seconds = 0.0, bound_seconds = 0.0, bos_seconds = 0.0;
  double cpu_seconds = 0.0;  // process CPU time of the step (user + sys)
  // theta after the step: the certificates above are about exactly this
  // model, and refined_path_weight_file writes it exactly.
  Model<Mpfr> model;
};

struct RefinedPath {
  std::vector<RefinedPathRow> rows;
  int fit_size = 0, check_size = 0;  // sequences in F and W
  int bits = 0;                      // refinement precision used
  RefineMethod method = RefineMethod::kLevenbergMarquardt;
  Model<Mpfr> last;  // theta of the last step
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

// theta projected onto P (the header's constraints), in the current precision.
Model<Mpfr> project_exact_structure(const Model<Mpfr>& model);

// P5 at the paper's size: one block of rows per start model (its name and
// refined path), every row with the certified E and 1 - min BOS over the
// whole box and the step's wall and CPU seconds; `load` is the machine's
// load average during the run (printed in a note, the timings depend on it).
struct NamedRefinedPath {
  std::string name;
  RefinedPath path;
};
// Whether W holds every vertex of the content box: (L-1)(n-3) <= kMaxVertexBits.
bool check_set_has_every_vertex(const Task& task);

}  // namespace sinkcert::theorems::studies
