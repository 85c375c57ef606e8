#!/usr/bin/env bash
# Ctrl-C (SIGINT) on `pprun model.vnt` stops the running [infer] between two transitions, keeps its moves and the
# draws it collected, writes --draws, prints the summary and the kernel report, then the error, and ends as killed
# by SIGINT (130), so that a shell loop running pprun stops too. Before, SIGINT ended the run with nothing printed
# and no --draws file.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

cat >long.vnt <<'VNT'
[assume mu (normal 0 1)]
[observe (normal mu 1) 2]
[infer (repeat 1000000000 (do (mh default one 1) (collect mu)))]
[predict 12345]
VNT
# interrupt_run ARGS...: runs pprun ARGS in the background and, once it has used a second of CPU (it is then in the
# [infer], which cannot end by itself: about 1e6 transitions a second; before its handler is installed, SIGINT
# would just end it), sends SIGINT; sets OUT, ERR and RC.
interrupt_run() {
  set -m  # job control: a background job of a script otherwise starts with SIGINT ignored
  "$PPRUN" "$@" >out.txt 2>err.txt &
  local pid=$!
  for _ in $(seq 200); do
    ticks=$(awk '{print $14}' "/proc/$pid/stat" 2>/dev/null || echo 0)
    [ "${ticks:-0}" -ge "$(getconf CLK_TCK)" ] && break
    sleep 0.1
  done
  kill -INT "$pid"
  wait "$pid"
  RC=$?
  set +m
  OUT=$(cat out.txt)
  ERR=$(cat err.txt)
  LAST_CMD="pprun $*, then SIGINT"
}

interrupt_run long.vnt --seed 2 --draws long.csv
expect_rc 130 "a run stopped by SIGINT ends as killed by it"
expect_match "the error says what is kept" "^long.vnt:3:[0-9]+: error: interrupted \(Ctrl-C\): the transitions made \
and the draws collected before it are kept$" "$(first_line "$ERR")"
expect_match "the summary of the draws is printed" "^mu +-?[0-9.]+ " "$OUT"
expect_match "and the kernel report" "^mh default one \(long.vnt:3:31\) +[0-9]+ " "$OUT"
if printf '%s\n' "$OUT" | grep -q 12345; then fail "a directive after the interrupted one ran"; fi
rows=$(($(wc -l <long.csv) - 1))
transitions=$(printf '%s\n' "$OUT" | sed -n 's/^mh default one (long.vnt:3:31) *\([0-9]*\) .*/\1/p')
if [ "$rows" -lt 1000 ]; then fail "--draws holds $rows rows, not the draws collected before SIGINT"; fi
if [ -z "$transitions" ] || [ $((transitions - rows)) -lt 0 ] || [ $((transitions - rows)) -gt 1 ]; then
  fail "$rows rows written for ${transitions:-?} transitions (one collect each)"
fi

# A pgibbs transition of 50 000 particles, each weighed by 2 000 observations, takes seconds (minutes under the
# sanitizers), in little memory: Ctrl-C undoes the one under way.
{
  echo "[assume x (scope_include 'x 0 (normal 0 1))]"
  echo "[predict x]"
  for _ in $(seq 2000); do echo "[observe (normal x 1) 0.5]"; done
  echo "[infer (repeat 3 (pgibbs x all 50000 1))]"
  echo "[predict 12345]"
} >particles.vnt
interrupt_run particles.vnt --seed 2
expect_rc 130 "a pgibbs transition stopped by SIGINT ends as killed by it"
expect_match "the error says the transition under way is undone" "^particles.vnt:2003:[0-9]+: error: interrupted \(Ctrl-C\): \
the pgibbs transition under way is undone; the transitions made and the draws collected before it are kept$" \
  "$(first_line "$ERR")"
expect_match "the kernel report counts no transition" "^pgibbs x all \(particles.vnt:2003:18\) +0 " "$OUT"

# With --chains, one Ctrl-C stops every chain, each keeping what it collected.
interrupt_run long.vnt --seed 2 --chains 2 --draws chains.csv
expect_rc 130 "chains stopped by SIGINT end as killed by it"
expect_eq "each chain says it was interrupted" "2" "$(grep -c "error: interrupted (Ctrl-C)" <<<"$ERR")"
expect_match "the summary of both chains is printed" "^mu +-?[0-9.]+ .* [0-9.]+$" "$OUT"
for c in 1 2; do
  rows=$(awk -F, -v c=$c 'NR > 1 && $1 == c' chains.csv | wc -l)
  if [ "$rows" -lt 100 ]; then fail "--draws holds $rows rows of chain $c, not the draws collected before SIGINT"; fi
done

# A chain's output is printed as soon as it and the chains before it have finished, not after the last. Seed 0's x
# is true (chain 1 fails at the observation at once), seed 1's false (chain 2 runs until SIGINT).
cat >first_done.vnt <<'VNT'
[assume x (flip)]
[predict x]
[observe (flip (if x 0 1)) true]
[infer (repeat 1000000000 (mh default one 1))]
VNT
set -m
"$PPRUN" first_done.vnt --chains 2 --seed 0 >out.txt 2>err.txt &
pid=$!
for _ in $(seq 200); do
  grep -q "^chain 1 (seed 0):" err.txt && break
  sleep 0.1
done
expect_eq "chain 1's prediction is out while chain 2 runs" "chain 1 (seed 0):
true" "$(cat out.txt)"
expect_match "and its error" "^first_done.vnt:3:10: error: observe: true has probability zero" "$(sed -n 2p err.txt)"
expect_eq "chain 2 still runs" "yes" "$(kill -0 "$pid" 2>/dev/null && echo yes || echo no)"
kill -INT "$pid"
wait "$pid"
RC=$?
set +m
LAST_CMD="pprun first_done.vnt --chains 2 --seed 0, then SIGINT"
expect_rc 130 "chain 2 stopped by SIGINT"
expect_eq "chain 2's prediction follows chain 1's" "chain 1 (seed 0):
true
chain 2 (seed 1):
false" "$(sed -n 1,4p out.txt)"
finish
