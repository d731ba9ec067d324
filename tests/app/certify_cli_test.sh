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
# the sink family at beta = 1000 (n = 6): the error, 3 / (e^1000 + 3) ~ 1.5e-434,
# is below double's range; its location (row 3, content coordinate 2, the only
# coordinate with content 1) must be found in MPFR, not through a double
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/sink1000.json" <<'JSON'
{"format": "sinkcert-weights", "version": 1, "kind": "single-layer", "attention": "softmax",
 "n": 6, "layers": 1, "heads": 1,
 "weights": [[{"A": [[0, 0, 0, 0, 0, 0], [-1000, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0],
                     [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [1000, 0, 0, 0, 0, 0]],
               "M": [[0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0],
                     [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]]}]]}
JSON
cat > "$tmp/x1000.json" <<'JSON'
{"format": "sinkcert-input", "tokens": [[1, 0, 0, 0, 0, 0], [0, 1, 1, 0.5, 0.5, 0],
 [0, 0, 1, 0.5, 0.5, 1], [0, 0, 1, 0.5, 0.5, 1]]}
JSON
out=$("$bin" eval --weights "$tmp/sink1000.json" --input "$tmp/x1000.json" --certify 3) \
  || fail "beta 1000 exit code $?"
echo "$out" | grep -q "l_inf error e(X) in \[1.5227e-434, 1.5228e-434\] \[CERTIFIED\] at position 3, coordinate 2" \
  || fail "location below 1e-308: $out"
json=$("$bin" eval --weights "$w" --input "$x" --certify 10 --json) || fail "json exit $?"
echo "$json" | grep -q '"evidence": "CERTIFIED"' || fail "json evidence: $json"
echo "all certify CLI checks passed"
