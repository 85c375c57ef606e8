#!/usr/bin/env bash
# What collapsed Gibbs costs on a Dirichlet process mixture of collapsed normals: z ~ CRP(1), each table's component
# a make_nig_normal (mean and variance integrated out), N points from three well-separated clusters observed as
# ((component (z i))). Times R transitions of (gibbs z one 1) after the load (a first R/10 settles the tables) and
# prints microseconds per transition, and the tables the points occupy at the end: each transition weighs every
# occupied table and a new one, moving the point's observation from one component's statistics to another's.
# Usage: bench/collapsed_gibbs.sh [pprun=build/release/pprun] [N=1000] [R=20000]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=${1:-build/release/pprun}
n=${2:-1000}
r=${3:-20000}
# shellcheck source=bench/lib.bash
source "$(dirname "$0")/lib.bash"
start_bench

python3 - "$n" > "$dir/load.vnt" <<'PY'
import random, sys
random.seed(1)
n = int(sys.argv[1])
print("[assume crp (make_crp 1)]")
print("[assume z (mem (lambda (i) (scope_include 'z i (crp))))]")
print("[assume component (mem (lambda (k) (make_nig_normal 0 4 2 1)))]")
for i in range(n):
    print("[observe ((component (z %d))) %.4f]" % (i, random.gauss(random.choice([-3, 0, 3]), 0.5)))
PY
settle=$((r / 10))
{ cat "$dir/load.vnt"; echo "[infer (gibbs z one $settle)]"; } > "$dir/settle.vnt"
{ cat "$dir/load.vnt"; echo "[infer (gibbs z one $((settle + r)))]"; } > "$dir/run.vnt"
base=$(seconds "$dir/settle.vnt")
run=$(seconds "$dir/run.vnt")
# The tables occupied at the end: the distinct values of (z i), each sampled.
{ cat "$dir/run.vnt"; for ((i = 0; i < n; i++)); do echo "[sample (z $i)]"; done; } > "$dir/count.vnt"
tables=$("$pprun" "$dir/count.vnt" --quiet | sort -u | wc -l)
awk -v n="$n" -v r="$r" -v base="$base" -v run="$run" -v k="$tables" \
  'BEGIN { printf "N = %d, %d transitions: %.1f us a transition, %d tables at the end\n", n, r, (run - base) / r * 1e6, k }'
