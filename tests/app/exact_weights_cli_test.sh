#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks that every claim is about the exact model a file denotes
# (README "What a number means"). Files, n = 5, L = 4, W_V = W_O = I:
#   lost.json  factored ReLU head whose exact A[1][2] = 1 + 2^-60 - 1 + 1 - 1
#              = 2^-60 (a double product loses it): E >= 2^-60 at trigger 1,
#              content all +1, so a claim E <= 1e-30 is NOT VERIFIED;
#   kept.json  factored ReLU head whose exact A[1][2] = 1 - 1 + 2^-60 - 2^-60
#              = 0 (a double product in Eigen's order gives -2^-60): the
#              Theorem 3 construction, E = 0, VERIFIED by verify relu and by
#              verify bound alike;
#   tiny.json  products, A[1][2] = 1e-400 (0 in double), M = 1.00000000000000001 I
#              (I in double): not the construction, so never VERIFIED EXACT.
# And an input file whose content entry 1e-400 is a double 0: the certified
# evaluation sees the exact value. Usage: exact_weights_cli_test.sh SINKCERT.
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

eps="8.67361737988403547205962240695953369140625e-19"  # 2^-60, exactly
# factored NAME Q0 Q1 Q2 Q3 Q4 K0 K1 K2 K3 K4: W_Q column 1 = Q, W_K column 2
# = K, W_K[0][1] = W_K[0][4] = 1, everything else 0.
factored() {
  name=$1
  shift
  q0=$1 q1=$2 q2=$3 q3=$4 q4=$5 k0=$6 k1=$7 k2=$8 k3=$9
  shift 9
  k4=$1
  cat > "$tmp/$name" <<JSON
{"format": "sinkcert-weights", "version": 1, "kind": "single-layer", "attention": "relu",
 "n": 5, "layers": 1, "heads": 1,
 "weights": [[{
   "W_Q": [[0, $q0, 0, 0, 0], [0, $q1, 0, 0, 0], [0, $q2, 0, 0, 0], [0, $q3, 0, 0, 0], [0, $q4, 0, 0, 0]],
   "W_K": [[0, 1, $k0, 0, 1], [0, 0, $k1, 0, 0], [0, 0, $k2, 0, 0], [0, 0, $k3, 0, 0], [0, 0, $k4, 0, 0]],
   "W_V": [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]],
   "W_O": [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]]}]]}
JSON
}
factored lost.json 1 "$eps" 1 1 1 1 1 -1 1 -1
factored kept.json 1 1 "$eps" 0 "$eps" 1 -1 1 0 -1
m="1.00000000000000001"
cat > "$tmp/tiny.json" <<JSON
{"format": "sinkcert-weights", "version": 1, "kind": "single-layer", "attention": "relu",
 "n": 5, "layers": 1, "heads": 1,
 "weights": [[{
   "A": [[0, 0, 0, 0, 0], [0, 1, 1e-400, 0, 1], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]],
   "M": [[$m, 0, 0, 0, 0], [0, $m, 0, 0, 0], [0, 0, $m, 0, 0], [0, 0, 0, $m, 0], [0, 0, 0, 0, $m]]}]]}
JSON
cat > "$tmp/x.json" <<JSON
{"format": "sinkcert-input", "tokens": [[1, 0, 0, 0, 0], [0, 1, 1, 1, 0], [0, 0, 1, 1, 1], [0, 0, 1, 1, 1]]}
JSON
cat > "$tmp/x_tiny.json" <<JSON
{"format": "sinkcert-input", "tokens": [[1, 0, 0, 0, 0], [0, 1, 1e-400, 0.5, 0], [0, 0, 1, 1, 1], [0, 0, 1, 1, 1]]}
JSON

# lost.json: the exact model has E = 2^-60 > 1e-30
expect 3 '^verdict: NOT VERIFIED' verify bound --weights "$tmp/lost.json" --L 4 --claim 1e-30
expect 3 '^E >= 8\.6736[0-9]*e-19  \[CERTIFIED\] witness' \
  verify bound --weights "$tmp/lost.json" --L 4 --claim 1e-30
expect 2 '^verdict: NOT APPLICABLE: the scores depend on the content' verify relu --weights "$tmp/lost.json" --L 4
# its certified error at trigger 1, content +1 encloses 2^-60, not 0
# (2^-60 = 8.67361737988403547205962240695953...e-19; 30 digits certified)
expect 0 'e\(X\) in \[8\.673617379884035472059622406959[0-9]*e-19, 8\.67361737988403547205962240695[0-9]*e-19\]' \
  eval --weights "$tmp/lost.json" --input "$tmp/x.json" --certify 30
# kept.json: the construction, exactly; both checkers agree
expect 0 '^verdict: VERIFIED' verify relu --weights "$tmp/kept.json" --L 4
expect 0 '^verdict: VERIFIED' verify bound --weights "$tmp/kept.json" --L 4 --claim 1e-19
# tiny.json: not the construction (E is about 1e-17): never VERIFIED EXACT
expect 2 '^verdict: NOT APPLICABLE' verify relu --weights "$tmp/tiny.json" --L 4
expect 3 '^verdict: NOT VERIFIED' verify bound --weights "$tmp/tiny.json" --L 4 --claim 1e-18
# an input's 1e-400 is 1e-400, not the double 0: on lost.json with the
# trigger at 1, e(X) = A[1][2] x_1[2] x_1[1] = 2^-60 * 1e-400 (at position 1)
expect 0 'e\(X\) in \[8\.673617379[0-9]*e-419, 8\.673617379[0-9]*e-419\]' \
  eval --weights "$tmp/lost.json" --input "$tmp/x_tiny.json" --certify 10

finish "exact weights"
