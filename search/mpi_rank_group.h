// SPDX-License-Identifier: MIT
//
// The ranks of MPI_COMM_WORLD as a RankGroup (search/rank_group.h), for a
// program started by mpirun/srun. share() broadcasts each part from its
// owner (MPI_Bcast of its length, then of its doubles), parts in order.
// Built with Open MPI only (SINKCERT_HAVE_MPI, CMake's find_package(MPI));
// without it mpi_rank_group() returns null under a launcher of one rank and
// throws for several (the ranks could not share their work).
#pragma once

#include <memory>

#include "search/rank_group.h"

namespace sinkcert::search {

// Whether the environment says mpirun/srun started this process.
bool launched_by_mpi_launcher();

// Null when not launched by MPI (one process: use the local group).
// Otherwise initializes MPI (MPI_Init, once) and returns the world's ranks;
// MPI is finalized when the returned group is destroyed. Throws
// std::runtime_error when launched with several ranks by a build without MPI.
std::unique_ptr<RankGroup> mpi_rank_group();

}  // namespace sinkcert::search
