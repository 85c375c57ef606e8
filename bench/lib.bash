# Shared by the bench scripts, which set $pprun and source this file.
# SPDX-License-Identifier: Apache-2.0

# Exits 2 unless $pprun is an executable; then sets $dir to a scratch directory removed when the script exits.
start_bench() {
  [ -x "$pprun" ] || { echo "$0: '$pprun' is not an executable (build first: make build)" >&2; exit 2; }
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
}

# seconds FILE: the wall time of `pprun FILE --quiet`, in seconds.
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$pprun" "$1" --quiet > /dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
