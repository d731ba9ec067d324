// SPDX-License-Identifier: MIT
#include "search/mpi_rank_group.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#ifdef SINKCERT_HAVE_MPI
#include <mpi.h>
#endif

namespace sinkcert::search {

bool launched_by_mpi_launcher() {
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

int launcher_local_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"}) {
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  }
  return 1;
}

namespace {

#ifndef SINKCERT_HAVE_MPI
// The launcher's rank count from the environment (1 if it does not say).
int launcher_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  }
  return 1;
}
#endif

#ifdef SINKCERT_HAVE_MPI
class MpiRankGroup : public RankGroup {
 public:
  MpiRankGroup() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      MPI_Init(nullptr, nullptr);
      owns_mpi_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiRankGroup() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_mpi_ && !finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void share(std::vector<std::vector<double>>& parts) const override {
    if (size_ == 1) return;
    ++shares_;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      const int root = owner(static_cast<int>(k));
      long length = static_cast<long>(parts[k].size());
      // testing only (tests/app/verify_mpi_test.sh): part 1 arrives empty,
      // as a part its owner never shared, from the N-th share on
      if (k == 1) {
        if (const char* drop = std::getenv("SINKCERT_TEST_DROP_PART")) {
          if (shares_ >= std::max(1L, std::atol(drop))) length = 0;
        }
      }
      MPI_Bcast(&length, 1, MPI_LONG, root, MPI_COMM_WORLD);
      parts[k].resize(static_cast<std::size_t>(length));
      // in pieces below INT_MAX doubles (MPI counts are int)
      constexpr long kPiece = 1L << 28;
      for (long at = 0; at < length; at += kPiece) {
        const int count = static_cast<int>(std::min(kPiece, length - at));
        MPI_Bcast(parts[k].data() + at, count, MPI_DOUBLE, root, MPI_COMM_WORLD);
      }
    }
  }

 private:
  int rank_ = 0, size_ = 1;
  bool owns_mpi_ = false;
  mutable long shares_ = 0;  // share() calls so far (SINKCERT_TEST_DROP_PART)
};
#endif

}  // namespace

std::unique_ptr<RankGroup> mpi_rank_group() {
  if (!launched_by_mpi_launcher()) return nullptr;
#ifdef SINKCERT_HAVE_MPI
  return std::make_unique<MpiRankGroup>();
#else
  if (launcher_ranks() > 1) {
    throw std::runtime_error(
        "this sinkcert was built without MPI (no Open MPI at configure time), so its ranks "
        "cannot share the work: run one process, or rebuild with libopenmpi-dev installed");
  }
  return nullptr;
#endif
}

}  // namespace sinkcert::search
