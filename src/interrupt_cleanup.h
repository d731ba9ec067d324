// SPDX-License-Identifier: MIT
//
// What an interrupted run leaves behind: nothing. A registry of the live
// temporary files and folders and of the running child processes, and one
// handler for SIGINT, SIGTERM and SIGHUP, installed on first use (and again
// whenever a temporary or child is registered, should something such as a
// test framework have replaced it; a signal the process started with set to
// "ignore", as `cmd &` does for SIGINT, stays ignored). The handler kills every registered child,
// removes every registered temporary (folders recursively, through getdents64 and unlinkat),
// restores the default action and re-raises the signal, so the process still ends "killed by
// SIGINT" for its caller. It makes only async-signal-safe calls (unlink, unlinkat, openat,
// getdents64, close, kill, sigaction, raise) and reads the registry through atomics.
//
// A commit section (CommitSection) defers these signals: a signal that
// arrives inside one is remembered and acted on when the section ends, so a
// sequence of renames that must complete (src/output_files.h) is never cut in
// half by SIGINT/SIGTERM. The handler and a commit section decide who goes
// first with one compare-and-swap, whichever thread the signal lands on.
#pragma once

#include <sys/types.h>

#include <string>

namespace sinkcert {

// Installs the handler where it is not installed (cheap: three sigaction
// calls); called by everything below.
void install_interrupt_cleanup();

// A temporary file or folder removed by the handler if the process is
// interrupted while this object lives. remove() deletes it now; release()
// forgets it (after it was renamed into place). The destructor removes it
// unless it was released, so exceptions clean up too. The path is made
// absolute, since a relative one would be resolved at signal time.
class TemporaryPath {
 public:
  enum class Kind { kFile, kFolder };
  TemporaryPath(const std::string& path, Kind kind);
  ~TemporaryPath();
  TemporaryPath(const TemporaryPath&) = delete;
  TemporaryPath& operator=(const TemporaryPath&) = delete;
  const std::string& path() const { return path_; }
  void remove();
  void release();

 private:
  std::string path_;
  Kind kind_;
  int slot_ = -1;
};

// A child process killed (SIGTERM) by the handler while registered.
void register_child(pid_t pid);
void unregister_child(pid_t pid);

// Defers SIGINT/SIGTERM/SIGHUP for its lifetime (see the header comment).
// Sections do not nest.
class CommitSection {
 public:
  CommitSection();
  ~CommitSection();
  CommitSection(const CommitSection&) = delete;
  CommitSection& operator=(const CommitSection&) = delete;
};

}  // namespace sinkcert
