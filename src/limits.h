// SPDX-License-Identifier: MIT
//
// Every size and range limit of sinkcert in one place: the dimensions a
// weight or input file may declare and the range of every command-line
// option. A value outside its range is refused (InputError, exit code 2)
// BEFORE anything of that size is allocated or computed. The limits are
// generous for the task (the paper uses n = L = 16) and chosen so that
// nothing that passes them can exhaust memory or run for more than a few
// minutes before its first result:
//   memory  a command estimates its largest arrays from the sizes it was
//           given and refuses more than kMemoryBudgetBytes;
//   time    where a computation has no budget of its own (the exact check,
//           the branch and bound's first pass, a forward pass), its
//           operation count is capped at about a minute of work.
// Times quoted were measured on the 2-core development machine while other
// jobs shared it (Release build). docs/commands.md (common to every command)
// points here.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace sinkcert {

// --- File dimensions (weight and input files) ------------------------------
// Token dimension n: 256 is 16 times the paper's n; one head's A and M are
// 2 n^2 = 131072 doubles (1 MiB).
inline constexpr int kMaxN = 256;
// Sequence length L (rows of an input file, --L): 1024 is 64 times the
// paper's L; one attention matrix is L^2 = 1 Mi entries (8 MiB in double).
inline constexpr int kMaxL = 1024;
// Layers and heads per layer of a weight file: 16 each (at n = 256 that is
// 16 x 16 x 2 n^2 = 33.6 M numbers, beyond what the reader's file-size
// limit, src/json_reader.h, admits anyway).
inline constexpr int kMaxLayers = 16;
inline constexpr int kMaxHeads = 16;

// --- The task (--n, --L) ----------------------------------------------------
// Smallest task: n = 3 has the three flags and no content, L = 2 is BOS and
// one token (task.h).
inline constexpr int kMinN = 3;
inline constexpr int kMinL = 2;

// --- Memory ----------------------------------------------------------------
// The largest working set a command may plan for: 4 GiB, a sixth of the
// 23 GiB development machine. Estimates count the dominant arrays only.
inline constexpr std::size_t kMemoryBudgetBytes = std::size_t{4} << 30;

// --- verify relu ------------------------------------------------------------
// O(H L^3) exact rational operations (theorems/exact/relu_exact_checker.h):
// measured n = 64: L = 256 1.3 s, L = 512 8.8 s; n = 256, L = 1024 53 s.
// So H L^3 <= 2^30 (one head at L = 1024; a 16-head weight file up to
// L = 406); n enters only as n^2 per distinct row tuple.
inline constexpr int kMaxReluN = kMaxN;
inline constexpr int kMaxReluL = kMaxL;
inline constexpr double kMaxReluWork = 1073741824.0;  // 2^30 = H L^3

// --- verify bound -----------------------------------------------------------
// The budget (--seconds) is checked between boxes and inside the vertex
// bounds, so what must be capped is one box's evaluation, which is not
// interrupted, and the first pass of a deep model.
// Single layer: a box costs about L^2 n (L + n) interval operations (the
// score differences of every softmax row, L^3 n / 3, the interval forward
// pass and the centred forms of the terms that can attain the maximum,
// theorems/bounds/worst_case_bound.h), and beyond 512 bits the
// exponentials' cost grows faster than the precision. Measured for one
// trigger's whole content box (the first pass; Release, 2 cores shared
// with other jobs): n = L = 32 0.6 s at 128 bits, 38 s at 8192 bits;
// n = L = 64 3.6 s at 128 bits, 8.8 s at 1024 bits. So
//   L^2 n (L + n) max(1, bits / 512)^1.5 <= 2^29
// (about a minute a box: n = L = 64 up to about 3200 bits, n = L = 32 at
// every --bits), and the first pass over L - 1 triggers stops at the
// deadline like the rest of the run (the triggers it did not reach are
// reported unbounded). A box is bounded in double intervals first
// (worst_case_bound.h, bound_box_double_first), 2 to 5 times faster on the
// recipe models (results/benchmarks/double_first_benchmark.txt: n = L = 64
// 0.9 s against MPFI's 3.2 s); the cap stays MPFI's, the cost of a box
// where double is refused.
inline double single_layer_bound_box_work(int n, int L, int bits) {
  return static_cast<double>(L) * L * n * (L + n) * std::pow(std::max(1.0, bits / 512.0), 1.5);
}
inline constexpr double kMaxSingleLayerBoxWork = 536870912.0;  // 2^29
// Several layers: the deep bound's first pass (theorems/bounds/deep_worst_case_bound.h)
// runs the adversary and one interval pass per trigger, each with a
// reverse pass per output term through every head; its time grows about as
// layers heads L^3 n^2 and linearly in the precision beyond ~1000 bits
// (measured for one layer at 128 bits before the single-layer box above
// was made cheaper: n = L = 16 3 s, n = 16 / L = 32 27 s, n = 32 / L = 32
// 101 s). So
//   layers heads L^3 n^2 max(1, bits / 1024) <= 2^24.
inline double deep_bound_work(int n, int L, int bits, int layers, int heads) {
  return static_cast<double>(layers) * heads * L * L * L * n * n * std::max(1.0, bits / 1024.0);
}
inline constexpr double kMaxBoundWork = 16777216.0;  // 2^24
// The capped work of verify bound on a file of `layers` layers (one box for
// a single layer, the first pass for several), its cap, the formula and
// cap as refusals quote them, and the precision beyond which fewer --bits
// let a larger L fit. verify bound, check and the Python module use this.
struct BoundWorkCap {
  double work = 0, cap = 0;
  const char* formula = "";
  const char* cap_text = "";
  int bits_from = 0;
  bool fits() const { return work <= cap; }
};
inline BoundWorkCap bound_work_cap(int n, int L, int bits, int layers, int heads) {
  if (layers > 1) {
    return {deep_bound_work(n, L, bits, layers, heads), kMaxBoundWork,
            "the first pass, layers heads L^3 n^2 max(1, bits / 1024)", "2^24", 1024};
  }
  return {single_layer_bound_box_work(n, L, bits), kMaxSingleLayerBoxWork,
          "one box, L^2 n (L + n) max(1, bits / 512)^1.5", "2^29", 512};
}
// Every evaluated box may stay live (4 (L - 1)(n - 3) doubles and two MPFR
// numbers each), so the CLI lowers the box budget to fit kMemoryBudgetBytes.
// L has no limit of its own beyond kMaxL: the work caps above (and
// kMaxBosWork) decide, for --L and a weight file's task.L alike (n = 16:
// the single-layer box up to L = 317 at 128 bits).
inline constexpr int kMaxBoundN = 64;
// The softmax vertex bound (theorems/bounds/softmax_vertex_bound.h):
// up to n = 16 it enumerates the query's 5 x 2^(n - 4) vertices; beyond,
// it searches the query box by branch and bound, whose cells cost
// O(n^2) each (the query's scores, the first-order spans, the key
// zonotope's sorted chain) with at most 2^19 of them kept per slice and
// the deadline checked every 1024, so its time is what --seconds allows
// and its memory about 100 MB per thread at n = 64. The cell key holds one
// bit per split coordinate (n - 3 of them at most, 61 here).
inline constexpr int kMaxSoftmaxVertexN = kMaxBoundN;
// Unless asked (SoftmaxQuerySearch::kBranch), the branch and bound runs up
// to this n only. Measured on the paper-recipe models
// (results/benchmarks/softmax_vertex_branch.txt): at n = L = 32 it capped
// every trigger within --seconds 600; at n = L = 64 it finished a few of
// its thousands of (trigger, d, sigma) units, capped nothing, and its
// share of the budget left the first pass too little to finish, so the
// upper end stayed inf where the first pass alone gives a finite one.
inline constexpr int kMaxSoftmaxVertexAutoN = 32;
// verify bos: its first pass bounds every (head, row, trigger case), about
// H L^2 / 2 cases of (n - 3)^3 interval operations each (the box bound and
// the central differences that pick its witness). Measured: n = L = 32, one
// head, 1.2e7 of these in 18 s; the cap keeps the first pass near a minute
// (n = 64: L <= 17; n = 16: L up to 64).
inline constexpr double kMaxBosWork = 33554432.0;  // 2^25
// --bits: at least a double's 53 (the weights are enclosed exactly); at most
// 8192, the cap of eval --certify.
inline constexpr int kMinBoundBits = 53;
inline constexpr int kMaxBoundBits = 8192;
// --seconds: checked between boxes; 10^6 s (11.6 days) is more than any run
// needs and keeps the deadline arithmetic finite.
inline constexpr double kMaxBoundSeconds = 1e6;

// --- attack (sinkcert attack, check, verify bound's witnesses) --------------
// One round of the attack cannot be interrupted, so its size is capped
// (search/attack.h, attack_round_fits, has the cost model and the
// measurements; a larger --L is refused, naming the largest L that fits):
//   single-layer softmax, softmax-off-by-one, relu, relu-count-all and
//   sigmoid models (the vertex move screen, search/vertex_move_screen.h):
//     heads L^3 n^2 <= kMaxScreenedAttackWork = 2^32 (n = L = 64, or n = 16
//     with L = 256: about 20 minutes of CPU at the limit);
//   every other model (deep, softpick, gated: a forward pass per move):
//     layers heads L^4 n^2 <= kMaxAttackWork = 2^28 (n = 16 with L = 32,
//     n = 64 with L = 16: about 20 s).
inline constexpr double kMaxAttackWork = 268435456.0;           // 2^28
inline constexpr double kMaxScreenedAttackWork = 4294967296.0;  // 2^32

// --- theorem1 ---------------------------------------------------------------
// The search is Levenberg-Marquardt on a single-head model whose rows are
// summed into one compressed least-squares block (search/minimax.h,
// search/normal_equations_cost.h): Ceres sees P + 1 rows, P = 2 n^2
// parameters, whatever the active set, so one search holds about 6.5 P x P
// matrices of doubles plus its active set (search/minimax.h,
// single_head_minimax_bytes):
//   8 (6.5 P^2 + 2 P + 64 n^3 + 3 x 10 (L - 1) L n) bytes,
// 243 MB at n = L = 32 (peak RSS of the whole program measured there, one
// thread: 244 MB; at n = 32, L = 64, three rounds: 278 MB), and
// the searches at once (at most --threads, and at most max(starts, frontier
// points + 1)) must fit kMemoryBudgetBytes: every n <= 32 and L <= 64 does
// (9 x 266 MB at n = 32, L = 64). The caps on n and L are for time: at
// n = L = 32 (--quick, one thread, the other core busy) the first round
// (M alone) took 11 s and the next seven 19 to 55 s each (23 s of CPU on
// average), at n = 32, L = 64 62, 96 and 82 s; every start and frontier
// point stops after 600 s, so a study takes about 80 minutes on one thread
// at n = L = 32 (3 starts x 600 s, then 8 frontier points x 12 rounds) and
// about 2 hours at n = 32, L = 64 (every one of them at its 600 s).
inline constexpr int kMaxTheorem1N = 32;
inline constexpr int kMaxTheorem1L = 64;
inline constexpr int kTheorem1MaxInputsPerTrigger = 10;  // MinimaxOptions::max_per_trigger

// --- eval -------------------------------------------------------------------
// --samples: at most 10^7 probe sequences; the probe set and the stored BOS
// masses must also fit the memory budget (1.2 kB per probe at n = 6,
// L = 16: 1 GB measured for 10^6).
inline constexpr int kMaxSamples = 10'000'000;
// Forward passes have no budget of their own: their work
//   samples x layers x heads x L n (L + n) x cost(precision),
// cost 1 for double and 1000 max(1, bits / 2048) for MPFR (measured at
// n = L = 16: 257 bits 1250 times double, 16384 bits 2500, 65536 bits
// 20000), must stay below 4e9, about two minutes (measured: 10^6 probes at
// n = 6, L = 16 in 25 s; 2000 at L = 1024 in 346 s, 3.7e7 per second).
inline constexpr double kMaxEvalWork = 4e9;
// --precision BITS: MPFR's own limits are far wider; at 65536 bits a number
// prints as 19729 digits.
inline constexpr int kMinPrecisionBits = 2;
inline constexpr int kMaxPrecisionBits = 1 << 16;
// --certify DIGITS and the precision cap of its adaptive loop (+64 bits from
// 64 while fewer digits are certified; the cap reached is exit code 4).
inline constexpr int kMaxCertifyDigits = 1000;
inline constexpr int kCertifyMaxBits = 8192;

// --- seeds ------------------------------------------------------------------
// --seed: any 64-bit unsigned integer, written in decimal digits.
inline constexpr std::uint64_t kMaxSeed = std::numeric_limits<std::uint64_t>::max();

}  // namespace sinkcert
