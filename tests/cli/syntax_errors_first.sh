#!/usr/bin/env bash
# A syntax error anywhere in a file (a malformed directive or special form, a label on infer or forget) is reported
# before any directive runs, with the message and position it has when reached; so is one anywhere in a REPL input.
# So are a missing or bad {param} and an error in the text of an inference program. Errors that need the run (an
# unbound name, a scope with no random choices) still come when their directive is reached.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

# check BAD-DIRECTIVE EXPECTED-FIRST-LINE-OF-STDERR: BAD-DIRECTIVE after a directive that would print 1.
check() {
  printf '[predict 1]\n%s\n[predict 2]\n' "$1" >t.vnt
  run t.vnt
  expect_rc 2 "$1"
  expect_eq "$1: nothing runs" "" "$OUT"
  expect_eq "$1: reported as when reached" "$2" "$(first_line "$ERR")"
}

check 'q: [infer 1]' \
  't.vnt:2:1: error: infer: cannot carry a label (a label names an assume, observe, observe_csv, predict or sample)'
check 'q: [forget x]' \
  't.vnt:2:1: error: forget: cannot carry a label (a label names an assume, observe, observe_csv, predict or sample)'
check '[observe_csv f "x.csv"]' \
  "t.vnt:2:1: error: observe_csv: expected [observe_csv procedure \"file.csv\" value-column-or-(columns...) ['with_index]]"
check '[observe_csv f "x.csv" y with]' "t.vnt:2:26: error: observe_csv: unknown option (known: 'with_index)"
check '[observe_csv f "x.csv" ()]' 't.vnt:2:24: error: observe_csv: the list of value columns is empty'
check '[observe_csv f "x.csv" (y (z))]' \
  't.vnt:2:27: error: observe_csv: each value column in a list must be a column name or a 0-based index'
check '[predict (if 1 2)]' 't.vnt:2:10: error: if: expected (if condition consequent alternative)'
check '[predict (lambda x x)]' 't.vnt:2:18: error: lambda: expected a parameter list in parentheses'
check '[predict (let ((x)) x)]' 't.vnt:2:16: error: let: each binding must be (name expr)'
check '[predict]' 't.vnt:2:1: error: predict: expected [predict expression], got 0 arguments'
check '[assume 3 4]' 't.vnt:2:9: error: assume: the name must be a symbol'
check "[predict '{p}]" 't.vnt:2:11: error: a parameter {p} cannot appear inside a quoted datum'
check '[frob 1]' \
  "t.vnt:2:2: error: unknown directive 'frob' (expected assume, observe, observe_csv, predict, infer, sample or forget)"

# The check reads the {params}: a missing one stops everything before it runs too, and the first error in the file
# is the one reported.
printf '[predict 1]\n[predict {p}]\n' >param.vnt
run param.vnt
expect_rc 2 "a missing parameter"
expect_eq "nothing runs before a missing parameter" "" "$OUT"
expect_eq "a missing parameter is reported as when reached" \
  "param.vnt:2:10: error: missing parameter {p} (give it with --param p=VALUE, or Options::params in the C++ API)" "$(first_line "$ERR")"
printf '[predict 1]\n[predict (if {p})]\n[observe_csv f {file} {col} {opt}]\n' >syntax_then_param.vnt
run syntax_then_param.vnt
expect_rc 2 "a syntax error before a missing parameter"
expect_eq "the first error in the file is reported" \
  "syntax_then_param.vnt:2:10: error: if: expected (if condition consequent alternative)" "$(first_line "$ERR")"

# So is the text of an inference program: its commands, their arguments and options (scopes and blocks need the
# trace, and are checked when the [infer] is reached).
check '[infer (mh default one -1)]' \
  't.vnt:2:24: error: mh: the number of transitions must be a non-negative integer, got -1'
check '[infer (cycle ((mh default one 1) (hmc default one 1)) 5)]' \
  "t.vnt:2:36: error: unknown inference command 'hmc' (known: mh, subsampled_mh, gibbs, pgibbs, repeat, do, cycle, mixture, collect)"
check "[infer (subsampled_mh default one 100 1.5 10)]" \
  't.vnt:2:39: error: subsampled_mh: eps must be in [0, 1), got 1.5'
check "[infer (repeat 2 (collect (if 1 2)))]" 't.vnt:2:27: error: if: expected (if condition consequent alternative)'
printf '[predict 1]\n[infer (mh default one {T})]\n' >infer_param.vnt
run infer_param.vnt --param T=-3
expect_rc 2 "a bad {param} in an inference program"
expect_eq "nothing runs before a bad {param} in an inference program" "" "$OUT"
expect_eq "a bad {param} in an inference program is reported with its value" \
  "infer_param.vnt:2:24: error: mh: the number of transitions must be a non-negative integer, got -3 (from {T})" \
  "$(first_line "$ERR")"
printf '[predict 1]\n[infer (mh nowhere one 1)]\n' >infer_scope.vnt
run infer_scope.vnt
expect_rc 2 "an [infer] on a scope with no random choices"
expect_eq "a scope is checked against the trace, when the [infer] is reached" "1" "$OUT"

# The REPL: one input is one unit. None of its directives runs, the error says so, and the next input runs.
printf '[predict 1] [predict (if 1 2)] [predict 3]\n[predict 4]\n' >repl.txt
IN=repl.txt run
expect_rc 2 "a REPL input with a syntax error"
expect_eq "no directive of a REPL input with a syntax error runs; the next input does" "4" "$OUT"
expect_eq "the REPL reports the syntax error and that nothing of the input ran" \
  "<repl:1>:1:22: error: if: expected (if condition consequent alternative)
    1 | [predict 1] [predict (if 1 2)] [predict 3]
      |                      ^~~~~~~~
  note: none of the 3 directives in this input ran" "$ERR"

# The same when the parser, not the analysis, stops the input: the directives are counted from its tokens.
printf '[predict 1] [predict (+ 1 2))] [predict 3]\n[predict 4] [predict "abc]\n' >repl_parse.txt
IN=repl_parse.txt run
expect_rc 2 "a REPL input the parser rejects"
expect_eq "no directive of a REPL input the parser rejects runs" "" "$OUT"
expect_eq "the REPL says that nothing of an input the parser rejects ran" \
  "<repl:1>:1:29: error: unexpected ')'
    1 | [predict 1] [predict (+ 1 2))] [predict 3]
      |                             ^
  note: none of the 3 directives in this input ran
<repl:2>:1:22: error: unterminated string
    1 | [predict 4] [predict \"abc]
      |                      ^
  note: none of the 2 directives in this input ran" "$ERR"

finish
