# Helpers sourced by tests/cli/*.sh (not a test itself: CTest registers only *.sh).
# Usage in a test: source "$(dirname "$0")/common.bash" "$@"   (arguments: PPRUN SOURCE_DIR)
# SPDX-License-Identifier: Apache-2.0
PPRUN=$(realpath "${1:?usage: $0 PPRUN SOURCE_DIR}")
CLI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # for the other helpers: the test runs in $TMP
SRC=${2:?usage: $0 PPRUN SOURCE_DIR}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
FAILS=0
TEST_NAME=$(basename "$0" .sh)

fail() {
  echo "FAIL [$TEST_NAME] $*"
  FAILS=$((FAILS + 1))
}

# run ARGS... : runs pprun (stdin from $IN if set, else empty) with a timeout of RUN_TIMEOUT seconds (10 unless
# set); sets OUT, ERR and RC.
run() {
  local in=${IN:-/dev/null}
  timeout "${RUN_TIMEOUT:-10}" "$PPRUN" "$@" <"$in" >"$TMP/.out" 2>"$TMP/.err"
  RC=$?
  OUT=$(cat "$TMP/.out")
  ERR=$(cat "$TMP/.err")
  LAST_CMD="pprun $*${IN:+ < $IN}"
  if [ "$RC" -eq 124 ]; then fail "$LAST_CMD: timed out"; fi
  if [ "$RC" -gt 2 ] && [ "$RC" -ne 124 ]; then fail "$LAST_CMD: CRASH, exit status $RC (pprun only exits 0, 1 or 2)"; fi
}

# Shows the last run, after a failed check.
show_run() {
  echo "  command: $LAST_CMD (exit $RC)"
  printf '%s\n' "$OUT" | sed 's/^/  stdout | /'
  printf '%s\n' "$ERR" | sed 's/^/  stderr | /'
}

expect_rc() {  # expect_rc N WHAT
  if [ "$RC" -ne "$1" ]; then fail "$2: expected exit status $1, got $RC"; show_run; fi
}

expect_eq() {  # expect_eq WHAT EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then
    fail "$1"
    diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") | sed 's/^/  /'
    show_run
  fi
}

expect_match() {  # expect_match WHAT EXTENDED-REGEX TEXT
  if ! printf '%s\n' "$3" | grep -Eq -- "$2"; then fail "$1: no line matches /$2/"; show_run; fi
}

first_line() { printf '%s\n' "$1" | head -n 1; }

finish() {
  if [ "$FAILS" -gt 0 ]; then
    echo "[$TEST_NAME] $FAILS check(s) failed"
    exit 1
  fi
  echo "[$TEST_NAME] all checks passed"
  exit 0
}
