#!/usr/bin/env bash
# What a scaffold that cannot be partitioned costs exact mh: N node observations of s, then T exact mh
# transitions on s, once as is (the partitioned path scores every section as a chain) and once with last sections
# that the partitioned path refuses: t = 2s, read with s by 20 predictions, so t's section meets too many others;
# the transitions then take the general path; and once with 5 data whose sections the partition alone refuses
# (an `if` on s: brush) and a sixth whose random choice is resampled, which exact mh regenerates each with its own
# scaffold (odd). Prints ms per transition of each, after the load (measured with T = 0).
# Usage: bench/refused_partition.sh [pprun=build/release/pprun] [N=20000] [T=200]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=${1:-build/release/pprun}
n=${2:-20000}
t=${3:-200}
# shellcheck source=bench/lib.bash
source "$(dirname "$0")/lib.bash"
start_bench

# program COUNT TAIL: the observations, TAIL, then COUNT transitions.
program() {
  echo "[assume s (scope_include 's 0 (gamma 2 1))]"
  awk -v n="$n" 'BEGIN { for (i = 0; i < n; ++i) printf "[observe (normal 0 s) %.4f]\n", (i % 29) * 0.1 - 1.4 }'
  echo "$2"
  echo "[infer (mh s 0 $1)]"
}


odd="[assume ops (list normal normal)] [observe (normal ((lookup ops (* 0 s)) s 1) 1) 1.1]"
for i in 1 2 3 4 5; do odd="$odd [observe (normal (if (> s 1.$i) s (* 2 s)) 1) 1.$i]"; done
for kind in partitioned refused odd; do
  tail=""
  [ "$kind" = refused ] && tail="[assume t (* 2 s)] $(printf '[predict (+ t s)] %.0s' $(seq 20))"
  [ "$kind" = odd ] && tail="$odd"
  program 0 "$tail" > "$dir/load.vnt"
  program "$t" "$tail" > "$dir/run.vnt"
  load=$(seconds "$dir/load.vnt")
  run=$(seconds "$dir/run.vnt")
  awk -v k="$kind" -v n="$n" -v t="$t" -v load="$load" -v run="$run" 'BEGIN {
    printf "%-12s N = %d, %d exact mh transitions: %.2f ms per transition (load %.2f s)\n",
           k, n, t, (run - load) / t * 1e3, load }'
done
