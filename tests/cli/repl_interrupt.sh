#!/usr/bin/env bash
# Ctrl-C in the interactive REPL (tmux) stops a running [infer] with an error and the session goes on with its
# trace: the assumed names and the moves made before Ctrl-C. Before, SIGINT killed pprun and the whole session
# was lost. Ctrl-C during any other directive undoes it. Skipped when tmux is missing.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"
source "$CLI_DIR/tmux.bash"

tm new-session -d -s repl -x 150 -y 50 "'$PPRUN' --seed 1; echo \"[exit \$?]\"; sleep 30" || { fail "tmux new-session"; finish; }
wait_for '^vnt>$' || finish

tm send-keys -t repl '[assume mu (normal 0 1)] [observe (normal mu 1) 2]' Enter
tm send-keys -t repl '[infer (repeat 5 (collect 7))]' Enter
tm send-keys -t repl '[infer (repeat 1000000000 (do (mh default one 1) (collect mu)))]' Enter
sleep 1  # the [infer] runs (about a minute per 1e8 transitions, so it cannot end by itself here)
tm send-keys -t repl C-c
wait_for 'error: interrupted \(Ctrl-C\): the transitions made and the draws collected before it are kept' || finish
wait_for '^vnt>$' || finish
# The session goes on: mu is still assumed and was moved (the only value it cannot have now is its first one).
tm send-keys -t repl '[predict (!= mu 0.0025056486147713064)]' Enter
wait_for '^true$' || finish
# A later [infer] runs normally.
tm send-keys -t repl '[infer (repeat 2 (collect 8))]' Enter '[predict 42]' Enter
wait_for '^42$' || finish
# Ctrl-C also stops a long evaluation in any other directive, which is undone: fib stays unassumed by it.
tm send-keys -t repl '[assume fib (lambda (n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))]' Enter
tm send-keys -t repl 'slow: [assume big (fib 60)]' Enter
sleep 1
tm send-keys -t repl C-c
wait_for 'error: interrupted \(Ctrl-C\): the directive is undone' || finish
tm send-keys -t repl '[predict (fib 10)]' Enter
wait_for '^55$' || finish
tm send-keys -t repl '[predict big]' Enter
wait_for "unbound symbol 'big'" || finish
# At the prompt, Ctrl-C does nothing: the line being typed goes on, and is not echoed twice (libedit's handler
# did that).
tm send-keys -t repl '[predict (+ 40'
sleep 0.3
tm send-keys -t repl C-c
sleep 0.3
tm send-keys -t repl ' 3)]' Enter
wait_for '^43$' || finish
tm send-keys -t repl C-d
wait_for '^\[exit 0\]$' || finish
if screen | grep -Eq '^ 3\)\]$'; then fail "the line typed across Ctrl-C is echoed a second time"; show_run; fi

expect_match "the interrupted [infer] is reported at the kernel it stopped in" \
  '<repl:3>:1:[0-9]+: error: interrupted \(Ctrl-C\)' "$(screen)"
finish
