// SPDX-License-Identifier: MIT
//
// Ranks simulated by threads of one process, for tests of code written for
// search/rank_group.h without mpirun: run_on_ranks(K, f) calls f(group) on K
// threads, each with its own rank of one group; share() hands every part
// from its owner to every rank through a board guarded by a two-phase
// barrier (all owners write, then all ranks read).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "search/rank_group.h"
#include "src/thread_caches.h"

namespace sinkcert::test {

class ThreadRankBoard {
 public:
  explicit ThreadRankBoard(int size) : size_(size) {}
  int size() const { return size_; }
  // Waits until every rank has arrived (reusable).
  void barrier() {
    std::unique_lock<std::mutex> lock(m_);
    const long generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }
  std::vector<std::vector<double>> board;
  std::mutex board_mutex;

 private:
  int size_;
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  long generation_ = 0;
};

class ThreadRankGroup : public search::RankGroup {
 public:
  ThreadRankGroup(ThreadRankBoard* board, int rank) : board_(board), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return board_->size(); }
  void share(std::vector<std::vector<double>>& parts) const override {
    {
      const std::lock_guard<std::mutex> lock(board_->board_mutex);
      if (board_->board.size() != parts.size()) board_->board.resize(parts.size());
      for (std::size_t k = 0; k < parts.size(); ++k) {
        if (owns(static_cast<int>(k))) board_->board[k] = parts[k];
      }
    }
    board_->barrier();
    for (std::size_t k = 0; k < parts.size(); ++k) parts[k] = board_->board[k];
    board_->barrier();
  }

 private:
  ThreadRankBoard* board_;
  int rank_;
};

// f(group) on `size` threads, one rank each; f must make the same
// collective calls on every rank.
inline void run_on_ranks(int size, const std::function<void(const search::RankGroup&)>& f) {
  ThreadRankBoard board(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      {
        const ThreadRankGroup group(&board, r);
        f(group);
      }
      release_thread_caches();
    });
  }
  for (std::thread& t : threads) t.join();
}

// run(options) on `size` simulated ranks, options.ranks set to each rank's
// group: the results by rank.
template <class Result, class Options, class Run>
std::vector<Result> results_on_ranks(int size, const Options& options, const Run& run) {
  std::vector<Result> got(static_cast<std::size_t>(size));
  run_on_ranks(size, [&](const search::RankGroup& group) {
    Options mine = options;
    mine.ranks = &group;
    got[static_cast<std::size_t>(group.rank())] = run(mine);
  });
  return got;
}

}  // namespace sinkcert::test
