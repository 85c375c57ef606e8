#!/usr/bin/env bash
# The seed fixes every random choice: the same seed gives the same output, another seed another output.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

cat >model.vnt <<'VNT'
[assume x (normal 0 1)]
[predict x]
[sample (normal 0 1)]
[assume mu (normal 0 1)]
[observe (normal mu 1) 2]
[infer (repeat 20 (do (mh default one 2) (collect mu)))]
[predict mu]
VNT

run model.vnt --seed 7 --quiet --draws a.csv
expect_rc 0 "seed 7"
first=$OUT
run model.vnt --seed 7 --quiet --draws b.csv
expect_eq "the same seed gives the same output" "$first" "$OUT"
expect_eq "the same seed gives the same draws" "$(cat a.csv)" "$(cat b.csv)"

run model.vnt --seed 8 --quiet --draws c.csv
expect_rc 0 "seed 8"
if [ "$first" = "$OUT" ]; then fail "seeds 7 and 8 gave the same output"; show_run; fi
if cmp -s a.csv c.csv; then fail "seeds 7 and 8 gave the same draws"; fi

run model.vnt --quiet
default1=$OUT
run model.vnt --quiet
expect_eq "without --seed the run is still reproducible" "$default1" "$OUT"

# The REPL follows the same seed.
IN=model.vnt run --seed 7
expect_eq "the REPL with the same seed prints the same values" "$first" "$OUT"

finish
