#!/usr/bin/env bash
# What loading hand-written directives costs: pprun reads, parses and runs N `[observe (normal mu 1) x]`
# directives (then 2 MH transitions), and prints the wall time, the peak RSS and the peak per directive.
# Usage: bench/hand_written_load.sh [pprun=build/release/pprun] [N=100000]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=${1:-build/release/pprun}
n=${2:-100000}
# shellcheck source=bench/lib.bash
source "$(dirname "$0")/lib.bash"
start_bench
awk -v n="$n" 'BEGIN {
  srand(1); print "[assume mu (normal 0 1)]"
  for (i = 0; i < n; i++) printf "[observe (normal mu 1) %.4f]\n", 1 + 2 * (rand() - 0.5)
  print "[infer (mh default one 2)]" }' > "$dir/load.vnt"

/usr/bin/time -f "%e %M" -o "$dir/time" "$pprun" "$dir/load.vnt" --quiet --seed 1 > /dev/null
read -r secs kb < "$dir/time"
awk -v n="$n" -v s="$secs" -v kb="$kb" 'BEGIN {
  printf "N = %d hand-written observes: %.2f s, peak RSS %.0f MB, %.2f KB a directive\n", n, s, kb / 1024, kb * 1.024 / n }'
