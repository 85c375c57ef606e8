# Helpers for tests/cli/*.sh that drive the interactive REPL on a real terminal (not a test itself: CTest
# registers only *.sh). Source it after common.bash; it skips the test when tmux is missing.
# Usage: source "$CLI_DIR/tmux.bash", then tm new-session -d -s repl ... and wait_for / screen.
# SPDX-License-Identifier: Apache-2.0

if ! command -v tmux >/dev/null 2>&1; then
  echo "[$TEST_NAME] tmux is not installed (scripts/install_deps.sh installs it): skipped"
  exit 0
fi

# A private server (socket in $TMP) with no user configuration, killed on exit whatever happens.
SOCK="$TMP/tmux.sock"
tm() { tmux -S "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server >/dev/null 2>&1; rm -rf "$TMP"' EXIT

# The terminal as text (and its scrollback), without trailing blanks, empty lines or the tty's echo of Ctrl-D.
screen() { tm capture-pane -p -S -100 -t repl | sed -e 's/\^D$//' -e 's/[[:space:]]*$//' -e '/^$/d'; }
show_run() { screen | sed 's/^/  screen | /'; }

# wait_for REGEX [TRIES]: polls the screen (every 0.1 s, 50 times unless told) until a line matches.
wait_for() {
  for _ in $(seq "${2:-50}"); do
    if screen | grep -Eq -- "$1"; then return 0; fi
    sleep 0.1
  done
  fail "timed out waiting for /$1/ on the terminal"
  show_run
  return 1
}
