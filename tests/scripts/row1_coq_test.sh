#!/bin/sh
# SPDX-License-Identifier: MIT
# results/row1_frontier/row1_frontier.v (the row-1 frontier's real-arithmetic
# core, docs/methods.md) checked by Coq's own checker:
#   - coqc accepts the file, which has no Admitted and declares no axiom, and
#     every axiom its Print Assumptions list is one of the standard reals'
#     (coq_allowed_axioms, tests/coq_axioms.sh), one list per Print Assumptions;
#   - mutants: the flag step's conclusion alpha kappa <= 2 eps weakened to
#     alpha kappa <= eps, and the pair step's (P - eps) changed to P, each
#     rejected by coqc inside the mutated lemma's proof;
#   - the pair step closed by Admitted: coqc accepts it, the axiom check names it.
# coqc runs in a scratch folder, so no .vo or .glob file lands in the source
# tree. Exits 77 (ctest: skipped) when coqc is not installed.
# Usage: row1_coq_test.sh (from any folder).
set -u
if ! command -v coqc > /dev/null 2>&1; then
  echo "SKIP: coqc not found (Debian package coq; scripts/test.sh installs it)"
  exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../coq_axioms.sh"
src="$here/../../results/row1_frontier/row1_frontier.v"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $1"
  failures=$((failures + 1))
}

# run NAME: coqc on $tmp/NAME.v (module NAME) in $tmp, output in $tmp/NAME.out.
run() {
  (cd "$tmp" && coqc -q "$1.v") > "$tmp/$1.out" 2>&1
}

# extra_axioms NAME: the axioms listed in $tmp/NAME.out beyond the standard
# reals', in $tmp/NAME.extra; true if there is any.
extra_axioms() {
  coq_axioms "$tmp/$1.out" > "$tmp/$1.axioms"
  grep -Ev "$coq_allowed_axioms" "$tmp/$1.axioms" > "$tmp/$1.extra"
}

# rejected_in NAME LEMMA: coqc rejects $tmp/NAME.v, at a line of LEMMA's
# statement or proof (from "Lemma LEMMA" to the next "Qed.").
rejected_in() {
  if run "$1"; then
    fail "coqc accepted the mutant $1.v"
    return
  fi
  line=$(sed -n 's/^File "[^"]*", line \([0-9]*\),.*/\1/p' "$tmp/$1.out" | head -1)
  range=$(awk -v lemma="^Lemma $2 " '$0 ~ lemma {s = NR} s && !e && /^Qed\./ {e = NR}
                                     END {print s, e}' "$tmp/$1.v")
  # shellcheck disable=SC2086 # $range is two numbers, split on purpose
  set -- "$1" "$2" $range
  if [ -z "$line" ] || [ "$#" -ne 4 ] || [ "$line" -lt "$3" ] || [ "$line" -gt "$4" ]; then
    fail "$1.v rejected outside $2 (lines ${3:-?}-${4:-?}):"
    head -10 "$tmp/$1.out"
  fi
}

# The file as committed.
cp "$src" "$tmp/row1_frontier.v"
if ! run row1_frontier; then
  fail "coqc rejected row1_frontier.v:"
  head -20 "$tmp/row1_frontier.out"
fi
# Outside comments (nested, as Coq's), no Admitted and no declared axiom.
awk '{ out = ""
       for (i = 1; i <= length($0); i++) {
         two = substr($0, i, 2)
         if (two == "(*") { depth++; i++; continue }
         if (two == "*)" && depth > 0) { depth--; i++; continue }
         if (depth == 0) out = out substr($0, i, 1)
       }
       print NR ": " out }' "$src" > "$tmp/code"
if grep -E '(^|[^A-Za-z_])(Admitted|Axiom|Axioms|Parameter|Parameters|Conjecture|Hypothesis|Hypotheses)([^A-Za-z_]|$)' \
    "$tmp/code" > "$tmp/keywords"; then
  fail "row1_frontier.v declares or admits: $(cat "$tmp/keywords")"
fi
prints=$(grep -c '^Print Assumptions ' "$src")
lists=$(grep -Ec '^(Axioms:|Closed under the global context)' "$tmp/row1_frontier.out")
if [ "$prints" -lt 1 ] || [ "$lists" -ne "$prints" ]; then
  fail "row1_frontier.v: $prints Print Assumptions, $lists axiom lists printed"
fi
if extra_axioms row1_frontier; then
  fail "row1_frontier.v rests on axioms beyond the standard reals: $(tr '\n' ' ' < "$tmp/row1_frontier.extra")"
fi
grep -q 'sig_forall_dec' "$tmp/row1_frontier.axioms" || fail "row1_frontier.v: no axiom list printed"

# Mutant 1: the flag step (Lemma 4) with eps for 2 eps.
sed 's/^  alpha \* kappa <= 2 \* eps\. (\* MUTATION-SITE flag \*)$/  alpha * kappa <= eps./' \
  "$src" > "$tmp/flag_mutant.v"
cmp -s "$src" "$tmp/flag_mutant.v" && fail "flag_mutant.v: the edit did not apply"
rejected_in flag_mutant flag_step_row

# Mutant 2: the pair step (Lemma 6) with P for P - eps.
sed 's/^\(  (ap \/ (1 - ap) + am \/ (1 - am)) \* \)(P - eps)\( <= 2 \* eps\.\) (\* MUTATION-SITE pair \*)$/\1P\2/' \
  "$src" > "$tmp/pair_mutant.v"
cmp -s "$src" "$tmp/pair_mutant.v" && fail "pair_mutant.v: the edit did not apply"
rejected_in pair_mutant pair_step

# The pair step admitted: coqc accepts, the axiom check must name pair_step.
sed '/^Lemma pair_step /,/^Qed\./ s/^Qed\./Admitted./' "$src" > "$tmp/pair_admitted.v"
cmp -s "$src" "$tmp/pair_admitted.v" && fail "pair_admitted.v: the edit did not apply"
if ! run pair_admitted; then
  fail "coqc rejected pair_admitted.v:"
  head -10 "$tmp/pair_admitted.out"
elif ! extra_axioms pair_admitted || ! grep -qx 'pair_step' "$tmp/pair_admitted.extra"; then
  fail "an admitted pair_step passed the axiom check"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures row-1 frontier Coq check(s) failed"
  exit 1
fi
echo "row1_frontier.v: accepted, standard reals' axioms only; 2 mutants rejected, an admitted lemma caught"
