#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `sinkcert check` at n = 5, L = 4: the sink family at
# beta = 10 (E = 3 / (e^10 + 3) = 1.36e-4 at every input: it solves the
# task to 5e-3 and sinks), a weight file that carries its task (no --L),
# the report folder (report.json with the input's SHA-256, report.md, the
# witness, the heat map's data), and bad input: one line, exit 2.
# Usage: check_cli_test.sh SINKCERT (from the source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

weights() {  # weights BETA [TASK-MEMBER]
  cat <<JSON
{"format": "sinkcert-weights", "version": 1, "kind": "single-layer", "attention": "softmax",
 "n": 5, "layers": 1, "heads": 1,
 "weights": [[{"A": [[0, 0, 0, 0, 0], [-$1, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                     [$1, 0, 0, 0, 0]],
               "M": [[0, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0],
                     [0, 0, 0, 0, 1]]}]]${2:+,
 $2}}
JSON
}
weights 10 > "$tmp/sink.json"
weights 10 '"task": {"L": 4, "trigger_range": "paper", "source": "hand-built sink family"}' \
  > "$tmp/sink_task.json"
# beta = 1: E = 3 / (e + 3) = 0.52, far from solving the task
weights 1 '"task": {"L": 4}' > "$tmp/weak.json"
S="$tmp/sink.json"
T="$tmp/sink_task.json"

expect 0 '^  -> solves the task: E <= 1\.36[0-9]*e-04 <= 5e-3 \(tolerance\), CERTIFIED$' \
  check --weights "$S" --L 4 --seconds 5 --out "$tmp/r1"
expect 0 '^worst-case bound: ENCLOSED, E <= 1\.36[0-9]e-04 \[CERTIFIED\]' \
  check --weights "$S" --L 4 --seconds 5 --out "$tmp/r1"
# 1 - min BOS at row 3 (three ordinary keys against e^beta on BOS): 3 / (e^10 + 3) = 1.3618e-4
expect 0 '^min BOS over the whole box: ENCLOSED, 1 - min BOS in \[1\.36[0-9]e-04, 1\.36[0-9]e-04\] \[CERTIFIED\]' \
  check --weights "$S" --L 4 --seconds 5 --out "$tmp/r1"
expect 0 '^  layer 0 head 0: mean 0\.999[0-9]*, min 0\.999[0-9]*$' \
  check --weights "$S" --L 4 --seconds 5 --out "$tmp/r1"
expect 0 'SEARCH\(lower bound\), CERTIFIED at its witness\] at trigger [1-3], row [1-3], coordinate [0-4]' \
  check --weights "$S" --L 4 --seconds 5 --out "$tmp/r1"
# no claim: never VERIFIED
"$bin" check --weights "$S" --L 4 --seconds 5 --out "$tmp/r1" > "$tmp/sum.txt" 2> "$tmp/err.txt"
grep -q 'VERIFIED' "$tmp/sum.txt" && fail "check printed VERIFIED without a claim"
grep -q '^\[ *[0-9.]* s\] check: ' "$tmp/err.txt" || fail "no progress lines on stderr"
grep -q '\] check: ' "$tmp/sum.txt" && fail "progress lines on stdout"
# the report folder
for f in report.json report.md witness.json attention_mean_std.dat attention_mean_std.gp; do
  [ -f "$tmp/r1/$f" ] || fail "check did not write $f"
done
digest=$(sha256sum "$S" | cut -c1-64)
grep -q "\"sha256\": \"$digest\"" "$tmp/r1/report.json" || fail "report.json lacks the input's SHA-256"
grep -q '"mpfr": ' "$tmp/r1/report.json" || fail "report.json lacks the library versions"
grep -q '"recipe_kernel": "[a-z]' "$tmp/r1/report.json" || fail "report.json lacks the recipe kernel"
grep -q '](attention_mean_std.png)' "$tmp/r1/report.md" || fail "report.md does not show the heat map"
# the witness re-checks with eval
expect 0 'l_inf error' eval --weights "$S" --input "$tmp/r1/witness.json"
# --json: the report on stdout
expect 0 '"solves_task": "solves the task"' check --weights "$S" --L 4 --seconds 3 --out "$tmp/r2" --json

# the task from the file: no --L needed; an agreeing --L is fine
expect 0 '^task: n = 5, L = 4, trigger range paper$' check --weights "$T" --seconds 3 --out "$tmp/r3"
expect 0 'L = 4 \(from the weight file\), trigger range paper \(from the weight file\)' \
  check --weights "$T" --seconds 3 --out "$tmp/r3"
expect 0 '^  -> solves the task' check --weights "$T" --L 4 --seconds 3 --out "$tmp/r3"
# a false claim must fail: beta = 1 does not solve the task
expect 0 '^  -> does not solve the task: E >= [0-9.e+-]* > 5e-3 \(tolerance\), CERTIFIED$' \
  check --weights "$tmp/weak.json" --seconds 3 --out "$tmp/r4"

# bad input: one line, exit 2
R='^sinkcert: error: command line: '
expect 2 "$R--L: the weight file's task\.L = 4 \(.*sink_task\.json; drop --L to use it\), got 5$" \
  check --weights "$T" --L 5
expect 2 "$R--trigger-range: the weight file's task\.trigger_range = paper \(.*; drop --trigger-range to use it\), got reference-code$" \
  check --weights "$T" --trigger-range reference-code
expect 2 "$R--L: required: expected the sequence length L \(.*sink\.json has no \"task\"" \
  check --weights "$S"
expect 2 "$R--weights: required: expected a file name$" check --L 4
expect 2 "$R--out: a folder outside results/" check --weights "$S" --L 4 --out results/x
expect 2 "$R--seconds: expected a number in \(0, 1000000\], got '0'$" \
  check --weights "$S" --L 4 --seconds 0
weights 10 '"task": {"L": 1}' > "$tmp/badL.json"
expect 2 'badL\.json: task\.L: expected an integer in \[2, 1024\]' check --weights "$tmp/badL.json"
weights 10 '"task": {"score_scale": -1}' > "$tmp/badscale.json"
expect 2 'badscale\.json: task\.score_scale: expected a number > 0' \
  check --weights "$tmp/badscale.json" --L 4
printf 'PK\003\004\000\000' > "$tmp/model.pt"
expect 2 "model\.pt looks like a PyTorch/numpy file: convert it first with python3 scripts/convert_pytorch\.py .*model\.pt .*model\.json$" \
  check --weights "$tmp/model.pt" --L 4
expect 2 "model\.pt looks like a PyTorch/numpy file" attack --weights "$tmp/model.pt" --L 4
[ "$(wc -l < "$tmp/out")" -eq 1 ] || fail "the PyTorch-file error is not one line"

finish check
