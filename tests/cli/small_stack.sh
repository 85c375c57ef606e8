#!/usr/bin/env bash
# pprun evaluates on a thread with a 1 GiB stack. When that stack cannot be had (here: a 600 MB address-space
# limit, as under strict overcommit or a container limit), deep recursion must still end in an error or a
# result, never in a crash. (It fell back to the 8 MiB main stack with the depth limit meant for 1 GiB: SIGSEGV.)
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

# limited ARGS... : like run, under `ulimit -v 600000` (a subshell, so the limit stays there).
limited() {
  (ulimit -v 600000 && exec timeout 10 "$PPRUN" "$@") </dev/null >"$TMP/.out" 2>"$TMP/.err"
  RC=$?
  OUT=$(cat "$TMP/.out")
  ERR=$(cat "$TMP/.err")
  LAST_CMD="(ulimit -v 600000; pprun $*)"
}

printf '[predict 1]\n' >one.vnt
limited one.vnt
if [ "$RC" -ne 0 ] || [ "$OUT" != 1 ]; then
  echo "[$TEST_NAME] pprun does not start under a 600 MB address-space limit (sanitizer build?): skipped"
  exit 0
fi

printf '[assume f (lambda (x) (f x))]\n[predict (f 1)]\n' >runaway.vnt
limited runaway.vnt
expect_rc 2 "runaway recursion on a small stack"

printf '[assume count (mem (lambda (n) (if (= n 0) 0 (+ 1 (count (- n 1))))))]\n[predict (count 5000)]\n' >deep.vnt
limited deep.vnt
if [ "$RC" -ne 0 ] && [ "$RC" -ne 2 ]; then fail "depth 5000 on a small stack: expected exit status 0 (or 2 with an error), got $RC"; show_run; fi
if [ "$RC" -eq 0 ] && [ "$OUT" != 5000 ]; then fail "depth 5000 on a small stack printed '$OUT', expected 5000"; fi

finish
