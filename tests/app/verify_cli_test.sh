#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `sinkcert verify relu`: exit codes (0 VERIFIED,
# 3 NOT VERIFIED, 2 bad input or NOT APPLICABLE), evidence labels, the JSON
# certificate written only on success. Usage: verify_cli_test.sh SINKCERT
# (run from the source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

# weights N ATTENTION SCALE CONTENT_SCORE: the construction as a weight file
# (A, M given), M = SCALE I, and A[3][2] = CONTENT_SCORE.
weights() {
  n=$1
  {
    printf '{"format": "sinkcert-weights", "version": 1, "kind": "single-layer",\n'
    printf ' "attention": "%s", "n": %d, "layers": 1, "heads": 1,\n' "$2" "$n"
    printf ' "weights": [[{"A": ['
    r=0
    while [ $r -lt "$n" ]; do
      c=0; printf '['
      while [ $c -lt "$n" ]; do
        v=0
        if [ $r -eq 1 ] && { [ $c -eq 1 ] || [ $c -eq $((n - 1)) ]; }; then v=1; fi
        if [ $r -eq 3 ] && [ $c -eq 2 ]; then v=$4; fi
        [ $c -gt 0 ] && printf ', '
        printf '%s' "$v"; c=$((c + 1))
      done
      printf ']'; r=$((r + 1)); [ $r -lt "$n" ] && printf ', '
    done
    printf '], "M": ['
    r=0
    while [ $r -lt "$n" ]; do
      c=0; printf '['
      while [ $c -lt "$n" ]; do
        v=0; [ $r -eq $c ] && v=$3
        [ $c -gt 0 ] && printf ', '
        printf '%s' "$v"; c=$((c + 1))
      done
      printf ']'; r=$((r + 1)); [ $r -lt "$n" ] && printf ', '
    done
    printf ']}]]}\n'
  }
}

expect 0 '^verdict: VERIFIED .*precision: exact  evidence: EXACT' verify relu --n 16 --L 16
expect 0 'j = 15: VERIFIED' verify relu --n 16 --L 16 --trigger-range reference-code
expect 0 'certificate written' verify relu --n 5 --L 4 --out "$tmp/cert.json"
grep -q '"verdict": "VERIFIED"' "$tmp/cert.json" || { echo "FAIL: certificate"; failures=$((failures + 1)); }
grep -q '"command_line": ".*verify relu --n 5 --L 4' "$tmp/cert.json" ||
  { echo "FAIL: certificate provenance"; failures=$((failures + 1)); }

weights 6 relu 1 0 > "$tmp/ok.json"
expect 0 '^verdict: VERIFIED' verify relu --weights "$tmp/ok.json" --L 5
weights 6 relu 1.25 0 > "$tmp/scaled.json"
expect 3 '^verdict: NOT VERIFIED .*= 1/4 ' verify relu --weights "$tmp/scaled.json" --L 5 \
  --out "$tmp/bad.json"
grep -q '"kind": "error"' "$tmp/bad.json" || { echo "FAIL: witness"; failures=$((failures + 1)); }
weights 6 relu-count-all 1 0 > "$tmp/count_all.json"
expect 3 '^verdict: NOT VERIFIED .*= 1/2 ' verify relu --weights "$tmp/count_all.json" --L 5
weights 6 relu 1 0.5 > "$tmp/content.json"
expect 2 '^verdict: NOT APPLICABLE: the scores depend on the content' verify relu --weights "$tmp/content.json" --L 5
weights 6 softmax 1 0 > "$tmp/softmax.json"
expect 2 '^verdict: NOT APPLICABLE: softmax attention' verify relu --weights "$tmp/softmax.json" --L 5
expect_not 2 'UNDECIDED|EXACT' verify relu --weights "$tmp/softmax.json" --L 5

# Bad input: exit 2, one line naming the field, no output file.
expect 2 '--L: L >= 3 under the reference-code' verify relu --n 5 --L 2 \
  --trigger-range reference-code --out "$tmp/none.json"
[ ! -e "$tmp/none.json" ] || { echo "FAIL: output written on error"; failures=$((failures + 1)); }
expect 2 '--trigger-range: expected paper or reference-code' verify relu --trigger-range foo
expect 2 '--n: expected an integer in \[3, ' verify relu --n 2
expect 2 "--n: the weight file's n = 6" verify relu --weights "$tmp/ok.json" --n 7
expect 2 'missing\.json: \(file\): expected a readable file' verify relu --weights "$tmp/missing.json"

finish verify
