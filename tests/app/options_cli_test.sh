#!/bin/sh
# SPDX-License-Identifier: MIT
# Hostile command lines: every bad option value, size beyond the limits of
# src/limits.h, unknown subcommand or option and missing value must give
# exit code 2, exactly one line on stderr (matching the pattern, which names
# the option and the valid range), nothing on stdout, and leave no file
# behind (each case runs in an empty directory, with --out pointing there
# where the command has one). Usage: options_cli_test.sh SINKCERT (from the
# source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

W="$PWD/tests/data/numpy/softmax_single.weights.json"  # n = 6
X="$PWD/tests/data/numpy/softmax_single.input.json"
mkdir "$tmp/run"

# bad PATTERN ARGS...: run in $tmp/run; exit 2, stderr one line matching
# "^sinkcert: error: PATTERN", stdout empty, $tmp/run still empty.
bad() {
  pattern=$1
  shift
  (cd "$tmp/run" && "$bin" "$@" > "$tmp/out" 2> "$tmp/err")
  rc=$?
  lines=$(wc -l < "$tmp/err")
  left=$(ls -A "$tmp/run")
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || [ -s "$tmp/out" ] || [ -n "$left" ] ||
    ! grep -Eq -- "^sinkcert: error: $pattern" "$tmp/err"; then
    echo "FAIL: sinkcert $* -> exit $rc (want 2), $lines stderr line(s) (want 1), pattern '$pattern'"
    echo "  stderr:"; head -5 "$tmp/err"
    [ -s "$tmp/out" ] && { echo "  stdout:"; head -5 "$tmp/out"; }
    [ -n "$left" ] && echo "  left behind: $left"
    rm -rf "$tmp/run" && mkdir "$tmp/run"
    failures=$((failures + 1))
  fi
}

R='command line: '
SEED='expected an integer in \[0, 18446744073709551615\]'
S="eval --weights $W --samples 5 --L 16"

# --seed: decimal digits in [0, 2^64 - 1], no sign, no wrap-around
bad "$R--seed: $SEED, got '-1'$" $S --seed -1
bad "$R--seed: $SEED, got '18446744073709551616'$" $S --seed 18446744073709551616
bad "$R--seed: $SEED, got '99999999999999999999999'$" $S --seed 99999999999999999999999
bad "$R--seed: $SEED, got '1e3'$" $S --seed 1e3
bad "$R--seed: $SEED, got '\+5'$" $S --seed +5
bad "$R--seed: $SEED, got ''$" $S --seed ''
bad "$R--seed: $SEED, got '-1'$" theorem1 --seed -1 --out out
# verify bound: --claim finite >= 0, --gap finite > 0, --seconds, --bits, --L
B="verify bound --weights $W --L 4"
bad "$R--claim: expected a finite number >= 0, got 'nan'$" $B --claim nan
bad "$R--claim: expected a finite number >= 0, got '-1'$" $B --claim -1
bad "$R--claim: expected a finite number >= 0, got 'inf'$" $B --claim inf
bad "$R--claim: expected a finite number >= 0, got '1e400'$" $B --claim 1e400
bad "$R--claim: expected a finite number >= 0, got '0x1p-3'$" $B --claim 0x1p-3
bad "$R--gap: expected a finite number > 0, got '0'$" $B --gap 0
bad "$R--gap: expected a finite number > 0, got 'NaN'$" $B --gap NaN
bad "$R--seconds: expected a number in \(0, 1000000\], got '1e7'$" $B --seconds 1e7
bad "$R--seconds: expected a number in \(0, 1000000\], got 'inf'$" $B --seconds inf
bad "$R--bits: expected an integer in \[53, 8192\], got '1e8'$" $B --bits 1e8
bad "$R--bits: expected an integer in \[53, 8192\], got '100000000'$" $B --bits 100000000
bad "$R--bits: expected an integer in \[53, 8192\], got '52'$" $B --bits 52
bad "$R--L: expected an integer in \[2, 1024\], got '2147483647'$" verify bound --weights "$W" --L 2147483647
bad "$R--L: required: expected the sequence length L \($W has no \"task\"" verify bound --weights "$W"
bad "$R--weights: required: expected a file name$" verify bound --L 4
# verify relu: --n, --L
bad "$R--L: expected an integer in \[2, 1024\], got '2147483647'$" verify relu --L 2147483647 --out cert.json
bad "$R--L: expected an integer in \[2, 1024\], got '100000'$" verify relu --L 100000 --out cert.json
bad "$R--L: expected an integer in \[2, 1024\], got '1'$" verify relu --L 1
bad "$R--n: expected an integer in \[3, 256\], got '100000'$" verify relu --n 100000 --out cert.json
bad "$R--n: expected an integer in \[3, 256\], got '2'$" verify relu --n 2
bad "$R--n: expected an integer in \[3, 256\], got '16.5'$" verify relu --n 16.5
bad "$R--n: expected an integer in \[3, 256\], got '0x10'$" verify relu --n 0x10
bad "$R--trigger-range: expected paper or reference-code, got 'papr'$" verify relu --trigger-range papr
# theorem1: --n and --L within their caps. The search's memory (P x P
# matrices, P = 2 n^2, times the searches at once; not a dense Jacobian of
# 160 (L - 1) L n^3 bytes, which refused n = 32 beyond L = 29) fits at every
# such size and --threads, so n = 32, L = 64 on 64 threads passes to the
# --out check, the last before the study starts
bad "$R--n: expected an integer in \[3, 32\], got '100000'$" theorem1 --n 100000 --out out
bad "$R--L: expected an integer in \[2, 64\], got '65'$" theorem1 --L 65 --out out
bad "--out: /dev/null: exists as a character device" theorem1 --n 32 --L 64 --threads 64 --out /dev/null
# eval
bad "$R--samples: expected an integer in \[1, 10000000\], got '2147483647'$" eval --weights "$W" --samples 2147483647
bad "$R--samples: expected an integer in \[1, 10000000\], got '0'$" eval --weights "$W" --samples 0
bad "$R--samples: expected an integer in \[1, [0-9]+\] for this model at L = 1024 " eval --weights "$W" --samples 10000000 --L 1024
bad "$R--L: expected an integer in \[2, 1024\], got '2147483647'$" eval --weights "$W" --samples 5 --L 2147483647
bad "$R--fixed-trigger: expected an integer in \[1, 1023\], got '0'$" $S --fixed-trigger 0
bad "$R--trigger: expected an integer in \[1, 7\] \(a 0-indexed position of L = 8\), got 8$" eval --weights "$W" --samples 5 --L 8 --trigger 8
bad "$R--certify: expected an integer in \[1, 1000\], got '0'$" eval --weights "$W" --input "$X" --certify 0
bad "$R--certify: expected an integer in \[1, 1000\], got '1001'$" eval --weights "$W" --input "$X" --certify 1001
bad "$R--precision: expected \"double\" or a number of bits in \[2, 65536\], got '1e8'$" eval --weights "$W" --input "$X" --precision 1e8
bad "$R--precision: expected \"double\" or a number of bits in \[2, 65536\], got '65537'$" eval --weights "$W" --input "$X" --precision 65537
bad "$R--weights: required: expected a file name$" eval --samples 5
# Work caps that depend on the model (limits.h). big.json: 16 layers of 16
# heads at n = 16 (A = M = 0); heads.json: one layer of 16 ReLU heads, n = 3.
awk 'BEGIN {
  n = 16; z = "["; for (c = 0; c < n; c++) z = z (c ? ", " : "") "0"; z = z "]";
  m = "["; for (r = 0; r < n; r++) m = m (r ? ", " : "") z; m = m "]";
  h = "{\"A\": " m ", \"M\": " m "}";
  l = "["; for (k = 0; k < 16; k++) l = l (k ? ", " : "") h; l = l "]";
  w = "["; for (k = 0; k < 16; k++) w = w (k ? ", " : "") l; w = w "]";
  printf "{\"format\": \"sinkcert-weights\", \"version\": 1, \"kind\": \"residual\", ";
  printf "\"attention\": \"softmax\", \"n\": 16, \"layers\": 16, \"heads\": 16, \"weights\": %s}\n", w
}' > "$tmp/big.json"
tokens() {
  awk -v L="$1" 'BEGIN {
  printf "{\"format\": \"sinkcert-input\", \"tokens\": [[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]";
  for (i = 1; i < L; i++) {
    t = (i == 1); printf ", [0, %d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, %d]", t, 1 - t
  }
  printf "]}\n"
  }'
}
tokens 1024 > "$tmp/long.json"
tokens 64 > "$tmp/x64.json"
awk 'BEGIN {
  h = "{\"A\": [[0, 0, 0], [0, 1, 1], [0, 0, 0]], \"M\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}";
  l = "["; for (k = 0; k < 16; k++) l = l (k ? ", " : "") h; l = l "]";
  printf "{\"format\": \"sinkcert-weights\", \"version\": 1, \"kind\": \"single-layer\", ";
  printf "\"attention\": \"relu\", \"n\": 3, \"layers\": 1, \"heads\": 16, \"weights\": [%s]}\n", l
}' > "$tmp/heads.json"
bad "$R--L: expected an integer in \[2, 406\] for a model of 16 heads" \
  verify relu --weights "$tmp/heads.json" --L 500 --out cert.json
bad "$R--samples: expected an integer in \[1, 190\] for this model at L = 64 " \
  eval --weights "$tmp/big.json" --samples 1000 --L 64
bad "$tmp/long.json: tokens: at most L = [0-9]+ rows for this model" \
  eval --weights "$tmp/big.json" --input "$tmp/long.json"
bad "$R--precision: expected \"double\" for this model and input" \
  eval --weights "$tmp/big.json" --input "$tmp/x64.json" --precision 65536
# Memory exhausted anyway (here by a 200 MB address-space limit): exit 2 and
# the last line names what was being computed, not "internal error".
# Skipped under AddressSanitizer, which needs terabytes of address space.
if ! grep -q __asan_init "$bin"; then
  (cd "$tmp/run" && ulimit -v 200000 &&
    "$bin" eval --weights "$W" --samples 1000000 --L 16 > "$tmp/out" 2> "$tmp/err")
  rc=$?
  if [ "$rc" -ne 2 ] || ! tail -1 "$tmp/err" | grep -q '^sinkcert: error: out of memory while computing the probe set and its statistics (--samples, --L)'; then
    echo "FAIL: out of memory -> exit $rc (want 2):"; cat "$tmp/err"; failures=$((failures + 1))
  fi
fi

# CLI11's own errors, one line each
bad "unknown subcommand 'frobnicate'; expected one of eval, verify, theorem1, theorem2, appendix, attack, sweep, figures, normalizations, row1-below, check, completion$" frobnicate
bad "unknown subcommand 'frob' of 'verify'; expected one of relu, bound, bos$" verify frob
# bare sinkcert: the usage on stdout, one error line, exit 2
(cd "$tmp/run" && "$bin" > "$tmp/out" 2> "$tmp/err")
rc=$?
[ "$rc" -eq 2 ] || fail "bare sinkcert: exit $rc (want 2)"
grep -q '^Usage' "$tmp/out" || fail "bare sinkcert: no usage on stdout"
[ "$(wc -l < "$tmp/err")" -eq 1 ] &&
  grep -q "^sinkcert: error: missing subcommand; expected one of eval, verify, theorem1, theorem2, appendix, attack, sweep, figures, normalizations, row1-below, check, completion$" "$tmp/err" ||
  fail "bare sinkcert: stderr: $(cat "$tmp/err")"
bad "missing subcommand of 'verify'; expected one of relu, bound, bos$" verify
bad "unknown option '--frob'; expected one of eval, verify, theorem1, theorem2, appendix, attack, sweep, figures, normalizations, row1-below, check, completion$" --frob
bad "unknown option '--frob' of 'eval'; see sinkcert eval --help$" $S --frob
bad "unexpected argument 'junk' of 'verify relu'; see sinkcert verify relu --help$" verify relu junk
bad "$R--samples: expected a value \(an integer in \[1, 10000000\]\), got none$" eval --weights "$W" --samples
bad "$R--n: expected a value \(an integer in \[3, 256\]\), got none$" verify relu --n
bad "$R--seed: given more than once$" $S --seed 1 --seed 2
bad "$R--out: expected a value \(a file name\), got none$" verify relu --out
bad "$R--out: expected a value \(a folder name\), got none$" theorem1 --out
bad "$R--out: expected a value \(a folder name\), got none$" appendix --out
bad "$R--out: given more than once$" theorem1 --out a --out b
bad "$R--json: expected no value \(a flag\), got 'maybe'$" $S --json=maybe

finish options
