#!/bin/sh
# SPDX-License-Identifier: MIT
# sinkcert sweep end to end on tests/data/tiny_grid.json: a single-process
# run writes one result per configuration and the merged table, with
# progress on stderr; the same command again skips every configuration and
# writes the same table; a result of another grid in the folder, a bad grid
# and a missing option are refused (exit 2, one line). With MPIEXEC given,
# `mpirun -np 2 --oversubscribe sinkcert sweep ...` writes the same merged
# table as the single process (every line but the time stamp).
# Usage: sweep_cli_test.sh SINKCERT [MPIEXEC] (run from the source root, as ctest does).
set -u
bin="$1"
mpiexec="${2:-}"
. "$(dirname "$0")/cli_expect.sh"
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
grid="$(pwd)/tests/data/tiny_grid.json"
configs=8  # the configurations of tiny_grid.json: 2 kinds x 2 L x 2 seeds

# the table without its time stamp (the one line that differs from run to run)
table() { grep -v '^# time_utc: ' "$1"; }

# 1. one process, run from $tmp/one with --out D (the same command line as below)
mkdir -p "$tmp/one" "$tmp/two" "$tmp/bad"
(cd "$tmp/one" && "$bin" sweep --grid "$grid" --out D > out 2> err)
rc=$?
[ "$rc" -eq 0 ] || { fail "single-process sweep exit $rc"; cat "$tmp/one/err"; }
[ "$(ls "$tmp/one/D/configs/" | grep -c '\.json$')" -eq "$configs" ] ||
  fail "not one result file per configuration"
for f in sweep.json sweep.csv sweep.tex sweep_times.csv; do
  [ -s "$tmp/one/D/$f" ] || fail "$f not written"
done
[ "$(grep -c '^theorem1,' "$tmp/one/D/sweep.csv")" -eq "$configs" ] || fail "sweep.csv: not one row per configuration"
grep -q "^\[ *[0-9.]* s\] sweep: rank 0: running theorem1-sigmoid-n5-L3-paper-s0$" "$tmp/one/err" ||
  fail "no progress line naming the configuration and the rank"
grep -q "finished on rank 0 ($configs/$configs done)$" "$tmp/one/err" || fail "no done/total progress"
grep -q "^sweep: $configs configurations: 0 finished earlier (skipped), $configs run now" \
  "$tmp/one/out" || fail "summary line"
grep -q '^# command_line: .*sweep --grid .*tiny_grid.json --out D$' "$tmp/one/D/sweep.csv" ||
  fail "sweep.csv: no command line in the provenance"
grep -q '^# revision: ' "$tmp/one/D/sweep.csv" || fail "sweep.csv: no revision"
# the rows are sorted by key: sigmoid before softmax, L = 3 before 4, seed 0 before 1
[ "$(grep '^theorem1,' "$tmp/one/D/sweep.csv" | cut -d, -f2-6 | head -2 | tr '\n' ' ')" = \
  "sigmoid,5,3,paper,0 sigmoid,5,3,paper,1 " ] || fail "sweep.csv: rows not in key order"
# the attention axis reaches the study: with the same n, L and seed (same
# initial weights), sigmoid and softmax rows differ
sig=$(grep '^theorem1,sigmoid,5,4,paper,0,' "$tmp/one/D/sweep.csv" | cut -d, -f7-)
soft=$(grep '^theorem1,softmax,5,4,paper,0,' "$tmp/one/D/sweep.csv" | cut -d, -f7-)
[ -n "$sig" ] && [ "$sig" != "$soft" ] || fail "sweep.csv: sigmoid row equals the softmax row"
# no wall time in the table: sweep_times.csv holds them
grep -q 'seconds' "$tmp/one/D/sweep.csv" && fail "sweep.csv mentions seconds"
grep -q '^theorem1-sigmoid-n5-L3-paper-s0,0,[0-9.]*$' "$tmp/one/D/sweep_times.csv" ||
  fail "sweep_times.csv: no wall time for the first configuration"
cp "$tmp/one/D/sweep.csv" "$tmp/first.csv"

# 2. the same command again: everything skipped, the same table
(cd "$tmp/one" && "$bin" sweep --grid "$grid" --out D > out 2> err)
rc=$?
[ "$rc" -eq 0 ] || fail "rerun exit $rc"
[ "$(grep -c 'finished earlier (D/configs/.*\.json), skipped' "$tmp/one/err")" -eq "$configs" ] ||
  fail "rerun did not say it skipped every configuration"
grep -q 'running' "$tmp/one/err" && fail "rerun ran a configuration again"
table "$tmp/first.csv" > "$tmp/a"
table "$tmp/one/D/sweep.csv" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "rerun wrote another table"

# 3. refusals: exit 2, one line naming the file, the field and what was expected
sed 's/"theorem1"/"theorem7"/' "$grid" > "$tmp/bad/study.json"
expect 2 "^sinkcert: error: $tmp/bad/study.json: study: expected one of theorem1, normalization, theorem2, got \"theorem7\"$" \
  sweep --grid "$tmp/bad/study.json" --out "$tmp/bad/D"
[ "$(wc -l < "$tmp/out")" -eq 1 ] || fail "bad study: not one line"
[ ! -e "$tmp/bad/D" ] || fail "a refused grid created its --out"
sed 's/"softmax"/"gated"/' "$grid" > "$tmp/bad/gated.json"
expect 2 'gated.json: axes.attention: expected an attention kind the theorem1 search covers' \
  sweep --grid "$tmp/bad/gated.json" --out "$tmp/bad/D"
expect 2 'sweep --help|--grid' sweep --out "$tmp/bad/D"
expect 2 'absent.json: .*No such file' sweep --grid "$tmp/bad/absent.json" --out "$tmp/bad/D"
# the same folder with another grid (other options): refused, nothing run
sed 's/"frontier_rounds": *\([0-9]*\)/"frontier_rounds": 9\1/' "$grid" > "$tmp/bad/other.json"
cmp -s "$grid" "$tmp/bad/other.json" && fail "could not make another grid"
expect 2 'grid_digest: expected .*a result of another grid' \
  sweep --grid "$tmp/bad/other.json" --out "$tmp/one/D"

# 4. two MPI ranks: the same table
if [ -n "$mpiexec" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  (cd "$tmp/two" && "$mpiexec" -np 2 --oversubscribe "$bin" sweep --grid "$grid" --out D > out 2> err)
  rc=$?
  [ "$rc" -eq 0 ] || { fail "mpirun -np 2 sweep exit $rc"; head -20 "$tmp/two/err"; }
  grep -q "finished on rank 1 ($configs/$configs done)$" "$tmp/two/err" ||
    fail "mpirun: no progress line from rank 1"
  grep -q "^\[ *[0-9.]* s\] sweep: rank 1: running " "$tmp/two/err" || fail "mpirun: rank 1 ran nothing"
  table "$tmp/two/D/sweep.csv" > "$tmp/c"
  cmp "$tmp/a" "$tmp/c" || fail "mpirun -np 2: another merged table than one process"
fi

# 5. the normalization study through the sweep (tiny_normalization_grid.json:
# three kinds, quick, n = 4, L = 3): one row per kind with the study's
# verdicts; with MPIEXEC, 2 ranks give the same table
ngrid="$(pwd)/tests/data/tiny_normalization_grid.json"
mkdir -p "$tmp/norm1" "$tmp/norm2"
(cd "$tmp/norm1" && "$bin" sweep --grid "$ngrid" --out D > out 2> err)
rc=$?
[ "$rc" -eq 0 ] || { fail "normalization sweep exit $rc"; tail -5 "$tmp/norm1/err"; }
[ "$(grep -c '^normalization,' "$tmp/norm1/D/sweep.csv")" -eq 3 ] ||
  fail "normalization sweep.csv: not one row per kind"
grep -q '^normalization,relu,4,3,paper,0,sink-free solution,EXACT,' "$tmp/norm1/D/sweep.csv" ||
  fail "normalization sweep.csv: relu is not a sink-free solution (EXACT)"
grep -q '^normalization,gated,4,3,paper,0,' "$tmp/norm1/D/sweep.csv" ||
  fail "normalization sweep.csv: no gated row"
grep -q '^# caption: .*A test grid: quick options at the smallest size\.$' "$tmp/norm1/D/sweep.csv" ||
  fail "normalization sweep.csv: the grid's caption is not in the table's"
grep -q '^\[ *[0-9.]* s\] sweep: rank 0: normalization-relu-n4-L3-paper-s0: relu: candidate: VERIFIED' "$tmp/norm1/err" ||
  fail "normalization sweep: the study's progress lines are not passed on"
if [ -n "$mpiexec" ]; then
  (cd "$tmp/norm2" && "$mpiexec" -np 2 --oversubscribe "$bin" sweep --grid "$ngrid" --out D > out 2> err)
  rc=$?
  [ "$rc" -eq 0 ] || { fail "mpirun -np 2 normalization sweep exit $rc"; head -20 "$tmp/norm2/err"; }
  table "$tmp/norm1/D/sweep.csv" > "$tmp/n1"
  table "$tmp/norm2/D/sweep.csv" > "$tmp/n2"
  cmp "$tmp/n1" "$tmp/n2" || fail "mpirun -np 2: another normalization table than one process"
fi

finish sweep
