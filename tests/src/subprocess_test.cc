// SPDX-License-Identifier: MIT
//
// run_program: arguments reach the program literally (no shell), the
// working directory is the child's, exit statuses and start failures are
// reported, and an interrupt of the parent kills the child.
#include "src/subprocess.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/test_util.h"

namespace sinkcert {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

TEST_CASE("an argument with shell syntax reaches the program literally") {
  ScratchDir scratch("sinkcert_subprocess_literal");
  const fs::path pwned = scratch.path / "PWNED";
  const std::string evil = "x'; touch " + pwned.string() + "; echo '$(touch " + pwned.string() +
                           ")`touch " + pwned.string() + "` *";
  RunOptions options;
  options.capture = RunOptions::Capture::kStdout;
  options.working_dir = scratch.path.string();
  const ProgramResult r = run_program({"printf", "%s", evil}, options);
  CHECK(r.ok());
  CHECK(r.output == evil);
  CHECK_FALSE(fs::exists(pwned));
}

TEST_CASE("the child runs in the working directory, whatever its name") {
  ScratchDir scratch("sinkcert_subprocess_cwd");
  const fs::path dir = scratch.path / "it's a \"dir\"; touch PWNED";
  fs::create_directories(dir);
  RunOptions options;
  options.capture = RunOptions::Capture::kStdout;
  options.working_dir = dir.string();
  const ProgramResult r = run_program({"pwd"}, options);
  REQUIRE(r.ok());
  CHECK(fs::equivalent(r.output.substr(0, r.output.find('\n')), dir));
  CHECK_FALSE(fs::exists(scratch.path / "PWNED"));
  CHECK_FALSE(fs::exists(dir / "PWNED"));
}

TEST_CASE("exit status, captured stderr and start failures") {
  CHECK(run_program({"true"}).ok());
  const ProgramResult f = run_program({"false"});
  CHECK(f.started);
  CHECK(f.exit_status == 1);
  CHECK_FALSE(f.ok());
  CHECK(describe_failure(f) == "false: exit status 1");

  RunOptions err;
  err.capture = RunOptions::Capture::kStderr;
  const ProgramResult ls = run_program({"ls", "/sinkcert-no-such-path"}, err);
  CHECK_FALSE(ls.ok());
  CHECK(ls.output.find("sinkcert-no-such-path") != std::string::npos);
  CHECK(describe_failure(ls).find("sinkcert-no-such-path") != std::string::npos);
  RunOptions out;
  out.capture = RunOptions::Capture::kStdout;
  CHECK(run_program({"ls", "/sinkcert-no-such-path"}, out).output.empty());  // stderr dropped

  const ProgramResult missing = run_program({"sinkcert-no-such-program"});
  CHECK_FALSE(missing.started);
  CHECK(missing.error == "sinkcert-no-such-program: No such file or directory");
  CHECK(describe_failure(missing) == missing.error);

  RunOptions nowhere;
  nowhere.working_dir = "/sinkcert-no-such-dir";
  const ProgramResult no_dir = run_program({"true"}, nowhere);
  CHECK_FALSE(no_dir.started);
  CHECK(no_dir.error == "true: cannot run in /sinkcert-no-such-dir: No such file or directory");
  CHECK_THROWS_AS(run_program({}), std::invalid_argument);
}

TEST_CASE("output beyond max_output is read and dropped") {
  RunOptions options;
  options.capture = RunOptions::Capture::kStdout;
  options.max_output = 3;
  const ProgramResult r = run_program({"printf", "abcdef"}, options);
  CHECK(r.ok());
  CHECK(r.output == "abc");
}

// A process of ours (forked) runs `sleep` through run_program and is sent
// SIGTERM: it must die of SIGTERM and take the child with it.
TEST_CASE("an interrupted parent kills its child") {
  ScratchDir scratch("sinkcert_subprocess_kill");
  const fs::path pid_file = scratch.path / "child.pid";
  const pid_t parent = ::fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {
    // sh writes its pid, then becomes sleep (exec keeps the pid)
    run_program(
        {"sh", "-c", "echo $$ > child.pid.tmp && mv child.pid.tmp child.pid && exec sleep 60"},
        RunOptions{scratch.path.string()});
    ::_exit(0);  // reached only if the child ended by itself
  }
  // Bounded wait for the child to start (never a timing assertion).
  pid_t child = 0;
  for (int i = 0; i < 1000 && child == 0; ++i) {
    std::ifstream in(pid_file);
    if (!(in >> child)) {
      child = 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  REQUIRE(child > 0);
  REQUIRE(::kill(parent, SIGTERM) == 0);
  int status = 0;
  REQUIRE(::waitpid(parent, &status, 0) == parent);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  // The orphaned child is gone, or a zombie until its new parent reaps it.
  const auto alive = [child] {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string pid, name, state;
    return static_cast<bool>(stat >> pid >> name >> state) && state != "Z";
  };
  bool still_alive = true;
  for (int i = 0; i < 500 && still_alive; ++i) {
    still_alive = alive();
    if (still_alive) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK_FALSE(still_alive);
  if (still_alive) ::kill(child, SIGKILL);
}

}  // namespace
}  // namespace sinkcert
