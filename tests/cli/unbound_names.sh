#!/usr/bin/env bash
# pprun warns, before a file's first directive runs, of each name the program reads that no directive assumes and
# no builtin has: a typo in the last directive is seen before the [infer]s before it have run, not after them.
# Names assumed later in the file (read in a procedure's body) are not warned of, nor is anything in the REPL,
# whose later inputs may assume them.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

cat >typo.vnt <<'VNT'
[assume mu (normal 0 1)]
[assume f (lambda (x) (+ x later))]
[observe (normal mu 1) 2]
[infer (mh default one 10)]
[predict (+ mu1 (f 1))]
[assume later 3]
[predict (+ mu1 (g 2) mu1)]
VNT
run typo.vnt --quiet
expect_rc 2 "a program that reads a name nothing binds"
expect_eq "each unbound name is warned of once, in the order of the program, then the run stops at the first" \
"warning: typo.vnt:5:13: 'mu1' is not assumed by any directive, nor a builtin: reading it will fail
warning: typo.vnt:7:18: 'g' is not assumed by any directive, nor a builtin: reading it will fail
typo.vnt:5:13: error: unbound symbol 'mu1'" "$(printf '%s\n' "$ERR" | grep -E '^(warning: |typo)')"

printf '[assume f (lambda () later)]\n[assume later 1]\n[predict (f)]\n' >forward.vnt
run forward.vnt
expect_rc 0 "a procedure reading a name assumed after it"
expect_eq "is not warned of" "" "$ERR"

printf '[assume f (lambda () later)]\n[assume later 1]\n[predict (f)]\n' >session.txt
IN=session.txt run
expect_rc 0 "the same in the REPL"
expect_eq "the REPL warns of nothing" "" "$ERR"
expect_eq "and runs it" "1" "$OUT"
finish
