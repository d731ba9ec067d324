#!/bin/sh
# SPDX-License-Identifier: MIT
# sinkcert theorem1 --quick end to end at n = 5, L = 4: the verdict printed,
# its exit code (0 CONSISTENT) and the same verdict in theorem1.json; every
# file of the study (JSON, CSV tables, weight files, figure data and gnuplot
# scripts, renders when gnuplot runs), each stamped with the one provenance
# header; a task without trigger positions is refused (exit 2).
# Usage: theorem1_cli_test.sh SINKCERT (run from the source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"


expect 0 '^verdict: CONSISTENT$' theorem1 --quick --n 5 --L 4 --seed 0 --out "$tmp/t"
cp "$tmp/out" "$tmp/run.out"
grep -q '^path start 1 (normal std 0.1): worst case [0-9.e-]* SEARCH(lower bound)' "$tmp/run.out" ||
  fail "no SEARCH-labelled path summary"
grep -q '"verdict": "CONSISTENT"' "$tmp/t/theorem1.json" || fail "theorem1.json: verdict differs"
for f in theorem1.json path.csv frontier.csv nuance.csv path_start0.weights.json \
  path_start1.weights.json frontier_delta_0.5.weights.json path.dat path.gp frontier.dat \
  frontier.gp nuance.dat nuance.gp; do
  [ -s "$tmp/t/$f" ] || fail "$f not written"
done
if command -v gnuplot > /dev/null 2>&1; then
  for f in path.pdf path.png frontier.pdf nuance.pdf; do
    [ -s "$tmp/t/$f" ] || fail "$f not rendered"
  done
fi
# one provenance header: the same keys, in the same order, in every text file
for f in path.csv frontier.csv nuance.csv path.dat frontier.gp; do
  keys=$(sed -n '2,6s/^# \([a-z_]*\): .*/\1/p' "$tmp/t/$f" | tr '\n' ' ')
  [ "$keys" = "command_line revision time_utc seed precision " ] ||
    fail "$f: provenance keys '$keys'"
done
grep -q '^# command_line: .*theorem1 --quick --n 5 --L 4 --seed 0' "$tmp/t/path.csv" ||
  fail "path.csv: command line not recorded"
# the frontier table holds one row per delta, in decreasing delta
[ "$(grep -c '^0\.[0-9]*,' "$tmp/t/frontier.csv")" -eq 8 ] || fail "frontier.csv: not 8 deltas"
sed -n '/^delta,/{n;p;}' "$tmp/t/frontier.csv" | grep -q '^0\.5,0\.5,' || fail "frontier.csv: first row"

# L = 2 under reference-code has no trigger position: refused, nothing run
expect 2 'trigger' theorem1 --quick --n 5 --L 2 --trigger-range reference-code --out "$tmp/u"
[ ! -e "$tmp/u/theorem1.json" ] || fail "a refused task wrote theorem1.json"

finish theorem1
