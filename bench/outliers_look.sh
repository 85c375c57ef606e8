#!/usr/bin/env bash
# What subsampled_mh's look for sections that must never be left stale costs in a robust regression with an
# outlier flag per datum: y_i ~ (if o_i (normal 0 10) (normal m 1)) with m = (* w x_i) bound by a let. A move of
# o_i that takes the inlier branch gives m a new reader: the look walks up from m to its section's root and looks at
# that one (docs/performance.md). Writes N data and times R transitions of w alone, and R cycles of a transition
# and `(mh o one 1)`: the difference is what the moves of o and the looks after them cost (default seed).
# Usage: bench/outliers_look.sh [pprun=build/release/pprun] [N=20000] [R=300]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=${1:-build/release/pprun}
n=${2:-20000}
r=${3:-300}
# shellcheck source=bench/lib.bash
source "$(dirname "$0")/lib.bash"
start_bench

python3 - "$n" > "$dir/load.vnt" <<'PY'
import random, sys
random.seed(1)
print("[assume w (scope_include 'w 0 (normal 0 1))]")
print("[assume o (mem (lambda (i) (scope_include 'o i (flip 0.1))))]")
print("[assume h (lambda (i x) (let ((m (* w x))) (if (o i) (normal 0 10) (normal m 1))))]")
for i in range(int(sys.argv[1])):
    x = random.gauss(0, 1)
    y = 0.7 * x + random.gauss(0, 1) if random.random() > 0.1 else random.gauss(0, 10)
    print("[observe (h %d %.4f) %.4f]" % (i, x, y))
PY
step="(subsampled_mh w all 100 0.01 'drift 0.05 1)"
{ cat "$dir/load.vnt"; echo "[infer (repeat $r $step)]"; } > "$dir/alone.vnt"
{ cat "$dir/load.vnt"; echo "[infer (cycle ($step (mh o one 1)) $r)]"; } > "$dir/cycle.vnt"
load=$(seconds "$dir/load.vnt")
alone=$(seconds "$dir/alone.vnt")
cycle=$(seconds "$dir/cycle.vnt")
awk -v n="$n" -v r="$r" -v load="$load" -v alone="$alone" -v cycle="$cycle" 'BEGIN {
  printf "N = %d data with outlier flags: load %.2f s, load + %d transitions %.2f s, load + %d cycles of a", n, load,
         r, alone, r
  printf " transition and a move of one flag %.2f s\n", cycle }'
