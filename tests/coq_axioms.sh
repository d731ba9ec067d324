# SPDX-License-Identifier: MIT
# Sourced by the tests that run coqc on a file ending in Print Assumptions:
#   coq_allowed_axioms   an extended regular expression (grep -E) matching
#                        exactly the axioms of Coq's standard real numbers
#                        (Reals), the only ones a checked file may rest on
#   coq_axioms OUT       the axiom names that the Print Assumptions in OUT
#                        (coqc's output) list, one a line
coq_allowed_axioms='^(ClassicalDedekindReals\.sig_forall_dec|ClassicalDedekindReals\.sig_not_dec|FunctionalExtensionality\.functional_extensionality_dep)$'

# An axiom list starts at "Axioms:"; its names start a line, their types are
# indented. "Closed under the global context" is an empty list.
coq_axioms() {
  awk '/^Axioms:/ {on = 1; next} /^Closed under the global context/ {on = 0; next}
       on && /^[^ ]/ {print $1}' "$1"
}
