// SPDX-License-Identifier: MIT
//
// The ranks of a computation that every rank runs in lockstep: the same
// inputs, the same steps, the same results. Where the work splits into
// numbered parts k = 0..K-1 whose count K does not depend on the number of
// ranks, rank r computes the parts it owns,
//   owner(k) = k mod size,
// share() then gives every rank every part (the owner's values, bit for
// bit), and every rank combines the parts in the order k = 0..K-1. So the
// combined result, and with it every later step, is the same bits for any
// number of ranks (and of threads within a rank).
// One process: LocalRankGroup (size 1, share does nothing). Several
// processes under mpirun: search/mpi_rank_group.h.
#pragma once

#include <vector>

namespace sinkcert::search {

class RankGroup {
 public:
  virtual ~RankGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // On entry parts[k] holds part k's values on its owner (any size; other
  // ranks' entries are ignored); on return every rank holds every part.
  // Collective: every rank calls it with the same number of parts.
  virtual void share(std::vector<std::vector<double>>& parts) const = 0;
  int owner(int part) const { return part % size(); }
  bool owns(int part) const { return owner(part) == rank(); }
};

class LocalRankGroup : public RankGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void share(std::vector<std::vector<double>>&) const override {}
};

// The one-process group (a null RankGroup pointer means this one).
inline const RankGroup& local_rank_group() {
  static const LocalRankGroup group;
  return group;
}
inline const RankGroup& ranks_or_local(const RankGroup* ranks) {
  return ranks ? *ranks : local_rank_group();
}

}  // namespace sinkcert::search
