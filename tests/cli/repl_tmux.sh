#!/usr/bin/env bash
# The interactive REPL on a real terminal (tmux): banner, prompts, continuation lines, an error that does not
# end the session, and Ctrl-D quitting with status 0. Skipped when tmux is missing.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"
source "$CLI_DIR/tmux.bash"

tm new-session -d -s repl -x 120 -y 40 "'$PPRUN' --seed 1; echo \"[exit \$?]\"; sleep 30" || { fail "tmux new-session"; finish; }

wait_for '^vnt>$' || finish
expect_match "the interactive REPL greets the user" "^vnt REPL: " "$(screen)"

tm send-keys -t repl '[assume x 3]' Enter '[predict (+ x 1)]' Enter
wait_for '^4$' || finish
tm send-keys -t repl '[predict (+ x' Enter
wait_for '^\.\.\.>$' || finish
tm send-keys -t repl ' 10)]' Enter
wait_for '^13$' || finish
tm send-keys -t repl '[predict (+ x 1))]' Enter
wait_for '\^$' || finish
tm send-keys -t repl '[predict (* x 2)]' Enter
wait_for '^6$' || finish
tm send-keys -t repl C-d
wait_for '^\[exit [0-9]+\]$' || finish

expect_eq "the whole session as seen on the terminal" \
"vnt REPL: enter directives such as [assume x (normal 0 1)]; help lists them; Ctrl-D quits.
vnt> [assume x 3]
vnt> [predict (+ x 1)]
4
vnt> [predict (+ x
...>  10)]
13
vnt> [predict (+ x 1))]
<repl:4>:1:17: error: unexpected ')'
    1 | [predict (+ x 1))]
      |                 ^
vnt> [predict (* x 2)]
6
vnt>
[exit 0]" "$(screen)"

finish
