#!/usr/bin/env bash
# What a pgibbs transition costs: a linear-Gaussian state-space model of T states (x_t ~ N(0.8 x_{t-1}, 0.5), each
# observed with noise 0.7), all in scope x with block t. Times R transitions of (pgibbs x ordered P 1) after the
# load, and T R of (mh x one 1) (as many single-site moves as there are states in R sweeps), and prints
# microseconds per transition and per particle and state (a transition regenerates each state P + 1 times, counting
# the retained particle's detach and the final attach, plus the moves between ancestors' paths), and mh's per
# transition. The model allows ancestor sampling (docs/inference.md, pgibbs); with BRANCH=branch its coefficient is
# written (if (> x_{t-1} 100) (same 0.8) 0.8), same a compound procedure returning its argument: the same model, with
# a branch the states decide that calls a compound procedure, which rules it out.
# Default seed.
# Usage: bench/pgibbs_states.sh [pprun=build/release/pprun] [T=50] [P=10] [R=500] [BRANCH=none]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=${1:-build/release/pprun}
t=${2:-50}
p=${3:-10}
r=${4:-500}
branch=${5:-none}
# shellcheck source=bench/lib.bash
source "$(dirname "$0")/lib.bash"
start_bench

python3 - "$t" "$branch" > "$dir/load.vnt" <<'PY'
import random, sys
random.seed(1)
t = int(sys.argv[1])
a = "(if (> (x (- t 1)) 100) (same 0.8) 0.8)" if sys.argv[2] == "branch" else "0.8"
print("[assume same (lambda (v) v)]")
print("[assume x (mem (lambda (t) (scope_include 'x t (if (= t 0) (normal 0 1) (normal (* %s (x (- t 1))) 0.5)))))]" % a)
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
awk -v t="$t" -v p="$p" -v r="$r" -v b="$branch" -v load="$load" -v pg="$pg" -v mh="$mh" 'BEGIN {
  per = (pg - load) / r * 1e6
  as = b == "branch" ? "a branch (no ancestor sampling)" : "ancestor sampling"
  printf "T = %d, P = %d, %s, %d transitions: pgibbs %.1f us a transition, %.2f us per particle and state;", t, p, as, r, per, per / ((p + 1) * t)
  printf " mh %.2f us a transition (%d)\n", (mh - load) / (t * r) * 1e6, t * r
}'
