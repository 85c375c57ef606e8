#!/usr/bin/env bash
# Installs the current build into a temporary prefix, builds examples/embed against it with find_package(vnt)
# and runs it. Usage: package_test.sh <pprun path> <source dir>
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

pprun=$1
src=$2
build=$(cd "$(dirname "$pprun")" && pwd)
while [[ ! -f $build/CMakeCache.txt && $build != / ]]; do build=$(dirname "$build"); done
if [[ ! -f $build/CMakeCache.txt ]]; then
  echo "package_test: no CMakeCache.txt above $pprun" >&2
  exit 1
fi
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt" | head -n 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Build the application like the library: same compiler, build type and (if any) sanitizers.
cxx=$(cache CMAKE_CXX_COMPILER)
build_type=$(cache CMAKE_BUILD_TYPE)
sanitize=$(cache VNT_SANITIZE)
if [[ -n $sanitize ]]; then
  echo "package_test: the build uses -fsanitize=$sanitize; building the application with the same flags"
fi
fail() { echo "package_test: $1" >&2; exit 1; }

# build_example DIR [CXX_FLAGS]: builds examples/embed into $tmp/DIR against the installed package, with the
# sanitizers of the build and CXX_FLAGS; prints the logs and fails if it does not build.
build_example() {
  local cxx_flags=${2:-} args=()
  if [[ -n $sanitize ]]; then
    cxx_flags+=" -fsanitize=$sanitize -fno-omit-frame-pointer -fno-sanitize-recover=all"
    args+=("-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$sanitize")
  fi
  [[ -n $cxx_flags ]] && args+=("-DCMAKE_CXX_FLAGS=$cxx_flags")
  if ! cmake -S "$src/examples/embed" -B "$tmp/$1" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_CXX_COMPILER="$cxx" \
       -DCMAKE_BUILD_TYPE="${build_type:-Release}" "${args[@]}" > "$tmp/$1.configure.log" 2>&1 ||
     ! cmake --build "$tmp/$1" > "$tmp/$1.build.log" 2>&1; then
    cat "$tmp/$1.configure.log" "$tmp/$1.build.log" >&2
    fail "examples/embed does not build${2:+ with $2}"
  fi
}

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
for f in include/vnt/vnt.hpp bin/pprun; do
  [[ -e $tmp/prefix/$f ]] || { echo "package_test: $f was not installed" >&2; exit 1; }
done
# Only the public header is installed.
headers=$(cd "$tmp/prefix/include" && find . -type f | sort)
[[ $headers == "./vnt/vnt.hpp" ]] || { echo "package_test: unexpected installed headers: $headers" >&2; exit 1; }

build_example embed

out=$("$tmp/embed/embed_logistic")
echo "$out"
grep -qx 'caught domain error at <api:[0-9]*>:1:1: .*' <<< "$out" || fail "the bad call was not reported as a domain error"
grep -q '^still assumed after the error: w = ' <<< "$out" || fail "the session did not go on after the error"
grep -qx 'draws: 500' <<< "$out" || fail "expected 500 draws"
# The data come from w = (-0.5, 1.5, -1.0): the posterior means must be on the right side of zero.
mean() { sed -n "s/^posterior mean w\[$1\] = \([-+0-9.]*\).*/\1/p" <<< "$out"; }
awk -v a="$(mean 0)" -v b="$(mean 1)" -v c="$(mean 2)" \
  'BEGIN { exit !(a < 0 && a > -1.5 && b > 0.7 && b < 2.5 && c < -0.4 && c > -2.0) }' ||
  fail "posterior means far from the generating weights"

# Built for AVX (-march=native on a machine that has it), the application's Eigen would align its heap blocks to 32
# bytes, the library's to 16, and freeing a vector the library made crashed: the package fixes the alignment for
# both.
if grep -qw avx /proc/cpuinfo 2>/dev/null; then
  build_example embed_avx -march=native
  out_avx=$("$tmp/embed_avx/embed_logistic") || fail "the application built with -march=native failed (status $?)"
  grep -qx 'draws: 500' <<< "$out_avx" || fail "the application built with -march=native: expected 500 draws"
fi
echo "package_test: ok"
