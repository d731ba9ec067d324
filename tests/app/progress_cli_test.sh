#!/bin/sh
# SPDX-License-Identifier: MIT
# Progress a person can read, and --quiet: on a random softmax model at
# n = 5, L = 4 (a round of the attack takes milliseconds there, so a line
# per step would be thousands), `attack --seconds 3` writes at most one
# progress line per second per stage on stderr, and `check --seconds 4` at
# most its step lines plus one a second; every progress line has the
# stamp "[ seconds s] command: "; --quiet prints the verdict lines only on
# stdout (check: the solves and sinks lines; verify bound and verify bos:
# "verdict:" and "meaning:") and nothing on stderr.
# Usage: progress_cli_test.sh SINKCERT (from the source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

. "$(dirname "$0")/random_model.sh"
random_model "$tmp/random.json" || fail "could not write the random model"
R="$tmp/random.json"

# lines FILE: its number of lines
lines() { wc -l < "$1" | tr -d ' '; }

# the attack: 3 s, one stage (its rounds), at most one line a second after
# the first 2 s; 3 + 2 lines leave room for a slow start
"$bin" attack --weights "$R" --L 4 --seconds 3 > "$tmp/a.out" 2> "$tmp/a.err" ||
  fail "attack: exit $?"
[ "$(lines "$tmp/a.err")" -le 5 ] || fail "attack --seconds 3: $(lines "$tmp/a.err") stderr lines (want <= 5): $(head -5 "$tmp/a.err")"
grep -Ev '^\[ *[0-9]+\.[0-9] s\] attack: round [0-9]+, .*: best e\(X\) .* so far \[NUMERIC\(53\), certified at the end\], [0-9]+ forward passes, [0-9.]+ s, [0-9.]+ s left$' \
  "$tmp/a.err" > "$tmp/a.odd" && fail "attack: unexpected progress lines: $(head -3 "$tmp/a.odd")"

# check: 4 s, six step lines (header, BOS statistics, the attack, the
# bound, the BOS bound, at most one not run) and at most one line a second
# of its stages in the loops: 6 + 4 + 4 slack
"$bin" check --weights "$R" --L 4 --seconds 4 --out "$tmp/c" > "$tmp/c.out" 2> "$tmp/c.err" ||
  fail "check: exit $?"
[ "$(lines "$tmp/c.err")" -le 14 ] || fail "check --seconds 4: $(lines "$tmp/c.err") stderr lines (want <= 14): $(head -5 "$tmp/c.err")"
grep -Ev '^\[ *[0-9]+\.[0-9] s\] check: ' "$tmp/c.err" > "$tmp/c.odd" &&
  fail "check: stderr lines without the progress stamp: $(head -3 "$tmp/c.odd")"

# --quiet: the verdict lines only, nothing on stderr
"$bin" check --weights "$R" --L 4 --seconds 3 --out "$tmp/q" --quiet > "$tmp/q.out" 2> "$tmp/q.err"
[ -s "$tmp/q.err" ] && fail "check --quiet wrote on stderr: $(head -3 "$tmp/q.err")"
[ "$(lines "$tmp/q.out")" -eq 2 ] || fail "check --quiet: $(lines "$tmp/q.out") lines (want 2): $(cat "$tmp/q.out")"
sed -n 1p "$tmp/q.out" | grep -Eq '^(solves the task|does not solve the task|undecided whether it solves the task): .* \(tolerance\), (CERTIFIED|EXACT)$' ||
  fail "check --quiet: first line is not the solves verdict: $(cat "$tmp/q.out")"
sed -n 2p "$tmp/q.out" | grep -Eq '^(sinks|does not sink|undecided whether it sinks) .*\(sink bar\)' ||
  fail "check --quiet: second line is not the sinks verdict: $(cat "$tmp/q.out")"
[ -f "$tmp/q/report.json" ] || fail "check --quiet: no report.json"
for cmd in "verify bound" "verify bos"; do
  # shellcheck disable=SC2086
  "$bin" $cmd --weights "$R" --L 4 --seconds 4 --quiet > "$tmp/v.out" 2> "$tmp/v.err"
  [ -s "$tmp/v.err" ] && fail "$cmd --quiet wrote on stderr: $(head -3 "$tmp/v.err")"
  [ "$(lines "$tmp/v.out")" -eq 2 ] || fail "$cmd --quiet: $(lines "$tmp/v.out") lines (want 2): $(cat "$tmp/v.out")"
  sed -n 1p "$tmp/v.out" | grep -Eq '^verdict: (ENCLOSED|NOT ENCLOSED) ' ||
    fail "$cmd --quiet: first line is not the verdict: $(cat "$tmp/v.out")"
  sed -n 2p "$tmp/v.out" | grep -Eq '^meaning: ' ||
    fail "$cmd --quiet: second line is not the meaning: $(cat "$tmp/v.out")"
done

finish progress
