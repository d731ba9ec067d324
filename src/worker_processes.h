// SPDX-License-Identifier: MIT
//
// Independent jobs in worker processes: job(k) for k = 0, ..., count - 1,
// each in a child process of its own (fork), at most `workers` at a time,
// started in increasing k as workers become free. Processes, not threads:
// the MPFR and MPFI numbers of Boost 1.74 take their precision from one
// process-wide default (src/scalar_traits.h, PrecisionScope), which two
// threads computing at different precisions would overwrite for each other.
// A child shares nothing with its siblings, so a job computes exactly what
// it computes alone, and the results do not depend on `workers`.
//
// A job reports through two channels, both carried to the parent by a pipe:
//   say(line)     progress; on_line(k, line) is called in the parent, in the
//                 order the lines arrive (one line: a line break becomes a
//                 space);
//   its return    a string (e.g. JSON) handed back in slot k of the result.
// Between lines the parent calls on_idle() about every idle_seconds, so a
// caller can keep a status line current while jobs are silent.
// A job that throws: its InputError is rethrown in the parent as the same
// InputError (file, field, expected), anything else as std::runtime_error
// with its message; no further job is started, the running ones finish, and
// the failure of the lowest index is thrown. A child that dies without
// answering (a signal, a crash) is a failure naming the job and the signal.
// While they run, the children are registered with src/interrupt_cleanup.h
// (SIGINT/SIGTERM/SIGHUP of the parent kill them) and die with the parent
// (PR_SET_PDEATHSIG). Before forking, the parent flushes its streams; a
// child ends with _exit, so nothing buffered is written twice and no
// destructor of the parent's objects runs in it.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace sinkcert {

using WorkerSay = std::function<void(const std::string&)>;
using WorkerJob = std::function<std::string(int, const WorkerSay&)>;

std::vector<std::string> run_worker_processes(
    int count, int workers, const WorkerJob& job,
    const std::function<void(int, const std::string&)>& on_line = {},
    const std::function<void()>& on_idle = {}, double idle_seconds = 1.0);

}  // namespace sinkcert
