#!/usr/bin/env bash
# REPL input with unbalanced brackets must be reported, never silently swallowed: a wrong closing bracket ends
# the input at once (so the next lines are read as new inputs), and input still open at end of file is run
# (its syntax error reported, exit status 2).
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

printf '[assume x 3]\n[predict (+ x 1]\n[predict (+ x 1)]\n' >wrong_closer.txt
IN=wrong_closer.txt run
expect_rc 2 "a session with a wrong closing bracket"
expect_eq "the input after a wrong closing bracket still runs" "4" "$OUT"
expect_eq "the wrong closing bracket is reported" \
  "<repl:2>:1:16: error: expected ')' to close '(' opened at 1:10, found ']'" "$(first_line "$ERR")"

printf '[assume x 3]\n[predict x\n[predict (+ x 2)]\n[predict (+ x 1)]\n' >unclosed_directive.txt
IN=unclosed_directive.txt run
expect_rc 2 "a session with a directive left open"
expect_eq "a '[' inside an open directive ends it; the next lines are new inputs" "4" "$OUT"
expect_eq "the directive left open is reported" \
  "<repl:2>:2:1: error: expected ']' to close '[' opened at 1:1, found '['" "$(first_line "$ERR")"

printf '[predict 1]\n[predict (+ 1 2\n' >open_at_eof.txt
IN=open_at_eof.txt run
expect_rc 2 "a session ending inside an open input"
expect_eq "the complete input before it ran" "1" "$OUT"
expect_eq "input left open at end of file is reported" \
  "<repl:2>:1:10: error: unexpected end of input: expected ')' to close '(' opened at 1:10" "$(first_line "$ERR")"

# A directive of many lines is read in time linear in its size: the brackets of the lines read so far are not
# scanned again for each new line (100 000 lines took 20 s, quadratically, and a piped file left open near its
# start looked like a hang).
awk 'BEGIN { print "[predict (+ 0"; for (i = 0; i < 100000; ++i) print " 1 ; a comment ( ["; print ")]" }' \
  >long_directive.txt
IN=long_directive.txt run
expect_rc 0 "a directive of 100 000 lines"
expect_eq "a directive of 100 000 lines is read whole" "100000" "$OUT"

finish
