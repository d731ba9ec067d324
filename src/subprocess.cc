// SPDX-License-Identifier: MIT
#include "src/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "src/interrupt_cleanup.h"

extern char** environ;

namespace sinkcert {

namespace {

// The signals whose handlers the child must not inherit, and that are held
// back between spawning the child and registering its pid.
sigset_t interrupt_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

std::string describe_start_failure(const std::string& program, const std::string& dir, int err) {
  struct stat st;
  if (!dir.empty() && (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))) {
    return program + ": cannot run in " + dir + ": " + std::strerror(err);
  }
  return program + ": " + std::strerror(err);
}

}  // namespace

ProgramResult run_program(const std::vector<std::string>& argv, const RunOptions& options) {
  if (argv.empty()) throw std::invalid_argument("run_program: empty argument vector");
  install_interrupt_cleanup();
  ProgramResult result;
  result.program = argv[0];
  using Capture = RunOptions::Capture;
  int pipe_fd[2] = {-1, -1};
  if (options.capture != Capture::kNone && ::pipe2(pipe_fd, O_CLOEXEC) != 0) {
    result.error = describe_start_failure(argv[0], "", errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  for (const auto& [fd, stream] : {std::pair{1, Capture::kStdout}, {2, Capture::kStderr}}) {
    if (options.capture == stream) {
      posix_spawn_file_actions_adddup2(&actions, pipe_fd[1], fd);
    } else {
      posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0);
    }
  }
  if (!options.working_dir.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, options.working_dir.c_str());
  }
  // The child starts with no blocked signals and default actions for the
  // interrupt signals (not our cleanup handler).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  const sigset_t interrupts = interrupt_signals();
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &interrupts);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // An interrupt between the spawn and the registration would miss the child.
  sigset_t saved;
  ::pthread_sigmask(SIG_BLOCK, &interrupts, &saved);
  pid_t pid = -1;
  const int err = ::posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ);
  if (err == 0) register_child(pid);
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (pipe_fd[1] >= 0) ::close(pipe_fd[1]);
  if (err != 0) {
    if (pipe_fd[0] >= 0) ::close(pipe_fd[0]);
    result.error = describe_start_failure(argv[0], options.working_dir, err);
    return result;
  }
  result.started = true;
  if (pipe_fd[0] >= 0) {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(pipe_fd[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      const std::size_t room =
          options.max_output - std::min(options.max_output, result.output.size());
      result.output.append(buf, std::min(room, static_cast<std::size_t>(n)));
    }
    ::close(pipe_fd[0]);
  }
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  unregister_child(pid);
  if (waited == pid && WIFEXITED(status)) {
    result.exit_status = WEXITSTATUS(status);
  } else if (waited == pid && WIFSIGNALED(status)) {
    result.exit_status = 128 + WTERMSIG(status);
  }  // else unknown (e.g. SIGCHLD ignored, the child reaped by the system): -1
  return result;
}

std::string describe_failure(const ProgramResult& result) {
  if (!result.started) return result.error;
  std::string what = result.program + ": exit status " + std::to_string(result.exit_status);
  std::string text = result.output;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const std::string last = text.substr(text.find_last_of('\n') + 1);
  if (!last.empty()) what += ": " + last;
  return what;
}

}  // namespace sinkcert
