// SPDX-License-Identifier: MIT
//
// ranks_benchmark: time per minimax round of a residual model against the
// threads (1, 2) and MPI ranks (1, 2) that share it (a program, not a
// ctest test).
//
//   ranks_benchmark [--n N] [--L L] [--layers Y] [--heads H] [--rounds R]
//                   [--seed S] [--mpiexec PATH]
//
// The least-squares exchange method (search/minimax.h) runs R rounds from a
// normal init (std 0.02, seed S; tests/test_util.h random_model) with the
// compressed block's sums (search/compressed_rows_cost.h) and the
// adversary's refinements shared over ranks (search/rank_group.h). The
// configurations 1 rank x 1 thread (the baseline), 1 x 2, and, when this
// program was built with Open MPI, 2 x 1 and 2 x 2 (the program runs itself
// under `mpiexec -np 2 --oversubscribe`, as the child --child-threads T) are
// timed in one run; each prints the mean wall seconds per round, the ratio
// baseline / it, and whether its final worst case and weights are the
// baseline's bit for bit (a hash of their bytes). Defaults: n = L = 8, 2 x 2,
// 3 rounds, seed 0.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "search/minimax.h"
#include "search/mpi_rank_group.h"
#include "tests/test_util.h"

using namespace sinkcert;
using namespace sinkcert::search;

namespace {

struct Timing {
  double per_round = 0;
  unsigned long long hash = 0;  // FNV-1a of the final model's and worst case's bytes
};

unsigned long long fnv(const void* data, std::size_t bytes, unsigned long long h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t k = 0; k < bytes; ++k) h = (h ^ p[k]) * 1099511628211ULL;
  return h;
}

Timing run(int n, int L, int layers, int heads, int rounds, std::uint64_t seed, int threads,
           const RankGroup* ranks) {
  const Task task{n, L, TriggerRange::kPaper};
  const Model<double> init = testing::random_model(n, AttentionKind::kSoftmax, 0.02, seed, layers,
                                                   heads, ModelKind::kResidual);
  MinimaxOptions o;
  o.seed = seed;
  o.adversary.seed = seed;
  o.target_loss = 0;
  o.max_rounds = rounds;
  o.time_limit_seconds = 1e9;
  o.deep_threads = threads;
  o.ranks = ranks;
  const MinimaxResult r = minimax(init, task, o);
  Timing t;
  t.per_round = r.seconds / std::max<std::size_t>(1, r.history.size());
  unsigned long long h = 1469598103934665603ULL;
  h = fnv(&r.worst.certified, sizeof(double), h);
  for (const auto& layer : r.model.layers) {
    for (const Head<double>& hd : layer) {
      h = fnv(hd.A.data(), sizeof(double) * hd.A.size(), h);
      h = fnv(hd.M.data(), sizeof(double) * hd.M.size(), h);
    }
  }
  t.hash = h;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 8, L = 8, layers = 2, heads = 2, rounds = 3, child_threads = 0;
  std::uint64_t seed = 0;
  std::string mpiexec = "mpiexec";
  for (int k = 1; k + 1 < argc; k += 2) {
    const std::string a = argv[k], v = argv[k + 1];
    if (a == "--n") {
      n = std::stoi(v);
    } else if (a == "--L") {
      L = std::stoi(v);
    } else if (a == "--layers") {
      layers = std::stoi(v);
    } else if (a == "--heads") {
      heads = std::stoi(v);
    } else if (a == "--rounds") {
      rounds = std::stoi(v);
    } else if (a == "--seed") {
      seed = std::stoull(v);
    } else if (a == "--mpiexec") {
      mpiexec = v;
    } else if (a == "--child-threads") {
      child_threads = std::stoi(v);
    } else {
      std::fprintf(stderr, "ranks_benchmark: unknown option %s %s\n", a.c_str(), v.c_str());
      return 2;
    }
  }
  if (child_threads > 0) {
    // under mpiexec: every rank runs, rank 0 prints "per_round hash"
    const std::unique_ptr<RankGroup> group = mpi_rank_group();
    const Timing t = run(n, L, layers, heads, rounds, seed, child_threads, group.get());
    if (!group || group->rank() == 0) std::printf("%.17g %llu\n", t.per_round, t.hash);
    return 0;
  }
  std::printf("ranks_benchmark: n = %d, L = %d, %d x %d, %d rounds, seed %llu, P = %d parameters\n",
              n, L, layers, heads, rounds, static_cast<unsigned long long>(seed),
              2 * n * n * layers * heads);
  std::printf("ranks  threads  s/round  baseline/this  same bits\n");
  const Timing base = run(n, L, layers, heads, rounds, seed, 1, nullptr);
  const auto line = [&](int r, int t, const Timing& x) {
    std::printf("%5d  %7d  %7.3f  %13.2f  %s\n", r, t, x.per_round, base.per_round / x.per_round,
                x.hash == base.hash ? "yes" : "NO");
    std::fflush(stdout);
  };
  line(1, 1, base);
  line(1, 2, run(n, L, layers, heads, rounds, seed, 2, nullptr));
  for (int t : {1, 2}) {
    const std::string cmd = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + mpiexec +
                            " -np 2 --oversubscribe " + argv[0] + " --n " + std::to_string(n) +
                            " --L " + std::to_string(L) + " --layers " + std::to_string(layers) +
                            " --heads " + std::to_string(heads) + " --rounds " +
                            std::to_string(rounds) + " --seed " + std::to_string(seed) +
                            " --child-threads " + std::to_string(t);
    FILE* pipe = popen(cmd.c_str(), "r");
    Timing x;
    if (!pipe || std::fscanf(pipe, "%lf %llu", &x.per_round, &x.hash) != 2) {
      std::printf("    2  %7d  (mpiexec failed: a build without Open MPI, or no mpiexec)\n", t);
      if (pipe) pclose(pipe);
      continue;
    }
    pclose(pipe);
    line(2, t, x);
  }
  return 0;
}
