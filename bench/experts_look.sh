#!/usr/bin/env bash
# What subsampled_mh's look for sections that must never be left stale costs in the paper's joint DPM shape: a
# mixture of K = 4 logistic experts whose assignments z_i are resampled. A move of z_i moves the point's
# (w (z i)) from one expert's border to another's; each expert's next transition looks only at the points moved to
# it (docs/performance.md). Writes N points (the experts_program() of tests/runtime/infer/subsampled_models_test.cpp,
# larger) and times `[infer (cycle ((mh z one 5) (subsampled_mh w one 100 0.05 'drift 0.05 1)) 300)]` (default seed).
# Usage: bench/experts_look.sh [pprun=build/release/pprun] [N=8000]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=${1:-build/release/pprun}
n=${2:-8000}
# shellcheck source=bench/lib.bash
source "$(dirname "$0")/lib.bash"
start_bench

python3 - "$n" > "$dir/experts.vnt" <<'PY'
import math, random, sys
random.seed(23)
truth = [(-0.5, 2, 0.5), (0.5, -1.5, 1.5), (0, 1, -2), (1, 0.5, 0.5)]
print("[assume w (mem (lambda (k) (scope_include 'w k (multivariate_normal (vector 0 0 0) (id_matrix 3)))))]")
print("[assume z (mem (lambda (i) (scope_include 'z i (categorical (vector 0.1 0.2 0.3 0.4)))))]")
print("[assume y (lambda (i x) (bernoulli (linear_logistic (w (z i)) x)))]")
for i in range(int(sys.argv[1])):
    t = truth[i % 4]
    x0, x1 = random.gauss(0, 1), random.gauss(0, 1)
    y = random.random() < 1 / (1 + math.exp(-(t[0] + t[1] * x0 + t[2] * x1)))
    print(f"[observe (y {i} (vector {x0:.4f} {x1:.4f})) {1 if y else 0}]")
print("[infer (cycle ((mh z one 5) (subsampled_mh w one 100 0.05 'drift 0.05 1)) 300)]")
PY
head -n 3 "$dir/experts.vnt" > "$dir/load.vnt"
grep '^\[observe' "$dir/experts.vnt" >> "$dir/load.vnt"
load=$(seconds "$dir/load.vnt")
run=$(seconds "$dir/experts.vnt")
awk -v n="$n" -v load="$load" -v run="$run" \
  'BEGIN { printf "N = %d points, 4 experts: load %.2f s, load + 300 cycles %.2f s\n", n, load, run }'
