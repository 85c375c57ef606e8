# Shared by the bench scripts, which set $pprun and source this file.
# SPDX-License-Identifier: Apache-2.0

# Exits 2 unless $pprun is an executable.
need_pprun() {
  [ -x "$pprun" ] || { echo "$0: '$pprun' is not an executable (build first: make build)" >&2; exit 2; }
}

# seconds FILE: the wall time of `pprun FILE --quiet`, in seconds.
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$pprun" "$1" --quiet > /dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
