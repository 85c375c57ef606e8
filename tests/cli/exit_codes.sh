#!/usr/bin/env bash
# pprun exit statuses: 0 for success, --help and --version; 2 for program errors and usage errors.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

printf '[predict (+ 1 2)]\n' >ok.vnt
run ok.vnt
expect_rc 0 "a correct program"
expect_eq "a correct program prints its prediction" "3" "$OUT"
expect_eq "a correct program prints nothing on stderr" "" "$ERR"

printf '[predict 1]\n[predict (normal 0 -1)]\n[predict 2]\n' >bad.vnt
run bad.vnt
expect_rc 2 "a program error"
expect_eq "output before the error is kept, nothing after it runs" "1" "$OUT"
expect_eq "a program error is reported gcc-style with a source line and a caret" \
"bad.vnt:2:10: error: normal: argument 2 (sd) is -1, but must be positive
    2 | [predict (normal 0 -1)]
      |          ^~~~~~~~~~~~~" "$ERR"

printf '[predict (+ 1 2\n' >syntax.vnt
run syntax.vnt
expect_rc 2 "a syntax error"

run ok.vnt --frob
expect_rc 2 "an unknown flag"
expect_match "an unknown flag is named" "--frob" "$ERR"

run ok.vnt --param x
expect_rc 2 "--param without '='"
expect_eq "--param without '=' is explained" "pprun: --param expects name=value, got 'x'" "$ERR"

run ok.vnt --param =3
expect_rc 2 "--param with an empty name"

run ok.vnt --param a=1 --param b=2 --param a=3
expect_rc 2 "--param given twice for one name"
expect_eq "--param given twice is explained" "pprun: --param a is given twice" "$ERR"

printf '[predict (+ {a} {b})]\n' >params.vnt
run --param a=1 --param b=2 params.vnt
expect_rc 0 "--param before the program file"
expect_eq "each --param takes one value, not the program file after it" "3" "$OUT"

run ok.vnt --seed abc
expect_rc 2 "a non-numeric --seed"

for seed in -1 18446744073709551616 1.5 " 3"; do  # CLI11 alone would take the first two as 2^64 - 1
  run ok.vnt --seed "$seed"
  expect_rc 2 "--seed $seed"
  expect_eq "--seed $seed is explained" "pprun: --seed: must be an integer from 0 to 18446744073709551615, got $seed
Run with --help for more information." "$ERR"
done
run ok.vnt --seed 1 --seed 2  # CLI11 said "--seed: At Most 1 required but received 2"
expect_rc 2 "--seed given twice"
expect_eq "--seed given twice is explained" "pprun: --seed is given 2 times (give it once)
Run with --help for more information." "$ERR"
run ok.vnt --frob
expect_eq "an unknown flag is explained as pprun's own usage errors are" \
  "pprun: The following argument was not expected: --frob
Run with --help for more information." "$ERR"
run ok.vnt --seed 18446744073709551615
expect_rc 0 "the largest --seed"

run ok.vnt other.vnt
expect_rc 2 "two program files"

run --draws d.csv  # it was ignored without a word
expect_rc 2 "--draws without a program file"
expect_eq "--draws without a program file is explained" \
  "pprun: --draws needs a program file; the REPL does not write draws" "$ERR"

run ""  # pprun "$MODEL" with MODEL unset started a REPL that read nothing and exited 0
expect_rc 2 "an empty program file name"
expect_eq "an empty program file name is explained" "pprun: the program file name is empty" "$ERR"

printf '[predict (* 2 21)]\n[predict (normal 0 -1)]\n' >stdin.vnt
IN=stdin.vnt run -
expect_rc 2 "a program read from standard input, with an error"
expect_eq "- reads the program from standard input" "42" "$OUT"
expect_eq "and names it <stdin> in errors" "<stdin>:2:10: error: normal: argument 2 (sd) is -1, but must be positive" \
  "$(first_line "$ERR")"

run --help
expect_rc 0 "--help"
expect_match "--help shows the usage" "^Usage: pprun" "$OUT"
expect_match "--help lists --param" "--param" "$OUT"

run --version
expect_rc 0 "--version"
expect_match "--version prints the version" "^pprun [0-9]+\.[0-9]+" "$OUT"

finish
