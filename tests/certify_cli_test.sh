#!/bin/sh
# sinkcert eval --certify end to end: enclosures labelled CERTIFIED, the
# precision needed, exit code 2 on bad digits or with --samples.
# Usage: certify_cli_test.sh path/to/sinkcert  (run from the source root)
set -u
bin="$1"
w=tests/data/numpy/softmax_single.weights.json
x=tests/data/numpy/softmax_single.input.json
fail() { echo "FAIL: $*"; exit 1; }
out=$("$bin" eval --weights "$w" --input "$x" --certify 15) || fail "exit code $?"
echo "$out" | grep -q "bits needed for 15 digits" || fail "no precision line: $out"
echo "$out" | grep -q "l_inf error e(X) in \[1.42096723702242[0-9]*e+00, 1.42096723702242[0-9]*e+00\] \[CERTIFIED\]" \
  || fail "error enclosure: $out"
"$bin" eval --weights "$w" --input "$x" --certify 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--certify 0 must exit 2"
"$bin" eval --weights "$w" --samples 3 --certify 5 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--certify with --samples must exit 2"
json=$("$bin" eval --weights "$w" --input "$x" --certify 10 --json) || fail "json exit $?"
echo "$json" | grep -q '"evidence": "CERTIFIED"' || fail "json evidence: $json"
echo "all certify CLI checks passed"
