#!/usr/bin/env bash
# An inference argument given by --param shows the value given in its error, with the parameter it came from:
# `got 1e13 (from {T})`. The messages showed only `{T}`, which says nothing of what was wrong.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

printf "[assume w (scope_include 'w 0 (normal 0 1))]\n[observe (normal w 1) 1]\n%s\n" \
  "[infer (repeat {T} (subsampled_mh {scope} all 100 {eps} 'drift {sigma} 1))]" >m.vnt
# check WHAT EXPECTED-FIRST-LINE-OF-STDERR T SCOPE EPS SIGMA: m.vnt run with these parameters.
check() {
  run m.vnt --param T="$3" --param scope="$4" --param eps="$5" --param sigma="$6"
  expect_rc 2 "$1"
  expect_eq "$1" "$2" "$(first_line "$ERR")"
}

check "a count too large" "m.vnt:3:16: error: repeat: the count must be at most 1e12, got 1e13 (from {T})" \
  1e13 w 0.1 0.5
check "a count that is not an integer" \
  "m.vnt:3:16: error: repeat: the count must be a non-negative integer, got 2.5 (from {T})" 2.5 w 0.1 0.5
check "a count that is not a number" "m.vnt:3:16: error: repeat: the count must be a number, got '2k' (from {T})" \
  2k w 0.1 0.5
check "eps out of range" "m.vnt:3:51: error: subsampled_mh: eps must be in [0, 1), got 1 (from {eps})" 1 w 1 0.5
check "a drift sigma that is not positive" \
  "m.vnt:3:64: error: subsampled_mh: the drift sigma must be positive, got -0.1 (from {sigma})" 1 w 0.1 -0.1
check "a scope that is a number" \
  "m.vnt:3:35: error: subsampled_mh: the scope must be a symbol such as default, got '3' (from {scope})" 1 3 0.1 0.5

# A literal argument is shown as written, as before.
printf "[assume x (normal 0 1)]\n[infer (mh default one 'drift 0.0 10)]\n" >lit.vnt
run lit.vnt
expect_rc 2 "a literal drift sigma of 0.0"
expect_eq "a literal argument is shown as written" \
  "lit.vnt:2:31: error: mh: the drift sigma must be positive, got 0.0" "$(first_line "$ERR")"

finish
