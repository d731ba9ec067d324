#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `sinkcert attack` on the sink family at beta = 10,
# n = 5, L = 4, whose worst-case loss is E = 3 / (e^10 + 3) = 1.3618124e-4,
# attained at every input (the error does not depend on the content), and
# whose smallest non-trigger BOS mass is e^10 / (e^10 + 3) = 0.99986382: the
# attack finds both (certified, printed rounded in the bound's direction),
# writes a witness that `eval --input` reproduces digit for digit, gives the
# same result for the same seed, and refuses bad input with one line and
# exit 2. Usage: attack_cli_test.sh SINKCERT (from the source root, as ctest
# does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

cat > "$tmp/sink.json" <<JSON
{"format": "sinkcert-weights", "version": 1, "kind": "single-layer", "attention": "softmax",
 "n": 5, "layers": 1, "heads": 1,
 "weights": [[{"A": [[0, 0, 0, 0, 0], [-10, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                     [10, 0, 0, 0, 0]],
               "M": [[0, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0],
                     [0, 0, 0, 0, 1]]}]]}
JSON
# the ReLU construction of Theorem 3 at n = 5 (A = e_1 (e_4 + e_1)^T, M = I):
# worst case exactly 0
cat > "$tmp/relu.json" <<JSON
{"format": "sinkcert-weights", "version": 1, "kind": "single-layer", "attention": "relu",
 "n": 5, "layers": 1, "heads": 1,
 "weights": [[{"A": [[0, 0, 0, 0, 0], [0, 1, 0, 0, 1], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                     [0, 0, 0, 0, 0]],
               "M": [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0],
                     [0, 0, 0, 0, 1]]}]]}
JSON
S="$tmp/sink.json"

# the closed forms, rounded down (error) and up (BOS mass) to 6 digits
expect 0 '^worst case found: E >= 1\.36181e-04 SEARCH\(lower bound\)$' attack --weights "$S" --L 4
expect 0 '^  j =  1: 1\.36181e-04 at row i = 3, coordinate d = [2-3] ' attack --weights "$S" --L 4
expect 0 '^smallest non-trigger BOS mass found: min a_i0 <= 9\.99863818758[6-7]e-01 SEARCH\(upper bound\)$' \
  attack --weights "$S" --L 4 --bos
expect 0 '^worst case found: E >= 0\.00000e\+00 SEARCH\(lower bound\)$' attack --weights "$tmp/relu.json" --L 4
expect 0 '"evidence": "SEARCH\(lower bound\)"' attack --weights "$S" --L 4 --json
expect 0 '"trigger_range": "reference-code"' \
  attack --weights "$S" --L 4 --json --trigger-range reference-code

# the witness round trip: eval prints the double value attack printed
"$bin" attack --weights "$S" --L 4 --out "$tmp/w.json" > "$tmp/attack.txt" 2>&1 ||
  fail "attack --out exited $?"
value=$(sed -n 's/^.*; double value \([^ ]*\) NUMERIC(53).*$/\1/p' "$tmp/attack.txt")
[ -n "$value" ] || fail "attack printed no double value"
expect 0 "^l_inf error max_\{i,d\} \|f\(X\) - y\| = $value \[NUMERIC\(53\)\]" \
  eval --weights "$S" --input "$tmp/w.json"
# same seed, same result (apart from the timing line)
"$bin" attack --weights "$S" --L 4 --seed 7 | grep -v '^search:' > "$tmp/a1.txt"
"$bin" attack --weights "$S" --L 4 --seed 7 | grep -v '^search:' > "$tmp/a2.txt"
cmp -s "$tmp/a1.txt" "$tmp/a2.txt" || fail "attack --seed 7 gave two different results"
# a time budget runs more rounds and says so
expect 0 '^search: ([2-9]|[1-9][0-9]+) round\(s\)' attack --weights "$S" --L 4 --seconds 0.5

# bad input: one line, exit 2
R='^sinkcert: error: command line: '
expect 2 "$R--weights: required: expected a file name$" attack --L 4
expect 2 "$R--L: required: expected the sequence length L \(.*sink\.json has no \"task\"" \
  attack --weights "$S"
expect 2 "$R--L: expected an integer in \[2, 1024\], got '1'$" attack --weights "$S" --L 1
expect 2 "$R--L: expected an integer in \[2, [0-9]+\] for this model \(n = 5; one round" \
  attack --weights "$S" --L 1000
expect 2 "$R--seconds: expected a number in \(0, 1000000\], got '0'$" \
  attack --weights "$S" --L 4 --seconds 0
expect 2 "$R--trigger-range: expected paper or reference-code, got 'papr'$" \
  attack --weights "$S" --L 4 --trigger-range papr
expect 2 "$R--L: L >= 3 under the reference-code convention" \
  attack --weights "$S" --L 2 --trigger-range reference-code
expect 2 "$R--seed: expected an integer in \[0, 18446744073709551615\], got '-1'$" \
  attack --weights "$S" --L 4 --seed -1
expect 2 'missing\.json: \(file\): expected a readable file' \
  attack --weights "$tmp/missing.json" --L 4
expect 2 '^sinkcert: error: --out: /dev/null' attack --weights "$S" --L 4 --out /dev/null
for f in "$tmp/out"; do
  [ "$(wc -l < "$f")" -eq 1 ] || fail "the /dev/null error is not one line"
done

finish attack
