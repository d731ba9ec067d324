#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `sinkcert figures`: a single-layer model beside
# another and a residual 2 x 2 model give their data files, gnuplot scripts
# (each with its provenance) and, when gnuplot is installed, PDF and PNG;
# the data hold the closed form of Theorem 3's ReLU construction; a rerun
# replaces the set; bad files and options give exit 2 and one line.
# Usage: figures_cli_test.sh SINKCERT (from the source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

# the ReLU construction of Theorem 3 at n = 5 (A = e_1 (e_4 + e_1)^T, M = I):
# at the trigger j, a_jk = 1/j for k = 1..j; every other weight is 0
cat > "$tmp/relu.json" <<JSON
{"format": "sinkcert-weights", "version": 1, "kind": "single-layer", "attention": "relu",
 "n": 5, "layers": 1, "heads": 1,
 "weights": [[{"A": [[0, 0, 0, 0, 0], [0, 1, 0, 0, 1], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                     [0, 0, 0, 0, 0]],
               "M": [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0],
                     [0, 0, 0, 0, 1]]}]]}
JSON
# the softmax sink family at beta = 10
cat > "$tmp/sink.json" <<JSON
{"format": "sinkcert-weights", "version": 1, "kind": "single-layer", "attention": "softmax",
 "n": 5, "layers": 1, "heads": 1,
 "weights": [[{"A": [[0, 0, 0, 0, 0], [-10, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                     [10, 0, 0, 0, 0]],
               "M": [[0, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0],
                     [0, 0, 0, 0, 1]]}]]}
JSON

out="$tmp/figs"
expect 0 '^wrote .*/pair_mean_std\.dat$' figures --weights "$tmp/sink.json" \
  --beside "$tmp/relu.json" --L 10 --samples 20 --trigger 7 --seed 3 --name pair --out "$out"
for f in pair_mean_std.dat pair_mean_std.gp pair_one_input.dat pair_one_input.gp; do
  [ -s "$out/$f" ] || fail "$f not written"
  grep -q '^# command_line: .*figures --weights' "$out/$f" || fail "$f: no command line"
  grep -q '^# revision: ' "$out/$f" || fail "$f: no revision"
  grep -q '^# seed: 3$' "$out/$f" || fail "$f: no seed"
done
if command -v gnuplot > /dev/null 2>&1; then
  for f in pair_mean_std.pdf pair_mean_std.png pair_one_input.pdf pair_one_input.png; do
    [ -s "$out/$f" ] || fail "$f not rendered"
  done
fi
# 4 heat maps of 10 x 10 in one row; the ReLU mean (panel 2) at the
# trigger row 7: 1/7 on keys 1..7, 0 on keys 0, 8, 9
[ "$(grep -c '^[0-9]' "$out/pair_mean_std.dat")" -eq 400 ] || fail "pair_mean_std.dat: not 400 rows"
grep -q '1 row(s) x 4 column(s)' "$out/pair_mean_std.gp" || fail "not one row of four"
awk '$1 == 2 && $6 == 7 { k = $7; v = $8 + 0;
       want = (k >= 1 && k <= 7) ? 1 / 7 : 0; d = v - want; if (d < 0) d = -d;
       if (d > 1e-15) bad = 1; n++ }
     END { exit !(n == 10 && !bad) }' "$out/pair_mean_std.dat" ||
  fail "the ReLU mean's trigger row is not 1/7 on keys 1..7"
# its std is 0 everywhere (the construction's attention reads flags only)
awk '$1 == 3 && $8 != 0 { bad = 1 } END { exit bad }' "$out/pair_mean_std.dat" ||
  fail "the ReLU std is not 0"
# a rerun with fewer files' worth of change replaces the set, other files stay
echo keep > "$out/other.txt"
expect 0 '^wrote ' figures --weights "$tmp/relu.json" --L 8 --samples 2 --name pair --out "$out"
[ -f "$out/other.txt" ] || fail "a file not of the set was removed"
grep -q '1 row(s) x 2 column(s)' "$out/pair_mean_std.gp" || fail "the set was not replaced"

# a residual 2 x 2 model: a 2 x 2 grid of one input
expect 0 'trigger at 0-indexed position 7, 5 probes' figures \
  --weights results/theorem3/relu_residual_2x2_n16.weights.json --samples 5 --out "$out"
grep -q '2 row(s) x 2 column(s)' "$out/attention_one_input.gp" || fail "2 x 2 grid"

# bad input: one line, exit 2
one_line() {
  want_pattern=$1
  shift
  expect 2 "$want_pattern" "$@"
  [ "$(wc -l < "$tmp/out")" -eq 1 ] || fail "sinkcert $*: not one line"
}
echo '{"format": "sinkcert-weights"' > "$tmp/broken.json"
one_line "broken\.json" figures --weights "$tmp/broken.json" --out "$out"
one_line "no-such\.json" figures --weights "$tmp/no-such.json" --out "$out"
one_line "--samples: expected an integer in \[1, 1000000\], got '0'" figures \
  --weights "$tmp/relu.json" --samples 0 --out "$out"
one_line "--trigger: a trigger position of the task: 1\.\.5 at L = 6" figures \
  --weights "$tmp/relu.json" --L 6 --out "$out"
one_line "--L: expected an integer in \[2, 128\]" figures --weights "$tmp/relu.json" --L 200 \
  --out "$out"
one_line "exactly one of --weights W\.json and --paper" figures --out "$out"
one_line "exactly one of --weights W\.json and --paper" figures --paper \
  --weights "$tmp/relu.json" --out "$out"
one_line "--out: required" figures --weights "$tmp/relu.json"
one_line "the n of the --weights file \(5\), got 16" figures --weights "$tmp/relu.json" \
  --beside results/theorem3/relu_residual_2x2_n16.weights.json --out "$out"
one_line "missing; --models" figures --paper --models "$tmp" --out "$out"
one_line "--name: a file stem" figures --weights "$tmp/relu.json" --name a/b --out "$out"

finish figures
