// SPDX-License-Identifier: MIT
//
// The ranks of MPI_COMM_WORLD as a RankGroup (search/rank_group.h), for a
// program started by mpirun/srun. share() broadcasts each part from its
// owner (MPI_Bcast of its length, then of its doubles), parts in order.
// Testing only: with SINKCERT_TEST_DROP_PART = N (N >= 1; not a number:
// 1), part 1 of the N-th share and of every later one arrives empty on
// every rank (a broken share, which the readers of src/exact_parts.h must
// refuse); a large N reaches the shares of a box search's later phase.
// Built with Open MPI only (SINKCERT_HAVE_MPI, CMake's find_package(MPI));
// without it mpi_rank_group() returns null under a launcher of one rank and
// throws for several (the ranks could not share their work).
#pragma once

#include <memory>

#include "search/rank_group.h"

namespace sinkcert::search {

// Whether the environment says mpirun/srun started this process.
bool launched_by_mpi_launcher();

// The ranks the launcher started on this node, from the environment
// (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE, Slurm's SLURM_NTASKS_PER_NODE); 1
// when it does not say.
int launcher_local_ranks();

// Null when not launched by MPI (one process: use the local group).
// Otherwise initializes MPI (MPI_Init, once) and returns the world's ranks;
// MPI is finalized when the returned group is destroyed. Throws
// std::runtime_error when launched with several ranks by a build without MPI.
std::unique_ptr<RankGroup> mpi_rank_group();

}  // namespace sinkcert::search
