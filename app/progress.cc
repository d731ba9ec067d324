// SPDX-License-Identifier: MIT
//
// The progress sink every command reports through: one line on stderr,
//   [  12.3 s] theorem1: path start 0, round 3 ...
// the seconds since the program started, unless --quiet was given.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "app/commands.h"

namespace sinkcert::cli {

ProgressSink progress_sink(const Context& ctx, const std::string& command) {
  // ctx outlives every command's run (main.cc); --quiet is read at each line
  return [&ctx, command](const std::string& message) {
    if (ctx.quiet) return;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - ctx.start).count();
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "[%6.1f s] ", seconds);
    std::cerr << stamp << command << (command.empty() ? "" : ": ") << message << std::endl;
  };
}

}  // namespace sinkcert::cli
