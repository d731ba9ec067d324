#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `sinkcert verify relu` on residual models of several
# layers and heads: the committed 2 x 2 and 4 x 4 constructions
# (results/theorem3/) VERIFIED EXACT and identical to what --write-weights
# writes now; a model breaking the conditions NOT APPLICABLE naming layer, head
# and entry; a perturbed one NOT VERIFIED with a witness that
# tests/app/relu_witness_check.py re-evaluates in exact fractions and through
# `eval --input`; --coq refused for several layers; option errors.
# Usage: deep_relu_cli_test.sh SINKCERT (run from the source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"
py=/usr/bin/python3
dir=results/theorem3

for shape in 2x2 4x4; do
  layers=${shape%x*} heads=${shape#*x}
  committed="$dir/relu_residual_${shape}_n16.weights.json"
  expect 0 '^verdict: VERIFIED .*= 0  precision: exact  evidence: EXACT' \
    verify relu --weights "$committed" --L 16
  expect 0 '^verdict: VERIFIED .*evidence: EXACT' verify relu --weights "$committed" --L 16 \
    --trigger-range reference-code
  expect 0 "weights written to" verify relu --n 16 --L 16 --layers "$layers" --heads "$heads" \
    --write-weights "$tmp/$shape.json"
  "$py" -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = ["format", "version", "kind", "attention", "n", "layers", "heads", "weights"]
sys.exit(0 if all(a[k] == b[k] for k in keys) else 1)' "$committed" "$tmp/$shape.json" ||
    fail "$committed differs from what verify relu --write-weights writes"
done

# Break the conditions: layer 0, head 1 writes into the trigger flag.
"$py" -c '
import json, sys
w = json.load(open(sys.argv[1]))
w["weights"][0][1]["M"][1][2] = 0.25
json.dump(w, open(sys.argv[2], "w"))' "$dir/relu_residual_2x2_n16.weights.json" "$tmp/flag.json"
expect 2 'verdict: NOT APPLICABLE: a head writes into a flag coordinate before the last layer \(layer 0, head 1: M\[1\]\[2\] = 1/4 != 0' \
  verify relu --weights "$tmp/flag.json" --L 6
# ... or layer 1, head 0 reads the key's content.
"$py" -c '
import json, sys
w = json.load(open(sys.argv[1]))
w["weights"][1][0]["A"][1][5] = -3
json.dump(w, open(sys.argv[2], "w"))' "$dir/relu_residual_2x2_n16.weights.json" "$tmp/content.json"
expect 2 "layer 1, head 0: A\[1\]\[5\] = -3/1 != 0 puts the key's content coordinate 5" \
  verify relu --weights "$tmp/content.json" --L 6

# Perturb: layer 0, head 1 adds 1001/1000 of its share of the content mean.
"$py" -c '
import json, sys
w = json.load(open(sys.argv[1]))
M = w["weights"][0][1]["M"]
for c in range(2, len(M) - 1):
    M[c][c] = "0.5005"
json.dump(w, open(sys.argv[2], "w"))' "$dir/relu_residual_2x2_n16.weights.json" "$tmp/perturbed.json"
# (1/2000) (L - 2) / (L - 1) at L = 6: 1/2500
expect 3 '^verdict: NOT VERIFIED .*= 1/2500 ' verify relu --weights "$tmp/perturbed.json" --L 6 \
  --out "$tmp/perturbed_cert.json"
"$py" tests/app/relu_witness_check.py "$tmp/perturbed.json" "$tmp/perturbed_cert.json" "$bin" ||
  fail "the witness of the perturbed 2 x 2 model does not re-evaluate"
# The checker must fail on a wrong certificate: the same witness against the
# unperturbed model (whose error is 0) is rejected.
"$py" tests/app/relu_witness_check.py "$dir/relu_residual_2x2_n16.weights.json" \
  "$tmp/perturbed_cert.json" "$bin" > "$tmp/wrong" 2>&1 &&
  fail "relu_witness_check.py accepted a witness for the wrong model"

# Coq covers one layer: the certificate is not written, and says why.
expect 0 'Coq certificate: not written \(the model has 2 layers; the Coq statement covers one layer\)' \
  verify relu --n 5 --L 4 --layers 2 --heads 2 --coq "$tmp/deep.v"
[ ! -e "$tmp/deep.v" ] || fail "a Coq file was written for a 2-layer model"

# Option errors: exit 2, one line.
expect 2 '--layers/--heads: expected no --weights' \
  verify relu --weights "$dir/relu_residual_2x2_n16.weights.json" --layers 2
expect 2 '--layers: expected an integer in \[1, 16\]' verify relu --layers 0
expect 2 "--L: expected an integer in \\[2, 17\\] for a model of 4 layer\\(s\\) x 4 heads at n = 16" \
  verify relu --n 16 --L 64 --layers 4 --heads 4
expect 2 '--L: expected a smaller model: the exact check of 16 layer\(s\) x 16 heads at n = 256 exceeds' \
  verify relu --n 256 --L 1024 --layers 16 --heads 16

finish deep_relu
