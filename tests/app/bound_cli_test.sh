#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `sinkcert verify bound`: the sink family at beta = 10,
# n = 5, L = 4, whose worst-case loss is E = 3 / (e^10 + 3) = 1.361813e-4
# (theorems/studies/precision_tables.h): enclosed to the requested gap, a true claim
# VERIFIED (exit 0), a false one NOT VERIFIED with a witness (exit 3), bad
# input refused (exit 2); at beta = 100 the precision is raised past 128 bits
# and the bits used are reported. Usage: bound_cli_test.sh SINKCERT (from the source
# root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

. "$(dirname "$0")/sink_family.sh"
sink_family single-layer 10 > "$tmp/sink.json"
sink_family residual 10 > "$tmp/residual.json"
# the same family at beta = 100: E = 3 / (e^100 + 3) = 1.116e-43, below the
# rounding of 128-bit intervals in the trigger row (~1e-38)
sink_family single-layer 100 > "$tmp/sink100.json"

expect 0 '^E <= 1\.3618[1-2]e-04  \[CERTIFIED\]' verify bound --weights "$tmp/sink.json" --L 4
expect 0 '^verdict: ENCLOSED E in \[1\.3618[0-1]e-04, 1\.3618[1-2]e-04\] .*precision: 128 bits  evidence: CERTIFIED' \
  verify bound --weights "$tmp/sink.json" --L 4
# without a claim, never the word VERIFIED; what it means for the task last
expect_not 0 'VERIFIED' verify bound --weights "$tmp/sink.json" --L 4
expect 0 '^meaning: solves the task: E <= 1\.362e-04 <= 5e-3 \(tolerance\), CERTIFIED$' \
  verify bound --weights "$tmp/sink.json" --L 4
expect 0 '^meaning: does not solve the task: E >= 1\.361e-04 > 1e-4 \(tolerance\), CERTIFIED$' \
  verify bound --weights "$tmp/sink.json" --L 4 --tolerance 1e-4
expect 0 '^verdict: VERIFIED  margin \(claim - upper\)' \
  verify bound --weights "$tmp/sink.json" --L 4 --claim 1.37e-4
expect 3 '^verdict: NOT VERIFIED  margin \(lower - claim, at the witness\)' \
  verify bound --weights "$tmp/sink.json" --L 4 --claim 1.36e-4
expect 3 '^E >= 1\.3618[0-1]e-04  \[CERTIFIED\] witness: trigger j = [1-3], content' \
  verify bound --weights "$tmp/sink.json" --L 4 --claim 1.36e-4
# rounding limits 128 bits: the bound raises the precision itself and
# reports the bits it used (192 requested, 194 allocated)
expect 0 '^precision raised from 128 to 194 bits' verify bound --weights "$tmp/sink100.json" --L 4
expect 0 '^E <= 1\.11603e-43  \[CERTIFIED\]' verify bound --weights "$tmp/sink100.json" --L 4
expect 0 '^verdict: ENCLOSED .*precision: 194 bits  evidence: CERTIFIED' \
  verify bound --weights "$tmp/sink100.json" --L 4
expect 0 '^meaning: solves the task: E <= 1\.117e-43 <= 5e-3 \(tolerance\), CERTIFIED$' \
  verify bound --weights "$tmp/sink100.json" --L 4
expect 2 'command line: --gap: .*> 0' \
  verify bound --weights "$tmp/sink.json" --L 4 --gap 0
expect 2 'residual.json: kind: single-layer' verify bound --weights "$tmp/residual.json" --L 4
expect 2 'L is required|--L' verify bound --weights "$tmp/sink.json"
expect 2 'nope.json' verify bound --weights "$tmp/nope.json" --L 4

# a request of 512 bits is allocated as 513 (decimal digits), not "raised"
expect 0 '^precision: 513 bits allocated for the 512 requested' \
  verify bound --weights "$tmp/sink.json" --L 4 --bits 512

# one box's work is capped (src/limits.h: L^2 n (L + n) max(1, bits / 512)^1.5
# <= 2^29): n = L = 64 runs at 128 bits (a short budget stops the first pass
# between boxes: the triggers it did not reach keep their values' hull
# bound, exact on this zero-output model: E = 1, the target's content mean
# at a vertex), and is refused at 8192 bits with the limit, its value and
# what would fit
. "$(dirname "$0")/zero_model.sh"
zero_model 64 "$tmp/zero64.json"
expect 0 '^verdict: ENCLOSED E in \[1\.00000e\+00, 1\.0000[01]e\+00\]' \
  verify bound --weights "$tmp/zero64.json" --L 64 --seconds 0.5
expect 2 'command line: --L: expected an integer in \[2, 36\] for n = 64 at --bits 8192 \(one box, L\^2 n \(L \+ n\) max\(1, bits / 512\)\^1\.5 <= 2\^29, .*fewer --bits fit a larger L\), got 64' \
  verify bound --weights "$tmp/zero64.json" --L 64 --bits 8192

finish "verify bound"
