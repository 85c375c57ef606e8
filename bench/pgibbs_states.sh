#!/usr/bin/env bash
# What a pgibbs transition costs: a linear-Gaussian state-space model of T states (x_t ~ N(0.8 x_{t-1}, 0.5), each
# observed with noise 0.7), all in scope x with block t. Times R transitions of (pgibbs x ordered P 1) after the
# load, and T R of (mh x one 1) (as many single-site moves as there are states in R sweeps), and prints
# microseconds per transition and per particle and state (a transition regenerates each state P + 1 times, counting
# the retained particle's detach and the final attach, plus the moves between ancestors' paths), and mh's per
# transition. Default seed.
# Usage: bench/pgibbs_states.sh [pprun=build/release/pprun] [T=50] [P=10] [R=500]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=${1:-build/release/pprun}
t=${2:-50}
p=${3:-10}
r=${4:-500}
# shellcheck source=bench/lib.bash
source "$(dirname "$0")/lib.bash"
start_bench

python3 - "$t" > "$dir/load.vnt" <<'PY'
import random, sys
random.seed(1)
t = int(sys.argv[1])
print("[assume x (mem (lambda (t) (scope_include 'x t (if (= t 0) (normal 0 1) (normal (* 0.8 (x (- t 1))) 0.5)))))]")
h = random.gauss(0, 1)
for i in range(t):
    if i > 0:
        h = 0.8 * h + random.gauss(0, 0.5)
    print("[observe (normal (x %d) 0.7) %.4f]" % (i, h + random.gauss(0, 0.7)))
PY
{ cat "$dir/load.vnt"; echo "[infer (pgibbs x ordered $p $r)]"; } > "$dir/pgibbs.vnt"
{ cat "$dir/load.vnt"; echo "[infer (mh x one $((t * r)))]"; } > "$dir/mh.vnt"
load=$(seconds "$dir/load.vnt")
pg=$(seconds "$dir/pgibbs.vnt")
mh=$(seconds "$dir/mh.vnt")
awk -v t="$t" -v p="$p" -v r="$r" -v load="$load" -v pg="$pg" -v mh="$mh" 'BEGIN {
  per = (pg - load) / r * 1e6
  printf "T = %d, P = %d, %d transitions: pgibbs %.1f us a transition, %.2f us per particle and state;", t, p, r, per, per / ((p + 1) * t)
  printf " mh %.2f us a transition (%d)\n", (mh - load) / (t * r) * 1e6, t * r
}'
