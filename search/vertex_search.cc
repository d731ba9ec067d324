// SPDX-License-Identifier: MIT
#include "search/vertex_search.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <stdexcept>

#include "search/vertex_move_screen.h"

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

Matrix<double> random_vertex_start(const Task& task, int v, std::mt19937_64& eng) {
  if (v % 3 != 2) return random_sign_vertex(task, v % 3, eng);
  // rank one: C_kc = s_k p_c, p one sign per coordinate, s_k from an independent draw
  const Matrix<double> p = random_sign_vertex(task, 0, eng);
  const Matrix<double> s = random_sign_vertex(task, 1, eng);
  Matrix<double> C = p;
  for (int k = 0; k < C.rows(); ++k) C.row(k) *= s(k, 0);
  return C;
}

Witness vertex_ascent(const Model<double>& model, const Task& task, int trigger,
                      const Matrix<double>& start, WitnessQuantity quantity, int max_passes,
                      long* evaluations, long* accepted_moves, bool* converged,
                      long* screened_moves, bool screen) {
  const bool bos = quantity == WitnessQuantity::kBosMass;
  // the moves of single-layer models are screened (vertex_move_screen.h):
  // decided from the estimate where it is clear by the tolerance, on a
  // fresh forward pass otherwise
  std::optional<VertexMoveScreen> screener;
  if (screen && VertexMoveScreen::applies(model)) screener.emplace(model, task, trigger, quantity);
  const auto score = [&](const Matrix<double>& C) {
    ++*evaluations;
    if (screener) return screener->score(C);
    return bos ? score_bos_mass(model, task, trigger, C) : score_error(model, task, trigger, C);
  };
  // better(a, b): a strictly improves on b (NaN never does)
  const auto better = [bos](double a, double b) { return bos ? a < b : a > b; };
  Witness best = score(round_to_vertex(start));
  if (screener) screener->accept();
  Matrix<double> C = best.content;
  // the current vertex's fresh pass again (after moves applied without one)
  const auto refresh = [&] {
    if (screener && !screener->exact()) {
      best = score(C);
      screener->accept();
    }
  };
  const std::vector<Move> moves = moves_for(task, trigger);
  if (converged) *converged = false;
  for (int pass = 0; pass < max_passes; ++pass) {
    bool improved = false;
    for (const Move& m : moves) {
      if (screener) {
        const auto verdict = screener->judge(m.row_begin + 1, m.row_end, m.col_begin, m.col_end);
        if (verdict == VertexMoveScreen::Verdict::kWorse) {
          if (screened_moves) ++*screened_moves;
          continue;  // the fresh pass would reject it
        }
        if (verdict == VertexMoveScreen::Verdict::kBetter &&
            screener->applied() < kMaxAppliedMoves) {
          // the fresh pass would accept it
          screener->apply(m.row_begin + 1, m.row_end, m.col_begin, m.col_end);
          flip(C, m);
          improved = true;
          if (accepted_moves) ++*accepted_moves;
          if (screened_moves) ++*screened_moves;
          continue;
        }
        refresh();
      }
      flip(C, m);
      Witness w = score(C);
      if (better(w.value, best.value)) {
        best = std::move(w);
        improved = true;
        if (accepted_moves) ++*accepted_moves;
        if (screener) screener->accept();
      } else {
        flip(C, m);  // undo
      }
    }
    if (!improved) {
      if (converged) *converged = true;
      break;
    }
  }
  refresh();
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
      from.push_back(random_vertex_start(task, v, eng));
    bool any = false;
    Witness best;
    for (const Matrix<double>& C : from) {
      bool converged = false;
      const Witness w =
          vertex_ascent(model, task, j, C, quantity, o.max_passes, &result.evaluations,
                        &result.accepted_moves, &converged, &result.screened_moves, o.screen);
      if (!converged && o.max_passes > 0) ++result.capped_starts;
      if (!any || better(w, best)) best = w;
      any = true;
    }
    if (any) result.per_trigger.push_back(best);
  }
  return result;
}

std::vector<bool> share_across_triggers(const Model<double>& model, const Task& task,
                                        std::vector<Witness>& per_trigger, WitnessQuantity quantity,
                                        const VertexSearchOptions& o, VertexSearchResult* result) {
  const bool bos = quantity == WitnessQuantity::kBosMass;
  const auto better = [bos](double a, double b) { return bos ? a < b : a > b; };
  const int count = static_cast<int>(per_trigger.size());
  std::vector<bool> replaced(count, false);
  // tried[t][u]: the value of source u when it was last tried at t (sources
  // are retried only after they improved)
  std::vector<std::vector<double>> tried(count, std::vector<double>(count, std::nan("")));
  for (int round = 0; round < o.shared_rounds; ++round) {
    // the shared_top best entries, by value (ties: the earlier trigger)
    std::vector<int> order(count);
    for (int t = 0; t < count; ++t) order[t] = t;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return better(per_trigger[a].value, per_trigger[b].value);
    });
    const std::vector<Witness> sources = per_trigger;  // this round's snapshot
    bool any = false;
    for (int t = 0; t < count; ++t) {
      std::vector<int> from;
      if (t > 0) from.push_back(t - 1);
      if (t + 1 < count) from.push_back(t + 1);
      for (int r = 0; r < std::min(o.shared_top, count); ++r) {
        if (std::find(from.begin(), from.end(), order[r]) == from.end()) from.push_back(order[r]);
      }
      for (int u : from) {
        if (u == t || sources[u].content.size() == 0) continue;
        if (tried[t][u] == sources[u].value) continue;  // NaN (never tried) compares unequal
        tried[t][u] = sources[u].value;
        bool converged = false;
        const Witness w =
            vertex_ascent(model, task, per_trigger[t].trigger, sources[u].content, quantity,
                          o.max_passes, &result->evaluations, &result->accepted_moves, &converged,
                          &result->screened_moves, o.screen);
        if (!converged && o.max_passes > 0) ++result->capped_starts;
        if (better(w.value, per_trigger[t].value)) {
          per_trigger[t] = w;
          replaced[t] = true;
          any = true;
        }
      }
    }
    if (!any) break;
  }
  return replaced;
}

}  // namespace sinkcert::search
