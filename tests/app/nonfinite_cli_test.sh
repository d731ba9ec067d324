#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks that a NaN or infinity is never hidden. The model's
# scores x_i^T A x_k read A[1][0] = A[2][0] = 1e308, so a token with trigger
# flag 1 and content 1 scores 1e308 + 1e308 = inf in double on BOS; softmax
# then computes inf - inf = NaN and row 3 of the output is NaN. `eval` must
# print that NaN as the l_inf error at position 3, say so on stderr in one
# line and exit 5; --json must write "NaN" (never null); sampled statistics
# must report NaN max and mean; 256-bit MPFR (exponent range far beyond
# double) evaluates the same model and input to finite values, exit 0.
# Usage: nonfinite_cli_test.sh SINKCERT (from the source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

cat > "$tmp/w.json" <<'JSON'
{"format": "sinkcert-weights", "version": 1, "kind": "single-layer", "attention": "softmax",
 "n": 4, "layers": 1, "heads": 1,
 "weights": [[{"A": [[0, 0, 0, 0], [1e308, 0, 0, 0], [1e308, 0, 0, 0], [0, 0, 0, 0]],
               "M": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]}]]}
JSON
cat > "$tmp/x.json" <<'JSON'
{"format": "sinkcert-input", "version": 1,
 "tokens": [[1, 0, 0, 0], [0, 0, 0.5, 1], [0, 0, 1, 1], [0, 1, 1, 0]]}
JSON

# not_in FILE PATTERN: fail if PATTERN (grep -E) occurs in FILE.
not_in() {
  if grep -Eq -- "$2" "$1"; then
    echo "FAIL: '$2' found in output:"
    head -20 "$1"
    failures=$((failures + 1))
  fi
}

expect 5 'l_inf error max_\{i,d\} \|f\(X\) - y\| = NaN \[NUMERIC\(53\)\] at position 3, coordinate 0' \
  eval --weights "$tmp/w.json" --input "$tmp/x.json"
expect 5 '^sinkcert: error: non-finite value in the output at position 3, coordinate 0: NaN; NUMERIC\(53\) cannot evaluate this model here, try --precision BITS or --certify$' \
  eval --weights "$tmp/w.json" --input "$tmp/x.json"
# stderr is exactly that one line
"$bin" eval --weights "$tmp/w.json" --input "$tmp/x.json" > /dev/null 2> "$tmp/err"
[ "$(wc -l < "$tmp/err")" -eq 1 ] || { echo "FAIL: stderr is not one line:"; cat "$tmp/err"; failures=$((failures + 1)); }

expect 5 '"value": "NaN"' eval --weights "$tmp/w.json" --input "$tmp/x.json" --json
"$bin" eval --weights "$tmp/w.json" --input "$tmp/x.json" --json > "$tmp/doc.json" 2> /dev/null
not_in "$tmp/doc.json" 'null|nan[^a-z_]|NaN[^"]'
grep -q '"non_finite"' "$tmp/doc.json" || { echo "FAIL: no non_finite field"; failures=$((failures + 1)); }

# Sampled statistics: triggers with content above 0.8 overflow (seed fixed).
expect 5 '^  max NaN \(probe [0-9]+, trigger 3, position 3, coordinate 0\)$' \
  eval --weights "$tmp/w.json" --samples 50 --L 4 --fixed-trigger 3
expect 5 '^  mean NaN$' eval --weights "$tmp/w.json" --samples 50 --L 4 --fixed-trigger 3
expect 5 'non-finite value in the output of probe [0-9]+ \(trigger 3\) at position 3, coordinate 0: NaN' \
  eval --weights "$tmp/w.json" --samples 50 --L 4 --fixed-trigger 3
"$bin" eval --weights "$tmp/w.json" --samples 50 --L 4 --fixed-trigger 3 --json > "$tmp/st.json" 2> /dev/null
grep -q '"max": "NaN"' "$tmp/st.json" || { echo "FAIL: statistics JSON max"; failures=$((failures + 1)); }
grep -q '"mean": "NaN"' "$tmp/st.json" || { echo "FAIL: statistics JSON mean"; failures=$((failures + 1)); }
not_in "$tmp/st.json" 'null,|nan[^a-z_]'

# MPFR's exponent range holds 2e308: finite, exit 0 (the error 1 is the
# BOS row's output e_0 against target 0, first at position 0).
expect 0 'l_inf error max_\{i,d\} \|f\(X\) - y\| = 1 \[NUMERIC\(25[0-9]\)\] at position 0' \
  eval --weights "$tmp/w.json" --input "$tmp/x.json" --precision 256
"$bin" eval --weights "$tmp/w.json" --input "$tmp/x.json" --precision 256 > "$tmp/mpfr" 2>&1
not_in "$tmp/mpfr" ' -?(nan|inf)( |$)|NaN|Infinity'

finish nonfinite
