#!/usr/bin/env bash
# In the REPL, a comment ends at a lone CR as in a file (and as language.md says): the bracket scanner that decides
# when an input is complete used to read the comment on to the LF, so it missed the '[' after the CR and ran
# half a directive.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

printf '; c\r[predict (+ 1\n2)]\n[predict 5]\n' >lone_cr.vnt
run lone_cr.vnt
expect_rc 0 "a comment ended by a lone CR, in a file"
expect_eq "a file runs the directive after a lone CR" "3
5" "$OUT"
IN=lone_cr.vnt run
expect_rc 0 "a comment ended by a lone CR, in the REPL"
expect_eq "the REPL runs the directive after a lone CR as a file run does" "3
5" "$OUT"
expect_eq "the REPL reports nothing" "" "$ERR"

finish
