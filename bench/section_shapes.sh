#!/usr/bin/env bash
# What one node section costs subsampled_mh by the way a datum's mean is written: N observations
# (normal MEAN 1), MEAN one of (* w x) (a chain), a let-bound (* w x), a call of a program lambda (mu x), an `if` on
# the datum choosing between two products, a mem'd call ((w_at i) x) whose family reads w, and a product whose
# procedure is picked by w ((lookup ops (floor (* 0 w))) w x), which only the general path (a scaffold detached and
# regenerated) takes. Times R transitions of (subsampled_mh w all 100 0.01 'drift 0.05 1) after the load, for each,
# and prints the time per section visited (from the kernel report). Default seed.
# Usage: bench/section_shapes.sh [pprun=build/release/pprun] [N=5000] [R=200]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=${1:-build/release/pprun}
n=${2:-5000}
r=${3:-200}
# shellcheck source=bench/lib.bash
source "$(dirname "$0")/lib.bash"
start_bench

shapes=(chain let call if mem general)
for shape in "${shapes[@]}"; do
  python3 - "$n" "$shape" > "$dir/$shape-load.vnt" <<'PY'
import random, sys
random.seed(1)
n, shape = int(sys.argv[1]), sys.argv[2]
body = {
    "chain": "(normal (* w x) 1)",
    "let": "(let ((m (* w x))) (normal m 1))",  # through the let's lookup of m, not its value
    "call": "(normal (mu x) 1)",
    "if": "(normal (if (> x 0) (* w x) (* w x 1.1)) 1)",
    "mem": "(normal (* (w_at i) x) 1)",
    "general": "(normal ((lookup ops (floor (* 0 w))) w x) 1)",
}[shape]
print("[assume w (scope_include 'w 0 (normal 0 1))] [assume mu (lambda (x) (* w x))]")
print("[assume w_at (mem (lambda (i) w))] [assume ops (list * *)]")
print("[assume h (lambda (i x) %s)]" % body)
for i in range(n):
    x = random.gauss(0, 1)
    print("[observe (h %d %.4f) %.4f]" % (i, x, 0.7 * x + random.gauss(0, 1)))
PY
  { cat "$dir/$shape-load.vnt"; echo "[infer (repeat $r (subsampled_mh w all 100 0.01 'drift 0.05 1))]"; } \
    > "$dir/$shape-run.vnt"
done
line="N = $n, $r transitions:"
for shape in "${shapes[@]}"; do
  load=$(seconds "$dir/$shape-load.vnt")
  run=$(seconds "$dir/$shape-run.vnt")
  # The kernel report's "mean K of N sections": sections visited per transition.
  visited=$("$pprun" "$dir/$shape-run.vnt" | sed -n 's/.*(mean \([0-9]*\) of .*/\1/p')
  line+=$(awk -v s="$shape" -v load="$load" -v run="$run" -v v="$visited" -v r="$r" \
    'BEGIN { printf " %s %.2f s (%.2f us a section)", s, run - load, (run - load) / (v * r) * 1e6 }')
done
echo "$line"
