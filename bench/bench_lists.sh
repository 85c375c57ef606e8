#!/usr/bin/env bash
# Recursion over lists: pprun builds (range 0 N) by recursive pair and sums it by recursive rest, and prints the
# wall time and peak RSS of the whole run for each N. The trace keeps every intermediate list, so both grow
# linearly in N only if pair and rest do not copy.
# Usage: bench/bench_lists.sh [pprun=build/release/pprun] [N ...=1000 4000 16000]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=${1:-build/release/pprun}
sizes=("${@:2}")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 4000 16000)
[ -x "$pprun" ] || { echo "$0: '$pprun' is not an executable (build first: make build)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "$0: needs GNU time at /usr/bin/time" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/lists.vnt" <<'VNT'
[assume range (lambda (i n) (if (>= i n) (list) (pair i (range (+ i 1) n))))]
[assume sum (lambda (l) (if (is_empty l) 0 (+ (first l) (sum (rest l)))))]
[predict (sum (range 0 {N}))]
VNT

for n in "${sizes[@]}"; do
  # About three levels of evaluation per item: 4 N leaves room.
  /usr/bin/time -f "%e %M" -o "$dir/time" "$pprun" "$dir/lists.vnt" --param "N=$n" --max-depth $((4 * n)) \
    > "$dir/out"
  read -r seconds kb < "$dir/time"
  sum=$(tail -n 1 "$dir/out")
  [ "$sum" = $((n * (n - 1) / 2)) ] || { echo "$0: N = $n printed '$sum'" >&2; exit 1; }
  awk -v n="$n" -v s="$seconds" -v kb="$kb" 'BEGIN { printf "N = %6d: %6.2f s, peak RSS %7.1f MB\n", n, s, kb / 1024 }'
done
