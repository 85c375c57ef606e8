#!/usr/bin/env bash
# --max-depth bounds evaluation nesting: runaway recursion is an error (exit 2), never a stack overflow,
# whatever depth is asked for; a depth that makes no sense is a usage error.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

printf '[assume count (mem (lambda (n) (if (= n 0) 0 (+ 1 (count (- n 1))))))]\n[predict (count 5000)]\n' >deep.vnt
run deep.vnt
expect_rc 0 "depth 5000 with the default limit"
expect_eq "depth 5000 works" "5000" "$OUT"
run deep.vnt --max-depth 100
expect_rc 2 "depth 5000 with --max-depth 100"
expect_match "the limit given is reported" "error: maximum evaluation depth \(100\) exceeded" "$ERR"

printf '[assume f (lambda (x) (f x))]\n[predict (f 1)]\n' >runaway.vnt
run runaway.vnt
expect_rc 2 "runaway recursion with the default limit"

# A limit larger than the stack can hold must not turn runaway recursion into a crash (it was SIGSEGV, 139,
# after about 4 s: the 1 GiB evaluation stack overflows near depth 600000).
run runaway.vnt --max-depth 1000000
expect_rc 2 "runaway recursion with --max-depth 1000000"

run runaway.vnt --max-depth -5
expect_rc 2 "a negative --max-depth"
expect_match "a negative --max-depth is a usage error naming the option" "--max-depth" "$ERR"

finish
