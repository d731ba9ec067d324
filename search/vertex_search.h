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
// (c -> +1 if c >= 0, else -1), then random vertices drawn from
// std::mt19937_64(seed) as the adversary draws its vertices, in turn of
// three kinds (v mod 3):
//   0: one sign p_c per coordinate shared by all positions, C_kc = p_c;
//   1: independent signs;
//   2: rank one, C_kc = s_k p_c: a sign pattern p shared by every position,
//      each position k taking it or its negation (s_k = +-1); the worst
//      inputs of trained models look like this (a plain PGD's maximizers on
//      models trained by the paper's recipe put positions 1..j at +-1 with a
//      sign pattern that differs per coordinate), and the row moves walk
//      within this family.
// A start runs to convergence: passes continue until one pass accepts no
// move (every accepted move strictly improves a value over a finite set, so
// this ends); max_passes is only a guard against pathological models.
//
// Sharing across triggers (share_across_triggers): the worst inputs of
// neighbouring triggers look alike (the same sign pattern on the positions
// both average), and a local search started at another trigger's optimum
// often passes a basin its own starts missed. So, given each trigger's best
// witness, every trigger j restarts the local search from the best vertices
// of its neighbours j - 1 and j + 1 and of the `shared_top` best triggers
// overall (rounded to the vertex); the rounds repeat while a trigger improved
// (a source already tried at its current value is not tried again), at most
// `shared_rounds` times.
//
// Cost: for single-layer models of the row-wise attention kinds
// (vertex_move_screen.h, VertexMoveScreen::applies) each move is judged
// from the current vertex's attention sums: rejected or accepted without a
// forward pass when its estimate is worse or better than the current value
// by more than twice the screen's rounding tolerance, decided on a fresh
// forward pass (score_error / score_bos_mass) otherwise, and the current
// vertex takes a fresh pass again after kMaxAppliedMoves accepted moves and
// at the end of a start. The decisions are those of the fresh passes, so
// the search visits the same vertices and returns the same witnesses with
// and without the screen (VertexSearchOptions::screen); a move costs
// O(heads L) for its rows' change bounds plus O(n) per row that could still
// matter, instead of a forward pass's heads (2 L n^2 + 1.5 L^2 n). Other
// models take a forward pass per move.
//
// The result is NUMERIC(53) per witness: the values are the double
// evaluations; a caller that reports them certifies the witnesses
// (adversary.h, certify_witness). Deterministic for a given seed.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "search/adversary.h"
#include "src/model.h"
#include "src/task.h"

namespace sinkcert::search {

// Guard on the passes of one start. Every accepted move strictly improves
// the value over a finite set of vertices, so a start always converges; the
// guard (25 times the former fixed cap of 40 passes) only bounds the time a
// pathological model could take. VertexSearchResult::capped_starts counts
// the starts it stopped.
constexpr int kMaxVertexPasses = 1000;

// Moves applied from the screen's estimates (vertex_move_screen.h) before
// the current vertex takes a fresh forward pass again: each applied move
// adds at most a few (L + n) eps out_scale of rounding to the sums it
// updates, so 32 of them stay below half the screen's tolerance
// (64 eps (L + n + n S_A) out_scale), and the fresh pass costs about
// 1/32 of a pass per accepted move.
constexpr int kMaxAppliedMoves = 32;

struct VertexSearchOptions {
  std::uint64_t seed = 0;
  int random_starts_per_trigger = 9;  // random vertices searched per trigger
  int max_passes = kMaxVertexPasses;  // passes over the move list per start
  int shared_top = 2;                 // share_across_triggers: best triggers shared to all
  int shared_rounds = 4;              // share_across_triggers: rounds at most
  std::vector<int> triggers;          // empty: every position of the convention
  bool screen = true;                 // one-token moves screened (vertex_move_screen.h)
};

struct VertexSearchResult {
  // best vertex of each trigger searched that had a start, ascending j (not certified)
  std::vector<Witness> per_trigger;
  long evaluations = 0;  // forward passes
  long accepted_moves = 0;
  long screened_moves = 0;  // moves decided by the screen without a forward pass
  int capped_starts = 0;    // starts stopped by max_passes before converging
};

// The vertex nearest to C: +1 where C >= 0, -1 elsewhere.
Matrix<double> round_to_vertex(const Matrix<double>& C);

// Local search from every start whose trigger is searched (rounded to its
// vertex) and from random vertices of each trigger.
VertexSearchResult vertex_search(const Model<double>& model, const Task& task,
                                 const std::vector<Witness>& starts, WitnessQuantity quantity,
                                 const VertexSearchOptions& options = {});

// The random start v of the header's three kinds (v mod 3), drawn from eng.
Matrix<double> random_vertex_start(const Task& task, int v, std::mt19937_64& eng);

// One local search from the vertex `start` (exposed for tests): the local
// optimum reached and, in *evaluations, the forward passes it took;
// *converged (if given) says whether a pass accepted no move;
// *screened_moves counts the moves the screen decided without a forward
// pass (screen = false: every move takes one; the result is the same).
Witness vertex_ascent(const Model<double>& model, const Task& task, int trigger,
                      const Matrix<double>& start, WitnessQuantity quantity, int max_passes,
                      long* evaluations, long* accepted_moves = nullptr, bool* converged = nullptr,
                      long* screened_moves = nullptr, bool screen = true);

// Sharing across triggers (header): per_trigger holds one best witness per
// trigger searched (ascending j, any values); each entry is replaced by a
// strictly better vertex found from another trigger's witness. Returns, per
// entry, whether it was replaced; adds the forward passes to
// result->evaluations (and the accepted moves, capped starts).
std::vector<bool> share_across_triggers(const Model<double>& model, const Task& task,
                                        std::vector<Witness>& per_trigger, WitnessQuantity quantity,
                                        const VertexSearchOptions& options,
                                        VertexSearchResult* result);

}  // namespace sinkcert::search
