# SPDX-License-Identifier: MIT
# Sourced by the CLI tests: a single-layer softmax model whose A and M are
# all zero at dimension N (uniform attention, zero output), as a weight file:
#   zero_model N FILE
zero_model() {
  row=$(printf '0, %.0s' $(seq $(($1 - 1))))0
  rows=$(printf "[$row], %.0s" $(seq $(($1 - 1))))"[$row]"
  printf '{"format": "sinkcert-weights", "version": 1, "kind": "single-layer",
 "attention": "softmax", "n": %s, "layers": 1, "heads": 1,
 "weights": [[{"A": [%s], "M": [%s]}]]}\n' "$1" "$rows" "$rows" > "$2"
}
