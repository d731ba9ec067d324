// SPDX-License-Identifier: MIT
#include "search/vertex_search.h"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace sinkcert::search {

namespace {

// A move: flip rows [row_begin, row_end) x columns [col_begin, col_end)
// (0-based rows of C, i.e. positions row + 1).
struct Move {
  int row_begin, row_end, col_begin, col_end;
};

// The move list of the header, in its order, for trigger j.
std::vector<Move> moves_for(const Task& task, int j) {
  const int rows = task.L - 1, cols = task.content_dim();
  std::vector<Move> moves;
  for (int k = 0; k < rows; ++k)
    for (int c = 0; c < cols; ++c) moves.push_back({k, k + 1, c, c + 1});
  for (int c = 0; c < cols; ++c) {
    // positions 1..j are rows 0..j-1; positions j+1..L-1 are rows j..rows-1
    if (j > 1) moves.push_back({0, j, c, c + 1});
    if (j < rows && rows - j > 1) moves.push_back({j, rows, c, c + 1});
    if (j > 0 && j < rows) moves.push_back({0, rows, c, c + 1});
  }
  if (cols > 1) {
    for (int k = 0; k < rows; ++k) moves.push_back({k, k + 1, 0, cols});
  }
  return moves;
}

void flip(Matrix<double>& C, const Move& m) {
  C.block(m.row_begin, m.col_begin, m.row_end - m.row_begin, m.col_end - m.col_begin) *= -1.0;
}

}  // namespace

Matrix<double> round_to_vertex(const Matrix<double>& C) {
  return C.unaryExpr([](double c) { return c >= 0 ? 1.0 : -1.0; });
}

Witness vertex_ascent(const Model<double>& model, const Task& task, int trigger,
                      const Matrix<double>& start, WitnessQuantity quantity, int max_passes,
                      long* evaluations, long* accepted_moves) {
  const bool bos = quantity == WitnessQuantity::kBosMass;
  const auto score = [&](const Matrix<double>& C) {
    ++*evaluations;
    return bos ? score_bos_mass(model, task, trigger, C) : score_error(model, task, trigger, C);
  };
  // better(a, b): a strictly improves on b (NaN never does)
  const auto better = [bos](double a, double b) { return bos ? a < b : a > b; };
  Witness best = score(round_to_vertex(start));
  Matrix<double> C = best.content;
  const std::vector<Move> moves = moves_for(task, trigger);
  for (int pass = 0; pass < max_passes; ++pass) {
    bool improved = false;
    for (const Move& m : moves) {
      flip(C, m);
      Witness w = score(C);
      if (better(w.value, best.value)) {
        best = std::move(w);
        improved = true;
        if (accepted_moves) ++*accepted_moves;
      } else {
        flip(C, m);  // undo
      }
    }
    if (!improved) break;
  }
  return best;
}

VertexSearchResult vertex_search(const Model<double>& model, const Task& task,
                                 const std::vector<Witness>& starts, WitnessQuantity quantity,
                                 const VertexSearchOptions& o) {
  task.validate();
  if (model.n != task.n) throw std::invalid_argument("model and task dimensions differ");
  const std::vector<int> triggers = o.triggers.empty() ? task.trigger_positions() : o.triggers;
  if (triggers.empty()) throw std::invalid_argument("the trigger-range convention has no position");
  const bool bos = quantity == WitnessQuantity::kBosMass;
  const auto better = [bos](const Witness& a, const Witness& b) {
    return bos ? a.value < b.value : a.value > b.value;
  };
  VertexSearchResult result;
  std::mt19937_64 eng(o.seed);
  for (int j : triggers) {
    if (j < 1 || j >= task.L) throw std::invalid_argument("trigger outside 1..L-1");
    std::vector<Matrix<double>> from;
    for (const Witness& s : starts) {
      if (s.trigger == j) from.push_back(s.content);
    }
    for (int v = 0; v < o.random_starts_per_trigger; ++v)
      from.push_back(random_sign_vertex(task, v, eng));
    bool any = false;
    Witness best;
    for (const Matrix<double>& C : from) {
      const Witness w = vertex_ascent(model, task, j, C, quantity, o.max_passes,
                                      &result.evaluations, &result.accepted_moves);
      if (!any || better(w, best)) best = w;
      any = true;
    }
    if (any) result.per_trigger.push_back(best);
  }
  return result;
}

}  // namespace sinkcert::search
