#!/usr/bin/env bash
# Checks the dependency rule of docs/architecture.md by reading #include lines: each module may include
# only the modules below it. Prints "file:line: includes X [rule]" for each violation; exits 1 if any.
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

# module -> modules it may include (besides itself)
declare -A allowed=(
  [runtime/core]=""
  [runtime/value]="runtime/core"
  [runtime/sp]="runtime/core runtime/value"
  [parser]="runtime/core"
  [runtime/syntax]="runtime/core runtime/value parser"
  [runtime/trace]="runtime/core runtime/value runtime/sp runtime/syntax"
  [runtime/scaffold]="runtime/core runtime/value runtime/sp runtime/syntax runtime/trace"
  [runtime/regen]="runtime/core runtime/value runtime/sp runtime/syntax runtime/trace runtime/scaffold"
  [runtime/infer/austerity]="runtime/core"
  [runtime/infer]="runtime/core runtime/value runtime/sp runtime/syntax runtime/trace runtime/scaffold runtime/regen runtime/infer/austerity"
  [runtime/engine]="runtime/core runtime/value runtime/sp runtime/syntax runtime/trace runtime/scaffold runtime/regen runtime/infer runtime/infer/austerity parser vnt"
  [runtime/cli]="runtime/core runtime/value runtime/sp runtime/syntax runtime/trace runtime/engine parser"
  [runtime/include]=""
  [stdlib]="runtime/core runtime/value runtime/sp"
)

module_of() {
  case "$1" in
    runtime/infer/austerity/*) echo runtime/infer/austerity ;;
    runtime/include/*) echo runtime/include ;;
    vnt/*) echo vnt ;;
    runtime/*) echo "$1" | cut -d/ -f1-2 ;;
    parser/*) echo parser ;;
    stdlib/*) echo stdlib ;;
    *) echo other ;;
  esac
}

status=0
while IFS= read -r file; do
  mod=$(module_of "$file")
  [ "$mod" = other ] && continue
  while IFS=: read -r line inc; do
    target=$(module_of "$inc")
    [ "$target" = other ] && continue
    [ "$target" = "$mod" ] && continue
    case " ${allowed[$mod]} " in *" $target "*) continue ;; esac
    echo "$file:$line: includes $inc [$mod may not depend on $target]"
    status=1
  done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
done < <(find runtime parser stdlib -name '*.cpp' -o -name '*.hpp' | sort)

# ANTLR stays inside parser/*.cpp.
if grep -rln 'antlr4-runtime.h' --include='*.hpp' --include='*.cpp' runtime stdlib parser | grep -v '^parser/.*\.cpp$'; then
  echo "antlr4-runtime.h is included outside parser/*.cpp"
  status=1
fi
[ $status -eq 0 ] && echo "layering: ok"
exit $status
