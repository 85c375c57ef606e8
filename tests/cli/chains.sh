#!/usr/bin/env bash
# pprun --chains K: K runs of the program with seeds S..S+K-1, each exactly the run of its seed alone, summarised
# together with R-hat (which must flag chains stuck in different modes), draws written with a chain column, errors
# said once when every chain would say them alike.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

cat >model.vnt <<'VNT'
[assume mu (normal 0 1)]
[observe (normal mu 1) 2]
[infer (repeat 2000 (do (mh default one 'drift 1 1) (collect mu)))]
[predict mu]
VNT

run model.vnt --chains 3 --seed 5 --draws all.csv
expect_rc 0 "three chains"
expected=""
for c in 1 2 3; do
  seed=$((4 + c))
  run model.vnt --seed $seed --quiet --draws "one$c.csv"
  expected+="chain $c (seed $seed):"$'\n'"$OUT"$'\n'
  # Chain c's rows of the table are seed 5 + c - 1's draws, after the chain column.
  expect_eq "chain $c draws what seed $seed draws alone" "$(tail -n +2 "one$c.csv")" \
    "$(awk -F, -v c=$c 'NR > 1 && $1 == c { print $2 }' all.csv)"
done
run model.vnt --chains 3 --seed 5 --draws all.csv
expect_eq "each chain prints what its seed prints alone, in chain order" "${expected%$'\n'}" \
  "$(printf '%s\n' "$OUT" | sed -n 1,6p)"
expect_eq "the draws have a chain column" "chain,mu" "$(head -n 1 all.csv)"
expect_eq "the draws hold every chain's rows" "6001" "$(wc -l <all.csv | tr -d ' ')"
expect_match "the summary has an rhat column" "^name +mean +sd +5% +50% +95% +ess +rhat$" "$OUT"
rhat=$(printf '%s\n' "$OUT" | awk '$1 == "mu" { print $NF }')
# 3 x 2000 draws of a chain whose autocorrelation time is about 5: six halves of 1000 draws, whose means scatter by
# sqrt(5 / 1000) sd, give R-hat - 1 of a few 1e-3.
expect_eq "well-mixed chains have R-hat below 1.01" "yes" "$(awk -v r="$rhat" 'BEGIN { print (r < 1.01) ? "yes" : "no" }')"
# The posterior is normal(1, sqrt(1/2)): the pooled mean is within 4 standard errors of 1, by the printed ESS.
expect_eq "the pooled mean agrees with the exact posterior mean" "yes" "$(printf '%s\n' "$OUT" |
  awk '$1 == "mu" { se = sqrt(0.5 / $7); print ($2 - 1 < 4 * se && 1 - $2 < 4 * se) ? "yes" : "no" }')"
expect_match "the kernel report adds up the chains' transitions" "^mh default one \(model.vnt:3:25\) +6000 " "$OUT"
expect_eq "same seed, same output" "$(run model.vnt --chains 3 --seed 5 --draws again.csv; echo "$OUT")" "$OUT"

# Two modes at x = -10 and 10 that small drift steps never cross: chains that start in different modes stay there.
cat >modes.vnt <<'VNT'
[assume x (normal 0 10)]
[observe (normal (* x x) 1) 100]
[infer (repeat 500 (do (mh default one 'drift 0.1 1) (collect x)))]
VNT
run modes.vnt --chains 4 --seed 3
expect_rc 0 "chains in two modes"
rhat=$(printf '%s\n' "$OUT" | awk '$1 == "x" { print $NF }')
expect_eq "chains stuck in different modes have R-hat far above 1 (got $rhat)" "yes" \
  "$(awk -v r="$rhat" 'BEGIN { print (r > 1.5) ? "yes" : "no" }')"

printf '[assume chain 7]\n[infer (collect chain)]\n' >named.vnt
run named.vnt --chains 2 --draws named.csv
expect_eq "a collected column named chain keeps its values, the chain column gives way" "_chain,chain
1,7
2,7" "$(cat named.csv)"

run model.vnt --chains 1 --seed 5
one=$OUT
run model.vnt --seed 5
expect_eq "--chains 1 is the run without it" "$OUT" "$one"

# An error before anything runs is said once; an error every chain meets is said by each; an error some chains
# meet fails the run, the others' output and draws kept.
printf '[predict 1]\n[predict (\n' >syntax.vnt
run syntax.vnt --chains 3
expect_rc 2 "a syntax error"
expect_eq "a syntax error is said once" "syntax.vnt:2:10: error: unexpected end of input: expected ')' to close '(' opened at 2:10" \
  "$(first_line "$ERR")"
expect_eq "and nothing runs" "" "$OUT"

printf '[predict (+ 1 nosuch)]\n' >unbound.vnt
run unbound.vnt --chains 2
expect_rc 2 "an unbound name"
expect_eq "the warning of an unbound name is given once" "1" "$(grep -c "is not assumed by any directive" <<<"$ERR")"
expect_eq "each chain says its error" "2" "$(grep -c "error: unbound symbol 'nosuch'" <<<"$ERR")"
expect_eq "the last line counts the chains that failed" "pprun: 2 of 2 chains failed (their errors are above)" \
  "$(printf '%s\n' "$ERR" | tail -n 1)"

cat >some.vnt <<'VNT'
[assume c (flip 0.5)]
[infer (repeat 10 (do (mh default one 1) (collect c)))]
[predict (if c 1 (normal 0 -1))]
VNT
run some.vnt --chains 4 --draws some.csv
expect_rc 2 "an error some chains meet"
expect_eq "the chain that does not meet it prints its prediction" "chain 4 (seed 3):
1" "$(printf '%s\n' "$OUT" | sed -n 1,2p)"
expect_eq "the three others say it" "3" "$(grep -c "error: normal: argument 2 (sd) is -1" <<<"$ERR")"
expect_eq "the draws of every chain are kept" "41" "$(wc -l <some.csv | tr -d ' ')"

run model.vnt --chains 0
expect_rc 2 "--chains 0"
expect_eq "--chains 0 is explained" "pprun: --chains: Value 0 not in range 1 to 1024
Run with --help for more information." "$ERR"
run --chains 2
expect_rc 2 "--chains without a program"
expect_eq "--chains without a program is explained" "pprun: --chains needs a program file; the REPL runs one chain" "$ERR"

finish
