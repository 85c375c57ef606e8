#!/usr/bin/env bash
# The paper's state-space model (Fig. 7, bottom) with both phi and sig subsampled: h_t ~ N(phi h_{t-1}, sig),
# x_t ~ N(h_t, 0.3), T steps observed. Each kernel's sections read the other's (a section of phi ends in h_t, whose
# sig operand is a section of sig's border), so after approximate moves nearly every section a kernel visits first
# repairs a stale section of the other border. Runs the paper's cycle (subsampled_mh on phi, on sig, exact mh on
# the latent h) C times after a burn-in, and prints ms per cycle (the burn-in is measured alone with C = 0).
# Usage: bench/two_borders_ssm.sh [pprun=build/release/pprun] [T=3000] [C=2000]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=${1:-build/release/pprun}
t=${2:-3000}
c=${3:-2000}
# shellcheck source=bench/lib.bash
source "$(dirname "$0")/lib.bash"
start_bench

# program CYCLES: the model, T observations drawn with phi = 0.9, sig = 0.3 (an LCG and Box-Muller, so that any awk
# gives the same data), a latent burn-in, then CYCLES cycles.
program() {
  cat <<'EOF'
[assume phi (scope_include 'phi 0 (beta 5 1))]
[assume sig (scope_include 'sig 0 (sqrt (inv_gamma 5 0.05)))]
[assume h (mem (lambda (t) (if (<= t 0) 0 (normal (* phi (h (- t 1))) sig))))]
EOF
  awk -v n="$t" 'function u() { s = (s * 1103515245 + 12345) % 2147483648; return (s + 0.5) / 2147483648 }
    function z() { return sqrt(-2 * log(u())) * cos(6.283185307179586 * u()) }
    BEGIN { s = 7; h = 0; for (i = 1; i <= n; ++i) {
      h = 0.9 * h + 0.3 * z(); printf "[observe (normal (h %d) 0.3) %.5f]\n", i, h + 0.3 * z() } }'
  echo "[infer (repeat 30 (mh default one $t))]"
  echo "[infer (cycle ((subsampled_mh phi 0 100 0.1 'drift 0.01 1) (subsampled_mh sig 0 100 0.1 'drift 0.01 1)" \
       "(mh default one 10)) $1)]"
}

program 0 > "$dir/load.vnt"
program "$c" > "$dir/run.vnt"
load=$(seconds "$dir/load.vnt")
run=$(seconds "$dir/run.vnt")
awk -v t="$t" -v c="$c" -v load="$load" -v run="$run" 'BEGIN {
  printf "T = %d, %d cycles: %.3f ms per cycle (load and burn-in %.2f s)\n", t, c, (run - load) / c * 1e3, load }'
