# Shared by the fuzz scripts (run as scripts, so this directory is on sys.path): their command line, the loop over
# seeds and the summary.
# SPDX-License-Identifier: Apache-2.0
import sys


def run_seeds(usage, what, run_one):
    """For each seed of `PPRUN FIRST LAST [OUTDIR]` (else exits with `usage`), calls run_one(pprun, seed, outdir),
    which keeps a failing case in outdir and describes it, or returns None. Prints each failure and how many of the
    `what` failed; exits 1 if any did."""
    if len(sys.argv) not in (4, 5):
        sys.exit(usage)
    pprun, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    outdir = sys.argv[4] if len(sys.argv) == 5 else "fuzz-failures"
    failures = 0
    for seed in range(first, last + 1):
        failure = run_one(pprun, seed, outdir)
        if failure is not None:
            failures += 1
            print(f"seed {seed}: {failure}")
    print(f"{failures} of {last - first + 1} {what} failed")
    sys.exit(1 if failures else 0)
