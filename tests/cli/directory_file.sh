#!/usr/bin/env bash
# A directory given as the program file is a user error (exit 2), like any file that cannot be read.
# SPDX-License-Identifier: Apache-2.0
source "$(dirname "$0")/common.bash" "$@"

# A directory opens as a stream on Linux but has no program text: it must not run as an empty program.
mkdir adir
run adir
expect_rc 2 "a directory given as the program"
expect_eq "a directory is reported" "error: cannot read 'adir': Is a directory" "$ERR"

finish
