# Shared by the fuzz scripts (run as scripts, so this directory is on sys.path): their command line and summary.
# SPDX-License-Identifier: Apache-2.0
import sys


def seeds_from_argv(usage):
    """(pprun, first, last, outdir) from `PPRUN FIRST LAST [OUTDIR]`; exits with `usage` otherwise."""
    if len(sys.argv) not in (4, 5):
        sys.exit(usage)
    outdir = sys.argv[4] if len(sys.argv) == 5 else "fuzz-failures"
    return sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), outdir


def finish(failures, total, what):
    """Prints how many of `total` failed and exits 1 if any did."""
    print(f"{failures} of {total} {what} failed")
    sys.exit(1 if failures else 0)
