// SPDX-License-Identifier: MIT
#include "src/output_files.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "src/input_error.h"
#include "src/interrupt_cleanup.h"

namespace sinkcert {

namespace {

namespace fs = std::filesystem;

const std::string kStagingPrefix = ".sinkcert-replace.";
const char* const kOnlyRegular =
    "sinkcert writes only regular files and never replaces anything else";

std::string system_reason(int err) { return std::strerror(err); }

std::string kind_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

bool lexists(const fs::path& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

// Throws InputError(option, path, what + ": " + reason) unless a file can be
// created in the folder `dir`: access() first, then a probe file created and
// removed at once (access() can say yes where creating fails: root on
// /proc, root-squashed NFS, security modules).
void check_writable_folder(const fs::path& dir, const std::string& option, const std::string& path,
                           const std::string& what) {
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw InputError(option, path, what + ": " + system_reason(errno));
  }
  TemporaryPath probe((dir / (".sinkcert-probe." + std::to_string(::getpid()))).string(),
                      TemporaryPath::Kind::kFile);
  const int fd =
      ::open(probe.path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno != EEXIST) {
    const int err = errno;
    probe.release();  // nothing was created
    throw InputError(option, path, what + ": " + system_reason(err));
  }
  if (fd >= 0) {
    ::close(fd);
    probe.remove();
  } else {
    probe.release();  // someone else's file of that name: leave it
  }
}

// Throws unless the folder `dir` (empty: the current one) exists and is
// writable, or can be created: its nearest existing ancestor is a writable
// folder. `path` is what the message names.
void check_can_create_in(fs::path dir, const std::string& option, const std::string& path) {
  if (dir.empty()) dir = ".";
  for (;;) {
    struct stat st;
    if (::stat(dir.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        throw InputError(option, path,
                         "cannot create it: " + dir.string() + " is " + kind_name(st.st_mode) +
                             ", not a folder (" + system_reason(ENOTDIR) + ")");
      }
      check_writable_folder(dir, option, path, "cannot write in the folder " + dir.string());
      return;
    }
    const int err = errno;
    if (err != ENOENT && err != ENOTDIR) {
      throw InputError(option, path, "cannot create it: " + system_reason(err));
    }
    if (err == ENOENT && lexists(dir)) {
      throw InputError(option, path,
                       "cannot create it: " + dir.string() + " is a symbolic link to nothing");
    }
    fs::path up = dir.parent_path();
    if (up.empty()) up = ".";
    if (up == dir) throw InputError(option, path, "cannot create it: " + system_reason(err));
    dir = up;
  }
}

// Throws InputError(option, path, ...) if `path` exists and is not a regular file.
void refuse_non_regular(const std::string& path, const std::string& option) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return;
    throw InputError(option, path, system_reason(errno));
  }
  if (S_ISDIR(st.st_mode)) throw InputError(option, path, "is a folder; expected a file name");
  if (!S_ISREG(st.st_mode)) {
    throw InputError(option, path, "exists as " + kind_name(st.st_mode) + "; " + kOnlyRegular);
  }
}

OutputSet::Kind kind_on_disk(const fs::path& p) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) return OutputSet::Kind::kNotInSet;
  if (S_ISREG(st.st_mode)) return OutputSet::Kind::kFile;
  if (S_ISDIR(st.st_mode)) return OutputSet::Kind::kFolder;
  return OutputSet::Kind::kNotInSet;
}

// Names of `dir`'s entries for which keep(name) holds, sorted.
std::vector<std::string> entries(const fs::path& dir,
                                 const std::function<bool(const std::string&)>& keep) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (keep(name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void rename_or_throw(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    throw std::runtime_error("cannot rename " + from.string() + " to " + to.string() + ": " +
                             system_reason(errno));
  }
}

// Steps 2 and 3 of the commit (see the header), from wherever they stopped.
void roll_forward(const fs::path& dir, const fs::path& stage) {
  std::ifstream journal(stage / "COMMIT");
  std::vector<std::string> olds;
  std::set<std::string> news;
  std::string line;
  while (std::getline(journal, line)) {
    if (line.rfind("old ", 0) == 0) olds.push_back(line.substr(4));
    if (line.rfind("new ", 0) == 0) news.insert(line.substr(4));
  }
  for (const std::string& name : olds) {
    if (news.count(name) > 0 && !lexists(stage / "new" / name)) continue;  // new one installed
    if (lexists(dir / name)) rename_or_throw(dir / name, stage / "old" / name);
  }
  for (const std::string& name : news) {
    if (lexists(stage / "new" / name)) rename_or_throw(stage / "new" / name, dir / name);
  }
}

}  // namespace

void check_output_file(const std::string& path, const std::string& option) {
  if (path.empty()) throw InputError(option, "\"\"", "expected a file name");
  refuse_non_regular(path, option);
  if (path.back() == '/') throw InputError(option, path, "is a folder name; expected a file name");
  check_can_create_in(fs::path(path).parent_path(), option, path);
}

void check_output_dir(const std::string& path, const std::string& option) {
  if (path.empty()) throw InputError(option, "\"\"", "expected a folder name");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      throw InputError(option, path, "exists as " + kind_name(st.st_mode) + ", not a folder");
    }
    check_writable_folder(path, option, path, "cannot write in it");
    return;
  }
  const int err = errno;
  if (err != ENOENT && err != ENOTDIR) throw InputError(option, path, system_reason(err));
  if (err == ENOENT && lexists(path)) {
    throw InputError(option, path, "is a symbolic link to nothing; " + std::string(kOnlyRegular));
  }
  check_can_create_in(fs::path(path).parent_path(), option, path);
}

void check_output_set(const OutputSet& set, const std::string& option) {
  check_output_dir(set.dir, option);
  std::error_code ec;
  if (!fs::is_directory(set.dir, ec)) return;
  for (const auto& e : fs::directory_iterator(set.dir, ec)) {
    const std::string name = e.path().filename().string();
    const OutputSet::Kind want = set.owns(name);
    if (want == OutputSet::Kind::kNotInSet) continue;
    struct stat st;
    if (::lstat(e.path().c_str(), &st) != 0) continue;  // gone meanwhile
    const bool ok = want == OutputSet::Kind::kFile ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode);
    if (!ok) {
      throw InputError(option, e.path().string(),
                       "exists as " + kind_name(st.st_mode) + " where sinkcert writes " +
                           (want == OutputSet::Kind::kFile ? "a regular file" : "a folder") + "; " +
                           kOnlyRegular);
    }
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  refuse_non_regular(path, "output file");
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path() && !fs::is_directory(target.parent_path(), ec)) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) {
      throw std::runtime_error(path + ": cannot create the folder " +
                               target.parent_path().string() + ": " + ec.message());
    }
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  TemporaryPath guard(tmp, TemporaryPath::Kind::kFile);
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(tmp.c_str(), flags, 0666);
  if (fd < 0 && errno == EEXIST) {  // left by a killed process that had our pid
    ::unlink(tmp.c_str());
    fd = ::open(tmp.c_str(), flags, 0666);
  }
  if (fd < 0) {
    throw std::runtime_error(path + ": cannot create " + tmp + ": " + system_reason(errno));
  }
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(path + ": write failed: " + system_reason(err));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw std::runtime_error(path + ": write failed: " + system_reason(errno));
  // The target may have changed kind since the first check (it was checked
  // before a computation that can take minutes).
  refuse_non_regular(path, "output file");
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error(
        path + ": cannot rename the temporary file into place: " + system_reason(errno));
  }
  guard.release();
}

void recover_output_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  const auto stages =
      entries(dir, [](const std::string& name) { return name.rfind(kStagingPrefix, 0) == 0; });
  for (const std::string& name : stages) {
    const fs::path stage = fs::path(dir) / name;
    const std::string pid_text = name.substr(kStagingPrefix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    // A live run other than this one is left alone (a pid equal to ours is a
    // dead process whose pid was reused).
    if (pid != ::getpid() && (::kill(pid, 0) == 0 || errno == EPERM)) continue;
    if (lexists(stage / "COMMIT")) roll_forward(dir, stage);
    fs::remove_all(stage);
  }
}

void replace_output_set(const OutputSet& set,
                        const std::function<void(const std::string& staging)>& write) {
  using Kind = OutputSet::Kind;
  check_output_set(set, "output folder");
  const fs::path dir(set.dir);
  fs::create_directories(dir);
  recover_output_dir(set.dir);
  const fs::path stage = dir / (kStagingPrefix + std::to_string(::getpid()));
  std::optional<TemporaryPath> staging;
  staging.emplace(stage.string(), TemporaryPath::Kind::kFolder);
  fs::remove_all(stage);
  fs::create_directories(stage / "new");
  write((stage / "new").string());

  const auto new_names = entries(stage / "new", [](const std::string&) { return true; });
  for (const std::string& name : new_names) {
    const Kind want = set.owns(name);
    if (want == Kind::kNotInSet || kind_on_disk(stage / "new" / name) != want ||
        name.find('\n') != std::string::npos) {
      throw std::logic_error(set.dir + ": the writer produced " + name +
                             ", which is not an entry of this output set");
    }
  }
  const auto old_names = entries(dir, [&](const std::string& name) {
    return name.rfind(kStagingPrefix, 0) != 0 && set.owns(name) != Kind::kNotInSet;
  });
  for (const std::string& name : old_names) {
    if (kind_on_disk(dir / name) != set.owns(name) || name.find('\n') != std::string::npos) {
      check_output_set(set, "output folder");  // names the offending entry
      throw InputError("output folder", (dir / name).string(), kOnlyRegular);
    }
  }
  fs::create_directory(stage / "old");
  std::optional<TemporaryPath> finished;
  {
    CommitSection section;
    {
      std::ofstream journal(stage / "COMMIT.tmp", std::ios::trunc);
      for (const auto& name : old_names) journal << "old " << name << "\n";
      for (const auto& name : new_names) journal << "new " << name << "\n";
      journal.flush();
      if (!journal) throw std::runtime_error(set.dir + ": cannot write the commit journal");
    }
    rename_or_throw(stage / "COMMIT.tmp", stage / "COMMIT");
    // From here the staging folder is the journal: an error leaves it for
    // recover_output_dir instead of deleting it.
    staging->release();
    try {
      roll_forward(dir, stage);
    } catch (const std::exception& e) {
      throw std::runtime_error(set.dir + ": replacing the output set stopped half way (" +
                               e.what() + "); the next run writing there finishes it");
    }
    finished.emplace(stage.string(), TemporaryPath::Kind::kFolder);
  }
  finished->remove();
}

}  // namespace sinkcert
