// SPDX-License-Identifier: MIT
//
// The pipe protocol between a worker and the parent (worker_processes.h):
// one message per line, its first character saying what it is:
//   L <text>            a progress line
//   R <json string>     the job's result
//   I <json [f, f, e]>  an InputError (file, field, expected)
//   E <json string>     any other failure, its message
// A worker that closes its pipe without R, I or E died: the parent says how
// (waitpid's status).
#include "src/worker_processes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>

#include "src/input_error.h"
#include "src/interrupt_cleanup.h"

namespace sinkcert {

namespace {

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nothing left to tell
    done += static_cast<std::size_t>(n);
  }
}

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

[[noreturn]] void run_child(int k, int fd, pid_t parent, const WorkerJob& job) {
  // die with the parent (and if it is already gone, now)
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(1);
  const WorkerSay say = [fd](const std::string& line) {
    std::string one = line;
    for (char& c : one) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    write_all(fd, "L " + one + "\n");
  };
  int status = 0;
  try {
    const std::string result = job(k, say);
    write_all(fd, "R " + json_string(result) + "\n");
  } catch (const InputError& e) {
    const nlohmann::json parts = {e.file(), e.field(), e.expected()};
    write_all(fd,
              "I " + parts.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    status = 1;
  } catch (const std::exception& e) {
    write_all(fd, "E " + json_string(e.what()) + "\n");
    status = 1;
  } catch (...) {
    write_all(fd, "E " + json_string("an unknown exception") + "\n");
    status = 1;
  }
  ::close(fd);
  ::_exit(status);
}

struct Worker {
  int k = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  bool answered = false;
};

// How a child ended, in words.
std::string ended(int status) {
  if (WIFSIGNALED(status)) {
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           ::strsignal(WTERMSIG(status)) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

}  // namespace

std::vector<std::string> run_worker_processes(
    int count, int workers, const WorkerJob& job,
    const std::function<void(int, const std::string&)>& on_line,
    const std::function<void()>& on_idle, double idle_seconds) {
  std::vector<std::string> results(static_cast<std::size_t>(std::max(count, 0)));
  if (count <= 0) return results;
  workers = std::max(1, workers);
  std::vector<std::exception_ptr> errors(results.size());
  std::vector<Worker> running;
  // on any exit from here (an exception from a callback included), no
  // worker outlives the call
  struct Reaper {
    std::vector<Worker>& running;
    ~Reaper() {
      for (Worker& w : running) {
        ::kill(w.pid, SIGTERM);
        int status = 0;
        while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
        }
        unregister_child(w.pid);
        ::close(w.fd);
      }
    }
  } reaper{running};
  const pid_t parent = ::getpid();
  int next = 0;
  bool failed = false;
  const auto start = [&](int k) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int e = errno;
      ::close(p[0]);
      ::close(p[1]);
      throw std::system_error(e, std::generic_category(), "fork");
    }
    if (pid == 0) {
      ::close(p[0]);
      for (const Worker& w : running) ::close(w.fd);
      run_child(k, p[1], parent, job);
    }
    register_child(pid);
    ::close(p[1]);
    running.push_back(Worker{k, pid, p[0], "", false});
  };
  // One complete line from worker w.
  const auto handle = [&](Worker& w, const std::string& line) {
    const std::string body = line.size() >= 2 ? line.substr(2) : "";
    const auto index = static_cast<std::size_t>(w.k);
    switch (line.empty() ? ' ' : line[0]) {
      case 'L':
        if (on_line) on_line(w.k, body);
        return;
      case 'R':
        results[index] = nlohmann::json::parse(body).get<std::string>();
        w.answered = true;
        return;
      case 'I': {
        const nlohmann::json parts = nlohmann::json::parse(body);
        errors[index] = std::make_exception_ptr(InputError(parts.at(0).get<std::string>(),
                                                           parts.at(1).get<std::string>(),
                                                           parts.at(2).get<std::string>()));
        w.answered = true;
        failed = true;
        return;
      }
      case 'E':
        errors[index] = std::make_exception_ptr(
            std::runtime_error(nlohmann::json::parse(body).get<std::string>()));
        w.answered = true;
        failed = true;
        return;
      default:
        return;  // not ours (nothing else writes to the pipe)
    }
  };
  const int timeout_ms = static_cast<int>(std::max(0.01, idle_seconds) * 1000);
  for (;;) {
    while (!failed && next < count && static_cast<int>(running.size()) < workers) start(next++);
    if (running.empty()) break;
    std::vector<pollfd> fds;
    for (const Worker& w : running) fds.push_back(pollfd{w.fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR)
      throw std::system_error(errno, std::generic_category(), "poll");
    for (std::size_t i = running.size(); i-- > 0;) {
      if (ready <= 0 || fds[i].revents == 0) continue;
      Worker& w = running[i];
      char chunk[65536];
      const ssize_t n = ::read(w.fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        w.buffer.append(chunk, static_cast<std::size_t>(n));
        for (std::size_t eol; (eol = w.buffer.find('\n')) != std::string::npos;) {
          const std::string line = w.buffer.substr(0, eol);
          w.buffer.erase(0, eol + 1);
          handle(w, line);
        }
        continue;
      }
      // end of the pipe: the worker is done
      int status = 0;
      while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
      }
      unregister_child(w.pid);
      ::close(w.fd);
      if (!w.answered) {
        errors[static_cast<std::size_t>(w.k)] = std::make_exception_ptr(
            std::runtime_error("the worker process of job " + std::to_string(w.k) + " " +
                               ended(status) + " before it answered"));
        failed = true;
      }
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (on_idle) on_idle();
  }
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return results;
}

}  // namespace sinkcert
