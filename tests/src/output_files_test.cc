// SPDX-License-Identifier: MIT
//
// Safe outputs: checks before computing (kinds, unwritable places, with the
// system's reason), refusal of anything but regular files (FIFO, symbolic
// link, /dev/null: the target is left as it was), and set replacement that
// leaves the old set or the new one (writer failure, interrupt, a commit cut
// short and finished by recovery).
#include "src/output_files.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/input_error.h"
#include "tests/test_util.h"

namespace sinkcert {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// The InputError message of f(), or "" if it did not throw one.
template <typename F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool still_fifo(const fs::path& p) { return fs::is_fifo(fs::symlink_status(p)); }

bool has_staging(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind(".sinkcert-replace.", 0) == 0) return true;
  }
  return false;
}

TEST_CASE("check_output_file refuses /dev/null, FIFOs, symbolic links and folders") {
  // The check runs before any write, so /dev/null itself is never at risk.
  const std::string null_message = input_error([] { check_output_file("/dev/null", "--out"); });
  CHECK(null_message.find("--out: /dev/null: exists as a character device") == 0);
  CHECK(null_message.find("only regular files") != std::string::npos);
  CHECK(fs::is_character_file("/dev/null"));

  ScratchDir scratch("sinkcert_output_files_check");
  const fs::path fifo = scratch.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(input_error([&] { check_output_file(fifo.string(), "--out"); }).find("FIFO") !=
        std::string::npos);
  const fs::path target = scratch.path / "target.json", link = scratch.path / "link.json";
  put(target, "precious");
  fs::create_symlink(target, link);
  CHECK(input_error([&] { check_output_file(link.string(), "--out"); }).find("symbolic link") !=
        std::string::npos);
  fs::create_symlink(scratch.path / "nothing", scratch.path / "dangling.json");
  CHECK(input_error([&] {
          check_output_file((scratch.path / "dangling.json").string(), "--out");
        }).find("symbolic link") != std::string::npos);
  CHECK(input_error([&] {
          check_output_file(scratch.path.string(), "--out");
        }).find("is a folder") != std::string::npos);
  CHECK(input_error([&] { check_output_file("", "--out"); }).find("expected a file name") !=
        std::string::npos);
  // fine: an existing regular file, and a file in folders still to create
  CHECK_NOTHROW(check_output_file(target.string(), "--out"));
  CHECK_NOTHROW(check_output_file((scratch.path / "a" / "b" / "c.json").string(), "--out"));
  CHECK_FALSE(fs::exists(scratch.path / "a"));  // a check creates nothing
  CHECK(read(target) == "precious");
}

TEST_CASE("an unwritable place is refused with the system's reason") {
  ScratchDir scratch("sinkcert_output_files_unwritable");
  const fs::path file = scratch.path / "file";
  put(file, "x");
  // root may write anywhere; a path under a regular file fails for everyone
  const std::string m =
      input_error([&] { check_output_file((file / "sub" / "cert.json").string(), "--out"); });
  CHECK(m.find("--out: " + (file / "sub" / "cert.json").string() + ": cannot create it") == 0);
  CHECK(m.find("Not a directory") != std::string::npos);
  const std::string d = input_error([&] { check_output_dir((file / "sub").string(), "--out"); });
  CHECK(d.find("Not a directory") != std::string::npos);
  CHECK(input_error([&] {
          check_output_dir(file.string(), "--out");
        }).find("exists as a regular file, not a folder") != std::string::npos);
  // /proc takes no new files, though access() tells root it does: the
  // check creates (and removes) a probe file to find out
  CHECK(input_error([] {
          check_output_file("/proc/sinkcert-out.json", "--out");
        }).find("--out: /proc/sinkcert-out.json: cannot write in the folder /proc: ") == 0);
  if (::geteuid() != 0) {
    const fs::path locked = scratch.path / "locked";
    fs::create_directories(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    CHECK(input_error([&] {
            check_output_dir((locked / "out").string(), "--out");
          }).find("Permission denied") != std::string::npos);
    fs::permissions(locked, fs::perms::owner_all);
  }
  CHECK_NOTHROW(check_output_dir((scratch.path / "new" / "deeper").string(), "--out"));
  CHECK_NOTHROW(check_output_dir(scratch.path.string(), "--out"));
  fs::create_directory_symlink(scratch.path, scratch.path / "dirlink");
  CHECK_NOTHROW(check_output_dir((scratch.path / "dirlink").string(), "--out"));
}

TEST_CASE("write_file_atomically writes the content and leaves no temporary") {
  ScratchDir scratch("sinkcert_output_files_atomic");
  const fs::path dir = scratch.path / "nested";
  const std::string path = (dir / "out.txt").string();
  write_file_atomically(path, "first\n");
  write_file_atomically(path, "second\n");
  CHECK(read(path) == "second\n");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  CHECK(entries == 1);
}

TEST_CASE("write_file_atomically names the path when it cannot write") {
  try {
    write_file_atomically("/proc/sinkcert-cannot-write/x.txt", "x");
    FAIL("expected an error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("/proc/sinkcert-cannot-write/x.txt") != std::string::npos);
  }
  ScratchDir scratch("sinkcert_output_files_cannot");
  put(scratch.path / "file", "x");
  const fs::path under_file = scratch.path / "file" / "sub" / "x.txt";
  try {
    write_file_atomically(under_file.string(), "x");
    FAIL("expected an error");
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    CHECK(m.find(under_file.string() + ": cannot create the folder") == 0);
    CHECK(m.find("Not a directory") != std::string::npos);
  }
}

TEST_CASE("write_file_atomically never writes to a FIFO or through a symbolic link") {
  ScratchDir scratch("sinkcert_output_files_write");
  const fs::path fifo = scratch.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(input_error([&] { write_file_atomically(fifo.string(), "x"); }).find("FIFO") !=
        std::string::npos);
  CHECK(still_fifo(fifo));

  const fs::path target = scratch.path / "target.json", link = scratch.path / "link.json";
  put(target, "precious");
  fs::create_symlink(target, link);
  CHECK_THROWS_AS(write_file_atomically(link.string(), "overwritten"), InputError);
  CHECK(fs::is_symlink(link));
  CHECK(read(target) == "precious");

  CHECK_THROWS_AS(write_file_atomically(scratch.path.string(), "x"), InputError);
  // only the FIFO, the link and its target: no temporary left behind
  int entries = 0;
  for (const auto& e : fs::directory_iterator(scratch.path)) {
    (void)e;
    ++entries;
  }
  CHECK(entries == 3);
}

// A set of a.txt, b.txt, stale.txt (files) and sub/ (a folder) in a folder
// that also holds things of others.
OutputSet test_set(const fs::path& dir) {
  return OutputSet{dir.string(), [](const std::string& name) {
                     if (name == "a.txt" || name == "b.txt" || name == "stale.txt") {
                       return OutputSet::Kind::kFile;
                     }
                     return name == "sub" ? OutputSet::Kind::kFolder : OutputSet::Kind::kNotInSet;
                   }};
}

void make_old_set(const fs::path& dir) {
  put(dir / "a.txt", "old a");
  put(dir / "stale.txt", "old stale");
  put(dir / "sub" / "x", "old x");
  put(dir / "keep.txt", "not ours");
  put(dir / "keepdir" / "k", "not ours either");
}

void check_old_set(const fs::path& dir) {
  CHECK(read(dir / "a.txt") == "old a");
  CHECK(read(dir / "stale.txt") == "old stale");
  CHECK(read(dir / "sub" / "x") == "old x");
  CHECK_FALSE(fs::exists(dir / "b.txt"));
  CHECK_FALSE(fs::exists(dir / "sub" / "y"));
  CHECK(read(dir / "keep.txt") == "not ours");
  CHECK(read(dir / "keepdir" / "k") == "not ours either");
  CHECK_FALSE(has_staging(dir));
}

void write_new_set(const std::string& staging) {
  write_file_atomically(staging + "/a.txt", "new a");
  write_file_atomically(staging + "/b.txt", "new b");
  write_file_atomically(staging + "/sub/y", "new y");
}

void check_new_set(const fs::path& dir) {
  CHECK(read(dir / "a.txt") == "new a");
  CHECK(read(dir / "b.txt") == "new b");
  CHECK(read(dir / "sub" / "y") == "new y");
  CHECK_FALSE(fs::exists(dir / "stale.txt"));  // the old set goes as a whole
  CHECK_FALSE(fs::exists(dir / "sub" / "x"));
  CHECK(read(dir / "keep.txt") == "not ours");
  CHECK(read(dir / "keepdir" / "k") == "not ours either");
  CHECK_FALSE(has_staging(dir));
}

TEST_CASE("replace_output_set installs the new set and keeps what is not in the set") {
  ScratchDir scratch("sinkcert_output_files_replace");
  const fs::path dir = scratch.path / "out";
  make_old_set(dir);
  replace_output_set(test_set(dir), write_new_set);
  check_new_set(dir);
  // into a folder that does not exist yet
  replace_output_set(test_set(scratch.path / "fresh" / "out"), write_new_set);
  CHECK(read(scratch.path / "fresh" / "out" / "b.txt") == "new b");
}

TEST_CASE("a writer that fails half way leaves the old set intact and no temporary") {
  ScratchDir scratch("sinkcert_output_files_fail");
  const fs::path dir = scratch.path / "out";
  make_old_set(dir);
  CHECK_THROWS_WITH_AS(replace_output_set(test_set(dir),
                                          [](const std::string& staging) {
                                            write_new_set(staging);
                                            throw std::runtime_error("computation failed");
                                          }),
                       "computation failed", std::runtime_error);
  check_old_set(dir);
  // an entry the set does not own is a programming error: nothing replaced
  CHECK_THROWS_AS(replace_output_set(test_set(dir),
                                     [](const std::string& staging) {
                                       write_new_set(staging);
                                       write_file_atomically(staging + "/intruder.txt", "x");
                                     }),
                  std::logic_error);
  check_old_set(dir);
}

TEST_CASE("a set entry that is a symbolic link is refused before anything is written") {
  ScratchDir scratch("sinkcert_output_files_set_link");
  const fs::path dir = scratch.path / "out";
  make_old_set(dir);
  fs::remove(dir / "stale.txt");
  fs::create_symlink(dir / "keep.txt", dir / "stale.txt");
  bool wrote = false;
  const std::string m = input_error(
      [&] { replace_output_set(test_set(dir), [&](const std::string&) { wrote = true; }); });
  CHECK(m.find("stale.txt: exists as a symbolic link") != std::string::npos);
  CHECK_FALSE(wrote);
  CHECK(input_error([&] {
          check_output_set(test_set(dir), "--out");
        }).find("--out: " + (dir / "stale.txt").string()) == 0);
  CHECK(fs::is_symlink(dir / "stale.txt"));
  CHECK(read(dir / "keep.txt") == "not ours");
}

TEST_CASE("an interrupted writer leaves the old set intact and no temporary") {
  ScratchDir scratch("sinkcert_output_files_interrupt");
  const fs::path dir = scratch.path / "out";
  make_old_set(dir);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    replace_output_set(test_set(dir), [](const std::string& staging) {
      write_new_set(staging);
      ::raise(SIGTERM);
    });
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  check_old_set(dir);
}

// A pid that belongs to no process: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST_CASE("a commit cut short (SIGKILL) is finished by the next run") {
  ScratchDir scratch("sinkcert_output_files_recover");
  const fs::path dir = scratch.path / "out";
  make_old_set(dir);
  // The state after steps 2-3 stopped half way: stale.txt and a.txt moved to
  // old/, the new a.txt installed, sub/ not moved yet, b.txt not installed.
  const fs::path stage = dir / (".sinkcert-replace." + std::to_string(dead_pid()));
  put(stage / "COMMIT", "old a.txt\nold stale.txt\nold sub\nnew a.txt\nnew b.txt\nnew sub\n");
  fs::create_directories(stage / "old");
  fs::rename(dir / "stale.txt", stage / "old" / "stale.txt");
  fs::rename(dir / "a.txt", stage / "old" / "a.txt");
  put(dir / "a.txt", "new a");
  put(stage / "new" / "b.txt", "new b");
  put(stage / "new" / "sub" / "y", "new y");
  // a dead run that never committed: only its staging folder goes
  const fs::path abandoned = dir / (".sinkcert-replace." + std::to_string(dead_pid()));
  put(abandoned / "new" / "a.txt", "abandoned a");
  // a live run (our own parent) is left alone
  const fs::path live = dir / (".sinkcert-replace." + std::to_string(::getppid()));
  fs::create_directories(live / "new");
  recover_output_dir(dir.string());
  CHECK(fs::exists(live));
  fs::remove_all(live);
  check_new_set(dir);
  // recovering again changes nothing
  recover_output_dir(dir.string());
  check_new_set(dir);
}

TEST_CASE("a journal written just before the kill is replayed from its start") {
  ScratchDir scratch("sinkcert_output_files_recover_start");
  const fs::path dir = scratch.path / "out";
  make_old_set(dir);
  // killed right after step 1: journal written, nothing moved yet
  const fs::path stage = dir / (".sinkcert-replace." + std::to_string(dead_pid()));
  put(stage / "COMMIT", "old a.txt\nold stale.txt\nold sub\nnew a.txt\nnew b.txt\nnew sub\n");
  fs::create_directories(stage / "old");
  put(stage / "new" / "a.txt", "new a");
  put(stage / "new" / "b.txt", "new b");
  put(stage / "new" / "sub" / "y", "new y");
  recover_output_dir(dir.string());
  check_new_set(dir);
}

TEST_CASE("replace_output_set finishes an interrupted commit before its own") {
  ScratchDir scratch("sinkcert_output_files_recover_first");
  const fs::path dir = scratch.path / "out";
  make_old_set(dir);
  // the journal of another set in the same folder (other.txt is not ours)
  const fs::path stage = dir / (".sinkcert-replace." + std::to_string(dead_pid()));
  put(stage / "COMMIT", "new other.txt\n");
  fs::create_directories(stage / "old");
  put(stage / "new" / "other.txt", "other set");
  replace_output_set(test_set(dir), write_new_set);
  check_new_set(dir);
  CHECK(read(dir / "other.txt") == "other set");
}

}  // namespace
}  // namespace sinkcert
