#!/bin/sh
# SPDX-License-Identifier: MIT
# Standard manners of the command line: --version names the revision, the
# build type and the recipe kernels; `completion bash` prints a script that
# bash -n accepts, generated from the CLI definition, so that it lists every
# subcommand (read here from the program's own --help) and their options;
# --quiet silences the progress lines on stderr; the deprecated option names
# --time-limit (theorem2) and --fixed-trigger (eval) are still accepted but
# hidden. Usage: completion_cli_test.sh SINKCERT (from the source root, as
# ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"

expect 0 '^sinkcert [0-9a-f]' --version
expect 0 '^build type: ' --version
expect 0 '^recipe kernels: baseline' --version

"$bin" completion bash > "$tmp/sinkcert.bash" 2> "$tmp/err" || fail "completion bash: exit $?"
bash -n "$tmp/sinkcert.bash" || fail "bash -n rejects the completion script"
grep -q '^complete -o default -F _sinkcert sinkcert$' "$tmp/sinkcert.bash" || fail "no complete line"
# every subcommand the program lists, at every level, has its branch
"$bin" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && /^  [a-z]/ {print $1}' > "$tmp/top"
[ -s "$tmp/top" ] || fail "no subcommands in --help"
while read -r sub; do
  grep -q "^    \"$sub\") echo" "$tmp/sinkcert.bash" || fail "no completion branch for $sub"
  "$bin" "$sub" --help 2> /dev/null | sed -n '/^Subcommands:/,$p' |
    awk 'NR > 1 && /^  [a-z]/ {print $1}' | while read -r leaf; do
      grep -q "^    \"$sub $leaf\") echo" "$tmp/sinkcert.bash" || echo "$sub $leaf"
    done >> "$tmp/missing"
done < "$tmp/top"
[ ! -s "$tmp/missing" ] || fail "no completion branch for: $(cat "$tmp/missing")"
grep -q '^    "verify bound") echo ".*--claim.*--json' "$tmp/sinkcert.bash" || fail "verify bound options"
grep -q '^    "") echo "eval verify .* completion .*--version' "$tmp/sinkcert.bash" ||
  fail "top-level words"
# hidden aliases are not offered
grep -q 'fixed-trigger\|time-limit' "$tmp/sinkcert.bash" && fail "a deprecated alias is offered"
# the completion itself, as bash runs it
out=$(bash -c ". '$tmp/sinkcert.bash'; COMP_WORDS=(sinkcert verify bo); COMP_CWORD=2; _sinkcert; echo \"\${COMPREPLY[*]}\"")
[ "$out" = "bound bos" ] || fail "completing 'verify bo' gave '$out'"
expect 2 "completion: expected the shell bash, got 'tcsh'" completion tcsh

# --quiet: no progress on stderr (verify relu reports trigger positions at L = 24)
"$bin" verify relu --n 5 --L 24 > /dev/null 2> "$tmp/loud"
grep -q '^\[ *[0-9.]* s\] verify relu: [0-9]*/23 trigger positions' "$tmp/loud" ||
  fail "no timed progress line: $(head -3 "$tmp/loud")"
"$bin" verify relu --n 5 --L 24 --quiet > /dev/null 2> "$tmp/quiet"
[ ! -s "$tmp/quiet" ] || fail "--quiet left stderr: $(head -3 "$tmp/quiet")"
"$bin" --quiet verify relu --n 5 --L 24 > /dev/null 2> "$tmp/quiet"
[ ! -s "$tmp/quiet" ] || fail "top-level --quiet left stderr"

# deprecated names: accepted, hidden from --help
expect 0 'BOS mass a_i0' eval --weights tests/data/numpy/softmax_single.weights.json --samples 20 \
  --L 8 --fixed-trigger 7
"$bin" eval --help | grep -q -- '--fixed-trigger' && fail "--fixed-trigger shown in eval --help"
"$bin" theorem2 --help | grep -q -- '--time-limit' && fail "--time-limit shown in theorem2 --help"
"$bin" theorem2 --help | grep -q -- '--seconds' || fail "--seconds not in theorem2 --help"

finish completion
