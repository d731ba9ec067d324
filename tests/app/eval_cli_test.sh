#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `sinkcert eval`: exit codes (0 ok, 2 bad input), the
# error naming file and field, evidence labels. Usage: eval_cli_test.sh SINKCERT
# (run from the source root, as ctest does).
set -u
bin="$1"
data=tests/data/numpy
. "$(dirname "$0")/cli_expect.sh"

W="$data/softmax_single.weights.json"
X="$data/softmax_single.input.json"
expect 0 'l_inf error .*\[NUMERIC\(53\)\] at position' eval --weights "$W" --input "$X"
expect 0 '"evidence": "NUMERIC\(53\)"' eval --weights "$W" --input "$X" --json
expect 0 'every number below is NUMERIC\(1[23][0-9]\)' eval --weights "$W" --input "$X" --precision 128
expect 0 'BOS mass a_i0' eval --weights "$W" --samples 50 --L 8 --trigger 7
expect 0 '"fixed_trigger": null' eval --weights "$W" --samples 20 --seed 3 \
  --L 16 --trigger-range reference-code --json
# Bad input: exit 2, naming file and field.
expect 2 'missing\.json: \(file\): expected a readable file' \
  eval --weights "$tmp/missing.json" --input "$X"
# Turn the first ordinary token (row 1) into a second trigger.
sed '0,/^    \[0\.0, 0\.0, \(.*\), 1\.0\],$/s//    [0.0, 1.0, \1, 0.0],/' "$X" > "$tmp/two.json"
expect 2 'two\.json: tokens\[[0-9]+\]\[1\]: a second trigger' eval --weights "$W" --input "$tmp/two.json"
expect 2 'tokens\[0\]: expected a row of 5 numbers' \
  eval --weights "$data/relu_single.weights.json" --input "$X"
expect 2 'expected exactly one of --input' eval --weights "$W" --input "$X" --samples 5
expect 2 'expected exactly one of --input' eval --weights "$W"
expect 2 'command line: --precision: expected "double" or a number of bits' \
  eval --weights "$W" --input "$X" --precision quad
expect 2 'command line: --precision' eval --weights "$W" --samples 5 --precision 100
expect 2 'command line: --seed: applies only with --samples' eval --weights "$W" --input "$X" --seed 1
expect 2 'command line: --trigger' eval --weights "$W" --samples 5 --L 8 --trigger 8
expect 2 'command line: --trigger' eval --weights "$W" --samples 5 --L 8 --fixed-trigger 8
expect 2 'command line: --L: .*no trigger position' \
  eval --weights "$W" --samples 5 --L 2 --trigger-range reference-code
expect 2 'command line: --trigger-range' eval --weights "$W" --samples 5 --trigger-range papr

finish eval
