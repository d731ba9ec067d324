#!/bin/sh
# SPDX-License-Identifier: MIT
# sinkcert theorem2 --quick end to end at n = 5, L = 4, 2 x 2: a verdict
# printed with its exit code and the same verdict in theorem2.json; the sink
# score and every head's statistics printed; every file of the study (JSON,
# CSV tables, weight file, figure data and gnuplot script, renders when
# gnuplot runs), each stamped with the one provenance header; the weight
# file re-evaluated by eval; bad --layers / --heads / --dense-kernels and a
# task without trigger positions refused (exit 2, nothing written).
# Usage: theorem2_cli_test.sh SINKCERT (run from the source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

"$bin" theorem2 --quick --layers 2 --heads 2 --n 5 --L 4 --seed 0 --rounds 6 --out "$tmp/t" > "$tmp/run.out" 2>&1
rc=$?
verdict=$(sed -n 's/^verdict: //p' "$tmp/run.out")
case "$verdict:$rc" in
  CONSISTENT:0 | "COUNTEREXAMPLE CANDIDATE:3" | INCONCLUSIVE:4) ;;
  *) fail "verdict '$verdict' with exit code $rc"; head -20 "$tmp/run.out" ;;
esac
grep -q "\"verdict\": \"$verdict\"" "$tmp/t/theorem2.json" || fail "theorem2.json: verdict differs"
grep -q '"dense_kernels": "baseline"' "$tmp/t/theorem2.json" || fail "theorem2.json: dense kernels not recorded"
grep -q '^path start 0 (normal std 0.02): worst case [0-9.e-]* SEARCH(lower bound), sink score [01]\.[0-9]* NUMERIC(53) (layer [01], head [01], position [1-3])' "$tmp/run.out" ||
  fail "no labelled path summary"
[ "$(grep -c '^  layer [01] head [01]: mean BOS [01]\.[0-9]*, min BOS' "$tmp/run.out")" -eq 4 ] ||
  fail "not four heads' statistics"
for f in theorem2.json path.csv heads.csv every_head_targeted.csv targeted_l0h0.weights.json \
  path_start0.weights.json path.dat path.gp; do
  [ -s "$tmp/t/$f" ] || fail "$f not written"
done
if command -v gnuplot > /dev/null 2>&1; then
  for f in path.pdf path.png; do
    [ -s "$tmp/t/$f" ] || fail "$f not rendered"
  done
fi
for f in path.csv heads.csv path.dat path.gp; do
  keys=$(sed -n '2,6s/^# \([a-z_]*\): .*/\1/p' "$tmp/t/$f" | tr '\n' ' ')
  [ "$keys" = "command_line revision time_utc seed precision " ] ||
    fail "$f: provenance keys '$keys'"
done
grep -q '^# command_line: .*theorem2 --quick --layers 2 --heads 2 --n 5 --L 4 --seed 0' "$tmp/t/path.csv" ||
  fail "path.csv: command line not recorded"
# heads.csv: one row per head of the one start
[ "$(grep -c '^0,0\.02,[01],[01],' "$tmp/t/heads.csv")" -eq 4 ] || fail "heads.csv: not 4 heads"
# the weight file is a residual 2 x 2 model that eval reads
expect 0 'residual' eval --weights "$tmp/t/path_start0.weights.json" --L 4 --samples 10

# refused before any search: --layers 3, --heads 0, L = 2 without a trigger position
expect 2 'layers.*1, 2 or 4' theorem2 --quick --layers 3 --n 5 --L 4 --out "$tmp/u"
expect 2 'heads' theorem2 --quick --heads 0 --n 5 --L 4 --out "$tmp/u"
expect 2 'rounds' theorem2 --quick --rounds 0 --n 5 --L 4 --out "$tmp/u"
expect 2 'trigger' theorem2 --quick --n 5 --L 2 --trigger-range reference-code --out "$tmp/u"
expect 2 'dense-kernels.*"baseline"' theorem2 --quick --dense-kernels sse --n 5 --L 4 --out "$tmp/u"
# 4 x 4 at n = 20: P = 12800 parameters, nine P x P matrices = 11.1 GiB
expect 2 '^sinkcert: error: command line: --layers: the least-squares solve \(nine P x P matrices, P = 2 n\^2 layers heads\) needs about 11.1[0-9]* GiB, more than the 4 GiB limit' \
  theorem2 --layers 4 --heads 4 --n 20 --L 4 --out "$tmp/u"
[ ! -e "$tmp/u/theorem2.json" ] || fail "a refused run wrote theorem2.json"

finish theorem2
