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

finish
