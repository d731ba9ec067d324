#!/bin/sh
# SPDX-License-Identifier: MIT
# sinkcert theorem2 under `mpirun -np 2` gives the single-process study bit
# for bit: the same theorem2.json apart from timings (every "seconds" and
# "elapsed" value, and the seconds the every-head summary ends with) and
# provenance (command line, time), the same verdict and
# exit code; only rank 0 prints (one verdict line) and writes.
# Usage: theorem2_mpi_test.sh SINKCERT MPIEXEC (run from the source root, as ctest does).
set -u
bin="$1"
mpiexec="$2"
. "$(dirname "$0")/cli_expect.sh"
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
args="theorem2 --layers 1 --heads 2 --n 5 --L 4 --quick --threads 1 --rounds 1"

"$bin" $args --out "$tmp/one" > "$tmp/one.out" 2> "$tmp/one.err"
rc1=$?
"$mpiexec" -np 2 --oversubscribe "$bin" $args --out "$tmp/two" > "$tmp/two.out" 2> "$tmp/two.err"
rc2=$?
[ "$rc1" -eq "$rc2" ] || fail "exit codes differ: one process $rc1, two ranks $rc2"
case "$rc1" in 0 | 3 | 4) ;; *) fail "exit code $rc1"; tail -5 "$tmp/one.err" ;; esac
[ "$(grep -c '^verdict: ' "$tmp/two.out")" -eq 1 ] || fail "not one verdict line under mpirun"
[ -s "$tmp/two/theorem2.json" ] || fail "no theorem2.json under mpirun"
# same A B: the two JSON outputs agree, timings apart (tests/app/same_json.py)
same() { python3 "$(dirname "$0")/same_json.py" "$1" "$2" ', [0-9.]+ s$' summary; }
same "$tmp/one/theorem2.json" "$tmp/two/theorem2.json" ||
  fail "theorem2.json differs between 1 process and 2 ranks"
# the comparison tells a changed bit apart (the last digit of the path's worst case)
python3 - "$tmp/one/theorem2.json" "$tmp/changed.json" << 'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
d["path"][0]["worst_case"] = math.nextafter(d["path"][0]["worst_case"], math.inf)
json.dump(d, open(sys.argv[2], "w"))
PY
[ -s "$tmp/changed.json" ] || fail "no changed copy of theorem2.json"
same "$tmp/one/theorem2.json" "$tmp/changed.json" > /dev/null &&
  fail "the comparison missed a worst case changed in its last bit"
finish theorem2_mpi
