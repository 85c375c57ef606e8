#!/usr/bin/env bash
# Every doctest case must be one CTest test. doctest_discover_tests passes the names through a CMake list, where a
# ';' splits one name in two: neither half matches the case, and each "passes" having run nothing (eleven cases
# ran in no CI run until this check). Prints "file:line: name" for each such name; exits 1 if any.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
if grep -rn --include='*.cpp' -E 'TEST_CASE\("[^"]*;' tests; then
  echo "a TEST_CASE name above contains ';', which CTest splits: use ',' instead" >&2
  exit 1
fi
