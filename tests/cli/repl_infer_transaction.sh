#!/usr/bin/env bash
# A failed [infer] whose mistake can be seen before it starts leaves the trace exactly as before: the inference
# program is checked first. Here 'drift cannot move the bernoulli, and with `one` the first transitions would
# usually pick a normal: none may be made. (A failure only found mid-run keeps the transitions completed before
# it, each a valid MCMC step; docs/language.md.)
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

{
  sum="(+"
  for i in $(seq 0 19); do
    echo "[assume x$i (normal 0 1)]"
    sum="$sum x$i"
  done
  echo "[assume b (bernoulli 0.5)]"
  echo "[predict $sum)]"
  echo "[infer (mh default one 'drift 0.1 200)]"
  echo "[predict $sum)]"
} >session.txt

for seed in 1 2 3; do
  IN=session.txt run --seed $seed
  expect_rc 2 "seed $seed: the failing infer"
  expect_match "seed $seed: the drift error is reported" "error: mh: 'drift needs real-valued random choices" "$ERR"
  before=$(printf '%s\n' "$OUT" | sed -n 1p)
  after=$(printf '%s\n' "$OUT" | sed -n 2p)
  expect_eq "seed $seed: the values are unchanged by the failed infer" "$before" "$after"
done

finish
