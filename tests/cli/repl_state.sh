#!/usr/bin/env bash
# The REPL fed through stdin (not a tty: no banner, no prompts): each input runs as a transaction, an error
# is reported and the session goes on with its state intact; the exit status is 2 if any input failed.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

cat >session.txt <<'VNT'
[assume x 3]
[predict (+ x 1))]
[predict (+ x 1)]
[assume y (normal 0 -1)]
[assume y 5]
[predict y]
[predict (+ x
   10)]
[predict zz]
[predict (* x y)]
VNT
IN=session.txt run --seed 1
expect_rc 2 "a session with failed inputs"
expect_eq "values survive failed inputs; a failed assume leaves its name unbound; multi-line input" \
"4
5
13
15" "$OUT"
expect_eq "each failed input is reported against its own input number and line" \
"<repl:2>:1:17: error: unexpected ')'
<repl:4>:1:11: error: normal: argument 2 (sd) is -1, but must be positive
<repl:8>:1:10: error: unbound symbol 'zz'" "$(printf '%s\n' "$ERR" | grep ': error: ')"

printf '[assume x 3]\n[predict x]\n' >good.txt
IN=good.txt run
expect_rc 0 "a session without errors"
expect_eq "no banner or prompt when stdin is not a tty" "3" "$OUT"
expect_eq "nothing on stderr" "" "$ERR"

: >empty.txt
IN=empty.txt run
expect_rc 0 "an empty session"
expect_eq "an empty session prints nothing" "" "$OUT"

# A failed observe is rolled back too: the choice can still be observed at a possible value.
printf '[assume z (uniform_continuous 0 1)]\n[observe z 5]\n[observe z 0.5]\n[predict z]\n' >observe.txt
IN=observe.txt run
expect_rc 2 "a session with an impossible observation"
expect_eq "after a failed observe the choice can be observed again" "0.5" "$OUT"

# Several directives on one input line all run.
printf '[assume a 1] [predict (+ a 1)]\n' >oneline.txt
IN=oneline.txt run
expect_eq "two directives on one line" "2" "$OUT"

# A failing directive stops its input line; the REPL says how many directives after it did not run.
printf '[assume b 1] [predict (+ b "s")] [predict b] [assume c 2]\n[predict c]\n[predict (+ b zz)] [predict b]\n' \
  >skipped.txt
IN=skipped.txt run
expect_rc 2 "a line with a failing directive"
expect_eq "the directives after the failing one on its line did not run" "" "$OUT"
expect_eq "the error says how many did not run" \
"  note: the 2 directives after it in this input did not run
  note: the directive after it in this input did not run" "$(printf '%s\n' "$ERR" | grep 'note: the')"

# help (or :help, ?) alone lists the directives; it is not an input, so the numbers of later inputs do not move.
printf 'help\n[predict 1]\n  :help \n?\n[predict zz]\nhelp me\n' >help.txt
IN=help.txt run
expect_rc 2 "a session with help and a failed input"
expect_eq "help lists the directives, three times here" "3" \
  "$(printf '%s\n' "$OUT" | grep -c '^  \[assume name expr\]')"
expect_match "and says how to stop and quit" "^Ctrl-C stops a running directive" "$OUT"
expect_match "and lists the inference commands" "^Inference commands: \(mh scope block N\), .*\(gibbs scope block N\)" "$OUT"
expect_eq "help takes no input number; anything else with it is an input" \
"<repl:2>:1:10: error: unbound symbol 'zz'
<repl:3>:1:1: error: expected a directive in brackets, found 'help'" "$(printf '%s\n' "$ERR" | grep ': error: ')"
finish
