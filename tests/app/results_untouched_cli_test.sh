#!/bin/sh
# SPDX-License-Identifier: MIT
# No command replaces committed results unless asked. In a scratch copy of
# the repository's results/ under git, the quick forms of theorem1, theorem2
# and normalizations without --out write to a new runs/<command>-<UTC time>/
# (printed) and leave every tracked file as it was (git status --porcelain
# stays empty; runs/ is ignored); an --out folder that already holds files
# is refused (exit 2, one line) unless --force; appendix run where there is
# no results/ refuses with a message naming --models and the current
# directory. Usage: results_untouched_cli_test.sh SINKCERT (from the source
# root, as ctest does).
set -u
bin="$1"
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
. "$(dirname "$0")/cli_expect.sh"

repo="$tmp/repo"
mkdir "$repo" && cp -R results "$repo/results" && printf 'runs/\n' > "$repo/.gitignore" ||
  fail "could not copy results/"
(cd "$repo" && git init -q && git add -A &&
  git -c user.name=t -c user.email=t@t commit -q -m scratch) || fail "git init"

run_in_repo() {  # RC PATTERN ARGS...: expect, run in the scratch repository
  want=$1 pattern=$2
  shift 2
  (cd "$repo" && "$bin" "$@" > "$tmp/out" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -Eq -- "$pattern" "$tmp/out"; then
    echo "FAIL: (in $repo) sinkcert $* -> exit $rc (want $want), pattern '$pattern'; output:"
    head -20 "$tmp/out"
    failures=$((failures + 1))
  fi
}

run_in_repo 0 '^writing to runs/normalizations-[0-9]{8}-[0-9]{6}/' \
  normalizations --quick --n 4 --L 3 --attention relu --quiet
run_in_repo 0 '^writing to runs/theorem1-[0-9]{8}-[0-9]{6}/' theorem1 --quick --n 5 --L 4 --quiet
# theorem2's verdict (its exit code) is its own; only where it wrote matters
(cd "$repo" && "$bin" theorem2 --quick --n 5 --L 4 --layers 1 --heads 1 --quiet > "$tmp/t2" 2>&1)
grep -Eq '^writing to runs/theorem2-[0-9]{8}-[0-9]{6}/' "$tmp/t2" || fail "theorem2: $(head -5 "$tmp/t2")"
status=$(cd "$repo" && git status --porcelain)
[ -z "$status" ] || fail "tracked files changed: $status"
for c in normalizations theorem1; do
  ls "$repo"/runs/$c-*/* > /dev/null 2>&1 || fail "runs/$c-*/ holds no files"
done

# an --out that holds a study: refused unless --force
mkdir "$tmp/full" && echo keep > "$tmp/full/old.txt"
expect 2 '^sinkcert: error: command line: --out: an empty or new folder \(.*full already holds files, a study: --force replaces them\)' \
  normalizations --quick --n 4 --L 3 --attention relu --out "$tmp/full"
[ "$(cat "$tmp/full/old.txt")" = keep ] || fail "a refused --out was touched"
expect 0 'wrote [0-9]+ files to' normalizations --quick --n 4 --L 3 --attention relu \
  --out "$tmp/full" --force --quiet

# --json: one JSON summary on stdout, the study's files written as without it
"$bin" normalizations --quick --n 4 --L 3 --attention relu --json --quiet --out "$tmp/j" \
  > "$tmp/j.json" 2> "$tmp/j.err" || fail "normalizations --json: exit $?"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["command"] == "normalizations" and d["studies"][0]["attention"] == "relu", d
assert isinstance(d["studies"][0]["seconds"], float) and d["files"], d
assert "revision" in d["provenance"]
' "$tmp/j.json" || fail "normalizations --json: $(head -5 "$tmp/j.json")"
grep -q '"provenance"' "$tmp/j/studies.json" || fail "studies.json: no provenance key"
[ ! -s "$tmp/j.err" ] || fail "--quiet left stderr: $(head -3 "$tmp/j.err")"

# appendix reads results/ of the current directory, never a compiled-in path
mkdir "$tmp/empty"
(cd "$tmp/empty" && "$bin" appendix --quick --out out > "$tmp/out" 2>&1)
rc=$?
[ "$rc" -eq 2 ] || fail "appendix without results/: exit $rc (want 2)"
grep -q 'sinkcert: error: results: --models: .*not a folder in the current directory' "$tmp/out" ||
  fail "appendix without results/: $(cat "$tmp/out")"
[ ! -e "$tmp/empty/out/appendix.tex" ] || fail "appendix wrote without its inputs"
expect 0 'REPLACES results/tables' appendix --help

finish results_untouched
