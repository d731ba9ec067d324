# SPDX-License-Identifier: MIT
# Sourced by the CLI tests: a single-layer softmax model at n = 5 whose A and
# M entries are drawn uniformly from [-1, 1] (3 decimals, Python's random
# with seed 5), as a weight file:
#   random_model FILE
random_model() {
  python3 -c '
import json, random, sys
random.seed(5)
m = lambda: [[round(random.uniform(-1, 1), 3) for _ in range(5)] for _ in range(5)]
json.dump({"format": "sinkcert-weights", "version": 1, "kind": "single-layer",
           "attention": "softmax", "n": 5, "layers": 1, "heads": 1,
           "weights": [[{"A": m(), "M": m()}]]}, open(sys.argv[1], "w"))' "$1"
}
