#!/bin/sh
# SPDX-License-Identifier: MIT
# sinkcert verify bound and verify bos under `mpiexec -np 2` give one
# process's enclosure bit for bit: the same JSON (lo, hi and their exact
# forms, per_trigger, witness, boxes, verdict; every field but timings: each
# "seconds" value, seconds inside the notes, and provenance), the same exit
# code; only rank 0 prints (one JSON object) and writes the witness file.
# The model: results/benchmarks/pytorch_models/softmax_s0 (PyTorch-trained,
# n = 16) cut down to n = 8, L = 6 (its BOS and trigger flags, its first
# five content coordinates and its ordinary flag; the scores still read the
# content, so the softmax vertex bound caps triggers), with a box budget
# that binds well past the first pass (the box phase's batches, split by
# ranks, run: 400 boxes against the first pass's few) and a time
# budget that does not; again under 3 and 5 ranks (an uneven split; more
# ranks than triggers). Under a deadline that passes
# inside the split vertex bound and first pass (softmax_s0 itself, 4 and 8
# s), the run still ends with one JSON object. A broken share is caught:
# under SINKCERT_TEST_DROP_PART (testing only: part 1 of each share arrives
# empty, search/mpi_rank_group.h) the run fails, not silently differs, in
# the first pass and, from the 6th share on, in the box phase; and the
# comparison tells a changed last bit apart. A residual model of two layers
# (first pass split by trigger, boxes by batch, the attack's witnesses
# included) gives the same JSON under 2 ranks as well, for its worst case
# and for every head's BOS mass.
# Usage: verify_mpi_test.sh SINKCERT MPIEXEC (run from the source root, as ctest does).
set -u
bin="$1"
mpiexec="$2"
. "$(dirname "$0")/cli_expect.sh"
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
model="$tmp/softmax_s0_n8.weights.json"
python3 - results/benchmarks/pytorch_models/softmax_s0.weights.json > "$model" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = d["n"]
keep = list(range(7)) + [n - 1]  # BOS, trigger, 5 content coordinates, ordinary flag
h = d["weights"][0][0]
cut = {k: [[row[i] for i in keep] for row in h[k]] for k in ("W_Q", "W_K", "W_V")}
cut["W_O"] = [h["W_O"][i] for i in keep]
out = {k: d[k] for k in ("format", "version", "kind", "attention", "layers", "heads")}
out.update(n=len(keep), weights=[[cut]], task={"L": 6, "trigger_range": d["task"]["trigger_range"]})
json.dump(out, sys.stdout)
PY
bound="verify bound --weights $model --gap 1e-6 --boxes 400 --seconds 900 --json"
bos="verify bos --weights $model --gap 1e-12 --boxes 400 --seconds 900 --json"

# same A B: the two JSON outputs agree, timings apart (tests/app/same_json.py)
same() { python3 "$(dirname "$0")/same_json.py" "$1" "$2" '[0-9.e+-]+ s\b'; }

for name in bound bos; do
  eval "args=\$$name"
  # each in its own folder, the witness file by the same relative name
  mkdir -p "$tmp/$name.one.d" "$tmp/$name.two.d"
  (cd "$tmp/$name.one.d" && "$bin" $args --out witness.json) > "$tmp/$name.one" \
    2> "$tmp/$name.one.err"
  rc1=$?
  eval "rc_$name=$rc1"
  (cd "$tmp/$name.two.d" && "$mpiexec" -np 2 --oversubscribe "$bin" $args --out witness.json) \
    > "$tmp/$name.two" 2> "$tmp/$name.two.err"
  rc2=$?
  [ "$rc1" -eq "$rc2" ] || fail "$name: exit codes differ: one process $rc1, two ranks $rc2"
  case "$rc1" in 0 | 4) ;; *) fail "$name: exit code $rc1"; tail -5 "$tmp/$name.one.err" ;; esac
  [ "$(grep -c '^{' "$tmp/$name.two")" -eq 1 ] || fail "$name: not one JSON object under mpiexec"
  same "$tmp/$name.one" "$tmp/$name.two" ||
    fail "$name: the JSON differs between 1 process and 2 ranks"
  [ -s "$tmp/$name.two.d/witness.json" ] || fail "$name: no witness file under mpiexec"
  cmp -s "$tmp/$name.one.d/witness.json" "$tmp/$name.two.d/witness.json" ||
    fail "$name: the witness files differ"
  # the run was not trivial: a positive lower end, and the box budget
  # stopped it, far past the first pass
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d['boxes'] >= 400 and d['stop_reason'] == 'budget exhausted (boxes)' and d['lo'] > 0 else 1)" "$tmp/$name.one" ||
    fail "$name: not stopped by the box budget after 400 boxes, or no positive lower end"
done
# three ranks (the triggers split unevenly) and five (more ranks than the
# bound's 4 triggers): the same JSON again
for np in 3 5; do
  for name in bound bos; do
    [ "$name.$np" = bos.5 ] && continue
    eval "args=\$$name"
    mkdir -p "$tmp/$name.np$np.d"
    (cd "$tmp/$name.np$np.d" && "$mpiexec" -np "$np" --oversubscribe "$bin" $args \
      --out witness.json) > "$tmp/$name.np$np" 2> "$tmp/$name.np$np.err"
    rc=$?
    eval "want=\$rc_$name"
    [ "$rc" -eq "$want" ] || fail "$name: exit code $rc under $np ranks (one process: $want)"
    same "$tmp/$name.one" "$tmp/$name.np$np" ||
      fail "$name: the JSON differs between 1 process and $np ranks"
  done
done
# a deadline that passes during the run: on the n = L = 16 model itself,
# within the softmax vertex bound (about a minute in all) on both ranks,
# then in the first pass: the ranks still make the same collective calls,
# read each other's parts whole, and rank 0 prints one certified enclosure
for seconds in 4 8; do
  "$mpiexec" -np 2 --oversubscribe "$bin" verify bound \
    --weights results/benchmarks/pytorch_models/softmax_s0.weights.json --gap 0.05 \
    --seconds "$seconds" --json > "$tmp/deadline.$seconds" 2> "$tmp/deadline.$seconds.err"
  rc=$?
  case "$rc" in 0 | 4) ;; *) fail "deadline $seconds s: exit code $rc"; tail -3 "$tmp/deadline.$seconds.err" ;; esac
  [ "$(grep -c '^{' "$tmp/deadline.$seconds")" -eq 1 ] || fail "deadline $seconds s: not one JSON object"
done
# a residual model of two layers (n = 5, L = 4, 2 x 2 heads, entries
# uniform in [-1, 1]): its first pass split by trigger and its 40 boxes by
# batch, the attack's round decided by rank 0 and run on each (seed 0,
# round 0: reproducible), so the same JSON, attack_lo included, the lower
# end at least the attack's, and no word of running whole on every rank
python3 -c '
import json, random, sys
random.seed(3)
m = lambda: [[round(random.uniform(-1, 1), 3) for _ in range(5)] for _ in range(5)]
json.dump({"format": "sinkcert-weights", "version": 1, "kind": "residual",
           "attention": "softmax", "n": 5, "layers": 2, "heads": 2,
           "weights": [[{"A": m(), "M": m()} for _ in range(2)] for _ in range(2)],
           "task": {"L": 4, "trigger_range": "paper"}}, open(sys.argv[1], "w"))' "$tmp/deep.json"
# one_and_two NAME ARGS...: ARGS on one process and under 2 ranks, both NOT
# ENCLOSED (exit code 4, the box budget binding), the same JSON, and no word
# of running whole on every rank; outputs in $tmp/NAME.one and NAME.two
one_and_two() {
  name="$1"
  shift
  "$bin" "$@" > "$tmp/$name.one" 2> "$tmp/$name.one.err"
  rc1=$?
  "$mpiexec" -np 2 --oversubscribe "$bin" "$@" > "$tmp/$name.two" 2> "$tmp/$name.two.err"
  rc2=$?
  [ "$rc1" -eq 4 ] && [ "$rc2" -eq 4 ] || fail "$name: exit codes $rc1 (one process), $rc2 (two ranks)"
  same "$tmp/$name.one" "$tmp/$name.two" ||
    fail "$name: the JSON differs between 1 process and 2 ranks"
  grep -q "whole on every rank" "$tmp/$name.two.err" && fail "$name: says it runs whole on every rank"
}
one_and_two deep verify bound --weights "$tmp/deep.json" --gap 1e-9 --boxes 40 --seconds 900 --json
# its BOS mass, every head of both layers (the per-head budgets shared
# alike on every rank)
one_and_two deep_bos verify bos --weights "$tmp/deep.json" --gap 1e-12 --boxes 30 --seconds 900 \
  --json
python3 -c '
import json, sys
from fractions import Fraction
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["attack_lo"] is not None and Fraction(d["lo_exact"]) >= Fraction(d["attack_lo"])
         else 1)' "$tmp/deep.two" || fail "deep: no attack_lo, or the lower end below it"
# the bound's caps came from the softmax vertex bound (the split caps ran)
grep -q 'softmax vertex bound: [1-9]' "$tmp/bound.two" || fail "bound: no trigger capped"

# the comparison tells a changed bit apart (the last digit of the upper end)
python3 - "$tmp/bound.one" "$tmp/changed" << 'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
d["per_trigger"][0]["hi"] = math.nextafter(d["per_trigger"][0]["hi"], math.inf)
json.dump(d, open(sys.argv[2], "w"))
PY
same "$tmp/bound.one" "$tmp/changed" > /dev/null &&
  fail "the comparison missed an upper end changed in its last bit"

# a part left unshared is caught (the run fails with the reader's message):
# from the first share on (the first pass), and from the 6th on (the box
# phase: its deadline flags and batches)
for name in bound bos; do
  eval "args=\$$name"
  for from in 1 6; do
    SINKCERT_TEST_DROP_PART=$from "$mpiexec" -np 2 --oversubscribe -x SINKCERT_TEST_DROP_PART \
      "$bin" $args > "$tmp/$name.drop$from" 2> "$tmp/$name.drop$from.err"
    rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] ||
      fail "$name: a part left unshared from share $from on went unnoticed (exit $rc)"
    grep -q 'not shared' "$tmp/$name.drop$from.err" ||
      fail "$name: no 'not shared' message (from share $from on)"
  done
  grep -q 'box search' "$tmp/$name.drop6.err" || fail "$name: the box phase's share not named"
done
finish verify_mpi
