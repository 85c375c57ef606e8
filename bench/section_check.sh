#!/usr/bin/env bash
# What subsampled_mh's check of every node section before an [infer], and the look of each transition at what
# changed since, cost (docs/inference.md, "Requirements"): N node observations (normal (* w x) 1), written one
# directive each, then these programs: the load alone; the load and one [infer] of no transition (one check); 100
# pairs of a [predict (* w 2)] and such an [infer] (each check looks at the one new section); 100 pairs of a
# [predict (+ m 1)], m = (* w 3), and the [infer] (a new node reading an old section's node: each check looks at
# that section); 100 pairs of a move of a choice g that picks the procedure p, and the [infer] (a changed procedure:
# every check looks at every section); 100 triples of a labelled [predict (* w 2)], the [infer] and a [forget] of
# the predict (a forget only removes nodes: the next check looks at nothing); R [infer]s of one transition with
# nothing between them (the check is cached); the same R transitions as one [infer] (the kernels' section chains
# are kept by the trace, so the two should cost about the same); R transitions each followed by a (collect w), which
# removes what it evaluated (the chains stay); and R cycles of a transition and a move of a choice q that takes the
# other branch of one more datum (normal (if q (* w 1.5) (* w -2.5)) 1), replacing its section of w (only the new
# one is looked at). Prints the wall time of each and the cost of one full check.
# Usage: bench/section_check.sh [pprun=build/release/pprun] [N=20000] [R=300]
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
print("[assume h (lambda (x) (normal (* w x) 1))]")
for _ in range(int(sys.argv[1])):
    x = random.gauss(0, 1)
    print("[observe (h %.4f) %.4f]" % (x, 0.7 * x + random.gauss(0, 1)))
PY
check="[infer (subsampled_mh w all 100 0.01 'drift 0.05 0)]"
{ cat "$dir/load.vnt"; echo "$check"; } > "$dir/once.vnt"
{ cat "$dir/load.vnt"; for _ in $(seq 100); do echo "[predict (* w 2)]"; echo "$check"; done; } > "$dir/new.vnt"
{
  cat "$dir/load.vnt"
  echo "[assume m (* w 3)]"
  for _ in $(seq 100); do echo "[predict (+ m 1)]"; echo "$check"; done
} > "$dir/again.vnt"
{
  cat "$dir/load.vnt"
  echo "[assume g (scope_include 'g 0 (flip 0.5))] [assume p (if g (lambda (x) (* x 2)) (lambda (x) (* x 3)))]"
  for _ in $(seq 100); do echo "[infer (mh g all 1)]"; echo "$check"; done
} > "$dir/procedure.vnt"
{
  cat "$dir/load.vnt"
  for i in $(seq 100); do echo "p$i: [predict (* w 2)]"; echo "$check"; echo "[forget p$i]"; done
} > "$dir/forget.vnt"
{ cat "$dir/load.vnt"; for _ in $(seq "$r"); do echo "[infer (subsampled_mh w all 100 0.01 'drift 0.05 1)]"; done; } \
  > "$dir/cached.vnt"
step="(subsampled_mh w all 100 0.01 'drift 0.05 1)"
{ cat "$dir/load.vnt"; echo "[infer (repeat $r $step)]"; } > "$dir/one.vnt"
{ cat "$dir/load.vnt"; echo "[infer (repeat $r (do $step (collect w)))]"; } > "$dir/collect.vnt"
{
  cat "$dir/load.vnt"
  echo "[assume q (scope_include 'q 0 (flip 0.5))] [observe (normal (if q (* w 1.5) (* w -2.5)) 1) 0.8]"
  echo "[infer (cycle ($step (mh q all 1)) $r)]"
} > "$dir/branch.vnt"

load=$(seconds "$dir/load.vnt")
once=$(seconds "$dir/once.vnt")
new=$(seconds "$dir/new.vnt")
again=$(seconds "$dir/again.vnt")
procedure=$(seconds "$dir/procedure.vnt")
forget=$(seconds "$dir/forget.vnt")
cached=$(seconds "$dir/cached.vnt")
one=$(seconds "$dir/one.vnt")
collect=$(seconds "$dir/collect.vnt")
branch=$(seconds "$dir/branch.vnt")
awk -v n="$n" -v r="$r" -v load="$load" -v once="$once" -v new="$new" -v again="$again" -v procedure="$procedure" \
    -v forget="$forget" -v cached="$cached" -v one="$one" -v collect="$collect" -v branch="$branch" 'BEGIN {
  printf "N = %d node sections: load %.2f s, load + one check %.2f s, load + 100 x (predict, check) %.2f s,", n, load,
         once, new
  printf " load + 100 x (predict reading m, check) %.2f s,", again
  printf " load + 100 x (move of a procedure, check) %.2f s (%.1f ms a full check, %.2f us a section),", procedure,
         (procedure - new) / 100 * 1e3, (procedure - new) / 100 / n * 1e6
  printf " load + 100 x (predict, check, forget) %.2f s,", forget
  printf " load + %d one-transition [infer]s %.2f s, as one [infer] %.2f s, with a collect after each %.2f s,", r,
         cached, one, collect
  printf " in a cycle with a move of q %.2f s\n", branch }'
