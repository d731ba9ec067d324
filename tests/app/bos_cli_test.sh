#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `sinkcert verify bos`: the sink family at beta = 10,
# n = 5, L = 4, whose smallest BOS mass is 1 - 3 / (e^10 + 3) = 0.99986381876
# (theorems/bounds/bos_bound.h): enclosed, a true claim VERIFIED (exit 0), a false
# one NOT VERIFIED with a witness (exit 3); the committed n = 5, L = 4 search
# model (1 - min BOS = 9.05e-12 over the whole box) likewise; residual files
# of one and two layers per (layer, head), with per-head claims and their
# witnesses, and under a budget that bounds nothing the trivial ends [0, 1];
# bad input refused (exit 2). Usage: bos_cli_test.sh SINKCERT (from the source root, as
# ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

. "$(dirname "$0")/sink_family.sh"
sink_family single-layer 10 > "$tmp/sink.json"
sink_family residual 10 > "$tmp/residual.json"
search=results/theorem1/edges/n5_L4_paper/path_start0.weights.json

expect 0 '^1 - min BOS <= 1\.3618[1-2]e-04  \[CERTIFIED\]' verify bos --weights "$tmp/sink.json" --L 4
expect 0 '^1 - min BOS >= 1\.3618[0-1]e-04  \[CERTIFIED\] witness: head 0, row i = 3, trigger j = [12]' \
  verify bos --weights "$tmp/sink.json" --L 4
expect 0 '^verdict: ENCLOSED 1 - min BOS in \[1\.3618[0-1]e-04, 1\.3618[1-2]e-04\] .*precision: 128 bits  evidence: CERTIFIED' \
  verify bos --weights "$tmp/sink.json" --L 4
expect_not 0 'VERIFIED' verify bos --weights "$tmp/sink.json" --L 4
# 1 - 1.36e-4 is above the default sink bar 0.5 everywhere, and below 0.99999 at the witness
expect 0 '^meaning: sinks on every input: min BOS >= 9\.998e-01 >= 0\.5 \(sink bar\), CERTIFIED$' \
  verify bos --weights "$tmp/sink.json" --L 4
expect 0 '^meaning: does not sink on every input: BOS mass <= 9\.999e-01 < 0\.99999 \(sink bar\) at the witness \(head 0, row 3, trigger [12]\), CERTIFIED$' \
  verify bos --weights "$tmp/sink.json" --L 4 --sink-bar 0.99999
expect 0 '^verdict: VERIFIED  margin \(certified min BOS - claim\)' \
  verify bos --weights "$tmp/sink.json" --L 4 --claim 0.9998
expect 3 '^verdict: NOT VERIFIED  margin \(claim - a_i0 at the witness\)' \
  verify bos --weights "$tmp/sink.json" --L 4 --claim 0.99987
# the reference-code convention (j in {2, 3}) has the same worst row
expect 0 '^1 - min BOS <= 1\.3618[1-2]e-04' \
  verify bos --weights "$tmp/sink.json" --L 4 --trigger-range reference-code
expect 0 '^1 - min BOS <= 9\.1[0-9]*e-12  \[CERTIFIED\]' verify bos --weights "$search" --L 4
expect 0 '^meaning: sinks on every input: min BOS >= 9\.999e-01 >= 0\.5 \(sink bar\), CERTIFIED$' \
  verify bos --weights "$search" --L 4
expect 0 '^verdict: VERIFIED  margin \(certified min BOS - claim\)' \
  verify bos --weights "$search" --L 4 --claim 0.99999999999
expect 3 '^verdict: NOT VERIFIED' verify bos --weights "$search" --L 4 --claim 0.999999999995
# two heads, the sink family at beta = 10 and at beta = 5: the minimum is
# head 1's, 1 - 3 / (e^5 + 3) (1 - min BOS = 1.98133e-2), and each head is
# enclosed on its own line
cat > "$tmp/two.json" <<JSON
{"format": "sinkcert-weights", "version": 1, "kind": "single-layer", "attention": "softmax",
 "n": 5, "layers": 1, "heads": 2,
 "weights": [[{"A": [[0, 0, 0, 0, 0], [-10, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                     [10, 0, 0, 0, 0]],
               "M": [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                     [0, 0, 0, 0, 0]]},
              {"A": [[0, 0, 0, 0, 0], [-5, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                     [5, 0, 0, 0, 0]],
               "M": [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0],
                     [0, 0, 0, 0, 0]]}]]}
JSON
expect 0 '^1 - min BOS <= 1\.98134e-02  \[CERTIFIED\]' verify bos --weights "$tmp/two.json" --L 4
expect 0 '^head 0: 1 - min BOS in \[1\.36181e-04, 1\.36182e-04\]  \[CERTIFIED\]' \
  verify bos --weights "$tmp/two.json" --L 4
expect 0 '^head 1: 1 - min BOS in \[1\.98133e-02, 1\.98134e-02\]  \[CERTIFIED\]' \
  verify bos --weights "$tmp/two.json" --L 4
# --max: the certified maximum, 1 / (1 + e^-10) = 0.99995460213 at row i = 1
# (a_i0 = e^10 / (e^10 + i)); a true cap VERIFIED, a false one NOT VERIFIED
# with its witness
expect 0 '^max BOS <= 9\.99954602131[0-9]*e-01  \[CERTIFIED\]' verify bos --max --weights "$tmp/sink.json" --L 4
expect 0 '^max BOS >= 9\.99954602131[0-9]*e-01  \[CERTIFIED\] witness: head 0, row i = 1' \
  verify bos --max --weights "$tmp/sink.json" --L 4
expect 0 '^verdict: VERIFIED  margin \(claim - certified max BOS\)' \
  verify bos --max --weights "$tmp/sink.json" --L 4 --claim 0.99996
expect 3 '^verdict: NOT VERIFIED  margin \(a_i0 at the witness - claim\)' \
  verify bos --max --weights "$tmp/sink.json" --L 4 --claim 0.9999
expect 3 '^max BOS >= 9\.9995.*witness: head 0, row i = 1, trigger j = ' \
  verify bos --max --weights "$tmp/sink.json" --L 4 --claim 0.9999
expect 0 '^head 1: max BOS in \[9\.9330[67]e-01' verify bos --max --weights "$tmp/two.json" --L 4
expect 2 'command line: --claim: .*\[0, 1\]' verify bos --weights "$tmp/sink.json" --L 4 --claim 1.5
expect 2 'command line: --gap: .*> 0' verify bos --weights "$tmp/sink.json" --L 4 --gap 0
# the first pass is capped (H L^2 (n - 3)^3 / 2 <= 2^25): --L itself stops
# at 1024 (the cap decides below it, as for a weight file's task.L), and a
# model of n = 64 at L = 17
expect 2 'command line: --L: .*\[2, 1024\]' verify bos --weights "$tmp/sink.json" --L 1025
. "$(dirname "$0")/zero_model.sh"
zero_model 64 "$tmp/zero64.json"
expect 2 'command line: --L: expected an integer in \[2, 17\] for n = 64' \
  verify bos --weights "$tmp/zero64.json" --L 18
# residual files: every (layer, head) enclosed (theorems/bounds/deep_bos_bound.h). One
# residual layer of the sink family reads X itself: the same 1 - min BOS.
expect 0 '^layer 0, head 0: min BOS in \[9\.9986381[0-9]*e-01, 9\.9986381[0-9]*e-01\], 1 - min BOS in \[1\.3618[0-1]e-04, 1\.3618[1-2]e-04\]  \[CERTIFIED\]' \
  verify bos --weights "$tmp/residual.json" --L 4
expect 0 '^verdict: ENCLOSED \(1 head\(s\), min BOS' verify bos --weights "$tmp/residual.json" --L 4
expect 0 '^layer 0, head 0: max BOS in \[9\.99954602131[0-9]*e-01' \
  verify bos --max --weights "$tmp/residual.json" --L 4
# two residual layers: layer 0 attends uniformly (A = 0) and writes nothing
# (M = 0), so layer 1 (the sink family) reads X: min BOS 1 - 3 / (e^10 + 3),
# and layer 0's BOS mass 1 / (i + 1) ranges over [1/4, 1/2]
z='[0, 0, 0, 0, 0]'
cat > "$tmp/deep.json" <<JSON
{"format": "sinkcert-weights", "version": 1, "kind": "residual", "attention": "softmax",
 "n": 5, "layers": 2, "heads": 1,
 "weights": [[{"A": [$z, $z, $z, $z, $z], "M": [$z, $z, $z, $z, $z]}],
             [{"A": [$z, [-10, 0, 0, 0, 0], $z, $z, [10, 0, 0, 0, 0]],
               "M": [$z, [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]]}]]}
JSON
expect 0 '^layer 0, head 0: min BOS in \[2\.(4999|5000)[0-9]*e-01, 2\.5000[0-9]*e-01\]' \
  verify bos --weights "$tmp/deep.json" --L 4
expect 0 '^layer 1, head 0: min BOS in \[9\.9986381[0-9]*e-01, 9\.9986381[0-9]*e-01\]' \
  verify bos --weights "$tmp/deep.json" --L 4
expect 0 '^layer 0, head 0: max BOS in \[(4\.9999|5\.0000)[0-9]*e-01, 5\.0000[0-9]*e-01\]' \
  verify bos --max --weights "$tmp/deep.json" --L 4
expect_not 0 'VERIFIED' verify bos --weights "$tmp/deep.json" --L 4
expect 0 '^verdict: VERIFIED  margin \(certified min BOS - claim\)' \
  verify bos --weights "$tmp/deep.json" --L 4 --layer 1 --head 0 --claim 0.9998
# a false claim: NOT VERIFIED, with the witness written and checkable
expect 3 '^verdict: NOT VERIFIED  margin \(claim - a_i0 at the witness\)' \
  verify bos --weights "$tmp/deep.json" --L 4 --layer 1 --head 0 --claim 0.99987 \
  --out "$tmp/deep_witness.json"
[ -s "$tmp/deep_witness.json" ] || fail "verify bos --out: no witness written for a residual model"
expect 3 'witness: row i = 3, trigger j = [12]' \
  verify bos --weights "$tmp/deep.json" --L 4 --layer 1 --head 0 --claim 0.99987
expect 3 '^verdict: NOT VERIFIED' verify bos --max --weights "$tmp/deep.json" --L 4 --layer 0 \
  --head 0 --claim 0.45
expect 0 '^verdict: VERIFIED' verify bos --max --weights "$tmp/deep.json" --L 4 --layer 0 \
  --head 0 --claim 0.51
expect 0 '"verdict": "ENCLOSED"' verify bos --json --weights "$tmp/deep.json" --L 4
# a budget that bounds nothing (1 ns): every head's ends are the trivial
# ones, a_i0 in [0, 1], printed as such and marked, never infinite; the
# verdicts read them (min BOS >= 0 holds on every input)
expect 4 '^layer 1, head 0: min BOS in \[0, 1\], 1 - min BOS in \[0, 1\]  \[CERTIFIED\].*\(trivial ends: a_i0 >= 0, a_i0 <= 1 on every input, CERTIFIED' \
  verify bos --weights "$tmp/deep.json" --L 4 --seconds 1e-9
expect 4 '^layer 0, head 0: max BOS in \[0, 1\]  \[CERTIFIED\]' \
  verify bos --max --weights "$tmp/deep.json" --L 4 --seconds 1e-9
expect_not 4 '\[-inf|inf\]' verify bos --weights "$tmp/deep.json" --L 4 --seconds 1e-9
expect 4 '"hi_trivial": true' verify bos --json --weights "$tmp/deep.json" --L 4 --seconds 1e-9
expect 0 '^verdict: VERIFIED' verify bos --weights "$tmp/deep.json" --L 4 --layer 1 --head 0 \
  --claim 0 --seconds 1e-9
expect 4 '^verdict: UNDECIDED' verify bos --weights "$tmp/deep.json" --L 4 --layer 1 --head 0 \
  --claim 0.5 --seconds 1e-9
expect 2 'command line: --claim: .*--layer L and --head H' \
  verify bos --weights "$tmp/deep.json" --L 4 --claim 0.5
expect 2 'command line: --layer: expected a layer of the model, 0 to 1, got 2' \
  verify bos --weights "$tmp/deep.json" --L 4 --layer 2
expect 2 'command line: --head: expected a head of the model, 0 to 0, got 1' \
  verify bos --weights "$tmp/deep.json" --L 4 --head 1
expect 2 'command line: --layer: expected a layer of the model, 0 to 0, got 1' \
  verify bos --weights "$tmp/sink.json" --L 4 --layer 1
expect 2 'L is required|--L' verify bos --weights "$tmp/sink.json"
expect 2 'nope.json' verify bos --weights "$tmp/nope.json" --L 4

finish "verify bos"
