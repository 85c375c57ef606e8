#!/usr/bin/env bash
# What a directive costs around its transitions: pprun runs the same T subsampled_mh transitions (with
# 'proxy 'taylor, after 1 000 of burn-in) on the synthetic data, once as one [infer] of T transitions and once
# as T [infer] directives of one transition each, and prints the wall time of both and the difference per
# directive. Work that grows with N per directive shows up as a difference that grows with N.
# Usage: bench/directive_overhead.sh [pprun=build/release/pprun] [N=1000000] [T=3000]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=${1:-build/release/pprun}
n=${2:-1000000}
t=${3:-3000}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib.bash
source "$(dirname "$0")/lib.bash"
start_bench
python3 "$here/../examples/bayes_lr/make_synthetic.py" "$n" --out "$dir" > /dev/null

head="[assume w (scope_include 'w 0 (multivariate_normal (zeros 3) (* 0.1 (id_matrix 3))))]
[assume y_x (lambda (x) (bernoulli (linear_logistic w x)))]
[observe_csv y_x \"synthetic_train.csv\" y]
[infer (subsampled_mh w all 100 0.01 'drift 0.1 1000 'proxy 'taylor)]"
{ echo "$head"; echo "[infer (subsampled_mh w all 100 0.01 'drift 0.1 $t 'proxy 'taylor)]"; } > "$dir/one.vnt"
{ echo "$head"; for _ in $(seq "$t"); do echo "[infer (subsampled_mh w all 100 0.01 'drift 0.1 1 'proxy 'taylor)]"; done; } \
  > "$dir/many.vnt"

one=$(seconds "$dir/one.vnt")
many=$(seconds "$dir/many.vnt")
awk -v n="$n" -v t="$t" -v one="$one" -v many="$many" 'BEGIN {
  printf "N = %d, %d transitions: one directive %.2f s, %d directives %.2f s, %.1f us more per directive\n",
         n, t, one, t, many, (many - one) / t * 1e6 }'
