#!/usr/bin/env bash
# The examples run, and each one's summary agrees with the posterior its comments state (computed independently:
# conjugacy, or numerical integration by scripts/example_references.py). A mean passes within 4.5 standard errors
# sd/sqrt(ess), with sd the reference's and ess the summary's (the ESS of pprun's summary, tested in
# tests/runtime/core); an sd within 4.5 of its approximate standard error sd/sqrt(2 ess). The seed moves with
# VNT_STAT_SEED_OFFSET as the statistical tests' do (docs/testing.md).
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"
SEED=$((1 + ${VNT_STAT_SEED_OFFSET:-0}))
EX=$SRC/examples
RUN_TIMEOUT=120

# check_column COLUMN MEAN SD: the summary row of COLUMN in $OUT against the reference MEAN and SD.
check_column() {
  local row verdict
  row=$(printf '%s\n' "$OUT" | awk -v name="$1" '$1 == name && NF == 7')
  if [ -z "$row" ]; then fail "$LAST_CMD: no summary row '$1'"; show_run; return; fi
  verdict=$(printf '%s\n' "$row" | awk -v mean="$2" -v sd="$3" '{
    ess = $7 + 0
    if (ess < 50) { printf "ess %s is below 50: too few draws to test", $7; exit }
    dm = ($2 - mean) / (sd / sqrt(ess)); ds = ($3 - sd) / (sd / sqrt(2 * ess))
    if (dm * dm > 4.5 * 4.5) printf "mean %s is %.1f standard errors from %s; ", $2, dm, mean
    if (ds * ds > 4.5 * 4.5) printf "sd %s is %.1f standard errors from %s", $3, ds, sd
  }')
  if [ -n "$verdict" ]; then fail "$LAST_CMD: $1: $verdict"; show_run; fi
}

# check_probability COLUMN P: the mean of the 0/1 column COLUMN against P, within 4.5 standard errors
# sqrt(P (1 - P) / ess). (Its sd is sqrt(mean (1 - mean)), with a standard error check_column's does not give.)
check_probability() {
  local row verdict
  row=$(printf '%s\n' "$OUT" | awk -v name="$1" '$1 == name && NF == 7')
  if [ -z "$row" ]; then fail "$LAST_CMD: no summary row '$1'"; show_run; return; fi
  verdict=$(printf '%s\n' "$row" | awk -v p="$2" '{
    ess = $7 + 0
    if (ess < 50) { printf "ess %s is below 50: too few draws to test", $7; exit }
    dm = ($2 - p) / sqrt(p * (1 - p) / ess)
    if (dm * dm > 4.5 * 4.5) printf "frequency %s is %.1f standard errors from %s", $2, dm, p
  }')
  if [ -n "$verdict" ]; then fail "$LAST_CMD: $1: $verdict"; show_run; fi
}

run "$EX/normal_normal.vnt" --seed "$SEED"
expect_rc 0 "normal_normal.vnt"
check_column mu 1.6 0.447214  # normal(8/5, 1/sqrt(5)), conjugate

run "$EX/coin.vnt" --seed "$SEED"
expect_rc 0 "coin.vnt"
check_column p 0.642857 0.123718            # beta(9, 5)
check_column '(collapsed)' 0.642857 0.479157  # a flip with probability 9/14

run "$EX/fig1_branch.vnt" --seed "$SEED"
expect_rc 0 "fig1_branch.vnt"
expect_match "fig1_branch.vnt: b is 0 in every draw (P(b = 1 | y) is about e^-4050)" '^b +0 +0 +0 +0 +0 +nan$' "$OUT"
check_column mu 9.99 0.1  # exp(-mu) N(10; mu, 0.1) is N(10 - 0.01, 0.1)

run "$EX/regression.vnt" --seed "$SEED"
expect_rc 0 "regression.vnt"
check_column 'w[0]' -0.0779 0.4557
check_column 'w[1]' 1.8240 0.6096
check_column 'w[2]' -0.3878 0.5450

run "$EX/mixture.vnt" --seed "$SEED"
expect_rc 0 "mixture.vnt"
check_column low -2.2109 0.4429
check_column high 2.9662 0.3757
check_column w_high 0.5715 0.1278

run "$EX/hmm.vnt" --seed "$SEED"
expect_rc 0 "hmm.vnt"
check_probability s3 0.9057  # forward-backward
check_probability s8 0.5811
check_probability s13 0.0572

run "$EX/state_space.vnt" --seed "$SEED"
expect_rc 0 "state_space.vnt"
check_column phi 0.9319 0.0411  # Kalman smoother on a grid of phi
check_column h1 0.1147 0.1888
check_column h60 0.3532 0.2333

run "$EX/stochastic_volatility.vnt" --seed "$SEED"
expect_rc 0 "stochastic_volatility.vnt"
check_column phi 0.8272 0.1376  # a grid filter on a grid of (phi, sig): tests/stat/stochastic_volatility_test.cpp
check_column sig 0.1083 0.0270
check_column h_50 0.0020 0.2396

run "$EX/dpm.vnt" --seed "$SEED"
expect_rc 0 "dpm.vnt"
check_column '(K)' 3.1838 0.9466  # a sum over the partitions of the points (scripts/example_references.py)
check_probability '(same01)' 0.7287
check_probability '(same03)' 0.0894
check_probability '(same34)' 0.5139
check_column '(mu_z0)' -2.1349 0.7244

run "$EX/dpm_collapsed.vnt" --seed "$SEED"
expect_rc 0 "dpm_collapsed.vnt"
check_column '(K)' 3.6409 1.2789  # the partitions summed over, alpha integrated out (scripts/example_references.py)
check_probability '(same01)' 0.5184
check_probability '(same23)' 0.5510
check_probability '(same34)' 0.0259
check_column alpha 1.5720 1.1792

run "$EX/lda.vnt" --seed "$SEED"
expect_rc 0 "lda.vnt"
check_probability '(same00_01)' 0.9639  # a sum over the assignments of topics (scripts/example_references.py)
check_probability '(same00_11)' 0.1227
check_probability '(same11_12)' 0.9641
check_probability '(same20_22)' 0.2482

run "$EX/pumps.vnt" --seed "$SEED"
expect_rc 0 "pumps.vnt"
check_column alpha 0.6972 0.2708  # a grid over the hyperparameters, the rates integrated out (scripts/example_references.py)
check_column beta 0.9268 0.5428
check_column '(rate1)' 0.0598 0.0026
check_column '(rate10)' 1.9898 0.0762

# MNIST: the data files load and the kernel runs (its posterior has no reference; bench_mnist_risk scores it).
run "$EX/bayes_lr/mnist.vnt" --seed "$SEED" --param T=20 --param eps=0.01
expect_rc 0 "bayes_lr/mnist.vnt"
expect_match "bayes_lr/mnist.vnt: the observations are the 1740 training rows" 'of 1740 sections' "$OUT"

# The synthetic data's README shows the output of one run: it must be what that run prints.
mkdir syn && cp "$EX/bayes_lr/synthetic.vnt" syn/
python3 "$EX/bayes_lr/make_synthetic.py" 10000 --out syn/data >/dev/null || fail "make_synthetic.py failed"
run syn/synthetic.vnt --param T=2000 --param eps=0.01 --param sigma=0.1 --seed 0
expect_rc 0 "bayes_lr/synthetic.vnt"
README_TABLE=$(awk '/Expected output with seed 0/ { on = 1; next } on && /^```$/ { if (++fence == 2) exit; next }
                    on && fence == 1' "$EX/bayes_lr/README.md")
expect_eq "examples/bayes_lr/README.md shows what synthetic.vnt prints with seed 0" "$README_TABLE" \
  "$(printf '%s\n' "$OUT" | sed -n '/^name /,/^$/p' | sed '$d')"

# The joint DPM of logistic experts: make_data.py writes the checked-in data, and the README shows the output of one
# run (the probes and alpha have no reference; bench_joint_dpm scores the test set).
mkdir jdpm
python3 "$EX/joint_dpm/make_data.py" --out jdpm/data >/dev/null || fail "joint_dpm/make_data.py failed"
for f in train test; do
  cmp -s "jdpm/data/$f.csv" "$EX/joint_dpm/data/$f.csv" || fail "examples/joint_dpm/data/$f.csv is not what make_data.py writes"
done
run "$EX/joint_dpm/joint_dpm.vnt" --param T=500 --param eps=0.1 --seed 1
expect_rc 0 "joint_dpm/joint_dpm.vnt"
README_TABLE=$(awk '/Output with seed 1/ { on = 1; next } on && /^```$/ { if (++fence == 2) exit; next }
                    on && fence == 1' "$EX/joint_dpm/README.md")
expect_eq "examples/joint_dpm/README.md shows what joint_dpm.vnt prints with seed 1" "$README_TABLE" \
  "$(printf '%s\n' "$OUT" | sed -n '/^name /,/^$/p' | sed '$d')"

finish
