// SPDX-License-Identifier: MIT
//
// The minimax: minimize over the weights the worst-case l_inf loss
//   min_theta max_{j, C} max_{i,d} |f_theta(X(j, C))_{i,d} - y_{i,d}|
// for a single-layer single-head model (any attention kind; Theorem 1 uses
// softmax), and for models with several layers and heads
// (residual: Theorem 2; layers[l][h], the same number of heads per layer),
// compared with the target of their kind (docs/definitions.md, Definitions 1: plain for
// single-layer, residual y_i = x_i (+ the mean at the trigger) for residual).
//
// Parametrization: theta = (A, M) of every head, 2 n^2 numbers per head
// (single-layer gated attention: (A, M, G), the gate o_i = sigma(G x_i) * ...),
// s_ik = x_i^T A x_k and o_i = M sum_k a_ik x_k (model.h), packed as
// src/parameter_layout.h says. Every output says so (kParametrization).
//
// Algorithm (an exchange method):
//  1. Active set: for every trigger position j, `initial_per_trigger` inputs
//     (content all +1, all -1, then seeded random vertices), each contributing
//     all L n residuals r_{X,i,d} = f(X)_{i,d} - y_{i,d}.
//  2. Inner solve: Ceres Levenberg-Marquardt (dense normal Cholesky, one
//     thread) on sum w r^2 over the active set, at most `lm_iterations`
//     iterations, the trust-region radius carried over from round to round.
//     Single-layer single-head: all rows in one compressed residual block
//     (search/normal_equations_cost.h: J^T J from the Kronecker structure of
//     the rows, n times cheaper than from the dense Jacobian).
//  3. Surrogate: plain least squares (all w = 1; the descent path, where the
//     infimum is 0 and every residual must fall) or Lawson reweighting
//     (linf_surrogate.h; the frontier, where the minimax value is positive).
//  4. Adversary (adversary.h) on the new weights, warm-started from the
//     previous witnesses. Its best witness of every trigger position whose
//     error exceeds kAdmitFraction of the round's worst case joins the active
//     set with the largest weight (at most `max_per_trigger` per j; beyond
//     that the oldest non-initial input of that j is replaced).
//  5. Trust control against the worst case, not only the active set: if the
//     adversary's worst case exceeds kRejectFactor (least squares) or
//     kLawsonRejectFactor (Lawson) times the best so far, the
//     step is rejected (weights restored) and the radius divided by
//     kRadiusShrink; the witnesses are kept.
//  6. Stop when the adversary cannot raise the maximum above the active set's
//     by more than `adversary_tolerance` (relative) for a Lawson solve whose
//     weighted objective no longer moves, or the worst case is below
//     `target_loss`, or `max_rounds` / `time_limit_seconds` is reached.
// Scale continuation (scaling A up between solves) is not used: LM alone reaches 1e-10 at
// n = L = 16 (search_benchmark), and a first version stalled in a loop of
// rejected scalings; it is left for later.
// Derivatives: analytic Jacobians, one reverse pass (src/forward_vjp.h) per
// residual row block. Single-layer single-head: the A-block of residual
// (i, d) is the rank-one x_i w^T with w = sum_k g_k x_k, g = dphi/ds
// (src/attention.h), the M-block V_i^T in row d (all d of a row at once).
// Several heads or layers: the general reverse pass with cotangents e_{i,d}
// on f(X), all d of a row in one batched pass (forward_vjp_batch), on the
// tape of the rows 0..i that row i reads; it gives the (A, M) block of every
// head. theta is packed as src/parameter_layout.h says (head_blocks). The
// benchmark compares their cost with Jets.
// Several heads or layers: every step above is the same (the M-only first
// round holds every head's A), frozen M entries are for single-layer
// single-head models only (refused otherwise), and a record's mean_bos is
// the largest per-head mean over the probe set.
// Optional constraint (the frontier), as penalty residuals
// rho * max(0, b - ceiling), rho raised by kPenaltyGrowth while violated:
//  - single-layer single-head: b = the mean BOS mass over a fixed probe set
//    at non-trigger positions (one residual, Theorem 1's frontier);
//  - several heads or layers: one residual per capped head (l, h) and
//    position i >= 1, b = b^{l,h}_i = the mean of a^{l,h}_{i0} over the
//    probes whose trigger is not i (bos_statistics' per-position mean).
//    Capped: every head of every layer (the sink score sigma <= ceiling,
//    eps_all), or only bos_ceiling_head (eps_one). Its derivative: the
//    general reverse pass with cotangent 1 on a^{l,h}_{i0} (forward_vjp's
//    d_attention), one pass per probe and violated residual.
// Or a floor (the row-1 frontier, single-layer single-head softmax): one
// residual rho * max(0, floor - D_Q(A)), D_Q row 1's mean BOS deficit by a
// fixed quadrature with its derivative beside it (search/row1_deficit.h).
// The returned worst case is SEARCH(lower bound) for the returned model:
// the adversary's witness re-evaluated in MPFI, lower end rounded down
// (adversary.h, certify_witness); the search itself runs in double.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "search/adversary.h"
#include "search/dense_kernel.h"
#include "src/bos_statistics.h"
#include "src/evidence.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert::search {

inline constexpr const char* kParametrization =
    "(A, M): s_ik = x_i^T A x_k, o_i = M sum_k a_ik x_k (A = W_Q^T W_K, M = W_O W_V)";
// The same for every head of a model with several layers or heads.
inline constexpr const char* kDeepParametrization =
    "(A, M) of every head (l, h): s^{l,h}_ik = x^(l)_i^T A x^(l)_k, o^{l,h}_i = M sum_k "
    "a^{l,h}_ik x^(l)_k; x^(l+1) = x^(l) + sum_h o^{l,h}";

enum class Surrogate { kLeastSquares, kLawson };
// Several heads or layers: the linear solver of an LM step. kDenseNormal
// forms J^T J (Ceres DENSE_NORMAL_CHOLESKY), R p^2 / 2 multiply-adds for R
// residuals and p parameters (at n = L = 16, 2 x 2: R ~ 1.2e4, p = 2048,
// ~80% of the time measured); kConjugateGradients (Ceres CGNR, no
// preconditioner: the block-Jacobi one, with n^2-sized blocks, took ~65% of
// the time) applies J and J^T only, 2 R p per inner iteration.
enum class DeepLinearSolver { kDenseNormal, kConjugateGradients };
std::string to_string(Surrogate s);

struct MinimaxOptions {
  std::uint64_t seed = 0;
  Surrogate surrogate = Surrogate::kLeastSquares;
  int max_rounds = 60;
  int lm_iterations = 8;
  double adversary_tolerance = 0.02;  // relative gap adversary vs active set
  double target_loss = 1e-10;
  double time_limit_seconds = 600;
  int initial_per_trigger = 3;
  int max_per_trigger = 10;
  // Round 1 fits M alone, every A held (for inits whose A-columns of the
  // Jacobian are tiny, such as the paper's |A| ~ 0.02). A warm start whose A
  // already carries a solution sets it false: fitting M alone to the first
  // active set (a few inputs per trigger) undoes what the init solved.
  bool fit_m_first = true;
  // Entries of M held at their initial values (row-major indices d * n + e).
  std::vector<int> frozen_m;
  // Frontier constraint: mean non-trigger BOS mass over `probes` <= ceiling
  // (several heads or layers: per capped head and position, see above).
  std::optional<double> bos_ceiling;
  // Several heads or layers: cap only this head (layer, head) instead of
  // every head (single-layer single-head: only (0, 0) is accepted).
  std::optional<std::pair<int, int>> bos_ceiling_head;
  const ProbeSet* probes = nullptr;
  // Row-1 floor (single-layer single-head softmax, search/row1_deficit.h):
  // row 1's mean BOS deficit over uniform content, by the fixed quadrature
  // D_Q, at least this; the penalty residual rho * max(0, floor - D_Q(A))
  // (rho as for the ceiling), feasible when D_Q >= floor. A caller that
  // certifies the deficit afterwards asks for its delta plus a margin.
  std::optional<double> row1_deficit_floor;
  // Ceres' LM regularizes step p by (1 / radius) D^T D, D^2 = diag(J^T J)
  // clamped below at this (Ceres' default 1e-6). A start with saturated
  // scores (entries ~40, Jacobian columns ~e^-40) gets, at the default,
  // steps of any size in those entries, which the active set does not see
  // and the worst case rejects round after round; a floor ~1 bounds them.
  double lm_min_diagonal = 1e-6;
  // The constraint penalty's first weight rho (the ceiling's or the floor's);
  // it grows by kPenaltyGrowth while violated. A start that meets its
  // constraint with no room (the row-1 family at its floor) needs it large
  // from the first round, or the first step trades the constraint for loss.
  double initial_penalty = 10.0;
  // The Lawson trust control's factor (step 5; none: kLawsonRejectFactor,
  // 1.1). A search for gains of ~1e-4 of E sets it near 1, so that the
  // worst case cannot drift up by 10% and stay there.
  std::optional<double> lawson_reject_factor;
  // Several heads or layers only (the single-layer single-head path keeps
  // DENSE_NORMAL_CHOLESKY on one thread).
  DeepLinearSolver deep_solver = DeepLinearSolver::kDenseNormal;
  // Threads of the inner solve (several heads or layers, and gated
  // attention): those of the compressed block's sums below, or Ceres' own
  // with CGNR or per-row blocks. The result does not depend on it.
  int deep_threads = 1;
  // All rows in one compressed residual block (the default): single-layer
  // single-head ungated through its Kronecker structure
  // (search/normal_equations_cost.h), deep models with the dense normal
  // solver and gated attention through the rows' own Jacobians
  // (search/compressed_rows_cost.h); false: one Ceres block per row, Ceres
  // forming J^T J from the dense Jacobian (the same steps up to rounding;
  // the benchmarks' baseline).
  bool compressed_rows = true;
  // The dense kernels of the generic compressed block (its sums and its
  // factor; search/dense_kernel.h). The baseline by default, so that a
  // study's iterates are the same bits on every x86-64 CPU; kAvx2 (or kAuto)
  // takes about half the time of those kernels where the CPU has AVX2 and
  // FMA, and its iterates differ beyond the last bits.
  DenseIsa dense_isa = DenseIsa::kBaseline;
  // Ranks that share the compressed block's sums (search/compressed_rows_cost.h)
  // and, unless adversary.ranks is set, the adversary's refinements
  // (search/rank_group.h). Every rank runs the same minimax in lockstep and
  // gets the same result, bit for bit, for any rank count. Null: this
  // process alone.
  const RankGroup* ranks = nullptr;
  AdversaryOptions adversary;
  // A checkpoint file (empty: none; search/minimax_checkpoint.h), written
  // atomically by rank 0 after every round with everything the next round
  // reads. With `resume` and the file present, the run starts from it
  // instead of the init (the same init, sizes and options required, else
  // std::invalid_argument naming the field) and continues as the
  // uninterrupted run would, bit for bit; its time limit and `seconds` count
  // the time before the interruption too.
  std::string checkpoint;
  bool resume = false;
};

struct MinimaxRecord {
  int round = 0;
  // SEARCH(lower bound): the adversary's best witness on this round's model,
  // certified at the witness (Witness::certified)
  double worst_case = 0;
  double worst_case_double = 0;   // the same witness's value in double, NUMERIC(53)
  bool double_disagrees = false;  // they differ in the first significant digit
  double active_max = 0;          // NUMERIC(53), max |r| over the active set
  int active_size = 0;            // inputs
  double elapsed = 0;             // seconds since the start
  double max_abs_A = 0;           // NUMERIC(53)
  double mean_bos = -1;           // over the probe set if one is given, else -1 (several
                                  // heads or layers: the largest per-head mean)
  // several heads or layers with a ceiling: the ceiling's statistic
  // (max_position_mean_probe_bos over the capped heads), else -1
  double ceiling_bos = -1;
  double row1_deficit = -1;  // D_Q of this round's model with a row-1 floor, else -1 (NUMERIC)
  bool accepted = true;      // step kept (false: rejected by the trust control)
  std::string event;         // "M-only", "lm", "reject"
};

struct MinimaxResult {
  Model<double> model;  // the best model by worst case
  Witness worst;        // its adversary witness; worst.certified is the reported value
  Evidence evidence = Evidence::search(Bound::kLower);
  std::vector<MinimaxRecord> history;
  bool converged = false;  // stopping rule 6 met (not a time/round limit)
  bool feasible = true;    // model meets the BOS ceiling (false: none did; model = init)
  std::string stop_reason;
  double seconds = 0;
  long jacobian_evaluations = 0;
};

// Memory (bytes) of one minimax of a single-layer single-head ungated
// model with compressed rows (the default; step 2's NormalEquationsCost),
// P = 2 n^2 parameters. Every array of size P^2 or L n per input:
//   G and its Jacobi-scaled copy C, whose factor is taken in place   2 P^2
//   the structured sums G_AA (n^2 x n^2) and G_AM (n x n^3)          P^2 / 2
//   Ceres' dense (P + 1) x P Jacobian and its evaluation scratch      2 P (P + 1)
//   Ceres' normal matrix J^T J and its Cholesky factor (Eigen LLT)    2 P^2
//   the sums' chunk of kNormalEquationsChunk rows' n^3 products      64 n^3
//   the active set: up to max_per_trigger inputs per trigger, X, Y
//   and the Lawson weights, L n doubles each                          3 mpt (L - 1) L n
//   bytes = 8 (6.5 P^2 + 2 P + 64 n^3 + 3 mpt (L - 1) L n).
// The Jacobian Ceres sees is P + 1 rows whatever the active set (not the
// mpt (L - 1) L n rows of the residuals), so the memory grows as n^4, not
// with L: 235 MB at n = 32, and 31 MB more of active set at L = 64.
// The probe set (a few MB) and the adversary's buffers are left out.
double single_head_minimax_bytes(const Task& task, int max_per_trigger);

// The same for several heads or layers with the dense normal solver (the
// generic compressed block, search/compressed_rows_cost.h), P = 2 n^2
// layers heads: P x P matrices for the four parts' sums (every rank holds
// them all), the block's own copy and its factor, Ceres' (P + 1) x P
// Jacobian, normal matrix and factor (9 P^2), and each part's chunk of at
// most 256 + L n rows (one input's rows fit in a chunk):
//   bytes = 8 (9 P^2 + 4 (256 + L n) P).
double deep_minimax_bytes(const Task& task, int layers_heads);

// Called after every round with its record and that round's model.
using MinimaxProgress = std::function<void(const MinimaxRecord&, const Model<double>&)>;

MinimaxResult minimax(const Model<double>& init, const Task& task, const MinimaxOptions& options,
                      const MinimaxProgress& progress = {});

// Mean BOS mass a^{layer,head}_{i0} over every non-trigger position i >= 1
// of the probe set.
double mean_probe_bos(const Model<double>& model, const ProbeSet& probes, int layer = 0,
                      int head = 0);
// The largest over layers and heads of that mean.
double max_head_mean_probe_bos(const Model<double>& model, const ProbeSet& probes);
// The largest over heads (every head, or only `head` = (layer, head)) and
// positions i >= 1 of the per-position probe mean b^{l,h}_i of a^{l,h}_{i0}
// over the probes whose trigger is not i (bos_statistics' per_position
// mean); over every head it is the sink score sigma. NUMERIC(53).
double max_position_mean_probe_bos(const Model<double>& model, const ProbeSet& probes,
                                   std::optional<std::pair<int, int>> head = std::nullopt);

// The residuals r_d = f(X)_{i,d} - y_{i,d} (d = 0..n-1; target by model
// kind) of row i of the input X(trigger, content), and their Jacobian as the
// minimax computes it: n rows, columns theta in the order of
// src/parameter_layout.h (head t's A at 2 t n^2, its M at (2 t + 1) n^2,
// row-major; single-layer gated: A, M, then the gate G at 2 n^2). Exposed
// for tests.
struct RowJacobian {
  Vector<double> residuals;
  Matrix<double> jacobian;
};
RowJacobian row_residual_jacobian(const Model<double>& model, const Task& task, int trigger,
                                  const Matrix<double>& content, int i);

// Time (seconds) of one analytic Jacobian evaluation of one residual row
// block (n residuals), averaged over `repeats`, and the same with Jets
// (ceres::DynamicAutoDiffCostFunction). For the benchmark.
struct JacobianTiming {
  double analytic_seconds = 0;
  double jet_seconds = 0;
  double max_difference = 0;  // largest |analytic - jet| entry
};
JacobianTiming time_row_jacobian(const Model<double>& model, const Task& task, int repeats);

}  // namespace sinkcert::search
