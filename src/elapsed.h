// SPDX-License-Identifier: MIT
//
// Wall-clock seconds since a start point, for budgets and reports:
//   seconds_since(t0) = (now - t0) in seconds, steady clock.
#pragma once

#include <chrono>

namespace sinkcert {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace sinkcert
