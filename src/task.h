// SPDX-License-Identifier: MIT
//
// The trigger-conditional task T(n, L) of docs/definitions.md, Definitions 1.
//
// A sequence X is L x n (row = position, 0-indexed). Coordinates:
//   0: BOS flag, 1: trigger flag, 2..n-2: content, n-1: ordinary flag.
//   x_0     = e_0                               (BOS)
//   x_j     = e_1 + (0, 0, c_j, 0)              (the one trigger)
//   x_i     = e_{n-1} + (0, 0, c_i, 0), i != j  (ordinary), c_i in [-1,1]^(n-3)
// Targets:
//   plain:    y_i = 0 (i != j),   y_j = (1/j) sum_{k=1..j} x_k
//   residual: y_i = x_i (i != j), y_j = x_j + (1/j) sum_{k=1..j} x_k
// Trigger range: paper j in {1..L-1}; reference-code j in {2..L-1}.
//
// The sampler's stream (identical on every machine, pinned by a test):
//   engine = std::mt19937_64(seed)  (fully specified by the C++ standard)
//   per sequence: trigger index r = draw_below(count) where draw_below takes
//     raw 64-bit words w and returns w % count for the first w < 2^64 -
//     (2^64 mod count) (rejection, so unbiased); j = positions[r];
//   then for k = 1..L-1, c = 0..n-4 in that order:
//     u = (w >> 11) * 2^-53 in [0, 1), content = 2u - 1 in [-1, 1).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "src/scalar_traits.h"

namespace sinkcert {

enum class TriggerRange { kPaper, kReferenceCode };
enum class TargetKind { kPlain, kResidual };

std::string to_string(TriggerRange range);
// Parses "paper" or "reference-code"; throws std::invalid_argument otherwise.
TriggerRange parse_trigger_range(const std::string& text);

struct Task {
  int n = 16;
  int L = 16;
  TriggerRange range = TriggerRange::kPaper;

  int content_dim() const { return n - 3; }
  // Allowed trigger positions under `range`, ascending. May be empty
  // (L = 2 under reference-code); callers that need one must check.
  std::vector<int> trigger_positions() const;
  // Throws std::invalid_argument unless n >= 3 and L >= 2.
  void validate() const;
  // Whether the theorems' hypotheses n >= 5, L >= 4 hold.
  bool in_theorem_hypotheses() const { return n >= 5 && L >= 4; }
};

// Index helpers for the token coordinates.
constexpr int kBosFlag = 0;
constexpr int kTriggerFlag = 1;
constexpr int kFirstContent = 2;
inline int ordinary_flag(int n) { return n - 1; }

// The content layout, defined once. The content of a sequence is the
// (L-1) x (n-3) matrix C whose row k-1 is c_k, the content of position k:
//   C(k-1, c) = X(k, kFirstContent + c),  k = 1..L-1, c = 0..n-4.
// Flattened (the variables of a search or of a branch-and-bound box), entry
// (k-1, c) of C is variable m = (k-1)(n-3) + c (row-major).
inline int content_variables(const Task& task) { return (task.L - 1) * task.content_dim(); }
inline int content_variable(const Task& task, int k, int c) {
  return (k - 1) * task.content_dim() + c;
}

// The content of X (L x n), or of the same-shaped matrix of derivatives dphi/dX.
template <class Derived>
Matrix<typename Derived::Scalar> content_of(const Task& task, const Eigen::MatrixBase<Derived>& X) {
  return X.block(1, kFirstContent, task.L - 1, task.content_dim());
}

// C flattened in the variable order above, and back.
template <class T>
std::vector<T> flatten_content(const Matrix<T>& C) {
  std::vector<T> flat;
  flat.reserve(C.size());
  for (int r = 0; r < C.rows(); ++r) {
    for (int c = 0; c < C.cols(); ++c) flat.push_back(C(r, c));
  }
  return flat;
}
template <class T>
Matrix<T> unflatten_content(const Task& task, const std::vector<T>& flat) {
  Matrix<T> C(task.L - 1, task.content_dim());
  for (int k = 1; k < task.L; ++k) {
    for (int c = 0; c < task.content_dim(); ++c) C(k - 1, c) = flat[content_variable(task, k, c)];
  }
  return C;
}

// Builds X from a trigger position j and a content matrix C of shape
// (L-1) x (n-3) whose row k-1 is c_k.
template <class T>
Matrix<T> make_input(const Task& task, int j, const Matrix<T>& content) {
  const int n = task.n, L = task.L;
  Matrix<T> X = Matrix<T>::Constant(L, n, T(0));
  X(0, kBosFlag) = T(1);
  for (int k = 1; k < L; ++k) {
    X(k, k == j ? kTriggerFlag : ordinary_flag(n)) = T(1);
    for (int c = 0; c < task.content_dim(); ++c) {
      X(k, kFirstContent + c) = content(k - 1, c);
    }
  }
  return X;
}

// The target for input X with trigger at j.
template <class T>
Matrix<T> make_target(const Matrix<T>& X, int j, TargetKind kind) {
  const int L = static_cast<int>(X.rows()), n = static_cast<int>(X.cols());
  Matrix<T> Y = kind == TargetKind::kResidual ? X : Matrix<T>::Constant(L, n, T(0));
  // y_j += (1/j) sum_{k=1..j} x_k
  const T inv_j = T(1) / T(j);
  for (int d = 0; d < n; ++d) {
    T sum = T(0);
    for (int k = 1; k <= j; ++k) sum += X(k, d);
    Y(j, d) += sum * inv_j;
  }
  return Y;
}

// One sampled sequence.
struct Sample {
  int trigger = 0;
  Matrix<double> X;
};

// The seeded sampler documented above.
class TaskSampler {
 public:
  TaskSampler(const Task& task, std::uint64_t seed);
  // Next sequence with a trigger drawn from the convention's range.
  Sample next();
  // Next sequence with the trigger fixed at j (no trigger draw is consumed).
  Sample next_with_trigger(int j);
  // Next raw content value in [-1, 1) (exposed for the pinned-stream test).
  double next_content();

 private:
  std::uint64_t draw_below(std::uint64_t count);
  Task task_;
  std::vector<int> positions_;
  std::mt19937_64 engine_;
};

// A defect of a task input: the field (e.g. "tokens[3][1]") and what was
// expected; what() is "field: expected".
class InvalidInput : public std::invalid_argument {
 public:
  InvalidInput(const std::string& field, const std::string& expected)
      : std::invalid_argument(field + ": " + expected), field_(field), expected_(expected) {}
  const std::string& field() const { return field_; }
  const std::string& expected() const { return expected_; }

 private:
  std::string field_, expected_;
};

// Checks that X is a valid task input for dimension n: shape, BOS row,
// exactly one trigger, flags in {0,1} consistent with the row's role, content
// in [-1, 1]. Returns the trigger position; on failure throws InvalidInput
// naming row and column and what was expected. T = double or Rational (the
// exact values of an input file).
template <class T>
int validate_input(const Matrix<T>& X, int n);

}  // namespace sinkcert
