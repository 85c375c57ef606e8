#!/usr/bin/env bash
# A program file that cannot be read is a user error (exit 2) naming the file and the reason.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

run nope.vnt
expect_rc 2 "a missing file"
expect_eq "a missing file is reported with the OS reason" \
  "error: cannot read 'nope.vnt': No such file or directory" "$ERR"
expect_eq "a missing file prints nothing on stdout" "" "$OUT"

if [ "$(id -u)" -ne 0 ]; then
  printf '[predict 1]\n' >secret.vnt
  chmod 000 secret.vnt
  run secret.vnt
  expect_rc 2 "an unreadable file"
  expect_eq "an unreadable file is reported" "error: cannot read 'secret.vnt': Permission denied" "$ERR"
else
  echo "[$TEST_NAME] running as root: the permission-denied case is skipped"
fi

finish
