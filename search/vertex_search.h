// SPDX-License-Identifier: MIT
//
// Local search on the vertices of the content box.
//
// The worst inputs of trained models sit on vertices: every content
// coordinate of the positions that matter is +-1. The vertex search walks
// the vertices V = {-1, +1}^((L-1) x (n-3)) of the box of one trigger
// position j, maximizing the l_inf error (resp. minimizing the non-trigger
// BOS mass) of the input X(j, C):
//   value(C) = max_{i,d} |f(X(j, C))_{i,d} - y_{i,d}|      (error)
//   value(C) = min_{i >= 1, i != j, l, h} a^{l,h}_{i0}       (BOS mass)
// evaluated in double exactly as the adversary scores its points
// (adversary.h: score_error, score_bos_mass).
//
// Moves from a vertex C (S a set of entries, C' = C with C_s -> -C_s for s in S):
//   single:  S = {(k, c)}                 every position k, coordinate c
//   column:  S = {(k, c) : k = 1..j}      the positions the trigger averages
//            S = {(k, c) : k = j+1..L-1}  the positions after the trigger
//            S = {(k, c) : k = 1..L-1}    coordinate c everywhere
//   row:     S = {(k, c) : c = 0..n-4}    every coordinate of position k
// A pass tries every move in this order and accepts each one that strictly
// improves value (first improvement); a start ends at a vertex no move
// improves (a local optimum of these neighbourhoods) or after max_passes.
// Block moves let the search change the per-coordinate sign pattern shared by
// positions 1..j in one step, which single flips reach only through worse
// intermediate vertices.
//
// Starts for trigger j: the given points rounded to the vertex
// (c -> +1 if c >= 0, else -1), then random vertices: even ones one sign per
// coordinate shared by all positions, odd ones independent signs, drawn from
// std::mt19937_64(seed) as the adversary draws its vertices.
//
// The result is NUMERIC(53) per witness: the values are the double
// evaluations; a caller that reports them certifies the witnesses
// (adversary.h, certify_witness). Deterministic for a given seed.
#pragma once

#include <cstdint>
#include <vector>

#include "search/adversary.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert::search {

struct VertexSearchOptions {
  std::uint64_t seed = 0;
  int random_starts_per_trigger = 6;  // random vertices searched per trigger
  int max_passes = 40;                // passes over the move list per start
  std::vector<int> triggers;          // empty: every position of the convention
};

struct VertexSearchResult {
  // best vertex of each trigger searched that had a start, ascending j (not certified)
  std::vector<Witness> per_trigger;
  long evaluations = 0;  // forward passes
  long accepted_moves = 0;
};

// The vertex nearest to C: +1 where C >= 0, -1 elsewhere.
Matrix<double> round_to_vertex(const Matrix<double>& C);

// Local search from every start whose trigger is searched (rounded to its
// vertex) and from random vertices of each trigger.
VertexSearchResult vertex_search(const Model<double>& model, const Task& task,
                                 const std::vector<Witness>& starts, WitnessQuantity quantity,
                                 const VertexSearchOptions& options = {});

// One local search from the vertex `start` (exposed for tests): the local
// optimum reached and, in *evaluations, the forward passes it took.
Witness vertex_ascent(const Model<double>& model, const Task& task, int trigger,
                      const Matrix<double>& start, WitnessQuantity quantity, int max_passes,
                      long* evaluations, long* accepted_moves = nullptr);

}  // namespace sinkcert::search
