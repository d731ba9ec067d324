// SPDX-License-Identifier: MIT
//
// Task conventions and the seeded sampler (stream documented in task.h).
#include "src/task.h"

#include <limits>
#include <sstream>
#include <stdexcept>

namespace sinkcert {

std::string to_string(TriggerRange range) {
  return range == TriggerRange::kPaper ? "paper" : "reference-code";
}

TriggerRange parse_trigger_range(const std::string& text) {
  if (text == "paper") return TriggerRange::kPaper;
  if (text == "reference-code") return TriggerRange::kReferenceCode;
  throw std::invalid_argument("trigger range '" + text + "': expected 'paper' or 'reference-code'");
}

std::vector<int> Task::trigger_positions() const {
  std::vector<int> out;
  const int first = range == TriggerRange::kPaper ? 1 : 2;
  for (int j = first; j < L; ++j) out.push_back(j);
  return out;
}

void Task::validate() const {
  if (n < 3) {
    throw std::invalid_argument("n = " + std::to_string(n) +
                                ": the task needs n >= 3 (BOS, trigger and "
                                "ordinary flags)");
  }
  if (L < 2) {
    throw std::invalid_argument("L = " + std::to_string(L) +
                                ": the task needs L >= 2 (BOS and a trigger)");
  }
}

TaskSampler::TaskSampler(const Task& task, std::uint64_t seed)
    : task_(task), positions_(task.trigger_positions()), engine_(seed) {
  task_.validate();
}

std::uint64_t TaskSampler::draw_below(std::uint64_t count) {
  // Reject the top (2^64 mod count) words so that w % count is uniform.
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                              (std::numeric_limits<std::uint64_t>::max() % count + 1) % count;
  for (;;) {
    const std::uint64_t w = engine_();
    if (w <= limit) return w % count;
  }
}

double TaskSampler::next_content() {
  // u = (w >> 11) * 2^-53 in [0, 1); content = 2u - 1
  const double u = static_cast<double>(engine_() >> 11) * 0x1.0p-53;
  return 2.0 * u - 1.0;
}

Sample TaskSampler::next_with_trigger(int j) {
  if (j < 1 || j >= task_.L) {
    throw std::invalid_argument("trigger position " + std::to_string(j) + " outside 1.." +
                                std::to_string(task_.L - 1));
  }
  Matrix<double> content(task_.L - 1, task_.content_dim());
  for (int k = 0; k < task_.L - 1; ++k) {
    for (int c = 0; c < task_.content_dim(); ++c) content(k, c) = next_content();
  }
  return Sample{j, make_input(task_, j, content)};
}

Sample TaskSampler::next() {
  if (positions_.empty()) {
    throw std::invalid_argument("no trigger position exists for L = " + std::to_string(task_.L) +
                                " under the " + to_string(task_.range) + " convention");
  }
  const int j = positions_[draw_below(positions_.size())];
  return next_with_trigger(j);
}

template <class T>
int validate_input(const Matrix<T>& X, int n) {
  auto fail = [](int row, int col, const std::string& what) {
    throw InvalidInput("tokens[" + std::to_string(row) + "][" + std::to_string(col) + "]", what);
  };
  if (X.cols() != n) {
    throw InvalidInput("tokens", "expected rows of length n = " + std::to_string(n) + ", got " +
                                     std::to_string(X.cols()));
  }
  if (X.rows() < 2) {
    throw InvalidInput("tokens",
                       "expected at least 2 rows (L >= 2), got " + std::to_string(X.rows()));
  }
  const int L = static_cast<int>(X.rows());
  const int ord = ordinary_flag(n);
  for (int i = 0; i < L; ++i) {
    for (int d = 0; d < n; ++d) {
      if (is_nan(X(i, d)) || !std::isfinite(to_double(X(i, d)))) {
        fail(i, d, "expected a finite number");
      }
    }
  }
  for (int d = 0; d < n; ++d) {
    const T want = d == kBosFlag ? T(1) : T(0);
    if (X(0, d) != want) {
      fail(0, d,
           "position 0 must be the BOS token e_0: expected " +
               std::to_string(d == kBosFlag ? 1 : 0));
    }
  }
  int trigger = -1;
  for (int i = 1; i < L; ++i) {
    if (X(i, kBosFlag) != T(0)) fail(i, kBosFlag, "BOS flag must be 0 after position 0");
    const T t = X(i, kTriggerFlag), o = X(i, ord);
    if (t != T(0) && t != T(1)) fail(i, kTriggerFlag, "trigger flag must be 0 or 1");
    if (o != T(0) && o != T(1)) fail(i, ord, "ordinary flag must be 0 or 1");
    if (T(t + o) != T(1)) {
      fail(i, t == T(1) ? ord : kTriggerFlag,
           "exactly one of the trigger flag (column 1) and the ordinary flag "
           "(column n-1) must be 1");
    }
    if (t == T(1)) {
      if (trigger >= 0) {
        fail(i, kTriggerFlag,
             "a second trigger (first at position " + std::to_string(trigger) +
                 "): expected exactly one");
      }
      trigger = i;
    }
    for (int d = kFirstContent; d < ord; ++d) {
      if (X(i, d) < T(-1) || X(i, d) > T(1)) fail(i, d, "content must lie in [-1, 1]");
    }
  }
  if (trigger < 0) {
    throw InvalidInput("tokens", "no trigger token (column 1 = 1): expected exactly one");
  }
  return trigger;
}

template int validate_input(const Matrix<double>& X, int n);
template int validate_input(const Matrix<Rational>& X, int n);

}  // namespace sinkcert
