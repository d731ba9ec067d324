// SPDX-License-Identifier: MIT
//
// The minimax's state between two rounds (search/minimax.h), written to a
// file after every round and read back to continue an interrupted run.
// After round k the next round reads exactly:
//   theta (the parameter blocks), the active set (trigger, content, whether
//   initial, the Lawson weights w), the trust radius, the penalty rho, the
//   previous objective, the best worst case so far (trust control), the best
//   feasible worst case with its model and witness, the adversary's
//   per-trigger witnesses (next round's warm starts), the history and the
//   counters.
// Every double is stored with 17 significant digits (non-finite ones as
// "inf", "-inf", "nan"), so a run continued from the file takes the same
// steps as the uninterrupted run, bit for bit. The file also names the run
// it belongs to (sizes, options that change the iterates, a hash of the
// init's parameters); reading it for another run is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search/adversary.h"
#include "search/minimax.h"
#include "src/scalar_traits.h"

namespace sinkcert::search {

struct MinimaxCheckpoint {
  // the run: every field must match to continue it
  std::string identity;   // a canonical text of the sizes and options (see minimax.cc)
  std::string init_hash;  // FNV-1a of the init's parameter blocks, hex
  // the state after `round` rounds
  int round = 0;
  double elapsed = 0;  // seconds the run had taken
  std::vector<std::vector<double>> theta;
  struct Input {
    int trigger = 0;
    bool initial = false;
    Matrix<double> content;
    std::vector<double> w;
  };
  std::vector<Input> active;
  double radius = 0, rho = 0, prev_objective = 0, best_worst = 0, best_feasible = 0;
  std::vector<std::vector<double>> best_theta;  // the result's model
  Witness best_witness;                         // the result's witness
  std::vector<Witness> warm;                    // the last round's per-trigger witnesses
  std::vector<MinimaxRecord> history;
  long jacobian_evaluations = 0;
};

// FNV-1a over the bytes of the blocks, as 16 hex digits.
std::string parameter_hash(const std::vector<std::vector<double>>& blocks);

// Written atomically (temporary and rename); throws std::runtime_error
// naming the file if it cannot be written.
void write_checkpoint(const std::string& path, const MinimaxCheckpoint& c);

// Throws std::runtime_error naming the file, the field and what was expected
// for an unreadable or malformed file.
MinimaxCheckpoint read_checkpoint(const std::string& path);

}  // namespace sinkcert::search
