#!/bin/sh
# SPDX-License-Identifier: MIT
# sinkcert normalizations --quick end to end on a tiny task (n = 4, L = 3,
# relu, gated, sigmoid): relu's row is a sink-free solution (EXACT) whose
# weight file verify relu re-checks, and the same file with BOS attention
# added fails that check; sigmoid's (CERTIFIED) weight file passes verify
# bound --claim 1e-6 and fails a claim below its loss; gated's row is a
# sink-free solution (CERTIFIED) by its construction, beside its search path
# (the minimax's gate block); the table (LaTeX, CSV, JSON) and studies.json carry the provenance
# header; a bad --attention is refused (exit 2) before anything runs.
# Usage: normalizations_cli_test.sh SINKCERT (run from the source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

expect 0 '^relu: sink-free solution \[EXACT\]' normalizations --quick --n 4 --L 3 \
  --attention relu,gated,sigmoid --out "$tmp/n"
cp "$tmp/out" "$tmp/run.out"
grep '^gated: sink-free solution \[CERTIFIED\] ' "$tmp/run.out" | grep -q 'gate b' ||
  fail "gated: no certified sink-free row from its construction"
for f in normalizations.tex normalizations.csv normalizations.json studies.json \
  sink_free_relu.json sink_free_sigmoid.json sink_free_gated.json; do
  [ -s "$tmp/n/$f" ] || fail "$f not written"
done
grep -q '^gated,sink-free solution,CERTIFIED,[0-9]' "$tmp/n/normalizations.csv" ||
  fail "normalizations.csv: gated row (a search path, certified construction)"
keys=$(sed -n '2,6s/^# \([a-z_]*\): .*/\1/p' "$tmp/n/normalizations.csv" | tr '\n' ' ')
[ "$keys" = "command_line revision time_utc seed precision " ] ||
  fail "normalizations.csv: provenance keys '$keys'"
grep -q '"provenance"' "$tmp/n/studies.json" || fail "studies.json: no provenance"
grep -q '^relu,sink-free solution,EXACT,' "$tmp/n/normalizations.csv" ||
  fail "normalizations.csv: relu row"

# anyone can re-check the weight file; an edited one (BOS attention) fails
expect 0 'VERIFIED' verify relu --weights "$tmp/n/sink_free_relu.json" --L 3
# A(n-1, 0) = 1: ordinary rows attend to BOS (the 4th row of A)
sed '/"A": \[/{n;n;n;n;s/\[0,/[1,/}' "$tmp/n/sink_free_relu.json" > "$tmp/leaky.json"
cmp -s "$tmp/n/sink_free_relu.json" "$tmp/leaky.json" && fail "the edit did not change the file"
expect 3 'NOT VERIFIED' verify relu --weights "$tmp/leaky.json" --L 3

# the certified (sigmoid) solution: its loss re-checked by verify bound; a
# claim below its certified lower bound fails
grep -q '^sigmoid: sink-free solution \[CERTIFIED\]' "$tmp/run.out" || fail "sigmoid row"
expect 0 'verdict: VERIFIED' verify bound --weights "$tmp/n/sink_free_sigmoid.json" --L 3 \
  --claim 1e-6
expect 3 'verdict: NOT VERIFIED' verify bound --weights "$tmp/n/sink_free_sigmoid.json" --L 3 \
  --claim 1e-12

expect 2 '--attention' normalizations --quick --n 4 --L 3 --attention softmax,bogus --out "$tmp/b"
[ ! -e "$tmp/b/normalizations.csv" ] || fail "a refused run wrote its table"

finish normalizations
