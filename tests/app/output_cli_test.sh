#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of where sinkcert writes: an --out holding shell syntax
# is only a name (no shell runs it), --out onto /dev/null, a FIFO, a symbolic
# link or an unwritable place fails at once with one line and exit code 2
# (the target untouched), a study replaces its own files and keeps the rest,
# and a killed appendix leaves the previous set and no temporary.
# Usage: output_cli_test.sh SINKCERT (run from the source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"


# The last expect's output is exactly one line.
one_line() {
  lines=$(wc -l < "$tmp/out")
  [ "$lines" -eq 1 ] || { fail "expected one line, got $lines:"; cat "$tmp/out"; }
}

# No staging folder or temporary file left under $1.
no_temporaries() {
  if find "$1" -name '.sinkcert-replace.*' -o -name '*.tmp.*' | grep -q .; then
    fail "temporaries left in $1:"
    find "$1" -name '.sinkcert-replace.*' -o -name '*.tmp.*'
  fi
}

# 1. A folder name with shell syntax is only a name. The folder already holds
# a stale study file (replaced with the set, as --force asks) and things of
# others (kept).
weird="$tmp/x'; touch $tmp/PWNED; echo '"
mkdir -p "$weird/keep"
echo stale > "$weird/path_start9.weights.json"
echo notes > "$weird/notes.txt"
"$bin" theorem1 --quick --n 5 --L 4 --out "$weird" --force > "$tmp/out" 2>&1
rc=$?
case $rc in
  0 | 3 | 4) ;;
  *) fail "theorem1 --out WEIRD: exit $rc"; tail -5 "$tmp/out" ;;
esac
[ ! -e "$tmp/PWNED" ] || fail "--out text was run by a shell (PWNED exists)"
[ -f "$weird/theorem1.json" ] || fail "theorem1.json not written into the folder named by --out"
[ -d "$weird/keep" ] && [ -f "$weird/notes.txt" ] || fail "entries that are not the study's were removed"
[ ! -e "$weird/path_start9.weights.json" ] || fail "a stale study file survived the replacement"
if command -v gnuplot > /dev/null 2>&1; then
  [ -f "$weird/path.png" ] && [ -f "$weird/frontier.pdf" ] ||
    { fail "figures not rendered into the folder named by --out"; grep 'not rendered' "$tmp/out"; }
fi
no_temporaries "$tmp"

# 2. Refused before any computation: exit 2, one line naming --out, the
# path and the reason; the target is left as it was.
expect 2 '^sinkcert: error: --out: /dev/null: exists as a character device' \
  theorem1 --quick --n 5 --L 4 --out /dev/null
one_line
expect 2 '^sinkcert: error: --out: /dev/null: exists as a character device.*only regular files' \
  verify relu --n 5 --L 4 --out /dev/null
one_line
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
echo x > "$tmp/file"
expect 2 "^sinkcert: error: --out: $tmp/file/sub: cannot create it: .*Not a directory" \
  theorem1 --quick --n 5 --L 4 --out "$tmp/file/sub"
one_line
expect 2 "^sinkcert: error: --out: $tmp/file/sub: cannot create it: .*Not a directory" \
  appendix --out "$tmp/file/sub"
one_line
expect 2 "^sinkcert: error: --out: $tmp/file/sub/cert.json: cannot create it: .*Not a directory" \
  verify relu --n 5 --L 4 --out "$tmp/file/sub/cert.json"
one_line
mkfifo "$tmp/fifo"
expect 2 "^sinkcert: error: --out: $tmp/fifo: exists as a FIFO" verify relu --n 5 --L 4 --out "$tmp/fifo"
one_line
[ -p "$tmp/fifo" ] || fail "the FIFO was replaced"
echo precious > "$tmp/target"
ln -s "$tmp/target" "$tmp/link"
expect 2 "^sinkcert: error: --out: $tmp/link: exists as a symbolic link" \
  verify relu --n 5 --L 4 --out "$tmp/link"
[ -L "$tmp/link" ] && [ "$(cat "$tmp/target")" = precious ] || fail "the symbolic link was followed or replaced"
mkdir -p "$tmp/s"
ln -s "$tmp/target" "$tmp/s/theorem1.json"
expect 2 "^sinkcert: error: --out: $tmp/s/theorem1.json: exists as a symbolic link" \
  theorem1 --quick --n 5 --L 4 --out "$tmp/s" --force
one_line

# 3. A killed appendix (SIGTERM while it computes P1) leaves the previous
# set, and no staging folder or temporary.
mkdir -p "$tmp/a/tables" "$tmp/a/theorem1"
echo old > "$tmp/a/tables/old.tex"
echo old > "$tmp/a/appendix.tex"
echo input > "$tmp/a/theorem1/input.json"
"$bin" appendix --out "$tmp/a" > "$tmp/appendix.out" 2>&1 &
pid=$!
tries=0
until ls -a "$tmp/a" | grep -q '^\.sinkcert-replace\.' || [ $tries -ge 300 ]; do
  sleep 0.1
  tries=$((tries + 1))
done
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 143 ] || { fail "killed appendix: exit $rc (want 143, SIGTERM)"; tail -3 "$tmp/appendix.out"; }
[ "$(cat "$tmp/a/tables/old.tex")" = old ] && [ "$(cat "$tmp/a/appendix.tex")" = old ] ||
  fail "a killed appendix changed the previous set"
[ ! -e "$tmp/a/figures" ] || fail "a killed appendix left part of a new set"
[ "$(cat "$tmp/a/theorem1/input.json")" = input ] || fail "the appendix's input was touched"
no_temporaries "$tmp/a"

finish output
