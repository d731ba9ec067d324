// SPDX-License-Identifier: MIT
//
// Safe outputs: every file sinkcert writes goes through this component.
//
// Checked before computing. check_output_file / check_output_dir /
// check_output_set say whether a path can be written, creating nothing that
// stays: an existing path must be of the right kind, and the nearest existing
// folder on the way must be a folder where a probe file can be created (and
// is removed at once). The CLI calls them on every --out before any
// computation; a failure is an InputError naming the option, the path and
// the system's reason (strerror).
//
// Only regular files. A path that exists as a symbolic link, character or
// block device, FIFO or socket is never written, followed or replaced: the
// check refuses it (InputError, exit code 2). `--out /dev/null` is refused,
// not turned into a regular file. (The folder given as --out DIR may itself
// be a symbolic link to a folder; what is written inside it obeys the rule.)
//
// One file: write_file_atomically writes a temporary NAME.tmp.PID next to the
// target and renames it over the target, so a reader sees the old file or
// the new one. The temporary is registered with src/interrupt_cleanup.h and
// removed on every exit path: success (renamed), exception (RAII), and
// SIGINT/SIGTERM/SIGHUP (the signal handler).
//
// A set of files: replace_output_set. `theorem1 --out DIR` and `appendix
// --out DIR` each own a set of entries of DIR, given by a predicate on names
// (the study's JSON, CSV, weight files and figures; the appendix's tables/,
// figures/ and appendix.tex). DIR also holds things that are not part of the
// set and must survive unchanged (results/theorem1 holds the edges/ and
// seeds/ studies; results/ holds theorem1/, the appendix's input; DIR may be
// any folder the user names), so DIR itself is never swapped: only the set's
// entries move. The writer callback writes the new set into a staging folder
// S = DIR/.sinkcert-replace.PID/new (same file system, so renames are
// atomic; the leading dot keeps it out of every listing sinkcert makes). If
// the writer throws or the run is interrupted, S is removed and DIR still
// holds the old set, untouched. Then the commit:
//   1. the journal DIR/.sinkcert-replace.PID/COMMIT, listing the old set's
//      names and the new set's names, is written (temporary + rename);
//   2. each old entry is renamed from DIR into DIR/.sinkcert-replace.PID/old;
//   3. each new entry is renamed from S into DIR;
//   4. DIR/.sinkcert-replace.PID (now holding the old set) is removed.
// Steps 1-3 run in a CommitSection: SIGINT/SIGTERM/SIGHUP wait the few
// renames' time until step 3 is done. Each step is idempotent given the
// journal (a name still in S is not installed yet; an old name whose new
// entry is installed is already moved), so a commit cut short by SIGKILL is
// finished by the next replace_output_set on DIR (recover_output_dir, which
// also removes the staging folders of dead runs that never reached step 1).
// Hence a run that fails, or is stopped by SIGINT/SIGTERM/SIGHUP, leaves the
// old set or the new set, never a mix; SIGKILL within the few renames of
// steps 2-3 leaves the journal, from which the next run on DIR completes the
// new set before anything else. A reader looking during steps 2-3 may find
// some names missing for that moment.
#pragma once

#include <functional>
#include <string>

namespace sinkcert {

// Throws InputError(option, path, reason) unless `path` can be written as a
// regular file: absent (its folder writable, or creatable in a writable
// folder) or an existing regular file.
void check_output_file(const std::string& path, const std::string& option);

// Throws InputError(option, path, reason) unless `path` is a writable folder
// (or a symbolic link to one), or absent and creatable in a writable folder.
void check_output_dir(const std::string& path, const std::string& option);

// Writes `content` to `path` atomically (temporary + rename). Creates missing
// parent folders. Throws InputError if `path` exists as anything but a
// regular file (nothing is written then), std::runtime_error naming the path
// and the system's reason if writing fails (the temporary is removed).
void write_file_atomically(const std::string& path, const std::string& content);

// The set of entries of `dir` one run writes and replaces as a whole.
struct OutputSet {
  enum class Kind { kNotInSet, kFile, kFolder };
  std::string dir;
  // What an entry called `name` (no '/') is in the set: a regular file, a
  // folder, or not part of the set (left alone).
  std::function<Kind(const std::string& name)> owns;
};

// check_output_dir(set.dir, option), and every existing entry of the set is
// of its kind (a set's file is a regular file, a set's folder a folder; a
// symbolic link is refused even when it points to the right kind).
void check_output_set(const OutputSet& set, const std::string& option);

// Replaces the set in set.dir (see the header comment): calls
// write(staging) to write the new set into the folder `staging`, then
// commits. Every entry the writer creates must be of the kind `owns` gives
// its name (else std::logic_error, nothing replaced). If `write` throws, the
// exception propagates and set.dir is unchanged.
void replace_output_set(const OutputSet& set,
                        const std::function<void(const std::string& staging)>& write);

// Finishes the commit of every run that died in one (their journal is in
// `dir`) and removes the staging folders of dead runs. replace_output_set
// calls it first; exposed for tests.
void recover_output_dir(const std::string& dir);

}  // namespace sinkcert
