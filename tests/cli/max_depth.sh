#!/usr/bin/env bash
# --max-depth bounds evaluation nesting: runaway recursion is an error (exit 2), never a stack overflow,
# whatever depth is asked for; a depth that makes no sense is a usage error.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

# count 4000 through mem is about 10 000 levels of evaluation: within the default, under AddressSanitizer too.
printf '[assume count (mem (lambda (n) (if (= n 0) 0 (+ 1 (count (- n 1))))))]\n[predict (count 4000)]\n' >deep.vnt
run deep.vnt
expect_rc 0 "depth 4000 with the default limit"
expect_eq "depth 4000 works" "4000" "$OUT"
run deep.vnt --max-depth 100
expect_rc 2 "depth 4000 with --max-depth 100"
expect_match "the limit given is reported" "error: maximum evaluation depth \(100\) exceeded" "$ERR"

# The most --help allows: what the stack holds (under AddressSanitizer, whose unwinding of more than 64 MiB of stack
# gave a false report instead of the error at depths from 16000 on, it is about 12700).
run --help
LIMIT=$(printf '%s\n' "$OUT" | sed -n 's/.*at most \([0-9]*\) here.*/\1/p' | head -n 1)
DEFAULT=$(( ${LIMIT:-0} < 20000 ? ${LIMIT:-0} : 20000 ))

printf '[assume f (lambda (x) (f x))]\n[predict (f 1)]\n' >runaway.vnt
run runaway.vnt
expect_rc 2 "runaway recursion with the default limit"
expect_eq "the default limit is 20000 where the stack holds it, and the caret is on the recursive call" \
  "runaway.vnt:1:23: error: maximum evaluation depth ($DEFAULT) exceeded: runaway recursion?" "$(first_line "$ERR")"
expect_match "identical frames collapse into one line" "in call to 'f' at runaway.vnt:1:23 \(repeated [0-9]+ times\)" "$ERR"
expect_match "the outermost call is kept" "in call to 'f' at runaway.vnt:2:10" "$ERR"
expect_match "pprun says how to raise the limit" "note: .*--max-depth" "$ERR"

# A limit larger than the stack can hold must not turn runaway recursion into a crash (it was SIGSEGV, 139,
# after about 4 s: the 1 GiB evaluation stack overflows near depth 600000). Recursing to the stack's bound takes
# about 5 s under AddressSanitizer, more on a loaded machine: a longer timeout than other runs.
RUN_TIMEOUT=60 run runaway.vnt --max-depth 1000000
expect_rc 2 "runaway recursion with --max-depth 1000000"
# The most --help allows must hold too.
RUN_TIMEOUT=60 run runaway.vnt --max-depth "${LIMIT:-0}"
expect_rc 2 "runaway recursion with the largest --max-depth --help allows ($LIMIT)"
expect_eq "the largest --max-depth gives the depth error" \
  "runaway.vnt:1:23: error: maximum evaluation depth ($LIMIT) exceeded: runaway recursion?" "$(first_line "$ERR")"

run runaway.vnt --max-depth -5
expect_rc 2 "a negative --max-depth"
expect_match "a negative --max-depth is a usage error naming the option" "--max-depth" "$ERR"
run runaway.vnt --max-depth 0
expect_rc 2 "--max-depth 0"
expect_match "--max-depth 0 is a usage error naming the option" "--max-depth" "$ERR"
run runaway.vnt --max-depth 10x
expect_rc 2 "--max-depth that is not an integer"

finish
