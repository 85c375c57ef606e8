#!/usr/bin/env bash
# What a gibbs transition costs against an mh one on the same block: a mixture of K unit-variance components with
# fixed means -3, 0, 3 (K = 2: the first two; K = 3: all), N data points, each assignment (z i) a categorical in scope
# z. Times R transitions of (gibbs z one 1) and of (mh z one 1) after the load, and prints microseconds per
# transition for each, with the kernel report's accepted column (for gibbs: the share of transitions that moved the
# assignment; for mh, a proposal of the same value counts as accepted). Default seed.
# Usage: bench/gibbs_assignments.sh [pprun=build/release/pprun] [N=1000] [R=100000] [K=3]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=${1:-build/release/pprun}
n=${2:-1000}
r=${3:-100000}
k=${4:-3}
# shellcheck source=bench/lib.bash
source "$(dirname "$0")/lib.bash"
start_bench

python3 - "$n" "$k" > "$dir/load.vnt" <<'PY'
import random, sys
random.seed(1)
n, k = int(sys.argv[1]), int(sys.argv[2])
means = [-3, 0, 3][:k]
weights = " ".join(["(/ 1 %d)" % k] * k)
print("[assume z (mem (lambda (i) (scope_include 'z i (categorical (vector %s)))))]" % weights)
print("[assume means (vector %s)]" % " ".join(str(m) for m in means))
print("[assume y (lambda (i) (normal (lookup means (z i)) 1))]")
for i in range(n):
    print("[observe (y %d) %.4f]" % (i, random.gauss(random.choice(means), 1)))
PY
line="N = $n, K = $k, $r transitions:"
for kernel in gibbs mh; do
  { cat "$dir/load.vnt"; echo "[infer ($kernel z one $r)]"; } > "$dir/$kernel.vnt"
  load=$(seconds "$dir/load.vnt")
  run=$(seconds "$dir/$kernel.vnt")
  moved=$("$pprun" "$dir/$kernel.vnt" | awk -v k="$kernel" '$1 == k { print $(NF) }')
  line+=$(awk -v s="$kernel" -v load="$load" -v run="$run" -v m="$moved" -v r="$r" \
    'BEGIN { printf " %s %.2f us a transition (%s %s);", s, (run - load) / r * 1e6, s == "mh" ? "accepted" : "moved", m }')
done
echo "${line%;}"
