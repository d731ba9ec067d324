#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `sinkcert verify bound` on residual models of several
# layers (n = 5, L = 4, 2 layers x 2 heads): the ReLU construction, whose
# worst case is 0 (the enclosure holds 0, a claim of 1e-20 VERIFIED); that
# construction with a flag written from the content (worst case 0.362654...
# at the all-ones content, closed to rounding); a softmax model with entries
# 0.05 sin(k) enclosed within 10 %, a false claim NOT VERIFIED with a
# witness that `eval` would re-check, a box budget that runs out UNDECIDED,
# the attack's certified value printed and never above the lower end;
# bad input refused. Usage: deep_bound_cli_test.sh SINKCERT (from the
# source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"
py=/usr/bin/python3

expect 0 "weights written to" verify relu --layers 2 --heads 2 --n 5 --L 4 \
  --write-weights "$tmp/relu.json"
"$py" -c '
import json, math, sys
w = json.load(open(sys.argv[1]))
w["weights"][0][1]["M"][1][2] = 0.25  # layer 0, head 1: content into the trigger flag
json.dump(w, open(sys.argv[2], "w"))
k = 0
for layer in w["weights"]:
    for head in layer:
        for name in "AM":
            for r in range(5):
                for c in range(5):
                    k += 1
                    head[name][r][c] = round(0.05 * math.sin(k), 4)
w["attention"] = "softmax"
json.dump(w, open(sys.argv[3], "w"))' "$tmp/relu.json" "$tmp/perturbed.json" "$tmp/softmax.json" ||
  fail "could not write the test models"

# worst case 0: lower 0, upper rounding only; no relative gap, a claim holds
expect 4 '^E >= 0\.00000e\+00  \[CERTIFIED\]' verify bound --weights "$tmp/relu.json" --L 4
expect 4 '^E <= [0-9.]*e-[0-9][0-9][0-9]  \[CERTIFIED\]' verify bound --weights "$tmp/relu.json" --L 4
expect 4 '^E >= 0 only: no relative gap' verify bound --weights "$tmp/relu.json" --L 4
expect 4 '^verdict: NOT ENCLOSED E in \[0\.00000e\+00, ' verify bound --weights "$tmp/relu.json" --L 4
expect 4 '^meaning: solves the task: E <= [0-9.]*e-[0-9]* <= 5e-3 \(tolerance\), CERTIFIED$' \
  verify bound --weights "$tmp/relu.json" --L 4
expect 0 '^verdict: VERIFIED  margin \(claim - upper\) = 1e-20' \
  verify bound --weights "$tmp/relu.json" --L 4 --claim 1e-20
expect 0 '^model: residual, 2 layer\(s\) x 2 head\(s\), relu attention; upper bounds by centred' \
  verify bound --weights "$tmp/relu.json" --L 4 --claim 1e-20

# perturbed: the worst case at the all-ones content, closed to rounding
expect 0 '^E >= 3\.62654e-01  \[CERTIFIED\] witness: trigger j = 3, content 1 1 1 1 1 1$' \
  verify bound --weights "$tmp/perturbed.json" --L 4
expect 0 '^E <= 3\.62655e-01  \[CERTIFIED\]' verify bound --weights "$tmp/perturbed.json" --L 4

# softmax: within 10 %, its verdict line last
expect 0 '^verdict: ENCLOSED E in \[1\.2520[0-9]e\+00, [0-9.e+]*\]  margin \(requested gap 0\.1 - achieved\) = .*precision: 128 bits  evidence: CERTIFIED$' \
  verify bound --weights "$tmp/softmax.json" --L 4 --gap 0.1
expect 0 '^E >= 1\.2520[0-9]e\+00  \[CERTIFIED\] witness: trigger j = 1' \
  verify bound --weights "$tmp/softmax.json" --L 4 --gap 0.1
"$bin" verify bound --weights "$tmp/softmax.json" --L 4 --gap 0.1 > "$tmp/out.txt" 2>&1
tail -n 2 "$tmp/out.txt" | head -n 1 | grep -q '^verdict: ' || fail "the verdict is not second to last"
tail -n 1 "$tmp/out.txt" | grep -q '^meaning: does not solve the task: E >= 1\.25[0-9]*e+00 > 5e-3 (tolerance), CERTIFIED$' ||
  fail "the report does not end in what it means"
# a claim below the certified lower bound: NOT VERIFIED, with the witness
expect 3 '^verdict: NOT VERIFIED  margin \(lower - claim, at the witness\)' \
  verify bound --weights "$tmp/softmax.json" --L 4 --claim 1.2
expect 3 '^E >= 1\.2520[0-9]e\+00  \[CERTIFIED\] witness: trigger j = 1, content' \
  verify bound --weights "$tmp/softmax.json" --L 4 --claim 1.2
expect 0 '^verdict: VERIFIED  margin \(claim - upper\)' \
  verify bound --weights "$tmp/softmax.json" --L 4 --claim 1.3
# a budget of 2 boxes cannot reach 0.1 %: NOT ENCLOSED, the budget named
expect 4 'stopped: budget exhausted \(boxes\)' \
  verify bound --weights "$tmp/softmax.json" --L 4 --gap 0.001 --boxes 2
# the attack's round runs first, its witnesses offered before branching:
# the lower end is at least its certified value (text and JSON)
expect 4 '^attack \(round 0, seed 0; its witnesses offered before branching\): E >= [0-9.]*e[-+][0-9]*  \[SEARCH\(lower bound\), certified at its witness\]$' \
  verify bound --weights "$tmp/softmax.json" --L 4 --gap 0.001 --boxes 2
"$bin" verify bound --weights "$tmp/softmax.json" --L 4 --gap 0.001 --boxes 2 --json \
  > "$tmp/attack.json" 2> /dev/null
"$py" -c '
import json, sys
from fractions import Fraction
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["attack_lo"] is not None and Fraction(d["lo_exact"]) >= Fraction(d["attack_lo"])
         else 1)' "$tmp/attack.json" || fail "verify bound --json: no attack_lo, or lo below it"

expect 2 'command line: --boxes: ' verify bound --weights "$tmp/softmax.json" --L 4 --boxes 0
"$py" -c '
import json, sys
w = json.load(open(sys.argv[1]))
w["kind"] = "single-layer"
json.dump(w, open(sys.argv[2], "w"))' "$tmp/softmax.json" "$tmp/bad.json"
expect 2 'bad.json: ' verify bound --weights "$tmp/bad.json" --L 4

finish "verify bound (residual, several layers)"
