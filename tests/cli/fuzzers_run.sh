#!/usr/bin/env bash
# The fuzzers in scripts/ (docs/testing.md) are run by hand, for hours: this keeps them working between those runs.
# Each runs on two seeds (the release pprun in both roles of fuzz_infer_programs) and must find nothing: pprun is
# deterministic given the seed, so the posterior fuzzers' two models agree with their exact posteriors at every run
# of one build.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

fuzz() {  # fuzz SCRIPT WHAT PPRUN...
  local script=$1 what=$2
  shift 2
  local out rc
  out=$(timeout 120 python3 "$SRC/scripts/$script" "$@" 1 2 "$TMP/kept" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] || ! printf '%s\n' "$out" | grep -q "^0 of 2 $what failed$"; then
    fail "$script: exit $rc, expected '0 of 2 $what failed'"
    printf '%s\n' "$out" | tail -n 20 | sed 's/^/  | /'
  fi
}

fuzz fuzz_posteriors.py models "$PPRUN"
fuzz fuzz_continuous_posteriors.py models "$PPRUN"
fuzz fuzz_infer_programs.py cases "$PPRUN" "$PPRUN"
fuzz fuzz_mixed_models.py programs "$PPRUN"
fuzz fuzz_repl_sessions.py sessions "$PPRUN"
finish
