// SPDX-License-Identifier: MIT
//
// deep_descent_benchmark: the minimax's descent on a residual model with
// several layers and heads (a program, not a ctest test).
//
//   deep_descent_benchmark [--n N] [--L L] [--layers Y] [--heads H]
//                          [--solver compressed|dense|cg] [--threads K]
//                          [--std S] [--seed S] [--seconds T] [--baseline dense|cg]
//                          [--isa baseline|avx2] [--baseline-isa baseline|avx2]
//                          [--checkpoint FILE] [--resume] [--init-weights FILE]
//                          [--write-weights FILE]
//
// From a normal init (std S, seed S; tests/test_util.h random_model) the
// least-squares exchange method (search/minimax.h) runs until the worst case
// is below 1e-6 or T seconds of wall time pass. One line per round: the
// round's worst case (SEARCH, lower bound: the adversary's witness certified
// in MPFI and printed rounded down), the process CPU time (user + sys) and
// the wall time since the start. Solvers: compressed (the default: Ceres'
// dense normal Cholesky on the compressed block of
// search/compressed_rows_cost.h, its sums on K threads), dense (one Ceres
// block per row, Ceres forming J^T J; Ceres on K threads) and cg (CGNR on
// the per-row blocks). --baseline B then runs solver B with the same
// options in the same process and prints, at the last round both reached,
// the ratio of their wall times to that round (B over the first).
// --isa picks the compressed block's dense kernels (search/dense_kernel.h);
// --baseline-isa I runs the same solver once more with kernels I in the same
// process and prints the same ratio. Defaults: n = L = 16, 2 x 2, std 0.02,
// seed 0, 1200 s, compressed, 1 thread, baseline kernels. --checkpoint FILE
// writes the descent's state after every round (search/minimax_checkpoint.h);
// with --resume a descent interrupted at round k continues from that file
// (rounds k + 1, ... are printed; the time limit counts the earlier time).
// --init-weights FILE starts from a warm init instead: the residual softmax
// model of FILE (l' layers, h' heads, the same n) placed in layers 0 .. l'-1,
// heads 0 .. h'-1, every other head drawn as above (std S, seed S), so with
// S = 0 the init computes exactly FILE's function (a head with M = 0 adds
// nothing to the residual stream); the first round is then a full
// Levenberg-Marquardt round (MinimaxOptions::fit_m_first = false), and the
// init's worst case is printed as round 0. --write-weights FILE writes the best
// model of the (first) descent as a weight file, its metadata naming the
// run and the worst case found (SEARCH, lower bound).
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "search/minimax.h"
#include "src/output_files.h"
#include "src/run_info.h"
#include "src/table_writer.h"
#include "src/weight_file.h"
#include "tests/test_util.h"

using namespace sinkcert;
using namespace sinkcert::search;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// A certified lower bound printed rounded down (4 digits).
std::string lower_bound_text(double x) {
  PrecisionScope scope(64);
  return format_down(Mpfr(x), 4);
}

struct RoundTime {
  int round;
  double wall;
};

// One descent with `solver`; prints its rounds and returns their wall times.
std::vector<RoundTime> descend(const Model<double>& init, const Task& task, MinimaxOptions o,
                               const std::string& solver, int threads, double std,
                               std::uint64_t seed, DenseIsa isa,
                               const std::string& write_weights = "",
                               const std::vector<std::string>& argv = {}) {
  o.deep_solver =
      solver == "cg" ? DeepLinearSolver::kConjugateGradients : DeepLinearSolver::kDenseNormal;
  o.compressed_rows = solver == "compressed";
  o.deep_threads = threads;
  o.dense_isa = isa;
  const double cpu0 = cpu_seconds();
  std::printf("n = %d, L = %d, %d x %d, std %g, seed %llu, solver %s, %s kernels, %d threads\n",
              task.n, task.L, init.num_layers(), init.num_heads(), std,
              static_cast<unsigned long long>(seed), solver.c_str(), to_string(isa).c_str(),
              threads);
  std::printf("round  worst_case(SEARCH,lower bound)  event   active  cpu_s  wall_s\n");
  std::vector<RoundTime> times;
  const MinimaxResult r =
      minimax(init, task, o, [&](const MinimaxRecord& rec, const Model<double>&) {
        std::printf("%5d  %s  %s  %d  %.1f  %.1f\n", rec.round,
                    lower_bound_text(rec.worst_case).c_str(), rec.event.c_str(), rec.active_size,
                    cpu_seconds() - cpu0, rec.elapsed);
        std::fflush(stdout);
        times.push_back({rec.round, rec.elapsed});
      });
  std::printf(
      "result: worst case %s (SEARCH, lower bound), %s, cpu %.1f s, wall %.1f s, %ld "
      "Jacobian evaluations\n",
      lower_bound_text(r.worst.certified).c_str(), r.stop_reason.c_str(), cpu_seconds() - cpu0,
      r.seconds, r.jacobian_evaluations);
  if (!write_weights.empty()) {
    nlohmann::json meta = {{"worst_case_search_lower_bound", lower_bound_text(r.worst.certified)},
                           {"stop_reason", r.stop_reason},
                           {"seconds", r.seconds}};
    meta[kProvenanceKey] = to_json(make_run_info(argv, seed, "double"));
    write_weight_file(write_weights, weight_file_from_model(r.model, meta));
    std::printf("wrote %s\n", write_weights.c_str());
  }
  return times;
}

// The random model `pad` with FILE's heads in its first layers and heads;
// exits with a message naming the file and field when they do not fit.
Model<double> embed_weights(const std::string& file, Model<double> pad) {
  const Model<double> small = to_model<double>(read_weight_file(file));
  const auto refuse = [&](const std::string& what) {
    std::fprintf(stderr, "deep_descent_benchmark: %s: %s\n", file.c_str(), what.c_str());
    std::exit(2);
  };
  if (small.kind != ModelKind::kResidual || small.attention != AttentionKind::kSoftmax)
    refuse("\"kind\" must be a residual softmax model");
  if (small.n != pad.n)
    refuse("\"n\" is " + std::to_string(small.n) + ", expected " + std::to_string(pad.n));
  if (small.num_layers() > pad.num_layers() || small.num_heads() > pad.num_heads())
    refuse("\"layers\" is " + std::to_string(small.num_layers()) + " x " +
           std::to_string(small.num_heads()) + " heads, expected at most " +
           std::to_string(pad.num_layers()) + " x " + std::to_string(pad.num_heads()));
  for (int l = 0; l < small.num_layers(); ++l)
    for (int h = 0; h < small.num_heads(); ++h) pad.layers[l][h] = small.layers[l][h];
  return pad;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 16, L = 16, layers = 2, heads = 2;
  double std = 0.02, seconds = 1200;
  std::uint64_t seed = 0;
  std::string solver = "compressed", baseline;
  DenseIsa isa = DenseIsa::kBaseline;
  std::optional<DenseIsa> baseline_isa;
  std::string checkpoint, init_weights, write_weights;
  const std::vector<std::string> command(argv, argv + argc);
  bool resume = false;
  int threads = 1;
  const auto is_solver = [](const std::string& v) {
    return v == "compressed" || v == "dense" || v == "cg";
  };
  for (int k = 1; k < argc; k += 2) {
    if (std::string(argv[k]) == "--resume") {
      resume = true;
      --k;
      continue;
    }
    if (k + 1 >= argc) {
      std::fprintf(stderr, "deep_descent_benchmark: option %s needs a value\n", argv[k]);
      return 2;
    }
    const std::string a = argv[k], v = argv[k + 1];
    if (a == "--n") {
      n = std::stoi(v);
    } else if (a == "--L") {
      L = std::stoi(v);
    } else if (a == "--layers") {
      layers = std::stoi(v);
    } else if (a == "--heads") {
      heads = std::stoi(v);
    } else if (a == "--std") {
      std = std::stod(v);
    } else if (a == "--seed") {
      seed = std::stoull(v);
    } else if (a == "--seconds") {
      seconds = std::stod(v);
    } else if (a == "--solver" && is_solver(v)) {
      solver = v;
    } else if (a == "--baseline" && is_solver(v)) {
      baseline = v;
    } else if (a == "--checkpoint") {
      checkpoint = v;
    } else if (a == "--write-weights") {
      write_weights = v;
    } else if (a == "--init-weights") {
      init_weights = v;
    } else if (a == "--isa") {
      isa = parse_dense_isa(v);
    } else if (a == "--baseline-isa") {
      baseline_isa = parse_dense_isa(v);
    } else if (a == "--threads") {
      threads = std::stoi(v);
    } else {
      std::fprintf(stderr, "deep_descent_benchmark: unknown option %s %s\n", a.c_str(), v.c_str());
      return 2;
    }
  }
  const Task task{n, L, TriggerRange::kPaper};
  Model<double> init = testing::random_model(n, AttentionKind::kSoftmax, std, seed, layers, heads,
                                             ModelKind::kResidual);
  if (!init_weights.empty()) {
    init = embed_weights(init_weights, init);
    std::printf("init: %s in layers 0 .. and heads 0 .., the other heads std %g, seed %llu\n",
                init_weights.c_str(), std, static_cast<unsigned long long>(seed));
  }
  MinimaxOptions o;
  o.seed = seed;
  o.target_loss = 1e-6;
  o.max_rounds = 100000;
  o.time_limit_seconds = seconds;
  o.checkpoint = checkpoint;
  o.resume = resume;
  o.fit_m_first = init_weights.empty();
  if (resume && checkpoint.empty()) {
    std::fprintf(stderr, "deep_descent_benchmark: --resume needs --checkpoint FILE\n");
    return 2;
  }
  if (!checkpoint.empty() && (!baseline.empty() || baseline_isa)) {
    std::fprintf(stderr, "deep_descent_benchmark: --checkpoint is for one descent (no baseline)\n");
    return 2;
  }
  isa = resolve_dense_isa(isa);
  if (!write_weights.empty()) check_output_file(write_weights, "--write-weights");
  if (!init_weights.empty() && !resume) {
    const AdversaryResult w = maximize_error(init, task, o.adversary);
    std::printf("round 0 (the init): worst case %s (SEARCH, lower bound)\n",
                lower_bound_text(w.best.certified).c_str());
    std::fflush(stdout);
  }
  const std::vector<RoundTime> first =
      descend(init, task, o, solver, threads, std, seed, isa, write_weights, command);
  if (baseline.empty() && !baseline_isa) return 0;
  if (baseline.empty()) baseline = solver;
  const DenseIsa second_isa = resolve_dense_isa(baseline_isa.value_or(isa));
  const std::vector<RoundTime> base =
      descend(init, task, o, baseline, threads, std, seed, second_isa);
  const std::size_t common = std::min(first.size(), base.size());
  if (common == 0) {
    std::printf("no round completed by both\n");
    return 0;
  }
  const RoundTime &a = first[common - 1], &b = base[common - 1];
  const std::string one = solver + " (" + to_string(isa) + ")";
  const std::string two = baseline + " (" + to_string(second_isa) + ")";
  std::printf("wall time to round %d: %s %.1f s, %s %.1f s, ratio %s / %s = %.2f\n", a.round,
              one.c_str(), a.wall, two.c_str(), b.wall, two.c_str(), one.c_str(), b.wall / a.wall);
  return 0;
}
