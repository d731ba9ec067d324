// SPDX-License-Identifier: MIT
//
// A point in time on the monotonic clock after which a bound stops working
// and returns what it has certified so far. Every bound turns its budget
// (max_seconds) into one Deadline at its start and hands it down to the
// parts that may run long (the first pass over the triggers, a box's
// evaluation, the vertex bounds, the attack), so that the budget holds
// inside them too, not only between boxes or candidates:
//   expired()  now >= end   (never, for a default-constructed Deadline)
// A check reads steady_clock once (tens of nanoseconds through the vDSO),
// so it may sit in any loop whose body costs a microsecond or more.
// Stopping early is always safe for a certified bound: the parts left out
// only refine an enclosure that is valid without them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>

namespace sinkcert::theorems::bounds {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  // No deadline: expired() is always false.
  Deadline() = default;

  // `seconds` from now; infinite or NaN seconds: no deadline. Non-positive
  // seconds: already expired.
  static Deadline after(double seconds) {
    Deadline d;
    if (!(seconds < kForever)) return d;
    d.set_ = true;
    d.end_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(std::max(seconds, 0.0)));
    return d;
  }

  // The earlier of this deadline and `seconds` from now.
  Deadline or_after(double seconds) const { return earlier(*this, after(seconds)); }

  static Deadline earlier(const Deadline& a, const Deadline& b) {
    if (!a.set_) return b;
    if (!b.set_) return a;
    return a.end_ <= b.end_ ? a : b;
  }

  bool expired() const { return set_ && Clock::now() >= end_; }
  bool is_set() const { return set_; }

  // Seconds left (0 once expired, +inf without a deadline).
  double remaining() const {
    if (!set_) return INFINITY;
    return std::max(0.0, std::chrono::duration<double>(end_ - Clock::now()).count());
  }

 private:
  // Budgets at or above this (about 30 years) count as no deadline: the
  // clock arithmetic would overflow its 64-bit nanoseconds near 292 years.
  static constexpr double kForever = 1e9;
  bool set_ = false;
  Clock::time_point end_{};
};

}  // namespace sinkcert::theorems::bounds
