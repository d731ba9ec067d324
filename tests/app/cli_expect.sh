# SPDX-License-Identifier: MIT
# Sourced by the end-to-end CLI tests: a scratch directory removed on exit, a
# failure counter, and
#   expect RC PATTERN ARGS...   run "$bin" ARGS; require exit code RC and
#                               PATTERN (grep -E) in stdout+stderr
#   expect_not RC PATTERN ARGS...  the same exit code and PATTERN nowhere
#   fail MESSAGE                count a failed check of the caller's own
#   finish NAME                 report and exit 1 if any expectation failed
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

expect() {
  want_rc=$1 pattern=$2
  shift 2
  "$bin" "$@" > "$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! grep -Eq -- "$pattern" "$tmp/out"; then
    echo "FAIL: sinkcert $* -> exit $rc (want $want_rc), pattern '$pattern'; output:"
    head -20 "$tmp/out"
    failures=$((failures + 1))
  fi
}

expect_not() {
  want_rc=$1 pattern=$2
  shift 2
  "$bin" "$@" > "$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne "$want_rc" ] || grep -Eq -- "$pattern" "$tmp/out"; then
    echo "FAIL: sinkcert $* -> exit $rc (want $want_rc), pattern '$pattern' must not appear; output:"
    head -20 "$tmp/out"
    failures=$((failures + 1))
  fi
}

fail() {
  echo "FAIL: $1"
  failures=$((failures + 1))
}

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures $1 CLI check(s) failed"
    exit 1
  fi
  echo "all $1 CLI checks passed"
}
