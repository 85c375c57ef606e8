#!/usr/bin/env bash
# --draws writes the collected draws as CSV (a header, one row per collect); the summary table goes to stdout
# after the predictions unless --quiet.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

cat >model.vnt <<'VNT'
[assume mu (normal 0 1)]
[observe (normal mu 1) 1]
[assume v (vector mu 5)]
[infer (repeat 40 (do (mh default one 1) (collect mu (* 2 mu) (> mu 0) v)))]
[predict 'done]
VNT

run model.vnt --seed 3 --draws draws.csv
expect_rc 0 "a run with --draws"
expect_eq "the CSV header names each collected expression; a vector gives one column per element" \
  "mu,(* 2 mu),(> mu 0),v[0],v[1]" "$(head -n 1 draws.csv)"
expect_eq "one CSV row per collect" "40" "$(tail -n +2 draws.csv | wc -l | tr -d ' ')"
bad_rows=$(tail -n +2 draws.csv | awk -F, '
  NF != 5 || ($2 - 2 * $1) > 1e-9 || ($2 - 2 * $1) < -1e-9 || ($3 != ($1 > 0)) || $4 != $1 || $5 != 5 { print NR + 1 ": " $0 }')
expect_eq "every row is consistent (5 fields, (* 2 mu) = 2 mu, (> mu 0) as 0/1, v = [mu 5])" "" "$bad_rows"

expect_eq "predictions come first, then the summary table" "done" "$(first_line "$OUT")"
expect_match "the summary table has a header" "^name +mean +sd +5% +50% +95% +ess$" "$OUT"
for col in 'mu' '\(\* 2 mu\)' '\(> mu 0\)' 'v\[0\]' 'v\[1\]'; do
  expect_match "the summary table has a row for $col" "^$col +-?[0-9]" "$OUT"
done
expect_match "the summary of the constant column v[1] has mean 5" '^v\[1\] +5 ' "$OUT"

run model.vnt --seed 3 --quiet
expect_rc 0 "--quiet"
expect_eq "--quiet prints the predictions only" "done" "$OUT"

# A NaN draw is a value, not a missing cell: "nan" in the CSV (a missing cell stays empty), and it is not left out
# of the summary, which then has no mean to give. (/ 0 0) is first collected in the third row.
cat >nan.vnt <<'VNT'
[assume mu (normal 0 1)]
[infer (repeat 2 (do (mh default one 1) (collect mu)))]
[infer (repeat 2 (do (mh default one 1) (collect mu (/ 0 0) (if (> mu 0) (/ 0 0) mu))))]
[infer (repeat 2 (do (mh default one 1) (collect mu (if (> mu 0) (/ 0 0) mu))))]
VNT
run nan.vnt --seed 3 --draws nan.csv
expect_rc 0 "a run collecting NaN"
expect_eq "NaN draws are written as nan, missing cells stay empty" "||nan|nan|||" \
  "$(tail -n +2 nan.csv | cut -d, -f2 | tr '\n' '|')"
expect_match "a column with NaN draws has a nan mean in the summary, not the mean of its numbers" \
  '^\(if \(> mu 0\) \(/ 0 0\) mu\) +nan ' "$OUT"

printf '[predict 1]\n' >nodraws.vnt
run nodraws.vnt --draws empty.csv
expect_rc 0 "a program without collect"
expect_eq "no summary table without draws" "1" "$OUT"
if [ -s empty.csv ]; then fail "a program without collect wrote a non-empty draws file"; fi

# Collecting only empty vectors gives rows without columns: neither a CSV of blank lines nor an empty table.
printf '[infer (repeat 3 (collect (vector)))]\n[predict 2]\n' >empty_vectors.vnt
run empty_vectors.vnt --draws empty_vectors.csv
expect_rc 0 "a program collecting empty vectors"
expect_eq "no summary table without columns" "2" "$OUT"
if [ -s empty_vectors.csv ]; then fail "collecting empty vectors wrote blank lines to the draws file"; fi

run model.vnt --seed 3 --quiet --draws no/such/dir/draws.csv
expect_rc 2 "--draws into a missing directory"
expect_eq "an unwritable --draws path is reported" \
  "error: cannot write 'no/such/dir/draws.csv': No such file or directory" "$ERR"

run model.vnt --seed 3 --quiet --draws ''
expect_rc 2 "an empty --draws"
expect_eq "an empty --draws is refused, not taken for no --draws" "pprun: --draws expects a file name, got ''" "$ERR"

cp model.vnt keep.vnt
run model.vnt --seed 3 --quiet --draws ./model.vnt
expect_rc 2 "--draws naming the program file"
expect_eq "--draws naming the program file is refused" \
  "error: --draws: './model.vnt' is the program file, which the draws would overwrite" "$ERR"
if ! cmp -s model.vnt keep.vnt; then fail "--draws naming the program file overwrote it"; fi

# A directive that fails after an [infer] keeps that [infer]'s draws: they are written and summarized (with the
# kernel report, before the error), and the run still fails. The rows of a failing [infer] itself are dropped;
# with no rows, the file is emptied.
cat >late_error.vnt <<'VNT'
[assume mu (normal 0 1)]
[infer (repeat 5 (do (mh default one 1) (collect mu)))]
[infer (repeat 3 (do (mh default one 1) (collect mu (log (- 0 1)))))]
VNT
run late_error.vnt --seed 3 --draws late.csv
expect_rc 2 "a directive failing after an [infer]"
expect_eq "the draws collected before it are written" "mu|5" \
  "$(head -n 1 late.csv)|$(tail -n +2 late.csv | wc -l | tr -d ' ')"
expect_eq "and summarized, with the kernel report" "name    mean     sd       5%     50%    95%  ess
mu    0.4632  0.735  -0.3877  0.5762  1.311    5

kernel                                transitions  accepted
mh default one (late_error.vnt:2:22)            5     1.000" "$OUT"
expect_match "then the error" "^late_error.vnt:3:53: error: log: argument 1 is -1" "$(first_line "$ERR")"
run late_error.vnt --seed 3 --quiet
expect_rc 2 "a directive failing after an [infer], --quiet"
expect_eq "--quiet prints no summary after an error either" "" "$OUT"
# An unwritable --draws is found before the run, not after it: nothing runs.
run late_error.vnt --seed 3 --draws no/such/dir/late.csv
expect_rc 2 "a program with an unwritable --draws"
expect_eq "an unwritable --draws stops pprun before the program runs" \
  "error: cannot write 'no/such/dir/late.csv': No such file or directory" "$ERR"
expect_eq "and nothing runs" "" "$OUT"
chmod a-w late.csv
if [ ! -w late.csv ]; then  # (root may write anyway)
  cp late.csv kept.csv
  run model.vnt --seed 3 --quiet --draws late.csv
  expect_rc 2 "--draws on a read-only file"
  expect_eq "a read-only --draws file is refused before the run" \
    "error: cannot write 'late.csv': Permission denied" "$ERR"
  if ! cmp -s late.csv kept.csv; then fail "the check of a read-only --draws file changed it"; fi
fi
chmod u+w late.csv
run model.vnt --seed 3 --quiet --draws fresh.csv
expect_rc 0 "a --draws file that does not exist yet"
if [ ! -s fresh.csv ]; then fail "the draws were not written to a new file"; fi
printf '[assume mu (normal 0 1)]\n[predict (foo)]\n' >no_rows.vnt
cp late.csv none.csv
run no_rows.vnt --draws none.csv
expect_rc 2 "a failing program that collected nothing"
if [ ! -e none.csv ] || [ -s none.csv ]; then
  fail "a failing program that collected nothing left an older run's draws in the file (or removed it)"
fi

if [ -w /dev/full ]; then  # a failed write shows only when the file is closed
  run model.vnt --seed 3 --quiet --draws /dev/full
  expect_rc 2 "--draws on a full device"
  expect_eq "a failed write of the draws is reported" "error: cannot write '/dev/full': No space left on device" "$ERR"
fi

finish
