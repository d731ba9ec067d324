#!/bin/sh
# SPDX-License-Identifier: MIT
# "Solves the task" and "sinks" mean one thing in check, verify bound and
# verify bos (src/verdict_bars.h; docs/definitions.md, Definitions 7): on
# the sink family at beta = 10 (n = 5, L = 4: E = 3 / (e^10 + 3) =
# 1.3618e-4 at every input, and min BOS = 1 - 1.3618e-4 = 0.99986) every
# command prints the same words with the same bar beside them; --tolerance
# and --sink-bar move the verdict, with a case on each side of each bar;
# the bars are printed as written; where no certified BOS bound runs
# (check on a residual file) the sink verdict says it rests on the probe
# set, NUMERIC(53); bad bars are one line, exit 2.
# Usage: verdict_bars_cli_test.sh SINKCERT (from the source root, as ctest
# does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"
. "$(dirname "$0")/sink_family.sh"

sink_family single-layer 10 > "$tmp/sink.json"
sink_family residual 10 > "$tmp/residual.json"
S="$tmp/sink.json"

# run NAME ARGS...: stdout to NAME.out, stderr to NAME.err
run() {
  name=$1
  shift
  "$bin" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
  echo $? > "$tmp/$name.rc"
}
# has NAME PATTERN: PATTERN (grep -E) in NAME.out
has() {
  grep -Eq -- "$2" "$tmp/$1.out" || fail "$1: no line matching '$2'; stdout: $(cat "$tmp/$1.out")"
}
# words NAME PREFIX: the verdict after PREFIX, its printed ends replaced by N
words() {
  sed -n "s/^$2//p" "$tmp/$1.out" | sed -E 's/[0-9]\.[0-9]+e[-+][0-9]+/N/g'
}
# same A B: identical, non-empty verdict words
same() {
  [ -n "$1" ] && [ "$1" = "$2" ] || fail "different words: '$1' and '$2'"
}

E='[0-9]\.[0-9]+e-0[45]'  # an end near 1.36e-4
B='9\.99[89][0-9]*e-01'   # an end near 0.99986
P='9\.999[0-9]*e-01'      # a probe-set mean near 0.9999

# defaults: the same words and bars from every command
run c check --weights "$S" --L 4 --seconds 4 --out "$tmp/c"
run b verify bound --weights "$S" --L 4 --seconds 5
run s verify bos --weights "$S" --L 4 --seconds 5
has c "^  -> solves the task: E <= $E <= 5e-3 \\(tolerance\\), CERTIFIED\$"
has c "^  -> sinks on every input: min BOS >= $B >= 0\\.5 \\(sink bar\\), CERTIFIED\$"
has b "^meaning: solves the task: E <= $E <= 5e-3 \\(tolerance\\), CERTIFIED\$"
has s "^meaning: sinks on every input: min BOS >= $B >= 0\\.5 \\(sink bar\\), CERTIFIED\$"
same "$(words c '  -> solves')" "$(words b 'meaning: solves')"
same "$(words c '  -> sinks')" "$(words s 'meaning: sinks')"
# report.json: the same texts and the bars as written
grep -q '"tolerance": "5e-3"' "$tmp/c/report.json" || fail "report.json: tolerance not as written"
grep -q '"sink_bar": "0.5"' "$tmp/c/report.json" || fail "report.json: sink bar not as written"
grep -q '"sinks_evidence": "CERTIFIED"' "$tmp/c/report.json" || fail "report.json: sinks evidence"
# --json of the bounds: the meaning and the bar as written
"$bin" verify bound --weights "$S" --L 4 --seconds 5 --tolerance 0.00020 --json > "$tmp/b.json" 2> /dev/null
grep -q '"tolerance": "0.00020"' "$tmp/b.json" || fail "verify bound --json: tolerance not as written"
grep -q '"meaning": "solves the task: E <= ' "$tmp/b.json" || fail "verify bound --json: no meaning"
"$bin" verify bos --weights "$S" --L 4 --seconds 5 --sink-bar 0.9998 --json > "$tmp/s.json" 2> /dev/null
grep -q '"sink_bar": "0.9998"' "$tmp/s.json" || fail "verify bos --json: sink bar not as written"

# --tolerance on each side of E = 1.36e-4, printed as written
run c1 check --weights "$S" --L 4 --seconds 4 --out "$tmp/c1" --tolerance 1e-4
run b1 verify bound --weights "$S" --L 4 --seconds 5 --tolerance 1e-4
has c1 "^  -> does not solve the task: E >= $E > 1e-4 \\(tolerance\\), CERTIFIED\$"
has b1 "^meaning: does not solve the task: E >= $E > 1e-4 \\(tolerance\\), CERTIFIED\$"
same "$(words c1 '  -> does not')" "$(words b1 'meaning: does not')"
run c2 check --weights "$S" --L 4 --seconds 4 --out "$tmp/c2" --tolerance 0.00020
run b2 verify bound --weights "$S" --L 4 --seconds 5 --tolerance 0.00020
has c2 "^  -> solves the task: E <= $E <= 0\\.00020 \\(tolerance\\), CERTIFIED\$"
has b2 "^meaning: solves the task: E <= $E <= 0\\.00020 \\(tolerance\\), CERTIFIED\$"

# --sink-bar on each side of min BOS = 0.99986
run c3 check --weights "$S" --L 4 --seconds 4 --out "$tmp/c3" --sink-bar 0.9999
run s3 verify bos --weights "$S" --L 4 --seconds 5 --sink-bar 0.9999
W='at the witness \(head 0, row 3, trigger [1-3]\), CERTIFIED$'
has c3 "^  -> does not sink on every input: BOS mass <= $B < 0\\.9999 \\(sink bar\\) $W"
has s3 "^meaning: does not sink on every input: BOS mass <= $B < 0\\.9999 \\(sink bar\\) $W"
run c4 check --weights "$S" --L 4 --seconds 4 --out "$tmp/c4" --sink-bar 0.9998
run s4 verify bos --weights "$S" --L 4 --seconds 5 --sink-bar 0.9998
has c4 "^  -> sinks on every input: min BOS >= $B >= 0\\.9998 \\(sink bar\\), CERTIFIED\$"
has s4 "^meaning: sinks on every input: min BOS >= $B >= 0\\.9998 \\(sink bar\\), CERTIFIED\$"
same "$(words c4 '  -> sinks')" "$(words s4 'meaning: sinks')"
# the maximum: below a bar above it, "does not sink on any input"
run s5 verify bos --weights "$S" --L 4 --seconds 5 --max --sink-bar 1
has s5 "^meaning: (does not sink on any input|undecided whether it sinks on some input)"
has s5 "1 \\(sink bar\\), CERTIFIED\$"

# no certified BOS bound in check (a residual file): the probe set, said so
run c6 check --weights "$tmp/residual.json" --L 4 --seconds 4 --out "$tmp/c6"
has c6 "^  -> sinks on the probe set: mean BOS $P >= 0\\.5 \\(sink bar\\) in layer 0 head 0, NUMERIC\\(53\\); not certified on every input"
grep -q '"sinks_evidence": "NUMERIC(53)"' "$tmp/c6/report.json" || fail "report.json: probe-set sinks evidence"
run c7 check --weights "$tmp/residual.json" --L 4 --seconds 4 --out "$tmp/c7" --sink-bar 0.99999
has c7 "^  -> does not sink on the probe set: mean BOS <= $P < 0\\.99999 \\(sink bar\\) in every head"

# verify bos on the residual file: each head certified, and the model line
run s8 verify bos --weights "$tmp/residual.json" --L 4 --seconds 5
has s8 "^meaning: sinks on every input in layer 0, head 0 against 0\\.5 \\(sink bar\\), CERTIFIED \\(per head above\\)\$"
run s9 verify bos --weights "$tmp/residual.json" --L 4 --seconds 5 --sink-bar 0.9999
has s9 "^meaning: no head sinks on every input against 0\\.9999 \\(sink bar\\), CERTIFIED \\(per head above\\)\$"

# bad bars: one line naming the option, exit 2
expect 2 '^sinkcert: error: command line: --tolerance: expected a decimal number >= 0 \(e\.g\. 5e-3\), got .abc.$' \
  check --weights "$S" --L 4 --tolerance abc
expect 2 'command line: --tolerance: expected a decimal number >= 0' \
  verify bound --weights "$S" --L 4 --tolerance -1e-3
expect 2 'command line: --sink-bar: expected a decimal number in \(0, 1\]' \
  verify bos --weights "$S" --L 4 --sink-bar 1.5
expect 2 'command line: --sink-bar: expected a decimal number in \(0, 1\]' \
  check --weights "$S" --L 4 --sink-bar 0

finish verdict_bars
