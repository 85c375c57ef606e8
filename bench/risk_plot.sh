#!/usr/bin/env bash
# Plots the CSV of bench_mnist_risk (time_s,method,risk,accuracy,transitions) as risk vs CPU time, log-log,
# one line per method, like Fig. 4 of the sublinear-MH paper. Needs gnuplot (scripts/install_deps.sh).
# Usage: bench/risk_plot.sh risk.csv risk.png ["plot title"]
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 risk.csv out.png [title]" >&2
  exit 2
fi
csv=$1
png=$2
title=${3:-"Bayesian logistic regression: risk of the predictive mean"}
command -v gnuplot > /dev/null || { echo "$0: gnuplot not found (run scripts/install_deps.sh)" >&2; exit 2; }
[ -r "$csv" ] || { echo "$0: cannot read '$csv'" >&2; exit 2; }

# Methods in the order they first appear.
methods=$(awk -F, 'NR > 1 && !seen[$2]++ { printf "%s ", $2 }' "$csv")
[ -n "$methods" ] || { echo "$0: '$csv' has no data rows" >&2; exit 2; }

gnuplot <<EOF
set terminal pngcairo size 800,520 font "sans,11"
set output "$png"
set datafile separator ","
set title "$title"
set xlabel "CPU time (s)"
set ylabel "risk of the predictive mean"
set logscale xy
set autoscale xfix
set format y "10^{%L}"
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key top right box opaque
methods = "$methods"
plot for [m in methods] "$csv" using 1:(strcol(2) eq m ? \$3 : NaN) with linespoints pt 7 ps 0.5 lw 2 title m noenhanced
EOF
echo "wrote $png"
