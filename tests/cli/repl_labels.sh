#!/usr/bin/env bash
# Labelled predictions print as `label: value` in the REPL, exactly as when running a file.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

printf 'l: [predict 7]\n[forget l]\nl: [predict (+ 1 1)]\n' >labels.vnt
run labels.vnt
expect_rc 0 "labels in a file"
file_out=$OUT
expect_eq "a file prints labels" "l: 7
l: 2" "$file_out"

IN=labels.vnt run
expect_rc 0 "labels in the REPL"
expect_eq "the REPL prints labels as a file run does" "$file_out" "$OUT"

# A label alone on its line waits for its directive, as in a file (it was run alone: a syntax error, and the
# directive on the next line ran unlabelled).
printf 'a: ; the label of\n\n[predict 3]\n[forget a]\n' >label_line.vnt
run label_line.vnt
expect_rc 0 "a label on its own line in a file"
file_out=$OUT
IN=label_line.vnt run
expect_rc 0 "a label on its own line in the REPL"
expect_eq "a label on its own line labels the next directive" "a: 3" "$OUT"
expect_eq "the REPL runs it as a file run does" "$file_out" "$OUT"

finish
