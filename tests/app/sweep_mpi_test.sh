#!/bin/sh
# SPDX-License-Identifier: MIT
# A killed rank loses only its configuration in flight: `mpirun -np 2
# sinkcert sweep` on tests/data/tiny_grid.json, the worker rank killed
# (SIGKILL) once the first result file exists; the run must fail with some
# configurations missing and no merged table. The same command again must
# succeed, remove the temporary a killed writer leaves (one is planted, named
# with the dead worker's PID), say on stderr that it skipped each finished
# configuration, run only the others, and write the merged table of a
# single-process run (every line but the time stamp).
# Usage: sweep_mpi_test.sh SINKCERT MPIEXEC (run from the source root, as ctest does).
set -u
bin="$1"
mpiexec="$2"
. "$(dirname "$0")/cli_expect.sh"
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
grid="$(pwd)/tests/data/tiny_grid.json"
configs=8  # the configurations of tiny_grid.json
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
table() { grep -v '^# time_utc: ' "$1"; }
mkdir -p "$tmp/one" "$tmp/mpi"

# the reference: one process (same command line: --out D from another folder)
(cd "$tmp/one" && "$bin" sweep --grid "$grid" --out D > out 2> err) || fail "single-process sweep failed"

# 1. start two ranks, kill the worker once a result exists
cd "$tmp/mpi"
"$mpiexec" -np 2 --oversubscribe "$bin" sweep --grid "$grid" --out D > out1 2> err1 &
launcher=$!
waited=0
while ! ls D/configs 2> /dev/null | grep -q '\.json$'; do
  sleep 0.05
  waited=$((waited + 1))
  [ "$waited" -lt 2400 ] || break  # 2 minutes: something is wrong
done
worker=""
for p in $(pgrep -P "$launcher"); do
  if tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
    worker=$p
  fi
done
if [ -n "$worker" ]; then
  kill -KILL "$worker"
else
  fail "no worker rank found among the children of mpirun ($launcher)"
fi
wait "$launcher"
rc=$?
[ "$rc" -ne 0 ] || fail "the run with a killed rank exited 0"
finished=$(ls D/configs | grep -c '\.json$')
[ "$finished" -ge 1 ] || fail "no result survived the kill"
[ "$finished" -lt "$configs" ] || fail "every configuration finished before the kill ($finished)"
[ ! -e D/sweep.csv ] || fail "a killed run wrote the merged table"

# a killed writer leaves its temporary behind (SIGKILL runs no clean-up):
# one for a configuration still to run, named with the dead worker's PID
stale=""
for key in theorem1-sigmoid-n5-L3-paper-s0 theorem1-sigmoid-n5-L3-paper-s1 \
  theorem1-sigmoid-n5-L4-paper-s0 theorem1-sigmoid-n5-L4-paper-s1 \
  theorem1-softmax-n5-L3-paper-s0 theorem1-softmax-n5-L3-paper-s1 \
  theorem1-softmax-n5-L4-paper-s0 theorem1-softmax-n5-L4-paper-s1; do
  if [ -z "$stale" ] && [ ! -e "D/configs/$key.json" ]; then
    stale="D/configs/$key.json.tmp.$worker"
    printf '{"format": "sinkcert-sweep-res' > "$stale"
  fi
done

# 2. the same command again: removes the stale temporary, skips the finished
# ones, runs the rest
"$mpiexec" -np 2 --oversubscribe "$bin" sweep --grid "$grid" --out D > out2 2> err2
rc=$?
[ "$rc" -eq 0 ] || { fail "the rerun exited $rc"; head -20 err2; }
skipped=$(grep -c 'finished earlier (D/configs/.*\.json), skipped' err2)
[ "$skipped" -eq "$finished" ] || fail "the rerun skipped $skipped configurations, $finished had finished"
ran=$(grep -c '^\[ *[0-9.]* s\] sweep: rank 1: running ' err2)
[ "$ran" -eq $((configs - finished)) ] || fail "the rerun ran $ran configurations, expected $((configs - finished))"
grep -q "^sweep: $configs configurations: $finished finished earlier (skipped), $ran run now on 2 rank(s)$" out2 ||
  fail "the rerun's summary line"
[ -n "$stale" ] && [ ! -e "$stale" ] || fail "the rerun left the stale temporary $stale"
grep -q "^\[ *[0-9.]* s\] sweep: removed $stale (the temporary of a killed run)$" err2 ||
  fail "the rerun did not say it removed $stale"
ls D/configs | grep -q '\.tmp\.' && fail "temporaries left in D/configs: $(ls D/configs | grep '\.tmp\.')"
table "$tmp/one/D/sweep.csv" > "$tmp/a"
table D/sweep.csv > "$tmp/b"
cmp "$tmp/a" "$tmp/b" || fail "the resumed run's table differs from the single-process one"
cd - > /dev/null

finish sweep_mpi
