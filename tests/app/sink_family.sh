# SPDX-License-Identifier: MIT
# Sourced by the CLI tests of the box bounds: the sink family at n = 5 as a
# weight file,
#   sink_family KIND BETA   A[4][0] = BETA, A[1][0] = -BETA, M = I except
#                           M[0][0] = 0; KIND single-layer or residual
# (its worst-case loss is 3 / (e^BETA + 3) at L = 4, and so is 1 - min BOS).
sink_family() {
  cat <<JSON
{"format": "sinkcert-weights", "version": 1, "kind": "$1", "attention": "softmax",
 "n": 5, "layers": 1, "heads": 1,
 "weights": [[{"A": [[0, 0, 0, 0, 0], [-$2, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                     [$2, 0, 0, 0, 0]],
               "M": [[0, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0],
                     [0, 0, 0, 0, 1]]}]]}
JSON
}
