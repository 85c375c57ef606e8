# Shared by the fuzz scripts (run as scripts, so this directory is on sys.path): their command line, the loop over
# seeds and the summary, and the posterior fuzzers' standard errors.
# SPDX-License-Identifier: Apache-2.0
import math
import sys


def run_seeds(usage, what, run_one, binaries=1):
    """For each seed of `PPRUN FIRST LAST [OUTDIR]` (`binaries` paths of pprun first; else exits with `usage`),
    calls run_one(*ppruns, seed, outdir), which keeps a failing case in outdir and describes it, or returns None.
    Prints each failure and how many of the `what` failed; exits 1 if any did."""
    rest = sys.argv[1 + binaries:]
    if len(rest) not in (2, 3):
        sys.exit(usage)
    ppruns, first, last = sys.argv[1:1 + binaries], int(rest[0]), int(rest[1])
    outdir = rest[2] if len(rest) == 3 else "fuzz-failures"
    failures = 0
    for seed in range(first, last + 1):
        failure = run_one(*ppruns, seed, outdir)
        if failure is not None:
            failures += 1
            print(f"seed {seed}: {failure}", flush=True)
    print(f"{failures} of {last - first + 1} {what} failed")
    sys.exit(1 if failures else 0)


def batch_means_se(xs):
    """The standard error of the mean of a stationary sequence, by batch means (about sqrt(n) batches)."""
    n = len(xs)
    b = max(1, int(math.sqrt(n)))
    k = n // b
    means = [sum(xs[i * b:(i + 1) * b]) / b for i in range(k)]
    mu = sum(means) / k
    var = sum((x - mu) ** 2 for x in means) / (k - 1)
    return math.sqrt(var / k)
