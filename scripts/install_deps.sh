#!/usr/bin/env bash
# Installs the Debian packages vnt needs to build and test; does nothing when all are present.
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

packages=(
  build-essential cmake make pkg-config
  libboost-math-dev libboost-graph-dev libboost-random-dev
  libeigen3-dev libfmt-dev doctest-dev
  libantlr4-runtime-dev antlr4 default-jre-headless
  libcli11-dev libpcg-cpp-dev libedit-dev
  tmux python3
  gnuplot-nox
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install_deps: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
