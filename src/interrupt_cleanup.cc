// SPDX-License-Identifier: MIT
#include "src/interrupt_cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace sinkcert {

namespace {

// Enough for every temporary alive at once (a set replacement holds one
// folder, each atomic write one file, each subprocess one child).
constexpr int kSlots = 256;
// Deepest folder the handler descends into (staging/new/tables/file is 4).
constexpr int kMaxDepth = 16;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Each path is one malloc'd string: 'f' or 'd' (file or folder), then the
// absolute path. Whoever exchanges a slot to nullptr owns the string; the
// handler never frees (the process is ending).
std::atomic<char*> g_paths[kSlots];
std::atomic<pid_t> g_children[kSlots];

enum State : int { kIdle = 0, kCommitting = 1, kDying = 2 };
std::atomic<int> g_state{kIdle};
std::atomic<int> g_pending{0};

// Async-signal-safe recursive removal of `name` relative to `dir_fd`; never
// follows a symbolic link (unlinkat removes the link itself).
void remove_tree_at(int dir_fd, const char* name, int depth) {
  if (::unlinkat(dir_fd, name, 0) == 0 || errno != EISDIR || depth > kMaxDepth) return;
  for (int pass = 0; pass < 4; ++pass) {
    const int fd = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    alignas(8) char buf[2048];
    for (;;) {
      const ssize_t n = ::getdents64(fd, buf, sizeof buf);
      if (n <= 0) break;
      for (ssize_t off = 0; off < n;) {
        const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
        off += d->d_reclen;
        const char* e = d->d_name;
        if (e[0] == '.' && (e[1] == '\0' || (e[1] == '.' && e[2] == '\0'))) continue;
        remove_tree_at(fd, e, depth + 1);
      }
    }
    ::close(fd);
    if (::unlinkat(dir_fd, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY) return;
  }
}

void cleanup_and_reraise(int sig) {
  for (auto& child : g_children) {
    const pid_t pid = child.exchange(0);
    if (pid > 0) ::kill(pid, SIGTERM);
  }
  for (auto& slot : g_paths) {
    const char* p = slot.exchange(nullptr);
    if (p == nullptr) continue;
    if (p[0] == 'f') {
      ::unlink(p + 1);
    } else {
      remove_tree_at(AT_FDCWD, p + 1, 0);
    }
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(sig);
}

void on_signal(int sig) {
  int expected = kIdle;
  if (g_state.compare_exchange_strong(expected, kDying)) {
    cleanup_and_reraise(sig);
    return;
  }
  if (expected == kCommitting) {
    g_pending.store(sig);  // CommitSection's destructor re-raises it
    return;
  }
  for (;;) ::pause();  // another thread is cleaning up and ends the process
}

}  // namespace

void install_interrupt_cleanup() {
  // Which signals the process started with ignored: those stay ignored.
  static bool ignored[std::size(kSignals)] = {};
  static std::once_flag once;
  std::call_once(once, [] {
    for (std::size_t i = 0; i < std::size(kSignals); ++i) {
      struct sigaction old {};
      ignored[i] = ::sigaction(kSignals[i], nullptr, &old) != 0 || old.sa_handler == SIG_IGN;
    }
  });
  for (std::size_t i = 0; i < std::size(kSignals); ++i) {
    struct sigaction current {};
    if (ignored[i] || ::sigaction(kSignals[i], nullptr, &current) != 0 ||
        current.sa_handler == on_signal) {
      continue;
    }
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int s : kSignals) sigaddset(&sa.sa_mask, s);
    sa.sa_flags = SA_RESTART;
    ::sigaction(kSignals[i], &sa, nullptr);
  }
}

TemporaryPath::TemporaryPath(const std::string& path, Kind kind) : kind_(kind) {
  install_interrupt_cleanup();
  std::error_code ec;
  path_ = std::filesystem::absolute(path, ec).string();
  if (ec) path_ = path;
  char* entry = static_cast<char*>(std::malloc(path_.size() + 2));
  if (entry == nullptr) throw std::bad_alloc();
  entry[0] = kind == Kind::kFile ? 'f' : 'd';
  std::memcpy(entry + 1, path_.c_str(), path_.size() + 1);
  for (int i = 0; i < kSlots; ++i) {
    char* expected = nullptr;
    if (g_paths[i].compare_exchange_strong(expected, entry)) {
      slot_ = i;
      return;
    }
  }
  std::free(entry);
  throw std::runtime_error(path + ": too many temporary files at once");
}

TemporaryPath::~TemporaryPath() {
  if (slot_ >= 0) remove();
}

void TemporaryPath::remove() {
  if (slot_ < 0) return;
  std::error_code ec;
  if (kind_ == Kind::kFile) {
    std::filesystem::remove(path_, ec);
  } else {
    std::filesystem::remove_all(path_, ec);
  }
  release();
}

void TemporaryPath::release() {
  if (slot_ < 0) return;
  std::free(g_paths[slot_].exchange(nullptr));
  slot_ = -1;
}

void register_child(pid_t pid) {
  install_interrupt_cleanup();
  for (auto& child : g_children) {
    pid_t expected = 0;
    if (child.compare_exchange_strong(expected, pid)) return;
  }
  // No free slot: the child simply is not killed on an interrupt.
}

void unregister_child(pid_t pid) {
  for (auto& child : g_children) {
    pid_t expected = pid;
    if (child.compare_exchange_strong(expected, 0)) return;
  }
}

CommitSection::CommitSection() {
  install_interrupt_cleanup();
  for (;;) {
    int expected = kIdle;
    if (g_state.compare_exchange_strong(expected, kCommitting)) return;
    if (expected == kDying) {
      for (;;) ::pause();  // the handler, on another thread, ends the process
    }
    std::this_thread::yield();  // another thread's commit section
  }
}

CommitSection::~CommitSection() {
  g_state.store(kIdle);
  const int sig = g_pending.exchange(0);
  if (sig != 0) ::raise(sig);
}

}  // namespace sinkcert
