// SPDX-License-Identifier: MIT
//
// The interrupt handler: a forked process registers temporaries and is
// interrupted; it must die of that signal with its temporaries gone. A
// commit section defers the signal until it ends.
#include "src/interrupt_cleanup.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "tests/test_util.h"

namespace sinkcert {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

void touch(const fs::path& p) { std::ofstream(p) << "x"; }

// Runs `body` in a forked process; returns its wait status.
int in_child(const std::function<void()>& body) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

TEST_CASE("SIGINT and SIGTERM remove registered files and folders, then kill the process") {
  for (int sig : {SIGINT, SIGTERM}) {
    ScratchDir scratch("sinkcert_interrupt_cleanup");
    const fs::path file = scratch.path / "out.json.tmp.1";
    const fs::path folder = scratch.path / ".sinkcert-replace.1";
    const fs::path kept = scratch.path / "kept.txt";
    const fs::path released = scratch.path / "released.txt";
    const int status = in_child([&] {
      touch(file);
      fs::create_directories(folder / "new" / "tables");
      touch(folder / "new" / "tables" / "t.tex");
      touch(folder / "new" / "appendix.tex");
      fs::create_symlink(kept, folder / "new" / "link");  // removed, never followed
      touch(kept);
      touch(released);
      TemporaryPath f(file.string(), TemporaryPath::Kind::kFile);
      TemporaryPath d(folder.string(), TemporaryPath::Kind::kFolder);
      TemporaryPath r(released.string(), TemporaryPath::Kind::kFile);
      r.release();
      ::raise(sig);
      touch(scratch.path / "survived");  // must not be reached
    });
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    CHECK_FALSE(fs::exists(file));
    CHECK_FALSE(fs::exists(folder));
    CHECK(fs::exists(kept));
    CHECK(fs::exists(released));
    CHECK_FALSE(fs::exists(scratch.path / "survived"));
  }
}

TEST_CASE("a temporary is removed on normal exit and on an exception, unless released") {
  ScratchDir scratch("sinkcert_interrupt_cleanup_raii");
  const fs::path a = scratch.path / "a", b = scratch.path / "b", c = scratch.path / "c";
  {
    touch(a);
    TemporaryPath t(a.string(), TemporaryPath::Kind::kFile);
  }
  try {
    fs::create_directories(b / "sub");
    TemporaryPath t(b.string(), TemporaryPath::Kind::kFolder);
    throw std::runtime_error("writer failed");
  } catch (const std::runtime_error&) {
  }
  {
    touch(c);
    TemporaryPath t(c.string(), TemporaryPath::Kind::kFile);
    t.release();
  }
  CHECK_FALSE(fs::exists(a));
  CHECK_FALSE(fs::exists(b));
  CHECK(fs::exists(c));
}

TEST_CASE("a signal inside a commit section waits for its end") {
  ScratchDir scratch("sinkcert_interrupt_cleanup_commit");
  const fs::path done = scratch.path / "commit-done";
  const fs::path after = scratch.path / "after-commit";
  const fs::path temp = scratch.path / "temp";
  const int status = in_child([&] {
    touch(temp);
    TemporaryPath t(temp.string(), TemporaryPath::Kind::kFile);
    {
      CommitSection section;
      ::raise(SIGTERM);
      touch(done);  // the commit finishes
    }
    touch(after);  // the signal acts when the section ends
  });
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(fs::exists(done));
  CHECK_FALSE(fs::exists(after));
  CHECK_FALSE(fs::exists(temp));
}

}  // namespace
}  // namespace sinkcert
