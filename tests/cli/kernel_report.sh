#!/usr/bin/env bash
# After the summary table, pprun prints the kernel report: one line per kernel of each [infer] with its
# transitions, acceptance rate and, for subsampled_mh, the data touched; --quiet leaves it out.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

{
  echo y,x
  for i in $(seq 1 300); do echo "1.$((i % 10)),0.$((i % 7))"; done
} >data.csv
cat >model.vnt <<'VNT'
[assume mu (scope_include 'mu 0 (normal 0 1))]
[assume y (lambda (x) (normal (+ mu (* 0.1 (lookup x 0))) 1))]
[observe_csv y "data.csv" y]
[assume a (normal 0 1)]
[infer (repeat 50 (do (mh default one 2) (subsampled_mh mu all 20 0.05 'drift 0.5 1) (collect mu)))]
[infer 30]
[predict 'done]
VNT

run model.vnt --seed 2
expect_rc 0 "a program with three kernels"
expect_eq "predictions come first" "done" "$(first_line "$OUT")"
expect_match "the report has a header" "^kernel +transitions +accepted +data touched$" "$OUT"
expect_match "mh: its transitions (50 x 2) and acceptance rate, located at the kernel" \
  '^mh default one \(model\.vnt:5:23\) +100 +[01]\.[0-9]{3}$' "$OUT"
expect_match "subsampled_mh: transitions, rate and the data touched of N = 300" \
  '^subsampled_mh mu all \(model\.vnt:5:42\) +50 +[01]\.[0-9]{3}  [0-9.e-]+ of N \(mean [0-9]+ of 300 sections\)$' \
  "$OUT"
expect_match "a bare [infer 30] is mh default one, with its own line" \
  '^mh default one \(model\.vnt:6:8\) +30 +[01]\.[0-9]{3}$' "$OUT"
expect_eq "the report follows the summary table, after a blank line" \
  "done
name
mu

kernel
mh
subsampled_mh
mh" "$(printf '%s\n' "$OUT" | cut -d' ' -f1)"
misaligned=$(printf '%s\n' "$OUT" | awk '
  /^kernel/ { t = index($0, "transitions") + 10; a = index($0, "accepted") + 7; on = 1; next }
  on && (substr($0, t, 1) !~ /[0-9]/ || substr($0, t + 1, 1) != " " || substr($0, a, 1) !~ /[0-9]/ ||
         substr($0, a + 1, 1) ~ /[^ ]/) { print }')
expect_eq "the counts and rates end under the ends of their headers" "" "$misaligned"

run model.vnt --seed 2 --quiet
expect_rc 0 "--quiet"
expect_eq "--quiet prints neither the summary nor the report" "done" "$OUT"

# Without collect there is no summary table, but the kernels still report; exact mh stands in for
# subsampled_mh when the choice has no border (N <= 1).
cat >exact.vnt <<'VNT'
[assume b (normal 0 1)]
[observe (normal b 1) 0.3]
[infer (subsampled_mh default one 10 0.1 7)]
VNT
run exact.vnt
expect_rc 0 "subsampled_mh with no border"
expect_eq "the report alone" "kernel" "$(first_line "$OUT" | cut -d' ' -f1)"
expect_match "the exact transitions are counted" \
  '^subsampled_mh default one \(exact\.vnt:3:8\)            7     [01]\.[0-9]{3}  exact mh in 7 of 7 transitions$' "$OUT"

# A scope's name is escaped as messages show it, so that a row stays one line (this one holds an ESC and, the
# printf's \n, a line break), and the columns line up in terminal cells, not bytes (a name in Greek letters).
{
  printf '[assume x (scope_include "a\033b\nc" 0 (normal 0 1))]\n'
  printf '[assume y (scope_include (quote μμμμ) 0 (normal 0 1))]\n'
  printf '[infer (cycle ((mh "a\033b\nc" all 1) (mh μμμμ all 1)) 3)]\n'
} >names.vnt
run names.vnt
expect_rc 0 "scopes with a control character and with Greek letters"
expect_eq "the report has a header and two rows, the control characters escaped" \
  'kernel                               transitions  accepted
mh a\x1bb\x0ac all (names.vnt:4:16)            3     1.000
mh μμμμ all (names.vnt:5:11)                   3     1.000' "$OUT"

finish
