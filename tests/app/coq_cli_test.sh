#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of `sinkcert verify relu --coq FILE.v` with Coq's own
# checker: coqc accepts the certificates of the construction at (5, 4) and
# (16, 16), each resting on no axiom beyond the standard real numbers', and
# a NOT VERIFIED model's witness; coqc rejects a perturbed model exported as
# VERIFIED anyway (--coq-force-theorem) and a certificate whose target was
# edited. Exits 77 (ctest: skipped) when coqc is not installed.
# Usage: coq_cli_test.sh SINKCERT [PART] (run from the source root, as ctest
# does); PART construction: the two certificates of the construction, PART
# edits: the rest, all (default): both. ctest runs the parts as two tests, so
# that two cores share the coqc runs.
set -u
bin="$1"
part="${2:-all}"
case "$part" in
  all | construction | edits) ;;
  *) echo "coq_cli_test.sh: PART: expected all, construction or edits, got '$part'"; exit 2 ;;
esac
if ! command -v coqc > /dev/null 2>&1; then
  echo "SKIP: coqc not found (Debian package coq; scripts/test.sh installs it)"
  exit 77
fi
. "$(dirname "$0")/cli_expect.sh"
. "$(dirname "$0")/../coq_axioms.sh"

# coq_accepts FILE: coqc checks FILE (run in $tmp, which gets any file coqc
# writes), and the axioms it prints (Print Assumptions) are all the standard
# reals' ones (coq_allowed_axioms, tests/coq_axioms.sh).
coq_accepts() {
  if ! (cd "$tmp" && coqc "$1") > "$tmp/coq.out" 2>&1; then
    fail "coqc rejected $1:"
    head -20 "$tmp/coq.out"
    return
  fi
  coq_axioms "$tmp/coq.out" > "$tmp/axioms"
  grep -q 'sig_forall_dec' "$tmp/axioms" || fail "$1: no axiom list printed"
  if grep -Ev "$coq_allowed_axioms" "$tmp/axioms" > "$tmp/extra"; then
    fail "$1 rests on axioms beyond the standard reals: $(tr '\n' ' ' < "$tmp/extra")"
  fi
}

# coq_rejects FILE PATTERN: coqc fails on FILE with PATTERN in its message.
coq_rejects() {
  if (cd "$tmp" && coqc "$1") > "$tmp/coq.out" 2>&1; then
    fail "coqc accepted $1"
  elif ! grep -Eq -- "$2" "$tmp/coq.out"; then
    fail "coqc rejected $1 without '$2':"
    head -20 "$tmp/coq.out"
  fi
}

# factored N SCALE: the construction as a factored weight file, W_Q = e_1^T,
# W_K = (e_1 + e_{n-1})^T, W_V = SCALE I, W_O = I.
factored() {
  n=$1
  identity() {
    r=0; printf '['
    while [ $r -lt "$n" ]; do
      c=0; printf '['
      while [ $c -lt "$n" ]; do
        v=0; [ $r -eq $c ] && v=$1
        [ $c -gt 0 ] && printf ', '
        printf '%s' "$v"; c=$((c + 1))
      done
      printf ']'; r=$((r + 1)); [ $r -lt "$n" ] && printf ', '
    done
    printf ']'
  }
  flag_row() {
    c=0; printf '[['
    while [ $c -lt "$n" ]; do
      v=0
      if [ $c -eq 1 ] || { [ "$1" = key ] && [ $c -eq $((n - 1)) ]; }; then v=1; fi
      [ $c -gt 0 ] && printf ', '
      printf '%s' "$v"; c=$((c + 1))
    done
    printf ']]'
  }
  printf '{"format": "sinkcert-weights", "version": 1, "kind": "single-layer",\n'
  printf ' "attention": "relu", "n": %d, "layers": 1, "heads": 1,\n' "$n"
  printf ' "weights": [[{"W_Q": %s, "W_K": %s,\n' "$(flag_row query)" "$(flag_row key)"
  printf '   "W_V": %s, "W_O": %s}]]}\n' "$(identity "$2")" "$(identity 1)"
}

# The construction: theorem3, checked by coqc.
expect 0 'Coq certificate \(theorem theorem3\) written to .*t5\.v' \
  verify relu --n 5 --L 4 --coq "$tmp/t5.v"
if [ "$part" != edits ]; then
  coq_accepts "$tmp/t5.v"
  expect 0 'Coq certificate \(theorem theorem3\)' verify relu --n 16 --L 16 --coq "$tmp/t16.v"
  coq_accepts "$tmp/t16.v"
fi
if [ "$part" = construction ]; then
  finish coq
  exit 0
fi

# W_V scaled by 1001/1000: NOT VERIFIED. Exported as VERIFIED anyway, coqc
# rejects the proof; exported as it is, the witness checks.
factored 5 1.001 > "$tmp/perturbed.json"
expect 3 'Coq certificate \(theorem theorem3\)' verify relu --weights "$tmp/perturbed.json" \
  --L 4 --coq "$tmp/p5.v" --coq-force-theorem
grep -q 'DEBUG EXPORT' "$tmp/p5.v" || fail "p5.v: no debug notice"
coq_rejects "$tmp/p5.v" 'check 5 4 1 Aq Mq false 1 = true'
# The same file with the check admitted: coqc passes, the axiom check does not.
sed '/^Lemma checked/,/^Proof/ s/^Proof\..*Qed\./Admitted./' "$tmp/p5.v" > "$tmp/admitted.v"
grep -q '^Admitted\.' "$tmp/admitted.v" || fail "admitted.v: the edit did not apply"
before=$failures
coq_accepts "$tmp/admitted.v" > "$tmp/admitted.out"
failures=$before
grep -q 'beyond the standard reals: checked' "$tmp/admitted.out" ||
  fail "an admitted lemma passed the axiom check"
expect 3 'Coq certificate \(theorem witness\)' verify relu --weights "$tmp/perturbed.json" \
  --L 4 --coq "$tmp/w5.v"
grep -q ' - y 1 c_witness 1 1 = IZR (1) / IZR (1000) /\\' "$tmp/w5.v" ||
  fail "w5.v: the witness value 1/1000"
coq_accepts "$tmp/w5.v"
# The file's factors are part of the certificate: W_V edited back to I, the
# stated M = W_O W_V no longer holds.
grep -q '^Theorem weights_are_the_files_products' "$tmp/w5.v" || fail "w5.v: no factors"
sed '/^Definition WV_data/,/^\]\./ s/(1001 # 1000)/(1 # 1)/g' "$tmp/w5.v" > "$tmp/edit3.v"
cmp -s "$tmp/w5.v" "$tmp/edit3.v" && fail "edit3.v: the edit did not apply"
coq_rejects "$tmp/edit3.v" '^ "all_below 1$'

# Hand-edited statements: the target's mean divided by j + 1, or the residual
# target x_i + mean in place of the plain one.
sed 's|^  (if (i =? j)%nat then / INR j \* rsum j|  (if (i =? j)%nat then / INR (S j) * rsum j|' \
  "$tmp/t5.v" > "$tmp/edit1.v"
cmp -s "$tmp/t5.v" "$tmp/edit1.v" && fail "edit1.v: the edit did not apply"
coq_rejects "$tmp/edit1.v" 'Error'
sed 's|:= target 5 false j c i d\.|:= target 5 true j c i d.|' "$tmp/t5.v" > "$tmp/edit2.v"
cmp -s "$tmp/t5.v" "$tmp/edit2.v" && fail "edit2.v: the edit did not apply"
coq_rejects "$tmp/edit2.v" 'Error'

# No certificate for NOT APPLICABLE; bad names and options: exit 2, nothing written.
{
  printf '{"format": "sinkcert-weights", "version": 1, "kind": "single-layer",\n'
  printf ' "attention": "relu", "n": 5, "layers": 1, "heads": 1, "weights": [[{\n'
  printf '   "A": [[0,0,0,0,0],[0,1,0,0,1],[0,0,0,0,0],[0,0,1,0,0],[0,0,0,0,0]],\n'
  printf '   "M": [[1,0,0,0,0],[0,1,0,0,0],[0,0,1,0,0],[0,0,0,1,0],[0,0,0,0,1]]}]]}\n'
} > "$tmp/content.json"
expect 2 'Coq certificate: not written \(the verdict is NOT APPLICABLE\)' \
  verify relu --weights "$tmp/content.json" --L 4 --coq "$tmp/u5.v"
[ ! -e "$tmp/u5.v" ] || fail "u5.v written for NOT APPLICABLE"
expect 2 '^sinkcert: error: --coq: .*t-5\.v: expected a file name NAME\.v' \
  verify relu --n 5 --L 4 --coq "$tmp/t-5.v"
[ ! -e "$tmp/t-5.v" ] || fail "t-5.v written"
expect 2 '--coq-force-theorem: expected --coq FILE\.v as well' verify relu --n 5 --L 4 --coq-force-theorem

finish coq
