// SPDX-License-Identifier: MIT
//
// Running another program (gnuplot, python3 in tests) without a shell. The argument
// vector goes to the program unchanged: no word splitting, quoting, globbing
// or `$` expansion, so a file or folder name from the user (`x'; touch Y`)
// is only ever a name. The child is started with posix_spawnp, changes into
// the working directory itself (posix_spawn_file_actions_addchdir_np) instead
// of a `cd` in a shell, reads /dev/null, and writes one chosen stream into a
// pipe we read and the other to /dev/null. While it runs its pid is
// registered with src/interrupt_cleanup.h, so SIGINT/SIGTERM/SIGHUP of this
// process kill it too.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sinkcert {

struct RunOptions {
  enum class Capture { kNone, kStdout, kStderr };
  std::string working_dir;           // empty: ours
  Capture capture = Capture::kNone;  // the stream kept in ProgramResult::output
  std::size_t max_output = 1 << 20;  // bytes kept; the rest is read and dropped
};

struct ProgramResult {
  std::string program;   // argv[0]
  bool started = false;  // false: not run at all (not installed, bad working dir)
  int exit_status = -1;  // exit code, or 128 + signal number if killed
  std::string output;    // the captured stream
  std::string error;     // why it did not start, e.g. "gnuplot: No such file or directory"
  bool ok() const { return started && exit_status == 0; }
};

// Runs argv[0] (looked up in PATH unless it contains a '/') with arguments
// argv[1..] and waits for it. Throws std::invalid_argument on an empty argv.
ProgramResult run_program(const std::vector<std::string>& argv, const RunOptions& options = {});

// One line saying why a run did not succeed: the start error ("gnuplot: No
// such file or directory"), or "PROGRAM: exit status N" followed by the last
// line of the captured output (where gnuplot and git put their error).
std::string describe_failure(const ProgramResult& result);

}  // namespace sinkcert
