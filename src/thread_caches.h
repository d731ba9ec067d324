// SPDX-License-Identifier: MIT
//
// MPFR keeps per-thread caches (constants such as log 2 and pi, and the
// tables of exp at a given precision), allocated through GMP the first time
// a thread needs them and kept for the thread's next call. They are freed
// only on request: a thread that computed in MPFR (every Mpfr or Mpfi
// number, so every certified bound and every witness certification) and
// then ends without freeing them leaks them, which LeakSanitizer reports.
// Every thread the project starts calls release_thread_caches() as the last
// thing it does; the main thread's caches stay reachable to the end.
#pragma once

#include <mpfr.h>

namespace sinkcert {

inline void release_thread_caches() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }

}  // namespace sinkcert
